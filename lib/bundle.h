/* bundle.h - rule-pack bundles (docs/fleet.md): a compiled table plus a manifest
 * (packs, versions, source digests, build time, scope), optionally signed with
 * Ed25519 (libsodium), and the keys that sign them.  One loader for everything that
 * takes a policy: sg_policy_load opens a .sgb through sg_bundle_open.
 *
 * Format (all integers little-endian; ORDER SG_BUNDLE_LAYOUT, documented byte by
 * byte in docs/fleet.md; bump SG_BUNDLE_VERSION on any change):
 *   header    80 bytes  magic "SGBUNDL\x1a", u32 version, u32 endian probe,
 *                       u32 header size (80), u32 flags (0), u32 body size,
 *                       u32 manifest offset (80), u32 manifest size, u32 table
 *                       offset (manifest end, 8-aligned), u32 table size,
 *                       u32 reserved (0), u8 sha256[32] over the body with this
 *                       field as zeros
 *   manifest            i64 build time, u8 table_sha256[32], u8 source_sha256[32]
 *                       (the table header's), u32 npacks, u32 nscopes, then per
 *                       pack u32 version, u8 sha256[32], u16 namelen, u16 filelen,
 *                       name, file; per scope u16 len, pattern
 *   zero padding to 8, the table (sgt.h), ending the body
 *   signature 88 bytes  (optional) magic "SGBSIGN\x1a", u32 algorithm (1:
 *                       Ed25519), u32 reserved (0), u8 key id[8], u8 sig[64]: the
 *                       signature of every byte of the file before it
 *
 * Ownership: sg_bundle_info points into the caller's bytes, which must outlive it;
 * built and signed images are sg_malloc'd for the caller.  Nothing here prints. */
#ifndef SG_BUNDLE_H
#define SG_BUNDLE_H
#include <stddef.h>
#include <stdint.h>

#define SG_BUNDLE_MAGIC "SGBUNDL\x1a"
#define SG_BUNDLE_SIG_MAGIC "SGBSIGN\x1a"
#define SG_BUNDLE_VERSION 1u
#define SG_BUNDLE_HDR 80u
#define SG_BUNDLE_SIG 88u
#define SG_BUNDLE_ALG_ED25519 1u
#define SG_BUNDLE_MAX_PACKS 256u
#define SG_BUNDLE_MAX_SCOPES 64u
#define SG_BUNDLE_MAX_NAME 255u          /* a pack name, a scope pattern, a scope name */
#define SG_BUNDLE_MAX_FILE 4095u
#define SG_KEYID_LEN 8                   /* the first bytes of SHA-256(public key) */

typedef struct sg_bundle_str {
    const char *s;                       /* into the bundle, not NUL-terminated */
    uint32_t n;
} sg_bundle_str;

typedef struct sg_bundle_info {
    int64_t build_time;                  /* seconds since the epoch */
    const uint8_t *table_sha256, *source_sha256;
    uint32_t npacks, nscopes;
    struct {
        sg_bundle_str name, file;
        uint32_t version;
        const uint8_t *sha256;
    } packs[SG_BUNDLE_MAX_PACKS];
    sg_bundle_str scopes[SG_BUNDLE_MAX_SCOPES];   /* none: any deployment */
    const uint8_t *table;                /* 8-aligned when the bundle bytes are */
    size_t table_size;
    int is_signed;                       /* a signature is present */
    int verified;                        /* ... and verified with the trusted key */
    uint8_t key_id[SG_KEYID_LEN];        /* when signed */
} sg_bundle_info;

/* What the loader trusts and where it runs. */
typedef struct sg_bundle_trust {
    const uint8_t *public_key;           /* 32 bytes: require a signature by it; NULL: none */
    const char *scope;                   /* this deployment's name; NULL: do not check */
} sg_bundle_trust;

/* Verify bytes[0..n) completely -- the signature first, when a key is trusted,
 * before any other field is believed; then the header, the digest, the manifest
 * (every length, count and character) against the table's own packs and digests,
 * and the scope -- and describe it in *info.  The table itself is verified by the
 * caller's sgr_table_load.  0, or -1 with why in err. */
int sg_bundle_open(const uint8_t *b, size_t n, const sg_bundle_trust *trust, sg_bundle_info *info, char *err,
                   size_t errlen);

/* A new unsigned bundle of table[0..tlen) (a verified table), with pack_sha256[i]
 * the SHA-256 of the source of the table's pack i, the scope patterns, and the
 * build time.  0 with *out and *outlen (sg_malloc'd), or -1 with err. */
int sg_bundle_build(const uint8_t *table, size_t tlen, const uint8_t (*pack_sha256)[32], uint32_t npacks,
                    const char *const *scopes, uint32_t nscopes, int64_t build_time, uint8_t **out, size_t *outlen,
                    char *err, size_t errlen);

/* The bundle b[0..n) signed by secret_key (64 bytes, libsodium's form), replacing
 * any signature it had.  0 with *out and *outlen (sg_malloc'd), or -1 with err. */
int sg_bundle_sign(const uint8_t *b, size_t n, const uint8_t *secret_key, uint8_t **out, size_t *outlen, char *err,
                   size_t errlen);

/* Does the deployment name match the pattern ('*' matches any run of bytes)? */
int sg_bundle_scope_match(const char *pat, size_t plen, const char *name, size_t nlen);
/* A scope pattern or name as the format allows it: 1..255 of printable ASCII, no space. */
int sg_bundle_scope_ok(const char *s, size_t n);

/* ---- keys (text files; docs/fleet.md) ---------------------------------------------
 *   NAME      "shellgate-ed25519-secret KEYID SEED\n", mode 0600
 *   NAME.pub  "shellgate-ed25519-public KEYID KEY\n"
 * KEYID is 16 hex digits, SEED and KEY base64 of 32 bytes. */

/* The key id of a public key, as bytes and as hex (17 bytes with the NUL). */
void sg_key_id(const uint8_t pk[32], uint8_t id[SG_KEYID_LEN], char hex[2 * SG_KEYID_LEN + 1]);
/* Generate a key pair and write NAME (0600) and NAME.pub; refuses to replace either.
 * 0, or -1 with err. */
int sg_key_generate(const char *name, char *hexid, char *err, size_t errlen);
/* Read a public key file: 0 with pk, or -1 with err. */
int sg_key_read_public(const char *path, uint8_t pk[32], char *err, size_t errlen);
/* Read a secret key file (refused unless only its owner can read it): 0 with sk
 * (64 bytes; the caller wipes it with sodium_memzero), or -1 with err. */
int sg_key_read_secret(const char *path, uint8_t sk[64], char *err, size_t errlen);

/* A whole file into sg_malloc'd memory (8-aligned): 0, or -1 with errno set. */
int sg_read_file(const char *path, size_t max, uint8_t **out, size_t *len);

#endif
