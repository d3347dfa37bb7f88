/* fuzz_bundle.c - the bundle loader (lib/bundle.c) on hostile images.
 *
 * Plain mode: the bytes, copied into an 8-aligned buffer of their exact size, are
 * opened without a trusted key (structure, digest, manifest, table), with a scope,
 * and with a fixed trusted key (signature first); then once more with the body
 * digest recomputed, so a mutation reaches the manifest checks behind it.  What is
 * accepted must describe itself within the buffer.
 *
 * Edit mode (first byte 'E'): one of the embedded packs' tables (the byte after
 * 'E') is bundled with a scope and signed with the fixed key, and up to 64 bytes
 * are XORed into it (each edit 4 bytes: offset, 3 bytes little-endian modulo the
 * size, then the value).  The invariant: a signed bundle whose bytes changed is
 * refused under the key, always; unchanged, it is accepted.  Then the digest is
 * resealed and the edit opened without a key, to reach the deep checks. */
#include <sodium.h>
#include <string.h>
#include "fuzz.h"
#include "lib/bundle.h"
#include "lib/embedded.h"
#include "runtime/table.h"
#include "common/alloc.h"

static uint8_t pk[32], sk[64];
static sg_bundle_info info;

static void keys(void)
{
    static int done;
    if (done)
        return;
    uint8_t seed[32];
    memset(seed, 0x5a, sizeof seed);
    FUZZ_CHECK(sodium_init() >= 0);
    crypto_sign_seed_keypair(pk, sk, seed);
    done = 1;
}

static int open_it(const uint8_t *b, size_t n, const uint8_t *key, const char *scope)
{
    sg_bundle_trust tr = { key, scope };
    char err[600];
    err[0] = '\0';
    int r = sg_bundle_open(b, n, &tr, &info, err, sizeof err);
    if (r < 0) {
        FUZZ_CHECK(err[0] != '\0');             /* a refusal says why */
        return r;
    }
    FUZZ_CHECK(info.table >= b && info.table + info.table_size <= b + n);
    FUZZ_CHECK(info.npacks >= 1 && info.npacks <= SG_BUNDLE_MAX_PACKS && info.nscopes <= SG_BUNDLE_MAX_SCOPES);
    for (uint32_t i = 0; i < info.npacks; i++) {
        fuzz_touch(info.packs[i].name.s, info.packs[i].name.n);
        fuzz_touch(info.packs[i].file.s, info.packs[i].file.n);
        fuzz_touch(info.packs[i].sha256, 32);
    }
    for (uint32_t i = 0; i < info.nscopes; i++)
        fuzz_touch(info.scopes[i].s, info.scopes[i].n);
    FUZZ_CHECK(!key || info.verified);
    return 0;
}

/* Recompute the header's body digest in place (when the header says where the body ends). */
static void reseal(uint8_t *b, size_t n)
{
    uint32_t body;
    if (n < SG_BUNDLE_HDR)
        return;
    memcpy(&body, b + 24, 4);
    if (body < SG_BUNDLE_HDR || body > n)
        return;
    static const uint8_t zero[32];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, b, 48);
    crypto_hash_sha256_update(&st, zero, 32);
    crypto_hash_sha256_update(&st, b + SG_BUNDLE_HDR, body - SG_BUNDLE_HDR);
    crypto_hash_sha256_final(&st, b + 48);
}

static void edit_mode(const uint8_t *data, size_t size)
{
    if (size < 2 || sg_embedded_ntables == 0)
        return;
    const sg_embedded *e = &sg_embedded_tables[data[1] % sg_embedded_ntables];
    /* the embedded bytes are 16-aligned; a copy keeps the loader's alignment promise */
    uint8_t *table = malloc(e->len), *b = NULL, *s = NULL;
    size_t n = 0, sn = 0;
    char err[600];
    if (!table)
        return;
    memcpy(table, e->data, e->len);
    uint8_t sha[SG_BUNDLE_MAX_PACKS][32];
    memset(sha, 0xab, sizeof sha);
    const char *scopes[] = { "prod/*" };
    sgr_table *t;
    FUZZ_CHECK(sgr_table_load(table, e->len, &t, err, sizeof err) == 0);
    uint32_t np = t->npacks;
    sgr_table_free(t);
    FUZZ_CHECK(sg_bundle_build(table, e->len, (const uint8_t (*)[32])sha, np, scopes, 1, 1700000000, &b, &n, err,
                               sizeof err) == 0);
    FUZZ_CHECK(sg_bundle_sign(b, n, sk, &s, &sn, err, sizeof err) == 0);
    uint8_t *orig = malloc(sn);
    FUZZ_CHECK(orig != NULL);
    memcpy(orig, s, sn);
    for (size_t i = 2, k = 0; i + 4 <= size && k < 64; i += 4, k++) {
        size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16) % sn;
        s[off] ^= data[i + 3];
    }
    int changed = memcmp(orig, s, sn) != 0;
    int r = open_it(s, sn, pk, "prod/eu");
    FUZZ_CHECK(changed ? r < 0 : r == 0);       /* the signature covers every byte */
    reseal(s, sn);
    open_it(s, sn, NULL, "prod/eu");
    free(orig);
    sg_free(s);
    sg_free(b);
    free(table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    keys();
    if (size >= 1 && data[0] == 'E') {
        edit_mode(data, size);
        return 0;
    }
    uint8_t *buf = calloc(1, size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    open_it(buf, size, NULL, NULL);
    open_it(buf, size, NULL, "prod/eu");
    open_it(buf, size, pk, NULL);
    reseal(buf, size);
    open_it(buf, size, NULL, "ci");
    free(buf);
    return 0;
}
