/* bundle.c - `shellgate bundle build | sign | verify | show` and `shellgate keygen`
 * (docs/fleet.md): the CLI over lib/bundle.h.  Prints; the library does not. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/bundle.h"
#include "lib/bundle.h"
#include "lib/policy.h"
#include "compiler/compile.h"
#include "common/alloc.h"

#define EX_USAGE 64
#define EX_DATAERR 65
#define EX_NOINPUT 66
#define EX_SOFTWARE 70
#define EX_CANTCREAT 73

static void bundle_usage(void)
{
    fprintf(stderr,
        "usage: shellgate bundle build -o OUT.sgb [--scope PATTERN]... [-I DIR]... FILE...\n"
        "       shellgate bundle sign --key KEY [-o OUT.sgb] BUNDLE\n"
        "       shellgate bundle verify --pub KEY.pub [--scope NAME] BUNDLE\n"
        "       shellgate bundle show BUNDLE\n"
        "       shellgate keygen -o NAME               (NAME: secret key, 0600; NAME.pub: public key)\n");
}

static void diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

static void test_failed(void *ud, const char *file, unsigned line, const char *cmd, const char *want,
                        const char *want_rule, const char *got, const char *got_rule, const char *message)
{
    (void)ud;
    fprintf(stderr, "%s:%u: test failed: %s\n  want: %s%s%s\n  got:  %s (%s): %s\n", file, line, cmd, want,
            want_rule ? " rule " : "", want_rule ? want_rule : "", got, got_rule, message);
}

/* Write bytes to path through path.tmp.PID and rename: readers never see half a file. */
static int write_atomic(const char *path, const uint8_t *b, size_t n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "shellgate: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return EX_CANTCREAT;
    }
    return 0;
}

static int read_bundle(const char *path, uint8_t **b, size_t *n)
{
    if (sg_read_file(path, (size_t)1 << 30, b, n) < 0) {
        fprintf(stderr, "shellgate: %s: cannot read: %s\n", path, strerror(errno));
        return EX_NOINPUT;
    }
    return 0;
}

/* SOURCE_DATE_EPOCH when it is a number (reproducible builds), else now. */
static int64_t build_time(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v >= 0)
            return v;
    }
    return (int64_t)time(NULL);
}

static void hex(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", b[i]);
}

static void print_info(const char *path, const sg_bundle_info *in)
{
    printf("bundle: %s\n", path);
    if (in->verified) {
        printf("signature: good, by the trusted key ");
        hex(in->key_id, SG_KEYID_LEN);
        printf("\n");
    } else if (in->is_signed) {
        printf("signature: by key ");
        hex(in->key_id, SG_KEYID_LEN);
        printf(", not verified (verify it with --pub KEY.pub)\n");
    } else {
        printf("signature: none\n");
    }
    for (uint32_t i = 0; i < in->npacks; i++) {
        printf("pack: %.*s version %u%s\n  source: %.*s\n  sha256: ", (int)in->packs[i].name.n, in->packs[i].name.s,
               in->packs[i].version, i ? "" : " (main)", (int)in->packs[i].file.n, in->packs[i].file.s);
        hex(in->packs[i].sha256, 32);
        printf("\n");
    }
    printf("table: %zu bytes, sha256 ", in->table_size);
    hex(in->table_sha256, 32);
    printf("\nsources: sha256 ");
    hex(in->source_sha256, 32);
    char when[64] = "?";
    time_t t = (time_t)in->build_time;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("\nbuilt: %s\nscope:", when);
    if (!in->nscopes)
        printf(" any deployment");
    for (uint32_t i = 0; i < in->nscopes; i++)
        printf(" %.*s", (int)in->scopes[i].n, in->scopes[i].s);
    printf("\n");
}

/* bundle build -o OUT.sgb [--scope PATTERN]... [-I DIR]... FILE... */
static int cmd_build(int argc, char **argv)
{
    const char *out = NULL, *scopes[SG_BUNDLE_MAX_SCOPES], *incs[64], *files[64];
    uint32_t nscopes = 0;
    size_t ninc = 0, nfiles = 0;
    for (int i = 0; i < argc; i++) {
        int more = i + 1 < argc;
        if (strcmp(argv[i], "-o") == 0 && more)
            out = argv[++i];
        else if (strcmp(argv[i], "--scope") == 0 && more && nscopes < SG_BUNDLE_MAX_SCOPES)
            scopes[nscopes++] = argv[++i];
        else if (strcmp(argv[i], "-I") == 0 && more && ninc < 64)
            incs[ninc++] = argv[++i];
        else if (argv[i][0] == '-' || nfiles == 64)
            return bundle_usage(), EX_USAGE;
        else
            files[nfiles++] = argv[i];
    }
    if (!out || !nfiles)
        return bundle_usage(), EX_USAGE;
    sg_load_options lo = { incs, ninc, diag, NULL, NULL, NULL };
    uint8_t *table = NULL;
    size_t tlen = 0;
    sgc_checked *keep = NULL;
    int rc = sg_compile_files_keep(files, nfiles, &lo, &table, &tlen, &keep);
    if (rc)
        return rc;
    char err[600];
    sg_policy *p = NULL;
    uint8_t (*sha)[32] = NULL;
    uint8_t *b = NULL;
    size_t blen = 0;
    rc = sg_policy_from_table(table, tlen, NULL, files[0], &p, err, sizeof err);
    if (rc) {
        fprintf(stderr, "shellgate: internal error: the compiled table does not verify: %s\n", err);
        rc = EX_SOFTWARE;
        goto out;
    }
    unsigned pass = 0, nfail = 0;
    sg_run_inline_tests(p, test_failed, NULL, &pass, &nfail);
    if (nfail) {
        fprintf(stderr, "%s: %u of %u inline tests failed: no bundle is built\n", files[0], nfail, pass + nfail);
        rc = EX_DATAERR;
        goto out;
    }
    uint32_t np = p->t->npacks;
    if (!(sha = sg_calloc(np ? np : 1, sizeof *sha)) || sodium_init() < 0) {
        rc = EX_SOFTWARE;
        goto out;
    }
    for (uint32_t i = 0; i < np; i++) {
        const char *name, *text;
        size_t len;
        if (sgc_checked_source(keep, i, &name, &text, &len) < 0) {
            fprintf(stderr, "shellgate: internal error: pack %u has no source\n", i);
            rc = EX_SOFTWARE;
            goto out;
        }
        crypto_hash_sha256(sha[i], (const uint8_t *)text, len);
    }
    if (sg_bundle_build(table, tlen, (const uint8_t (*)[32])sha, np, scopes, nscopes, build_time(), &b, &blen, err,
                        sizeof err) < 0) {
        fprintf(stderr, "shellgate: bundle build: %s\n", err);
        rc = EX_DATAERR;
        goto out;
    }
    rc = write_atomic(out, b, blen);
    if (!rc)
        printf("built %s: pack %s version %u, %u pack%s, %zu bytes, unsigned (shellgate bundle sign --key KEY %s)\n",
               out, sgr_str(p->t, p->t->meta->pack_name), p->t->meta->pack_version, np, np == 1 ? "" : "s", blen, out);
out:
    sg_free(b);
    sg_free(sha);
    sg_policy_free(p);
    sgc_checked_free(keep);
    sg_free(table);
    return rc;
}

/* bundle sign --key KEY [-o OUT.sgb] BUNDLE */
static int cmd_sign(int argc, char **argv)
{
    const char *key = NULL, *out = NULL, *in = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
            key = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] != '-' && !in)
            in = argv[i];
        else
            return bundle_usage(), EX_USAGE;
    }
    if (!key || !in)
        return bundle_usage(), EX_USAGE;
    uint8_t sk[64], *b, *s = NULL;
    size_t n, sn;
    char err[1200];
    if (sg_key_read_secret(key, sk, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: %s\n", err);
        return EX_NOINPUT;
    }
    int rc = read_bundle(in, &b, &n);
    if (!rc && sg_bundle_sign(b, n, sk, &s, &sn, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: %s: %s\n", in, err);
        rc = EX_DATAERR;
    }
    sodium_memzero(sk, sizeof sk);
    if (!rc)
        rc = write_atomic(out ? out : in, s, sn);
    if (!rc) {
        char id[2 * SG_KEYID_LEN + 1];
        for (int i = 0; i < SG_KEYID_LEN; i++)
            snprintf(id + 2 * i, 3, "%02x", s[sn - 72 + i]);
        printf("signed %s with key %s\n", out ? out : in, id);
    }
    sg_free(s);
    sg_free(b);
    return rc;
}

/* bundle verify --pub KEY.pub [--scope NAME] BUNDLE; bundle show BUNDLE */
static int cmd_verify(int argc, char **argv, int show)
{
    const char *pub = NULL, *scope = NULL, *in = NULL;
    for (int i = 0; i < argc; i++) {
        if (!show && strcmp(argv[i], "--pub") == 0 && i + 1 < argc)
            pub = argv[++i];
        else if (!show && strcmp(argv[i], "--scope") == 0 && i + 1 < argc)
            scope = argv[++i];
        else if (argv[i][0] != '-' && !in)
            in = argv[i];
        else
            return bundle_usage(), EX_USAGE;
    }
    if (!in || (!show && !pub))
        return bundle_usage(), EX_USAGE;
    uint8_t pk[32], *b;
    size_t n;
    char err[1200];
    if (pub && sg_key_read_public(pub, pk, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: %s\n", err);
        return EX_NOINPUT;
    }
    int rc = read_bundle(in, &b, &n);
    if (rc)
        return rc;
    sg_bundle_info *info = sg_malloc(sizeof *info);
    sg_bundle_trust tr = { pub ? pk : NULL, scope };
    if (!info) {
        rc = EX_SOFTWARE;
    } else if (sg_bundle_open(b, n, &tr, info, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: %s: refused: %s\n", in, err);
        rc = 1;
    } else {
        print_info(in, info);
        if (scope)
            printf("scope check: '%s' is in the bundle's scope\n", scope);
    }
    sg_free(info);
    sg_free(b);
    return rc;
}

int sg_cli_bundle(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "build") == 0)
        return cmd_build(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "sign") == 0)
        return cmd_sign(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "verify") == 0)
        return cmd_verify(argc - 1, argv + 1, 0);
    if (argc >= 1 && strcmp(argv[0], "show") == 0)
        return cmd_verify(argc - 1, argv + 1, 1);
    bundle_usage();
    return EX_USAGE;
}

/* keygen -o NAME */
int sg_cli_keygen(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[0], "-o") != 0 || !argv[1][0]) {
        bundle_usage();
        return EX_USAGE;
    }
    char id[2 * SG_KEYID_LEN + 1], err[1200];
    if (sg_key_generate(argv[1], id, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: keygen: %s\n", err);
        return EX_CANTCREAT;
    }
    printf("key %s: secret key %s (mode 0600: keep it where the team signs), public key %s.pub (give it to every "
           "host: --require-signature %s.pub)\n", id, argv[1], argv[1], argv[1]);
    return 0;
}
