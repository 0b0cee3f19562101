import Testing

@testable import FerryCLI

/// `host/path` as curl takes it (`bareHostURL`), decided without touching the
/// network: what becomes `http://`, and what stays a URL or a local path.
struct BareHostURLTests {
    @Test func aHostWithADotOrAPortBecomesHTTP() {
        #expect(bareHostURL("example.org/p.txt") == "http://example.org/p.txt")
        #expect(bareHostURL("127.0.0.1:8080/a/b") == "http://127.0.0.1:8080/a/b")
        #expect(bareHostURL("localhost/x") == "http://localhost/x")
        // A colon, a slash, and a second slash later are not a scheme's "://".
        #expect(bareHostURL("card.local:80/a:/b//c") == "http://card.local:80/a:/b//c")
    }

    @Test func aURLOrSomethingThatIsNoHostStaysAsItIs() {
        for text in [
            "http://example.org/p", "ftp://h/x", "example.org/a://b", "photos/IMG_1.JPG", "./a.b/c",
            "~/x.y/z", "host:99999/x", "a_b.example/x", "",
        ] {
            #expect(bareHostURL(text) == nil, "\(text)")
        }
    }
}
