/* feed.h - the program a shell or an interpreter is fed on the line.
 *
 * `echo 'rm -rf /' | sh`, `printf 'rm -rf /\n' | bash -s`, `sh <<'EOF'`, `bash <<< ...`,
 * `bash <(echo ...)`, `source <(printf ...)`, `python3 - < file`, `curl x | python3`:
 * a shell or interpreter runs the text its standard input, a process substitution
 * or /dev/stdin (in any spelling that resolves to it) gives it as its program.  Which programs do that, and when (no
 * operand, `-`, `sh -s`, not with `-c` or `python3 -c`), is the table's data (the
 * `stdin`, `script` and `code` clauses of std/wrappers); `source` and `.` are
 * bash's.  Where the text is literal on the line (echo's and printf's words, a
 * here-document with a quoted delimiter or no expansion, a here-string, cat copying
 * one of them) a shell's is parsed as its script: the commands become segments of
 * their own (nest SCRIPT); where it is made at run time (a decoder, `rev`, `tr`, a
 * download, `cat FILE`, an expansion) the program's segment is dynamic.
 *
 * Arena-only and filesystem-free, like the parser and the unwrapper. */
#ifndef SGR_FEED_H
#define SGR_FEED_H
#include "shparse.h"
#include "table.h"

/* Segment si of cl (unwrapped: spec and base set) as a program fed on the line:
 * its fed program parsed as nested segments, or si marked dynamic.  Returns 0, or
 * -2 when the arena is exhausted. */
int sgr_feed(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgr_table *t, const sgr_sh_limits *lim);

/* sgr_feed's first test, inline for the loop over every segment: could s be fed a
 * program at all (a program declared with `stdin` or a shell, or source and .)? */
static inline int sgr_feed_may(const sgr_table *t, const sgr_segment *s)
{
    if (s->argc == 0)
        return 0;
    uint32_t bl = s->argv[0].len - s->base;
    return (s->spec && (t->progs[s->spec - 1].flags & (SGT_PROG_STDIN | SGT_PROG_RUNS_NOTHING))) || bl == 6 || bl == 1;
}

/* What segment s writes on its standard output when that is literal on the line:
 * echo's words (out[0] as bash's echo reads its options and escapes, out[1], when
 * it differs, as dash's and bash's under xpg_echo do), printf's format applied to
 * its words, or what cat copies from a here-document or here-string.  Returns the
 * number of readings (1 or 2) with out[] and len[] set (arena strings), -1 when the
 * output is only known at run time (*why: a static string saying why), -2 out of
 * memory. */
int sgr_feed_output(sg_arena *a, const sgr_segment *s, const char *out[2], uint32_t len[2], const char **why);

/* What the line feeds segment si on its standard input, when that is literal on
 * the line (as sgr_feed reads it for a shell: a redirection, a here-document, the
 * command before it in its pipeline).  Returns the number of readings (1 or 2)
 * with out[] and len[] set, 0 when the line shows nothing (the caller's standard
 * input), -1 when it is made at run time, -2 out of memory. */
int sgr_feed_input(sg_arena *a, const sgr_cmdline *cl, uint32_t si, const char *out[2], uint32_t len[2]);

#endif
