/* test_bundle.c - signed rule-pack bundles (lib/bundle.h, docs/fleet.md): build,
 * sign and verify round trip; every single-byte change of a signed bundle refused
 * (and of an unsigned one's body), every truncation and extension; a wrong key, a
 * forged key id, a missing signature; a manifest that contradicts its table; scope
 * patterns and a scope mismatch; key files (modes, edits, no overwrite). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "lib/bundle.h"
#include "compiler/compile.h"
#include "common/alloc.h"

static const char PACK[] =
    "pack fleet version 7\n"
    "default deny \"'{program}' is not allowed\"\n"
    "allow program in { ls cat }\n"
    "limit shell 3 per 10s\n"
    "test allow \"ls -l\"\n";

static char dir[64], err[1200];

static int contains(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

static int open_with(const uint8_t *b, size_t n, const uint8_t *pk, const char *scope, sg_bundle_info *info)
{
    sg_bundle_trust tr = { pk, scope };
    err[0] = '\0';
    return sg_bundle_open(b, n, &tr, info, err, sizeof err);
}

static void path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* Recompute the header digest after an edit, so only the later checks see it. */
static void reseal(uint8_t *b, size_t body)
{
    static const uint8_t zero[32];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, b, 48);
    crypto_hash_sha256_update(&st, zero, 32);
    crypto_hash_sha256_update(&st, b + 80, body - 80);
    crypto_hash_sha256_final(&st, b + 48);
}

static void test_scope_match(void)
{
    CHECK(sg_bundle_scope_match("prod/*", 6, "prod/eu/web-3", 13));
    CHECK(!sg_bundle_scope_match("prod/*", 6, "prod", 4));
    CHECK(!sg_bundle_scope_match("prod/*", 6, "staging/prod/x", 14));
    CHECK(sg_bundle_scope_match("*", 1, "", 0));
    CHECK(sg_bundle_scope_match("a*b*c", 5, "axxbyyc", 7));
    CHECK(!sg_bundle_scope_match("a*b*c", 5, "axxbyy", 6));
    CHECK(sg_bundle_scope_match("ci", 2, "ci", 2));
    CHECK(!sg_bundle_scope_match("ci", 2, "cix", 3));
    CHECK(sg_bundle_scope_ok("prod/*", 6));
    CHECK(!sg_bundle_scope_ok("has space", 9));
    CHECK(!sg_bundle_scope_ok("", 0));
    CHECK(!sg_bundle_scope_ok("tab\t", 4));
}

static void test_keys(uint8_t pk[32], uint8_t sk[64], uint8_t pk2[32], uint8_t sk2[64])
{
    char a[128], apub[140], b[128], id[17];
    path(a, sizeof a, "team");
    path(b, sizeof b, "other");
    snprintf(apub, sizeof apub, "%s.pub", a);
    CHECK(sg_key_generate(a, id, err, sizeof err) == 0);
    CHECK(strlen(id) == 16);
    struct stat st;
    CHECK(stat(a, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK(stat(apub, &st) == 0 && (st.st_mode & 0777) == 0644);
    CHECK(sg_key_generate(a, id, err, sizeof err) < 0 && contains(err, "never replaces"));
    CHECK(sg_key_read_public(apub, pk, err, sizeof err) == 0);
    CHECK(sg_key_read_secret(a, sk, err, sizeof err) == 0);
    CHECK(memcmp(sk + 32, pk, 32) == 0);
    char hid[17];
    sg_key_id(pk, NULL, hid);
    CHECK_STR(hid, id);
    CHECK(sg_key_generate(b, NULL, err, sizeof err) == 0);
    char bpub[140];
    snprintf(bpub, sizeof bpub, "%s.pub", b);
    CHECK(sg_key_read_public(bpub, pk2, err, sizeof err) == 0);
    CHECK(sg_key_read_secret(b, sk2, err, sizeof err) == 0);
    /* a secret key others can read is refused */
    CHECK(chmod(b, 0640) == 0);
    uint8_t junk[64];
    CHECK(sg_key_read_secret(b, junk, err, sizeof err) < 0 && contains(err, "too open"));
    /* a key file whose id was edited, or that is not a key */
    char e[128];
    path(e, sizeof e, "edited.pub");
    FILE *f = fopen(e, "w");
    char line[200];
    FILE *g = fopen(apub, "r");
    CHECK(g && fgets(line, sizeof line, g));
    if (g)
        fclose(g);
    line[25] = line[25] == '0' ? '1' : '0';
    fputs(line, f);
    fclose(f);
    CHECK(sg_key_read_public(e, junk, err, sizeof err) < 0 && contains(err, "was edited"));
    f = fopen(e, "w");
    fputs("ssh-ed25519 AAAA\n", f);
    fclose(f);
    CHECK(sg_key_read_public(e, junk, err, sizeof err) < 0 && contains(err, "not a shellgate public key"));
    CHECK(sg_key_read_public(a, junk, err, sizeof err) < 0);      /* a secret key is no public key */
}

int main(void)
{
    CHECK(sodium_init() >= 0);
    snprintf(dir, sizeof dir, "/tmp/sg_bundle_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    test_scope_match();
    uint8_t pk[32], sk[64], pk2[32], sk2[64];
    test_keys(pk, sk, pk2, sk2);

    sgc_options co;
    memset(&co, 0, sizeof co);
    sgc_input in = { "fleet.rules", PACK, sizeof PACK - 1 };
    uint8_t *table = NULL;
    size_t tlen = 0;
    CHECK(sgc_compile(&co, &in, 1, &table, &tlen) == 0);
    uint8_t sha[1][32];
    crypto_hash_sha256(sha[0], (const uint8_t *)PACK, sizeof PACK - 1);
    const char *scopes[] = { "prod/*", "ci" };
    uint8_t *b = NULL, *s = NULL, *s2 = NULL;
    size_t n = 0, sn = 0, sn2 = 0;
    CHECK(sg_bundle_build(table, tlen, (const uint8_t (*)[32])sha, 1, scopes, 2, 1700000000, &b, &n, err,
                          sizeof err) == 0);
    CHECK(b != NULL);
    sg_bundle_info *info = sg_malloc(sizeof *info);
    /* unsigned: opens, says what it holds */
    CHECK(open_with(b, n, NULL, NULL, info) == 0);
    CHECK(!info->is_signed && !info->verified);
    CHECK(info->npacks == 1 && info->packs[0].version == 7 && info->packs[0].name.n == 5
          && memcmp(info->packs[0].name.s, "fleet", 5) == 0);
    CHECK(memcmp(info->packs[0].sha256, sha[0], 32) == 0);
    CHECK(info->build_time == 1700000000 && info->nscopes == 2);
    CHECK(info->table_size == tlen && memcmp(info->table, table, tlen) == 0);
    /* the same inputs give the same bytes */
    uint8_t *b2 = NULL;
    size_t n2 = 0;
    CHECK(sg_bundle_build(table, tlen, (const uint8_t (*)[32])sha, 1, scopes, 2, 1700000000, &b2, &n2, err,
                          sizeof err) == 0);
    CHECK(n2 == n && memcmp(b, b2, n) == 0);
    sg_free(b2);
    /* unsigned under a trusted key: refused */
    CHECK(open_with(b, n, pk, "ci", info) < 0 && contains(err, "not signed"));

    /* sign, verify: the round trip */
    CHECK(sg_bundle_sign(b, n, sk, &s, &sn, err, sizeof err) == 0);
    CHECK(sn == n + SG_BUNDLE_SIG);
    CHECK(open_with(s, sn, pk, "prod/eu/web-3", info) == 0);
    CHECK(info->is_signed && info->verified);
    CHECK(open_with(s, sn, pk, "ci", info) == 0);
    CHECK(open_with(s, sn, NULL, NULL, info) == 0 && info->is_signed && !info->verified);
    /* scope mismatch, and no scope given */
    CHECK(open_with(s, sn, pk, "dev/laptop", info) < 0 && contains(err, "not for 'dev/laptop'"));
    CHECK(open_with(s, sn, pk, "", info) < 0 && contains(err, "names no scope"));
    /* a wrong key */
    CHECK(open_with(s, sn, pk2, "ci", info) < 0 && contains(err, "not by the trusted key"));

    /* every single-byte change of the signed bundle is refused */
    size_t refused = 0;
    for (size_t i = 0; i < sn; i++) {
        s[i] ^= 0x01;
        refused += open_with(s, sn, pk, "ci", info) < 0;
        s[i] ^= 0x80;
        refused += open_with(s, sn, pk, "ci", info) < 0;
        s[i] ^= 0x81;
    }
    CHECK(refused == 2 * sn);
    CHECK(open_with(s, sn, pk, "ci", info) == 0);      /* restored */
    /* every truncation, and an extension */
    refused = 0;
    for (size_t k = 0; k < sn; k++)
        refused += open_with(s, k, pk, "ci", info) < 0;
    CHECK(refused == sn);
    uint8_t *ext = sg_malloc(sn + 1);
    memcpy(ext, s, sn);
    ext[sn] = 0;
    CHECK(open_with(ext, sn + 1, pk, "ci", info) < 0);
    sg_free(ext);
    /* without a trusted key, every change of the body is still refused (the digest) */
    refused = 0;
    for (size_t i = 0; i < n; i++) {
        b[i] ^= 0x01;
        refused += open_with(b, n, NULL, NULL, info) < 0;
        b[i] ^= 0x01;
    }
    CHECK(refused == n);

    /* signed by another key with this key's id: the signature does not verify */
    CHECK(sg_bundle_sign(b, n, sk2, &s2, &sn2, err, sizeof err) == 0);
    CHECK(open_with(s2, sn2, pk2, "ci", info) == 0);
    CHECK(open_with(s2, sn2, pk, "ci", info) < 0 && contains(err, "not by the trusted key"));
    uint8_t id[SG_KEYID_LEN];
    sg_key_id(pk, id, NULL);
    memcpy(s2 + sn2 - 72, id, SG_KEYID_LEN);
    CHECK(open_with(s2, sn2, pk, "ci", info) < 0 && contains(err, "does not verify"));
    sg_free(s2);
    /* signing a signed bundle replaces its signature */
    CHECK(sg_bundle_sign(s, sn, sk2, &s2, &sn2, err, sizeof err) == 0);
    CHECK(sn2 == sn && open_with(s2, sn2, pk2, "ci", info) == 0 && open_with(s2, sn2, pk, "ci", info) < 0);
    sg_free(s2);

    /* a manifest that contradicts its table, resealed so only the cross-check sees it */
    size_t vers_at = 80 + 80;                           /* the first pack's version */
    b[vers_at] ^= 1;
    reseal(b, n);
    CHECK(open_with(b, n, NULL, NULL, info) < 0 && contains(err, "is not the table's pack"));
    b[vers_at] ^= 1;
    reseal(b, n);
    CHECK(open_with(b, n, NULL, NULL, info) == 0);
    size_t cnt_at = 80 + 76;                            /* nscopes */
    b[cnt_at] = 65;
    reseal(b, n);
    CHECK(open_with(b, n, NULL, NULL, info) < 0 && contains(err, "scopes"));
    b[cnt_at] = 2;
    size_t name_at = 80 + 80 + 40;                      /* "fleet" */
    b[name_at] = '\n';
    reseal(b, n);
    CHECK(open_with(b, n, NULL, NULL, info) < 0 && contains(err, "control character"));
    b[name_at] = 'f';
    reseal(b, n);
    CHECK(open_with(b, n, NULL, NULL, info) == 0);
    /* a bad scope can neither be built nor opened */
    const char *bad[] = { "has space" };
    uint8_t *bb = NULL;
    size_t bn = 0;
    CHECK(sg_bundle_build(table, tlen, (const uint8_t (*)[32])sha, 1, bad, 1, 0, &bb, &bn, err, sizeof err) < 0);
    CHECK(sg_bundle_build(table, tlen, (const uint8_t (*)[32])sha, 2, NULL, 0, 0, &bb, &bn, err, sizeof err) < 0);
    /* not a bundle */
    CHECK(open_with(table, tlen, NULL, NULL, info) < 0 && contains(err, "bad magic"));

    sodium_memzero(sk, sizeof sk);
    sodium_memzero(sk2, sizeof sk2);
    sg_free(info);
    sg_free(s);
    sg_free(b);
    sg_free(table);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return sg_test_summary();
}
