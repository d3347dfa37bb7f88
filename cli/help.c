/* help.c - the CLI's words about itself (help.h): each verb's usage, `help CMD`
 * and `CMD --help`, --version, "did you mean" for unknown verbs and options, and
 * what a missing operand is.  The one list of verbs and their usage lines; the
 * man page (docs/shellgate.1) says the same at length. */
#include <stdlib.h>
#include <string.h>
#include "cli/help.h"

typedef struct verb_help {
    const char *name;
    const char *summary;
    const char *usage;                 /* lines after "usage: " (each indented by the caller) */
} verb_help;

static const verb_help verbs[] = {
    { "check", "decide a command line (exit 0 allow, 1 deny, 2 ask, 75 rate-limited or not askable)",
      "shellgate check [-p POLICY] [--cwd DIR] [--root DIR]... [--json] [--argv] [admission] -- COMMAND...\n"
      "shellgate check [-p POLICY] [--cwd DIR] [--root DIR]... --batch\n"
      "  admission: [--state FILE | --admit] [--agent ID] [--team NAME] [--non-interactive]\n"
      "             [--log FILE [--log-max-bytes N]]\n"
      "             [--rate-store redis://HOST[:PORT][/DB] [--rate-store-down deny|local]\n"
      "              [--rate-store-timeout MS]]\n"
      "One word after -- is a shell line; several words (or --argv) are one command's\n"
      "argv, quoted back into one line: `check -- cat \"my file\"` checks cat 'my file'." },
    { "explain", "show the segments, every rule tried on each, and the decider",
      "shellgate explain [-p POLICY] [--cwd DIR] [--root DIR]... [--json] [--argv] -- COMMAND...\n"
      "shellgate explain [-p POLICY] --batch" },
    { "test", "run inline tests (.rules) and case files (.cases); \"N passed, N failed\"",
      "shellgate test [-p POLICY] [--coverage] [--json] [-I DIR]... FILE..." },
    { "compile", "compile rule files to a table; --check only diagnoses and runs the tests",
      "shellgate compile [-o OUT.sgt] [--check] [--json] [-I DIR]... FILE...\n"
      "One FILE writes FILE.sgt (or OUT.sgt); several files compile to one table only\n"
      "with -o." },
    { "dump", "print a table in readable form",
      "shellgate dump [--json] POLICY" },
    { "decompile", "print rule text that compiles to the same decisions",
      "shellgate decompile POLICY" },
    { "fuzz", "rewrite a pack's denied and asked tests in meaning-keeping ways; report the weaker",
      "shellgate fuzz [-I DIR]... [--seed N] [--max N] [--json] PACK [CASES...]" },
    { "approve", "answer an ask by its approval id",
      "shellgate approve ID [--once | --session | --always] [--state FILE] [--rate-store URL]" },
    { "approvals", "list pending asks and granted approvals",
      "shellgate approvals [--state FILE] [--json]" },
    { "revoke", "forget a pending ask or an approval by its id",
      "shellgate revoke ID [--state FILE]" },
    { "state", "forget every limit, approval and pending ask of a store",
      "shellgate state reset [--state FILE] [--rate-store URL]" },
    { "bundle", "build, sign and verify signed rule bundles (.sgb)",
      "shellgate bundle build -o OUT.sgb [--scope PATTERN]... FILE...\n"
      "shellgate bundle sign --key KEY BUNDLE\n"
      "shellgate bundle verify --pub KEY.pub [--scope NAME] BUNDLE" },
    { "keygen", "make a signing key pair (NAME: secret key, 0600; NAME.pub: public key)",
      "shellgate keygen -o NAME" },
    { "run", "decide a command, then run exactly what was decided",
      "shellgate run [-p POLICY] [--cwd DIR] [--root DIR]... [--session ID] [--json] -- COMMAND" },
    { "session", "the persistent shell state of `run --session`",
      "shellgate session show|set NAME=VALUE|unset NAME|reset|list [--session ID]" },
    { "hook", "a coding agent's pre-tool hook: its JSON on stdin, its answer on stdout (docs/integrations.md)",
      "shellgate hook claude-code|codex|gemini-cli|cursor|copilot [-p POLICY] [--state FILE] [--log FILE]\n"
      "               [--rate-store URL] [--agent ID] [--team NAME] [--ask ask|deny|pass] [--non-interactive]\n"
      "shellgate hook AGENT --print-config [OPTIONS]   (the snippet that installs the hook)" },
    { "serve", "answer check, explain, approve, reload and stats as JSON lines on a Unix socket",
      "shellgate serve --socket PATH [-p POLICY] [--mode 0600] [--max-request BYTES] [--approve]\n"
      "                [--state FILE] [--log FILE] [--rate-store URL] [--agent ID] [--team NAME]" },
    { "help", "print the usage of every command, or of one",
      "shellgate help [COMMAND]" },
    { "version", "print the version (also --version)",
      "shellgate --version" },
};
#define NVERBS (sizeof verbs / sizeof *verbs)

static const verb_help *find(const char *name)
{
    for (size_t i = 0; i < NVERBS; i++)
        if (strcmp(verbs[i].name, name) == 0)
            return &verbs[i];
    return NULL;
}

int cli_is_verb(const char *name)
{
    return find(name) != NULL;
}

static void print_usage_lines(FILE *f, const char *first, const char *usage)
{
    fputs(first, f);
    for (const char *p = usage; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%.*s\n", (int)n, p);
        p += n + (nl != NULL);
        if (*p)
            fputs("       ", f);
    }
}

void cli_usage(FILE *f)
{
    fputs("usage: shellgate COMMAND [OPTION]... [--] [OPERAND]...\n\ncommands:\n", f);
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fputs("\nPOLICY is an embedded pack name (", f);
    for (size_t i = 0; sg_embedded_pack(i); i++)
        fprintf(f, "%s%s", i ? ", " : "", sg_embedded_pack(i));
    fputs("), a .rules file, a compiled\n"
          ".sgt table or a bundle (.sgb); without -p the embedded default pack decides.\n"
          "`shellgate help COMMAND` or `shellgate COMMAND --help` prints a command's usage;\n"
          "man shellgate(1) and shellgate-rules(5) are the manual.\n", f);
}

int cli_verb_usage(FILE *f, const char *verb)
{
    const verb_help *v = find(verb);
    if (!v)
        return -1;
    print_usage_lines(f, "usage: ", v->usage);
    fprintf(f, "%s\n", v->summary);
    return 0;
}

void cli_missing(const char *verb, const char *what)
{
    fprintf(stderr, "shellgate %s: missing %s\n", verb, what);
    const verb_help *v = find(verb);
    if (v)
        print_usage_lines(stderr, "usage: ", v->usage);
}

/* Damerau-free Levenshtein distance of a and b, capped at 9 (the names are short). */
static unsigned distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40)
        return 9;
    unsigned row[41];
    for (size_t j = 0; j <= m; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m] > 9 ? 9 : row[m];
}

const char *cli_nearest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    unsigned bd = 9;
    size_t wl = strlen(word);
    for (size_t i = 0; i < n; i++) {
        unsigned d = distance(word, cands[i]);
        size_t cl = strlen(cands[i]);
        /* a prefix of a longer name ("comp" for "compile") also counts as close */
        if (wl >= 3 && cl > wl && strncmp(word, cands[i], wl) == 0)
            d = 1;
        if (d < bd) {
            bd = d;
            best = cands[i];
        }
    }
    /* close enough to be what was meant: about a third of the word */
    return best && bd <= (wl < 6 ? 2u : (unsigned)wl / 3) ? best : NULL;
}

int cli_unknown_verb(const char *word)
{
    const char *names[NVERBS];
    for (size_t i = 0; i < NVERBS; i++)
        names[i] = verbs[i].name;
    const char *near = cli_nearest(word, names, NVERBS);
    fprintf(stderr, "shellgate: unknown command '%s'", word);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, "\nrun 'shellgate help' for the list of commands\n");
    return 64;
}

int cli_help(int argc, char **argv)
{
    if (argc < 1) {
        cli_usage(stdout);
        return 0;
    }
    if (cli_verb_usage(stdout, argv[0]) == 0)
        return 0;
    return cli_unknown_verb(argv[0]);
}

int cli_version(void)
{
    printf("shellgate %s\n", sg_version());
    return 0;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    }
    return 0;
}
