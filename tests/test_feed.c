/* test_feed.c - what echo and printf print, as runtime/feed.c follows it, against what
 * bash 5.2 (and, for echo, dash) really print.
 *
 * A shell fed `echo 'CODE' | sh` runs what echo prints, so sgr_feed_output must print
 * exactly what bash's echo and printf do: each sample command below is parsed, its
 * output worked out, then the command is run by bash (argv, no shell of ours in
 * between: bash -c CMD with PATH=/usr/bin:/bin) and, for echo, by dash, and their
 * standard output compared byte for byte with the readings.  The locale is UTF-8:
 * in the C locale bash prints \u escapes above 0x7f as written, which differ from
 * the UTF-8 bytes only in letters no shell reads as syntax.  The samples print fixed
 * text only.  Commands whose output is only known at run time must be refused. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "common/arena.h"
#include "runtime/shparse.h"
#include "runtime/feed.h"

/* Run sh (bash or dash) -c cmd; its standard output into *out (malloc'd). */
static int run(const char *sh, const char *cmd, char **out, size_t *n)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        static char e0[] = "PATH=/usr/bin:/bin", e1[] = "LC_ALL=C.UTF-8", dash_c[] = "-c";
        char *const env[] = { e0, e1, NULL };
        char *const argv[] = { (char *)sh, dash_c, (char *)cmd, NULL };
        execve(sh, argv, env);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 256, len = 0;
    char *b = malloc(cap);
    for (;;) {
        if (len + 128 > cap)
            b = realloc(b, cap *= 2);
        ssize_t r = read(p[0], b + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    *out = b;
    *n = len;
    return 0;
}

static void show(const char *what, const char *s, size_t n)
{
    fprintf(stderr, "  %s: \"", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, (unsigned char)s[i] < 32 || (unsigned char)s[i] > 126 ? "\\x%02x" : "%c", (unsigned char)s[i]);
    fprintf(stderr, "\"\n");
}

static const char *const samples[] = {
    "echo rm -rf /",
    "echo 'rm -rf /'",
    "echo -n 'a b'",
    "echo -e 'a\\tb\\nc'",
    "echo -e '\\0101|\\101|\\x41|\\x4|\\u00e9|\\e|\\E|\\q|\\'",
    "echo -e 'x' 'y\\c' 'z'",
    "echo -ne 'x\\ty'",
    "echo -en",
    "echo -e",
    "echo -nE 'a\\tb'",
    "echo -x y",
    "echo -- x",
    "echo -neq x",
    "echo 'a\\nb'",
    "echo '\\x41|\\0101|\\101|\\c|z'",
    "echo '\\e|\\E|\\q|\\\\'",
    "echo -n -e 'rm\\x20-rf /'",
    "echo ''",
    "echo",
    "printf 'rm -rf /\\n'",
    "printf '%s\\n' 'rm -rf /'",
    "printf 'r%s -rf /\\n' m",
    "printf '\\162\\155 -rf /'",
    "printf '\\x72\\x6d -rf /'",
    "printf 'a\\cb'",
    "printf '%b' 'a\\cbc'",
    "printf '\\101|\\0101|\\1a'",
    "printf '%s-%s\\n' a b c",
    "printf '%5s|%-5s|%.2s|\\n' ab cd efg",
    "printf '%d|%i|%x|%o|%u|%X\\n' 42 -3 255 8 7 3054",
    "printf '%05d|%+d|% d|%-3d|%.3d\\n' 42 5 6 7 8",
    "printf '%c|' hello",
    "printf '%%|%s\\n'",
    "printf -- '%s\\n' x",
    "printf '\\x41\\u00e9\\U0001F600\\n'",
    "printf '%b\\n' '\\0101\\101\\x41\\e\\q'",
    "printf '%s'",
    "printf '%s %s\\n' a",
    "printf 'x\\\"y\\?z\\n'",
    "printf '%b|' 'a\\\"b' 'c\\?d'",
    "printf '%b' 'a\\'",
    "printf 'a\\'",
    "printf '%s\\n' -rf /",
    "printf '%s %s %s\\n' rm -rf /",
    "printf -v x 'rm -rf /'",
    NULL
};

/* Run only at run time: refused, with a reason. */
static const char *const refused[] = {
    "echo $X",
    "echo \"$(id)\"",
    "echo *",
    "echo {a,b}",
    "echo ~",
    "printf \"$F\"",
    "printf '%q\\n' x",
    "printf '%*s\\n' 3 x",
    "printf '%f\\n' 1",
    "printf '%d\\n' 0x10",
    "printf -x y",
    "printf",
    "rev",
    "cat",
    NULL
};

int main(void)
{
    sg_arena a;
    sg_arena_init(&a, 1 << 16);
    int have_dash = access("/bin/dash", X_OK) == 0;
    for (const char *const *c = samples; *c; c++) {
        sg_arena_reset(&a);
        sgr_cmdline cl;
        CHECK(sgr_sh_parse(&a, *c, strlen(*c), NULL, &cl) == 0 && cl.nseg >= 1);
        const char *out[2] = { NULL, NULL }, *why = NULL;
        uint32_t len[2] = { 0, 0 };
        int n = sgr_feed_output(&a, &cl.seg[0], out, len, &why);
        if (n < 1) {
            CHECK(n >= 1);
            fprintf(stderr, "  case: %s (%s)\n", *c, why ? why : "?");
            continue;
        }
        char *b;
        size_t bn;
        CHECK(run("/bin/bash", *c, &b, &bn) == 0);
        int ok = bn == len[0] && memcmp(b, out[0], bn) == 0;
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "  case (bash): %s\n", *c);
            show("bash", b, bn);
            show("ours", out[0], len[0]);
        }
        free(b);
        if (have_dash && strncmp(*c, "echo", 4) == 0) {
            CHECK(run("/bin/dash", *c, &b, &bn) == 0);
            int k = n == 2 ? 1 : 0;
            ok = bn == len[k] && memcmp(b, out[k], bn) == 0;
            CHECK(ok);
            if (!ok) {
                fprintf(stderr, "  case (dash): %s\n", *c);
                show("dash", b, bn);
                show("ours", out[k], len[k]);
            }
            free(b);
        }
    }
    for (const char *const *c = refused; *c; c++) {
        sg_arena_reset(&a);
        sgr_cmdline cl;
        CHECK(sgr_sh_parse(&a, *c, strlen(*c), NULL, &cl) == 0 && cl.nseg >= 1);
        const char *out[2] = { NULL, NULL }, *why = NULL;
        uint32_t len[2] = { 0, 0 };
        int n = sgr_feed_output(&a, &cl.seg[0], out, len, &why);
        CHECK(n == -1 && why && *why);
        if (n != -1)
            fprintf(stderr, "  case (should be refused): %s\n", *c);
    }
    sg_arena_free(&a);
    return sg_test_summary();
}
