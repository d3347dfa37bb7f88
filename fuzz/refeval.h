/* refeval.h - the differential oracle's reference evaluator: decides a
 * command line by interpreting the checked AST (compiler/ast.h) directly - no
 * table, no bytecode, no DFA, no index - and compares its answer with the table
 * evaluator's (runtime/eval.c) for the same line.
 *
 * What is shared and what is not: the reference takes the table evaluator's
 * parsed, unwrapped segments and their normalised options, values, operands and
 * program basenames (sgr_result.cl / .norm) as given; everything after that is its
 * own: rule order (every rule, in table order), the condition interpreter, set
 * matching (exact words by comparison, globs by a recursive matcher, regexes by a
 * position-set interpreter over its own parse), `path` resolution (its own walk,
 * symlinks through realpath), pipeline relations, redirection kinds, the `cd`
 * chain and the combination of decisions (docs/language.md "Decisions").
 *
 * Ownership: an sg_ref borrows the sgc_checked it was made from (which must
 * outlive it); an sg_ref_answer points into the sg_ref and is valid until the next
 * sg_ref_decide on it.  Nothing here prints. */
#ifndef SG_REFEVAL_H
#define SG_REFEVAL_H
#include <stddef.h>
#include <stdint.h>
#include "compiler/compile.h"
#include "runtime/eval.h"

typedef struct sg_ref sg_ref;

/* Outcomes of sg_ref_check. */
#define SG_REF_AGREE         0
#define SG_REF_DISAGREE      1
#define SG_REF_INCONCLUSIVE  2   /* the reference could not decide for sure (work bound,
                                  * a path through a dangling symlink, an evaluator OOM) */
#define SG_REF_SKIPPED       3   /* the pack has `lua` conditions */
#define SG_REF_OOM          (-1)

#define SG_REF_RULE_EMPTY (-4)   /* nothing to run: the line's rule id is "empty" */

typedef struct sg_ref_answer {
    uint32_t decision;           /* sgt_decision */
    int32_t rule;                /* rule index (table order), SGR_RULE_*, or SG_REF_RULE_EMPTY */
    uint32_t nseg;
    const uint8_t *seg_decision; /* [nseg] */
    const int32_t *seg_rule;     /* [nseg] */
} sg_ref_answer;

/* Prepare the reference for k (parses every glob and regex of its sets).  Returns
 * 0, -1 when out of memory, or 1 when a pattern the compiler accepted does not
 * parse here (err says which: that is itself a disagreement). */
int sg_ref_new(const sgc_checked *k, sg_ref **out, char *err, size_t errlen);
void sg_ref_free(sg_ref *ref);
/* 1 when some rule has a `lua` condition (such packs are not compared). */
int sg_ref_uses_lua(const sg_ref *ref);

/* Decide the line r was evaluated on, from r's segments, with the cwd and home
 * the table evaluator was given (roots: the cwd).  Returns SG_REF_AGREE (*out
 * set), SG_REF_INCONCLUSIVE, SG_REF_SKIPPED or SG_REF_OOM. */
int sg_ref_decide(sg_ref *ref, const sgr_result *r, const char *cwd, const char *home,
                  const sg_ref_answer **out);

/* Decide and compare with r: the line's decision and deciding rule, and every
 * segment's decision and rule.  On SG_REF_DISAGREE, why[0..n) says how (both
 * answers, rule ids from t). */
int sg_ref_check(sg_ref *ref, const sgr_table *t, const sgr_result *r, const char *cwd,
                 const char *home, char *why, size_t n);

#endif
