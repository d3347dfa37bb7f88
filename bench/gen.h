/* gen.h - the bench's workloads, made from a seed (bench/gen.c): agent command
 * lines, realistic and hostile; rule packs of any size; and the same packs as a
 * list of POSIX regular expressions, the hand-written alternative.
 *
 * Everything is generated, nothing is stored: the same seed (and size) gives the
 * same bytes on every machine.  Ownership: the caller frees what a function returns
 * (bench_lines_free, bench_pack_free). */
#ifndef BENCH_GEN_H
#define BENCH_GEN_H
#include <stddef.h>
#include <stdint.h>

/* splitmix64: small, fast, and the same everywhere */
typedef struct bench_rng {
    uint64_t s;
} bench_rng;

uint64_t bench_rand(bench_rng *r);
/* uniform in [0, n) (n > 0) */
uint32_t bench_below(bench_rng *r, uint32_t n);

typedef struct bench_lines {
    char **v;
    size_t *len;
    size_t n;
    size_t min, max, total;      /* bytes */
} bench_lines;

/* n agent command lines of 1-5 commands and 20-400 bytes: git, grep, find, sed,
 * build and test runners, package managers, with quoting, pipes and chains,
 * redirections, wrappers (sudo, env, timeout, bash -lc "...", xargs),
 * substitutions, here-documents, and now and then an internal tool ("tool12")
 * that the generated packs have rules for.  Paths are mostly ones that exist in
 * the source tree, so path rules pay what real paths cost. */
void bench_gen_realistic(uint64_t seed, size_t n, bench_lines *out);
/* n hostile lines: long ones (thousands of arguments), deep nesting of
 * substitutions and shells, many commands on one line, and lines past the
 * parser's limits. */
void bench_gen_hostile(uint64_t seed, size_t n, bench_lines *out);
void bench_lines_free(bench_lines *l);

/* A generated pack: its rule text, and each rule as a POSIX extended regular
 * expression over the raw line with its decision (the hand-written alternative:
 * try the patterns in turn, the denies first, then the asks, then the allows). */
enum { BENCH_ALLOW, BENCH_ASK, BENCH_DENY };

typedef struct bench_pack {
    char *text;                  /* the pack's source */
    size_t nrules;
    size_t ntext;                /* of them whole-line text rules */
    char **re;                   /* [nre], strictest decisions first */
    int *decision;               /* [nre] BENCH_* */
    size_t nre;
} bench_pack;

/* A pack of nrules rules (at least 8; the same for the same nrules): program
 * rules, options, subcommands, argument regexes and globs, sets of programs, and a
 * few whole-line text rules (2 % substrings, 2 % regexes), over programs named
 * tool0, tool1, ... (four rules each), after five rules any pack has. */
void bench_gen_pack(size_t nrules, int flags, bench_pack *out);
/* flags: the same pack with program rules where the text rules were (a pack that
 * decides per segment only) */
#define BENCH_PACK_NO_TEXT 1
void bench_pack_free(bench_pack *p);

#endif
