/* plan.h - the shape of a line the executor walks: lists, and-or chains,
 * pipelines, subshells and brace groups over the parser's simple commands.
 *
 * The parser (runtime/shparse.h) hands out a flat list of segments with their
 * spans.  sgx_plan reads the bytes between the top-level segments -- only
 * operators, parentheses, braces, `!`, blanks, newlines and comments may stand
 * there -- into a tree, and checks it against what the parser recorded (each
 * command's connector, its pipeline position, the subshell flag): where the two
 * readings differ, or anything else stands between the commands (`if`, `for`,
 * `while`, `case`, a function, `&`, a redirection after a compound, a here-
 * document...), the line is refused before anything runs.  Execution never
 * re-reads the line: it follows this tree and the validated segments.
 *
 * Ownership: the tree lives in the given arena. */
#ifndef SGX_PLAN_H
#define SGX_PLAN_H
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "runtime/shparse.h"

enum { SGX_N_CMD, SGX_N_LIST, SGX_N_PIPE, SGX_N_SUBSHELL, SGX_N_GROUP };
enum { SGX_OP_SEQ, SGX_OP_AND, SGX_OP_OR };

typedef struct sgx_node {
    uint8_t kind;                /* SGX_N_* */
    uint8_t op;                  /* in a LIST: how it joins the item before (SGX_OP_*) */
    uint8_t negated;             /* PIPE: preceded by an odd number of `!` */
    uint8_t pipe_err;            /* a PIPE element followed by |& */
    uint32_t cmd;                /* CMD: its number among the top-level segments */
    uint32_t nkids;
    struct sgx_node **kids;      /* LIST: items; PIPE: elements; SUBSHELL, GROUP: one LIST */
} sgx_node;

/* The tree of cl, a parse of line[0..len).  Every top-level segment (nest TOP) is
 * numbered in order (cmd); *ncmds is their count and cmdseg[k] (arena) the segment
 * index of number k.  NULL with *why (static text or arena) when the line holds
 * what the executor does not run, or on OOM (*why "out of memory"). */
sgx_node *sgx_plan(sg_arena *a, const sgr_cmdline *cl, const char *line, size_t len, uint32_t **cmdseg,
                   uint32_t *ncmds, const char **why);

#endif
