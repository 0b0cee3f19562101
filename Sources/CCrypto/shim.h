// OpenSSL's libcrypto, for SHA-256 (EVP_sha256): the checksum every imported
// file gets while its bytes stream (sync's history, delete-after) and SSH host
// key fingerprints. Only the EVP digest calls are used.
#ifndef FERRY_CCRYPTO_SHIM_H
#define FERRY_CCRYPTO_SHIM_H

#include <openssl/evp.h>

#endif
