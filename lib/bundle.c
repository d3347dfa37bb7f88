/* bundle.c - building, signing and verifying rule-pack bundles, and their keys
 * (bundle.h; the format byte by byte: docs/fleet.md). */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bundle.h"
#include "runtime/table.h"
#include "common/alloc.h"

#define ENDIAN 0x01020304u
#define DIGEST_AT 48u                    /* the header's sha256 field */
#define MANIFEST_FIXED 80u
#define PACK_FIXED 40u
#define SECRET_TAG "shellgate-ed25519-secret "
#define PUBLIC_TAG "shellgate-ed25519-public "

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static void wr32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void wr16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, 2);
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* SHA-256 of the body b[0..body) with the header's digest field as zeros. */
static void body_digest(const uint8_t *b, size_t body, uint8_t out[32])
{
    static const uint8_t zero[32];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, b, DIGEST_AT);
    crypto_hash_sha256_update(&st, zero, sizeof zero);
    crypto_hash_sha256_update(&st, b + SG_BUNDLE_HDR, body - SG_BUNDLE_HDR);
    crypto_hash_sha256_final(&st, out);
}

/* A name or file name in the manifest: no control characters, no DEL. */
static int text_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
            return 0;
    return n > 0;
}

int sg_bundle_scope_ok(const char *s, size_t n)
{
    if (n == 0 || n > SG_BUNDLE_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

int sg_bundle_scope_match(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < pn && p[pi] == s[si]) {
            pi++;
            si++;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return 0;
        }
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

void sg_key_id(const uint8_t pk[32], uint8_t id[SG_KEYID_LEN], char hex[2 * SG_KEYID_LEN + 1])
{
    uint8_t h[32];
    crypto_hash_sha256(h, pk, 32);
    if (id)
        memcpy(id, h, SG_KEYID_LEN);
    if (hex)
        to_hex(h, SG_KEYID_LEN, hex);
}

/* ---- opening ---------------------------------------------------------------------- */

/* The manifest m[0..n): every length and count bounded, every string checked. */
static int parse_manifest(const uint8_t *m, size_t n, sg_bundle_info *info, char *err, size_t errlen)
{
    if (n < MANIFEST_FIXED)
        return fail(err, errlen, "bundle: manifest of %zu bytes is shorter than its fixed part", n);
    int64_t bt;
    memcpy(&bt, m, 8);
    info->build_time = bt;
    info->table_sha256 = m + 8;
    info->source_sha256 = m + 40;
    info->npacks = rd32(m + 72);
    info->nscopes = rd32(m + 76);
    if (info->npacks == 0 || info->npacks > SG_BUNDLE_MAX_PACKS)
        return fail(err, errlen, "bundle: %u packs in the manifest (1 to %u)", info->npacks, SG_BUNDLE_MAX_PACKS);
    if (info->nscopes > SG_BUNDLE_MAX_SCOPES)
        return fail(err, errlen, "bundle: %u scopes in the manifest (at most %u)", info->nscopes, SG_BUNDLE_MAX_SCOPES);
    size_t at = MANIFEST_FIXED;
    for (uint32_t i = 0; i < info->npacks; i++) {
        if (n - at < PACK_FIXED)
            return fail(err, errlen, "bundle: manifest pack %u runs past the manifest", i);
        const uint8_t *p = m + at;
        uint32_t nl = rd16(p + 36), fl = rd16(p + 38);
        at += PACK_FIXED;
        if (nl > SG_BUNDLE_MAX_NAME || fl > SG_BUNDLE_MAX_FILE || n - at < (size_t)nl + fl)
            return fail(err, errlen, "bundle: manifest pack %u: name or file length out of range", i);
        info->packs[i].version = rd32(p);
        info->packs[i].sha256 = p + 4;
        info->packs[i].name.s = (const char *)m + at;
        info->packs[i].name.n = nl;
        info->packs[i].file.s = (const char *)m + at + nl;
        info->packs[i].file.n = fl;
        if (!text_ok(info->packs[i].name.s, nl) || !text_ok(info->packs[i].file.s, fl))
            return fail(err, errlen, "bundle: manifest pack %u: empty name or file, or a control character", i);
        at += (size_t)nl + fl;
    }
    for (uint32_t i = 0; i < info->nscopes; i++) {
        if (n - at < 2)
            return fail(err, errlen, "bundle: manifest scope %u runs past the manifest", i);
        uint32_t sl = rd16(m + at);
        at += 2;
        if (n - at < sl || !sg_bundle_scope_ok((const char *)m + at, sl))
            return fail(err, errlen, "bundle: manifest scope %u: bad length or character", i);
        info->scopes[i].s = (const char *)m + at;
        info->scopes[i].n = sl;
        at += sl;
    }
    if (at != n)
        return fail(err, errlen, "bundle: %zu bytes after the manifest's last field", n - at);
    return 0;
}

/* The manifest says what the table says: its packs (name, version, file) in
 * order, and its source digest. */
static int match_table(const sg_bundle_info *info, const sgr_table *t, char *err, size_t errlen)
{
    if (memcmp(info->source_sha256, t->hdr->source_sha256, 32) != 0)
        return fail(err, errlen, "bundle: the manifest's source digest is not the table's");
    if (info->npacks != t->npacks)
        return fail(err, errlen, "bundle: the manifest lists %u packs, the table has %u", info->npacks, t->npacks);
    for (uint32_t i = 0; i < t->npacks; i++) {
        const char *name = sgr_str(t, t->packs[i].name), *file = sgr_str(t, t->packs[i].file);
        if (strlen(name) != info->packs[i].name.n || memcmp(name, info->packs[i].name.s, info->packs[i].name.n)
            || strlen(file) != info->packs[i].file.n || memcmp(file, info->packs[i].file.s, info->packs[i].file.n)
            || t->packs[i].version != info->packs[i].version)
            return fail(err, errlen, "bundle: manifest pack %u is not the table's pack %u", i, i);
    }
    return 0;
}

static int check_scope(const sg_bundle_info *info, const char *name, char *err, size_t errlen)
{
    if (!name || info->nscopes == 0)
        return 0;
    size_t nl = strlen(name);
    for (uint32_t i = 0; i < info->nscopes; i++)
        if (sg_bundle_scope_match(info->scopes[i].s, info->scopes[i].n, name, nl))
            return 0;
    char list[600];
    size_t k = 0;
    list[0] = '\0';
    for (uint32_t i = 0; i < info->nscopes && k + 4 < sizeof list; i++) {
        int w = snprintf(list + k, sizeof list - k, "%s%.*s", i ? " " : "", (int)info->scopes[i].n, info->scopes[i].s);
        k += w > 0 ? (size_t)w : 0;
    }
    if (!*name)
        return fail(err, errlen, "bundle: built for the scope { %s }, and this deployment names no scope (--scope NAME)",
                    list);
    return fail(err, errlen, "bundle: built for the scope { %s }, not for '%.255s'", list, name);
}

int sg_bundle_open(const uint8_t *b, size_t n, const sg_bundle_trust *trust, sg_bundle_info *info, char *err,
                   size_t errlen)
{
    memset(info, 0, sizeof *info);
    if (sodium_init() < 0)
        return fail(err, errlen, "bundle: libsodium cannot start");
    if (n < SG_BUNDLE_HDR || memcmp(b, SG_BUNDLE_MAGIC, 8) != 0)
        return fail(err, errlen, "bundle: bad magic (not a shellgate bundle)");
    if (n > 0x7fffffffu)
        return fail(err, errlen, "bundle: larger than 2 GiB");
    int trailer = n >= SG_BUNDLE_HDR + SG_BUNDLE_SIG && memcmp(b + n - SG_BUNDLE_SIG, SG_BUNDLE_SIG_MAGIC, 8) == 0;
    const uint8_t *sig = b + n - SG_BUNDLE_SIG;
    if (trust && trust->public_key) {
        /* the signature first: nothing else in the file is believed before it */
        char want[2 * SG_KEYID_LEN + 1], got[2 * SG_KEYID_LEN + 1];
        uint8_t id[SG_KEYID_LEN];
        sg_key_id(trust->public_key, id, want);
        if (!trailer)
            return fail(err, errlen, "bundle: not signed, and a signature by key %s is required", want);
        if (rd32(sig + 8) != SG_BUNDLE_ALG_ED25519 || rd32(sig + 12) != 0)
            return fail(err, errlen, "bundle: signature algorithm %u unknown (1 is Ed25519)", rd32(sig + 8));
        to_hex(sig + 16, SG_KEYID_LEN, got);
        if (memcmp(sig + 16, id, SG_KEYID_LEN) != 0)
            return fail(err, errlen, "bundle: signed by key %s, not by the trusted key %s", got, want);
        if (crypto_sign_verify_detached(sig + 24, b, n - 64, trust->public_key) != 0)
            return fail(err, errlen, "bundle: the signature by key %s does not verify: the bundle was changed after "
                        "it was signed", want);
        info->verified = 1;
    }
    uint32_t body = rd32(b + 24);
    if (trailer && body == n - SG_BUNDLE_SIG) {
        info->is_signed = 1;
        memcpy(info->key_id, sig + 16, SG_KEYID_LEN);
    } else if (body != n || info->verified) {
        return fail(err, errlen, "bundle: truncated or extended (the header says %u bytes before the signature, the "
                    "file has %zu)", body, n);
    }
    if (rd32(b + 8) != SG_BUNDLE_VERSION)
        return fail(err, errlen, "bundle: format version %u, this shellgate reads version %u", rd32(b + 8),
                    SG_BUNDLE_VERSION);
    if (rd32(b + 12) != ENDIAN)
        return fail(err, errlen, "bundle: byte order mismatch (endian probe 0x%08x)", rd32(b + 12));
    if (rd32(b + 16) != SG_BUNDLE_HDR || rd32(b + 20) != 0 || rd32(b + 44) != 0)
        return fail(err, errlen, "bundle: header size, flags or reserved field is not what version 1 writes");
    uint8_t dig[32];
    body_digest(b, body, dig);
    if (memcmp(dig, b + DIGEST_AT, 32) != 0)
        return fail(err, errlen, "bundle: digest mismatch (the bundle is damaged)");
    uint64_t moff = rd32(b + 28), msize = rd32(b + 32), toff = rd32(b + 36), tsize = rd32(b + 40);
    if (moff != SG_BUNDLE_HDR || toff != align8(moff + msize) || toff + tsize != body || tsize < sizeof(sgt_header))
        return fail(err, errlen, "bundle: manifest [%llu, +%llu) and table [%llu, +%llu) do not tile the %u-byte body",
                    (unsigned long long)moff, (unsigned long long)msize, (unsigned long long)toff,
                    (unsigned long long)tsize, body);
    for (uint64_t i = moff + msize; i < toff; i++)
        if (b[i])
            return fail(err, errlen, "bundle: non-zero padding before the table");
    if (parse_manifest(b + moff, msize, info, err, errlen) < 0)
        return -1;
    info->table = b + toff;
    info->table_size = tsize;
    crypto_hash_sha256(dig, info->table, tsize);
    if (memcmp(dig, info->table_sha256, 32) != 0)
        return fail(err, errlen, "bundle: the table's SHA-256 is not the manifest's");
    char terr[400];
    sgr_table *t;
    if (((uintptr_t)info->table & 7) != 0)
        return fail(err, errlen, "bundle: the table is not 8-byte aligned in memory");
    if (sgr_table_load(info->table, tsize, &t, terr, sizeof terr) != 0)
        return fail(err, errlen, "bundle: %s", terr);
    int r = match_table(info, t, err, errlen);
    sgr_table_free(t);
    if (r < 0)
        return -1;
    return check_scope(info, trust ? trust->scope : NULL, err, errlen);
}

/* ---- building and signing ----------------------------------------------------------- */

int sg_bundle_build(const uint8_t *table, size_t tlen, const uint8_t (*pack_sha256)[32], uint32_t npacks,
                    const char *const *scopes, uint32_t nscopes, int64_t build_time, uint8_t **out, size_t *outlen,
                    char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (sodium_init() < 0)
        return fail(err, errlen, "libsodium cannot start");
    char terr[400];
    sgr_table *t;
    if (sgr_table_load(table, tlen, &t, terr, sizeof terr) != 0)
        return fail(err, errlen, "%s", terr);
    int rc = -1;
    if (t->npacks != npacks || npacks == 0 || npacks > SG_BUNDLE_MAX_PACKS) {
        fail(err, errlen, "%u packs in the table, %u digests given (1 to %u)", t->npacks, npacks, SG_BUNDLE_MAX_PACKS);
        goto out;
    }
    if (nscopes > SG_BUNDLE_MAX_SCOPES) {
        fail(err, errlen, "at most %u scopes", SG_BUNDLE_MAX_SCOPES);
        goto out;
    }
    size_t msize = MANIFEST_FIXED;
    for (uint32_t i = 0; i < npacks; i++) {
        const char *nm = sgr_str(t, t->packs[i].name), *fl = sgr_str(t, t->packs[i].file);
        size_t nl = strlen(nm), fll = strlen(fl);
        if (nl > SG_BUNDLE_MAX_NAME || fll > SG_BUNDLE_MAX_FILE || !text_ok(nm, nl) || !text_ok(fl, fll)) {
            fail(err, errlen, "pack %u: its name or file name cannot go in a manifest (1 to %u and %u bytes, no "
                 "control characters)", i, SG_BUNDLE_MAX_NAME, SG_BUNDLE_MAX_FILE);
            goto out;
        }
        msize += PACK_FIXED + nl + fll;
    }
    for (uint32_t i = 0; i < nscopes; i++) {
        if (!sg_bundle_scope_ok(scopes[i], strlen(scopes[i]))) {
            fail(err, errlen, "scope '%.300s': 1 to %u printable characters, no spaces", scopes[i], SG_BUNDLE_MAX_NAME);
            goto out;
        }
        msize += 2 + strlen(scopes[i]);
    }
    size_t toff = align8(SG_BUNDLE_HDR + msize), body = toff + tlen;
    if (body > 0x7fffffffu - SG_BUNDLE_SIG) {
        fail(err, errlen, "the bundle would be larger than 2 GiB");
        goto out;
    }
    uint8_t *b = sg_calloc(1, body);
    if (!b) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    memcpy(b, SG_BUNDLE_MAGIC, 8);
    wr32(b + 8, SG_BUNDLE_VERSION);
    wr32(b + 12, ENDIAN);
    wr32(b + 16, SG_BUNDLE_HDR);
    wr32(b + 24, (uint32_t)body);
    wr32(b + 28, SG_BUNDLE_HDR);
    wr32(b + 32, (uint32_t)msize);
    wr32(b + 36, (uint32_t)toff);
    wr32(b + 40, (uint32_t)tlen);
    uint8_t *m = b + SG_BUNDLE_HDR;
    memcpy(m, &build_time, 8);
    crypto_hash_sha256(m + 8, table, tlen);
    memcpy(m + 40, t->hdr->source_sha256, 32);
    wr32(m + 72, npacks);
    wr32(m + 76, nscopes);
    size_t at = MANIFEST_FIXED;
    for (uint32_t i = 0; i < npacks; i++) {
        const char *nm = sgr_str(t, t->packs[i].name), *fl = sgr_str(t, t->packs[i].file);
        size_t nl = strlen(nm), fll = strlen(fl);
        wr32(m + at, t->packs[i].version);
        memcpy(m + at + 4, pack_sha256[i], 32);
        wr16(m + at + 36, (uint16_t)nl);
        wr16(m + at + 38, (uint16_t)fll);
        memcpy(m + at + PACK_FIXED, nm, nl);
        memcpy(m + at + PACK_FIXED + nl, fl, fll);
        at += PACK_FIXED + nl + fll;
    }
    for (uint32_t i = 0; i < nscopes; i++) {
        size_t sl = strlen(scopes[i]);
        wr16(m + at, (uint16_t)sl);
        memcpy(m + at + 2, scopes[i], sl);
        at += 2 + sl;
    }
    memcpy(b + toff, table, tlen);
    body_digest(b, body, b + DIGEST_AT);
    *out = b;
    *outlen = body;
    rc = 0;
out:
    sgr_table_free(t);
    return rc;
}

int sg_bundle_sign(const uint8_t *b, size_t n, const uint8_t *secret_key, uint8_t **out, size_t *outlen, char *err,
                   size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    sg_bundle_info *info = sg_malloc(sizeof *info);
    if (!info)
        return fail(err, errlen, "out of memory");
    int r = sg_bundle_open(b, n, NULL, info, err, errlen);
    size_t body = n - (info->is_signed ? SG_BUNDLE_SIG : 0);
    sg_free(info);
    if (r < 0)
        return -1;
    uint8_t *s = sg_malloc(body + SG_BUNDLE_SIG);
    if (!s)
        return fail(err, errlen, "out of memory");
    memcpy(s, b, body);
    uint8_t *t = s + body;
    memcpy(t, SG_BUNDLE_SIG_MAGIC, 8);
    wr32(t + 8, SG_BUNDLE_ALG_ED25519);
    wr32(t + 12, 0);
    sg_key_id(secret_key + 32, t + 16, NULL);      /* libsodium: seed || public key */
    crypto_sign_detached(t + 24, NULL, s, body + 24, secret_key);
    *out = s;
    *outlen = body + SG_BUNDLE_SIG;
    return 0;
}

/* ---- keys and files ------------------------------------------------------------------- */

int sg_read_file(const char *path, size_t max, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : (uint64_t)st.st_size > max ? EFBIG : 0;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *b = sg_malloc(n ? n : 1);
    if (!b) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    while (got < n) {
        ssize_t k = read(fd, b + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (got != n) {
        sg_free(b);
        errno = EIO;
        return -1;
    }
    *out = b;
    *len = n;
    return 0;
}

/* Parse "TAG KEYID BASE64\n" (the newline optional) into 32 bytes and the id text. */
static int parse_key_line(const char *text, size_t n, const char *tag, uint8_t key[32], char id[2 * SG_KEYID_LEN + 1])
{
    size_t tl = strlen(tag);
    if (n && text[n - 1] == '\n')
        n--;
    if (n < tl + 2 * SG_KEYID_LEN + 2 || memcmp(text, tag, tl) != 0 || text[tl + 2 * SG_KEYID_LEN] != ' ')
        return -1;
    for (size_t i = 0; i < 2 * SG_KEYID_LEN; i++) {
        char c = text[tl + i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return -1;
        id[i] = c;
    }
    id[2 * SG_KEYID_LEN] = '\0';
    const char *b64 = text + tl + 2 * SG_KEYID_LEN + 1, *end;
    size_t b64n = n - (tl + 2 * SG_KEYID_LEN + 1), got;
    if (sodium_base642bin(key, 32, b64, b64n, NULL, &got, &end, sodium_base64_VARIANT_ORIGINAL) != 0 || got != 32
        || end != b64 + b64n)
        return -1;
    return 0;
}

int sg_key_read_public(const char *path, uint8_t pk[32], char *err, size_t errlen)
{
    if (sodium_init() < 0)
        return fail(err, errlen, "libsodium cannot start");
    uint8_t *b;
    size_t n;
    if (sg_read_file(path, 4096, &b, &n) < 0)
        return fail(err, errlen, "%.900s: cannot read the public key: %s", path, strerror(errno));
    char id[2 * SG_KEYID_LEN + 1], want[2 * SG_KEYID_LEN + 1];
    int r = parse_key_line((const char *)b, n, PUBLIC_TAG, pk, id);
    sg_free(b);
    if (r < 0)
        return fail(err, errlen, "%.900s: not a shellgate public key (\"%sKEYID BASE64\", from shellgate keygen)", path,
                    PUBLIC_TAG);
    sg_key_id(pk, NULL, want);
    if (strcmp(id, want) != 0)
        return fail(err, errlen, "%.900s: the key id %s is not this key's (%s): the file was edited", path, id, want);
    return 0;
}

int sg_key_read_secret(const char *path, uint8_t sk[64], char *err, size_t errlen)
{
    if (sodium_init() < 0)
        return fail(err, errlen, "libsodium cannot start");
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(err, errlen, "%.900s: cannot read the secret key: %s", path, strerror(errno));
    if (st.st_mode & 077)
        return fail(err, errlen, "%.900s: permissions %04o are too open: a secret key must be readable by its owner "
                    "only (chmod 600)", path, (unsigned)(st.st_mode & 07777));
    uint8_t *b;
    size_t n;
    if (sg_read_file(path, 4096, &b, &n) < 0)
        return fail(err, errlen, "%.900s: cannot read the secret key: %s", path, strerror(errno));
    uint8_t seed[32], pk[32];
    char id[2 * SG_KEYID_LEN + 1], want[2 * SG_KEYID_LEN + 1];
    int r = parse_key_line((const char *)b, n, SECRET_TAG, seed, id);
    sodium_memzero(b, n);
    sg_free(b);
    if (r < 0) {
        sodium_memzero(seed, sizeof seed);
        return fail(err, errlen, "%.900s: not a shellgate secret key (\"%sKEYID BASE64\", from shellgate keygen)", path,
                    SECRET_TAG);
    }
    crypto_sign_seed_keypair(pk, sk, seed);
    sodium_memzero(seed, sizeof seed);
    sg_key_id(pk, NULL, want);
    if (strcmp(id, want) != 0) {
        sodium_memzero(sk, 64);
        return fail(err, errlen, "%.900s: the key id %s is not this key's (%s): the file was edited", path, id, want);
    }
    return 0;
}

/* Create path (never replacing a file) with mode and write text. */
static int write_new(const char *path, mode_t mode, const char *text, size_t n, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return fail(err, errlen, "%.900s: %s", path, errno == EEXIST ? "exists (keygen never replaces a key)" : strerror(errno));
    int ok = fchmod(fd, mode) == 0 && write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        unlink(path);
        return fail(err, errlen, "%.900s: %s", path, strerror(e));
    }
    return 0;
}

int sg_key_generate(const char *name, char *hexid, char *err, size_t errlen)
{
    if (sodium_init() < 0)
        return fail(err, errlen, "libsodium cannot start");
    char pub[4200];
    if (snprintf(pub, sizeof pub, "%s.pub", name) >= (int)sizeof pub)
        return fail(err, errlen, "key name too long");
    uint8_t seed[32], pk[32], sk[64];
    randombytes_buf(seed, sizeof seed);
    crypto_sign_seed_keypair(pk, sk, seed);
    sodium_memzero(sk, sizeof sk);
    char id[2 * SG_KEYID_LEN + 1], b64[64], line[200];
    sg_key_id(pk, NULL, id);
    sodium_bin2base64(b64, sizeof b64, seed, sizeof seed, sodium_base64_VARIANT_ORIGINAL);
    sodium_memzero(seed, sizeof seed);
    int k = snprintf(line, sizeof line, "%s%s %s\n", SECRET_TAG, id, b64);
    sodium_memzero(b64, sizeof b64);
    int r = write_new(name, 0600, line, (size_t)k, err, errlen);
    sodium_memzero(line, sizeof line);
    if (r < 0)
        return -1;
    sodium_bin2base64(b64, sizeof b64, pk, sizeof pk, sodium_base64_VARIANT_ORIGINAL);
    k = snprintf(line, sizeof line, "%s%s %s\n", PUBLIC_TAG, id, b64);
    if (write_new(pub, 0644, line, (size_t)k, err, errlen) < 0) {
        unlink(name);
        return -1;
    }
    if (hexid)
        memcpy(hexid, id, sizeof id);
    return 0;
}
