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
    const char *usage;                 /* exactly as printed: "usage: ..." lines, each ending in \n */
} verb_help;

/* The usage of run, session and hook is printed by those verbs too (cli/run.c,
 * cli/session.c, cli/hook.c print their own on a usage error); tests/cli.sh holds
 * the two texts equal.  Every other verb prints its usage from here. */
static const verb_help verbs[] = {
    { "check", "decide a command line (exit 0 allow, 1 deny, 2 ask, 75 rate-limited or not askable)",
      "usage: shellgate check [-p POLICY] [--cwd DIR] [--root DIR]... [--platform P] [--json] [--argv] [admission]\n"
      "                       -- COMMAND...\n"
      "       shellgate check [-p POLICY] [--cwd DIR] [--root DIR]... [--platform P] [admission] --batch\n"
      "  POLICY: [-I DIR]... [--require-signature KEY.pub] [--scope NAME] (how it loads)\n"
      "  P: linux, macos or windows, where the command runs (default: this host); on\n"
      "     macos and windows program names fold case (RM runs rm), and windows drops .exe\n"
      "  admission: [--state FILE | --admit] [--agent ID] [--team NAME] [--non-interactive]\n"
      "             [--log FILE [--log-max-bytes N]]\n"
      "             [--rate-store redis://HOST[:PORT][/DB] [--rate-store-down deny|local]\n"
      "              [--rate-store-timeout MS]]\n"
      "One word after -- is a shell line; several words (or --argv) are one command's\n"
      "argv, quoted back into one line: `check -- cat \"my file\"` checks cat 'my file'.\n" },
    { "explain", "show the segments, every rule tried on each, and the decider",
      "usage: shellgate explain [-p POLICY] [--cwd DIR] [--root DIR]... [--platform P] [--json] [--argv]\n"
      "                         -- COMMAND...\n"
      "       shellgate explain [-p POLICY] [--cwd DIR] [--root DIR]... [--platform P] --batch\n"
      "  POLICY: [-I DIR]... [--require-signature KEY.pub] [--scope NAME] (how it loads)\n"
      "  P: linux, macos or windows (as check's)\n" },
    { "test", "run inline tests (.rules) and case files (.cases); \"N passed, N failed\"",
      "usage: shellgate test [-p POLICY] [--platform P] [--coverage | --json] [--strict] [-I DIR]... FILE...\n"
      "  POLICY: [--require-signature KEY.pub] [--scope NAME] (how it loads)\n"
      "--strict: a pack compiled with warnings fails, as one with errors does.\n"
      "--platform: the tests' platform (linux, macos or windows; default: this host)\n"
      "until a case file's #platform line names another.\n" },
    { "compile", "compile rule files to a table; --check only diagnoses and runs the tests",
      "usage: shellgate compile [-o OUT.sgt] [--check] [--strict] [--json] [-I DIR]... FILE...\n"
      "One FILE writes FILE.sgt (or OUT.sgt); several files compile to one table only\n"
      "with -o.  --strict: a warning fails the compile as an error does (exit 65).\n" },
    { "dump", "print a table in readable form",
      "usage: shellgate dump [--json] [-I DIR]... [--require-signature KEY.pub] [--scope NAME] POLICY\n" },
    { "decompile", "print rule text that compiles to the same decisions",
      "usage: shellgate decompile [-I DIR]... [--require-signature KEY.pub] [--scope NAME] POLICY\n" },
    { "fuzz", "rewrite a pack's denied and asked tests in meaning-keeping ways; report the weaker",
      "usage: shellgate fuzz [-I DIR]... [--seed N] [--max N] [--json] PACK [CASES...]\n"
      "  PACK: a POLICY; [--require-signature KEY.pub] [--scope NAME] (how it loads)\n" },
    { "approve", "answer an ask by its approval id",
      "usage: shellgate approve ID [--once | --session | --always] [--agent ID] [--state FILE] [store]\n"
      "  store: [--rate-store URL [--rate-store-down deny|local] [--rate-store-timeout MS]]\n" },
    { "approvals", "list pending asks and granted approvals",
      "usage: shellgate approvals [--state FILE] [store] [--json]\n"
      "  store: [--rate-store URL [--rate-store-down deny|local] [--rate-store-timeout MS]]\n" },
    { "revoke", "forget a pending ask or an approval by its id",
      "usage: shellgate revoke ID [--state FILE] [store]\n"
      "  store: [--rate-store URL [--rate-store-down deny|local] [--rate-store-timeout MS]]\n" },
    { "state", "forget every limit, approval and pending ask of a store",
      "usage: shellgate state reset [--state FILE] [store]\n"
      "  store: [--rate-store URL [--rate-store-down deny|local] [--rate-store-timeout MS]]\n" },
    { "bundle", "build, sign, verify and show signed rule bundles (.sgb)",
      "usage: shellgate bundle build -o OUT.sgb [--scope PATTERN]... [-I DIR]... FILE...\n"
      "       shellgate bundle sign --key KEY [-o OUT.sgb] BUNDLE\n"
      "       shellgate bundle verify --pub KEY.pub [--scope NAME] BUNDLE\n"
      "       shellgate bundle show BUNDLE\n" },
    { "keygen", "make a signing key pair (NAME: secret key, 0600; NAME.pub: public key)",
      "usage: shellgate keygen -o NAME\n" },
    { "run", "decide a command, then run exactly what was decided",
      "usage: shellgate run [-p POLICY] [-I DIR]... [--cwd DIR] [--root DIR]... [--timeout S [--grace S]]\n"
      "                     [--max-output N] [--truncate head|head-tail] [--env NAME]...\n"
      "                     [--rlimit NAME=VALUE]... [--session ID [--session-dir DIR]\n"
      "                     [--max-sessions N] [--session-ttl S]] [--sandbox none|bwrap|auto]\n"
      "                     [--bwrap PATH] [--state FILE] [--agent ID] [--team NAME] [--rate-store URL\n"
      "                     [--rate-store-down deny|local] [--rate-store-timeout MS]]\n"
      "                     [--require-signature KEY.pub [--scope NAME]] [--json] -- COMMAND\n" },
    /* cli/session.c's usage, to the byte */
    { "session", "the persistent shell state of `run --session`",
      "usage: shellgate session show|reset --session ID [--session-dir DIR]\n"
      "       shellgate session set NAME=VALUE --session ID [-p POLICY] [--session-dir DIR]\n"
      "       shellgate session unset NAME --session ID [-p POLICY] [--session-dir DIR]\n"
      "         (-p loads as run does: [-I DIR]... [--require-signature KEY.pub [--scope NAME]])\n"
      "       shellgate session list [--session-dir DIR]\n" },
    { "hook", "a coding agent's pre-tool hook: its JSON on stdin, its answer on stdout (docs/integrations.md)",
      "usage: shellgate hook AGENT [-p POLICY] [--state FILE] [--log FILE [--log-max-bytes N]]\n"
      "                      [--rate-store URL [--rate-store-down deny|local] [--rate-store-timeout MS]]\n"
      "                      [--agent ID] [--team NAME] [--ask ask|deny|pass] [--non-interactive]\n"
      "                      [--print-config]\n"
      "  POLICY: [-I DIR]... [--require-signature KEY.pub] [--scope NAME] (how it loads)\n"
      "AGENT: claude-code, codex, gemini-cli, cursor, copilot.  The agent's hook JSON on\n"
      "standard input, its answer on standard output (docs/integrations.md).\n" },
    { "serve", "answer check, explain, approve, reload and stats as JSON lines on a Unix socket",
      "usage: shellgate serve --socket PATH [-p POLICY] [--mode 0600] [--max-request BYTES] [--approve]\n"
      "                       [--state FILE] [--log FILE [--log-max-bytes N]] [--agent ID] [--team NAME]\n"
      "                       [--non-interactive] [--rate-store URL [--rate-store-down deny|local]\n"
      "                       [--rate-store-timeout MS]]\n"
      "  POLICY: [-I DIR]... [--require-signature KEY.pub] [--scope NAME] (how it loads)\n"
      "JSON lines: {\"id\": 1, \"op\": \"check\", \"cmd\": \"...\", \"cwd\": \"/abs\", \"agent\": \"...\",\n"
      "            \"team\": \"...\"};\n"
      "ops check, explain, approve, reload, stats (docs/integrations.md).\n" },
    { "help", "print the usage of every command, or of one",
      "usage: shellgate help [COMMAND]\n" },
    { "version", "print the version (also --version)",
      "usage: shellgate --version\n" },
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

int cli_print_usage(FILE *f, const char *verb)
{
    const verb_help *v = find(verb);
    if (!v)
        return -1;
    fputs(v->usage, f);
    return 0;
}

int cli_verb_usage(FILE *f, const char *verb)
{
    const verb_help *v = find(verb);
    if (!v)
        return -1;
    fputs(v->usage, f);
    fprintf(f, "%s\n", v->summary);
    return 0;
}

/* Does line (after "usage: " or its indent) start "shellgate VERB ACTION"? */
static int is_form(const char *line, size_t n, const char *verb, const char *action)
{
    char want[128];
    size_t k = 0;
    while (k < n && line[k] == ' ')
        k++;
    if (n - k >= 7 && strncmp(line + k, "usage: ", 7) == 0)
        k += 7;
    int w = snprintf(want, sizeof want, "shellgate %s%s%s", verb, action ? " " : "", action ? action : "");
    if (w < 0 || (size_t)w >= sizeof want || n - k < (size_t)w || strncmp(line + k, want, (size_t)w) != 0)
        return 0;
    return n - k == (size_t)w || line[k + (size_t)w] == ' ';
}

int cli_action_usage(FILE *f, const char *verb, const char *action)
{
    const verb_help *v = find(verb);
    if (!v)
        return -1;
    int printed = 0, in = 0;
    for (const char *p = v->usage; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t k = 0;
        while (k < n && p[k] == ' ')
            k++;
        int form = is_form(p, n, verb, NULL);
        if (form)
            in = is_form(p, n, verb, action);
        else if (k < 7)
            in = 0;                    /* a note under the forms, not a form's next line */
        if (in) {
            size_t off = k + (n - k >= 7 && strncmp(p + k, "usage: ", 7) == 0 ? 7 : 0);
            if (form)
                fprintf(f, "%s%.*s\n", printed ? "       " : "usage: ", (int)(n - off), p + off);
            else
                fprintf(f, "%.*s\n", (int)n, p);
            printed++;
        }
        p += n + (nl != NULL);
    }
    return printed ? 0 : -1;
}

void cli_missing(const char *verb, const char *what)
{
    fprintf(stderr, "shellgate %s: missing %s\n", verb, what);
    cli_print_usage(stderr, verb);
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
    if (word[0] == '-') {
        /* before any command, the options are shellgate's own: --help, --version */
        static const char *const top[] = { "--help", "--version" };
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(word, "="), word);
        const char *near = cli_nearest(name, top, sizeof top / sizeof *top);
        fprintf(stderr, "shellgate: unknown option '%s'", word);
        if (near)
            fprintf(stderr, "; did you mean '%s'?", near);
        fprintf(stderr, "\nbefore a command, shellgate takes --help or --version; run 'shellgate help' for the "
                "commands\n");
        return 64;
    }
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
