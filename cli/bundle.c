/* bundle.c - `shellgate bundle build | sign | verify | show` and `shellgate keygen`
 * (docs/fleet.md): the CLI over lib/bundle.h.  Prints; the library does not. */
#include <errno.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/bundle.h"
#include "cli/help.h"
#include "lib/bundle.h"
#include "lib/policy.h"
#include "compiler/compile.h"
#include "common/alloc.h"

#define EX_USAGE 64
#define EX_DATAERR 65
#define EX_NOINPUT 66
#define EX_SOFTWARE 70
#define EX_CANTCREAT 73

/* "shellgate bundle ACTION: WHY" (or "shellgate keygen: WHY"), then the usage of that
 * one form (cli/help.c holds it): EX_USAGE. */
static int refuse(const char *action, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const char *action, const char *fmt, ...)
{
    va_list ap;
    int keygen = strcmp(action, "keygen") == 0;
    fprintf(stderr, "shellgate %s%s: ", keygen ? "keygen" : "bundle ", keygen ? "" : action);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (keygen)
        cli_print_usage(stderr, "keygen");
    else
        cli_action_usage(stderr, "bundle", action);
    return EX_USAGE;
}

/* An argument of action that is none of its options (opts, n): unknown, with the
 * nearest; a value that is missing; or an operand too many. */
static int bad_arg(const char *action, const char *a, int has_next, const char *const *opts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a, opts[i]) == 0 && !has_next)
            return refuse(action, "%s needs a value", a);
    if (a[0] != '-' || !a[1])
        return refuse(action, "takes one operand, not also '%s'", a);
    const char *near = cli_nearest(a, opts, n);
    if (near)
        return refuse(action, "unknown option '%s'; did you mean '%s'?", a, near);
    return refuse(action, "unknown option '%s'", a);
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
    static const char *const opts[] = { "-o", "--scope", "-I" };
    for (int i = 0; i < argc; i++) {
        int more = i + 1 < argc;
        if (strcmp(argv[i], "-o") == 0 && more)
            out = argv[++i];
        else if (strcmp(argv[i], "--scope") == 0 && more) {
            if (nscopes == SG_BUNDLE_MAX_SCOPES)
                return refuse("build", "at most %d --scope patterns", SG_BUNDLE_MAX_SCOPES);
            scopes[nscopes++] = argv[++i];
        } else if (strcmp(argv[i], "-I") == 0 && more) {
            if (ninc == 64)
                return refuse("build", "at most 64 -I directories");
            incs[ninc++] = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1])
            return bad_arg("build", argv[i], more, opts, sizeof opts / sizeof *opts);
        else if (nfiles == 64)
            return refuse("build", "at most 64 FILEs");
        else
            files[nfiles++] = argv[i];
    }
    if (!out)
        return refuse("build", "missing -o OUT.sgb (the bundle to write)");
    if (!nfiles)
        return refuse("build", "missing the rule FILE... to build the bundle from");
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
    sg_run_inline_tests(p, SGR_PLATFORM_HOST, test_failed, NULL, &pass, &nfail);
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
    static const char *const opts[] = { "--key", "-o" };
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
            key = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if ((argv[i][0] != '-' || !argv[i][1]) && !in)
            in = argv[i];
        else
            return bad_arg("sign", argv[i], i + 1 < argc, opts, sizeof opts / sizeof *opts);
    }
    if (!key)
        return refuse("sign", "missing --key KEY (the secret key, from shellgate keygen)");
    if (!in)
        return refuse("sign", "missing the BUNDLE to sign");
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
    static const char *const opts[] = { "--pub", "--scope" };
    const char *action = show ? "show" : "verify";
    for (int i = 0; i < argc; i++) {
        if (!show && strcmp(argv[i], "--pub") == 0 && i + 1 < argc)
            pub = argv[++i];
        else if (!show && strcmp(argv[i], "--scope") == 0 && i + 1 < argc)
            scope = argv[++i];
        else if ((argv[i][0] != '-' || !argv[i][1]) && !in)
            in = argv[i];
        else if (show && argv[i][0] == '-' && argv[i][1])
            return refuse("show", "takes no option ('%s'): it prints what the bundle says, verified by nothing "
                          "(bundle verify --pub KEY.pub checks it)", argv[i]);
        else
            return bad_arg(action, argv[i], i + 1 < argc, opts, sizeof opts / sizeof *opts);
    }
    if (!show && !pub)
        return refuse("verify", "missing --pub KEY.pub (the public key the bundle must be signed by)");
    if (!in)
        return refuse(action, "missing the BUNDLE to %s", action);
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
    static const char *const actions[] = { "build", "sign", "verify", "show" };
    if (argc < 1) {
        cli_missing("bundle", "the action: build, sign, verify or show");
        return EX_USAGE;
    }
    const char *near = cli_nearest(argv[0], actions, sizeof actions / sizeof *actions);
    fprintf(stderr, "shellgate bundle: unknown action '%s'", argv[0]);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, "\nthe actions are build, sign, verify and show ('shellgate help bundle' prints their usage)\n");
    return EX_USAGE;
}

/* keygen -o NAME */
int sg_cli_keygen(int argc, char **argv)
{
    static const char *const opts[] = { "-o" };
    if (argc < 1)
        return refuse("keygen", "missing -o NAME (where the key pair goes: NAME and NAME.pub)");
    if (argv[0][0] != '-' || !argv[0][1])
        return refuse("keygen", "takes -o NAME, not an operand ('%s')", argv[0]);
    if (strcmp(argv[0], "-o") != 0)
        return bad_arg("keygen", argv[0], 1, opts, 1);
    if (argc < 2 || !argv[1][0])
        return refuse("keygen", "-o needs a value (the NAME of the key pair)");
    if (argc > 2)
        return refuse("keygen", "takes -o NAME and nothing more, not '%s'", argv[2]);
    char id[2 * SG_KEYID_LEN + 1], err[1200];
    if (sg_key_generate(argv[1], id, err, sizeof err) < 0) {
        fprintf(stderr, "shellgate: keygen: %s\n", err);
        return EX_CANTCREAT;
    }
    printf("key %s: secret key %s (mode 0600: keep it where the team signs), public key %s.pub (give it to every "
           "host: --require-signature %s.pub)\n", id, argv[1], argv[1], argv[1]);
    return 0;
}
