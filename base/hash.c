#include "base/hash.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

gs_hasher *gs_hasher_new(void) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        gs_fail("cannot initialise SHA-256 (OpenSSL)");
        return NULL;
    }
    return (gs_hasher *)ctx; /* the OpenSSL context is the hasher */
}

void gs_hasher_update(gs_hasher *h, const void *data, size_t n) {
    EVP_DigestUpdate((EVP_MD_CTX *)h, data, n);
}

void gs_hasher_finish(gs_hasher *h, char out[GS_HASH_HEX]) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex((EVP_MD_CTX *)h, digest, &len);
    EVP_MD_CTX_free((EVP_MD_CTX *)h);
    for (unsigned i = 0; i < len && i < 32; i++) snprintf(out + 2 * i, 3, "%02x", digest[i]);
    out[64] = 0;
}

void gs_hash_bytes(const void *data, size_t n, char out[GS_HASH_HEX]) {
    gs_hasher *h = gs_hasher_new();
    if (!h) { out[0] = 0; return; }
    gs_hasher_update(h, data, n);
    gs_hasher_finish(h, out);
}

int gs_hash_file(const char *path, char out[GS_HASH_HEX]) {
    FILE *f = fopen(path, "rb");
    if (!f) return gs_fail("cannot open %s: %s", path, strerror(errno));
    gs_hasher *h = gs_hasher_new();
    if (!h) { fclose(f); return -1; }
    static _Thread_local unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) gs_hasher_update(h, buf, n);
    int bad = ferror(f);
    fclose(f);
    gs_hasher_finish(h, out);
    if (bad) return gs_fail("cannot read %s", path);
    return 0;
}
