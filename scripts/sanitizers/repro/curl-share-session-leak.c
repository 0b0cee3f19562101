// LeakSanitizer report from libcurl 7.88: CURLOPT_SHARE with a share that holds TLS
// sessions (CURL_LOCK_DATA_SSL_SESSION), set on an easy handle that has already run a
// transfer, replaces the handle's own TLS session cache (5 x 184 = 920 bytes, calloc'd
// by Curl_ssl_initsessions at the start of every handle's first transfer, TLS or not)
// without freeing it. curl_easy_reset keeps that cache, so a handle reused from a pool
// leaks it the same way. Same libcurl frames (+0x7ed5c, +0x6af05, +0x4da87) as the
// report from Ferry's test process (docs/RELIABILITY.md, bug 15).
//   clang -fsanitize=address -fuse-ld=lld curl-share-session-leak.c -lcurl -o /tmp/cs \
//     && ASAN_OPTIONS=fast_unwind_on_malloc=0 /tmp/cs
#include <curl/curl.h>
#include <stdio.h>

int main(void) {
    curl_global_init(CURL_GLOBAL_ALL);
    CURLSH *share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);

    CURL *easy = curl_easy_init();
    FILE *null = fopen("/dev/null", "w");
    curl_easy_setopt(easy, CURLOPT_URL, "file:///etc/hostname");  // no network needed
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, null);
    curl_easy_perform(easy);                        // allocates the handle's own cache
    curl_easy_reset(easy);                          // keeps it
    curl_easy_setopt(easy, CURLOPT_SHARE, share);   // overwrites the pointer: 920 bytes leaked
    curl_easy_cleanup(easy);                        // frees no cache: the share's is the share's

    fclose(null);
    curl_share_cleanup(share);
    curl_global_cleanup();
    return 0;
}
