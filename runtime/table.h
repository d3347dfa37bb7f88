/* table.h - loading and verifying a matcher table (format: sgt.h).
 *
 * Ownership: sgr_table_load keeps a pointer to the caller's bytes (no copy); the
 * bytes must outlive the table and stay unchanged.  sgr_table_free frees only the
 * sgr_table itself.  Every pointer and index the loader hands out has been bounds-
 * checked, so the evaluator never checks them again. */
#ifndef SGR_TABLE_H
#define SGR_TABLE_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "sgt.h"
#include "dfa.h"

/* Parts of the view built when a decision first needs them (sgr_table_dfa,
 * sgr_table_progview): the table is shared by threads, so a part is claimed (NONE -> BUILDING, one
 * compare-and-swap), built by the thread that claimed it, and published
 * (-> READY, a release store).  A thread that finds it BUILDING does not wait:
 * it answers without it, by a way that needs nothing built and gives the same
 * answer.  Building allocates nothing (the room is made at load), so it cannot
 * fail. */
enum { SGR_VIEW_NONE, SGR_VIEW_BUILDING, SGR_VIEW_READY };

/* The long options "--c..." (one c) a rule's `option` test or a program spec
 * names, as string refs, strcmp-sorted and distinct (sgr_longopt_range). */
typedef struct sgr_longopts {
    uint32_t n;
    uint32_t ref[];
} sgr_longopts;

/* The parts of the view made after load in memory of their own (their size is
 * known only once made): each is made whole by a thread that finds none and
 * swapped in (compare-and-swap, NULL to made); a thread that loses frees its
 * copy and takes the one kept. */
typedef struct sgr_table_lazy {
    _Atomic(const sgr_longopts *) longopts[256];  /* by c, the byte after "--" */
} sgr_table_lazy;

/* Which lengths (bit min(length, 63)) and which bytes at one index (bit byte & 63)
 * the strings of a list have.  A string whose length or byte at that index has no
 * bit is in none of them, so a search of the list can be skipped; words tested
 * against a set, and options against a program's lists, mostly fail here. */
typedef struct sgr_strfilt {
    uint64_t lens, bytes;
} sgr_strfilt;

static inline void sgr_strfilt_add(sgr_strfilt *f, const char *s, size_t len, size_t at)
{
    f->lens |= (uint64_t)1 << (len < 63 ? len : 63);
    if (len > at)
        f->bytes |= (uint64_t)1 << ((uint8_t)s[at] & 63);
}

/* 0: s[0..n) is in none of the strings added to f (with the same at). */
static inline int sgr_strfilt_may(const sgr_strfilt *f, const char *s, size_t n, size_t at)
{
    return ((f->lens >> (n < 63 ? n : 63)) & 1) && (n <= at || ((f->bytes >> ((uint8_t)s[at] & 63)) & 1));
}

typedef struct sgr_table {
    const uint8_t *base;
    size_t size;
    const sgt_header *hdr;
    const sgt_meta *meta;
    const char *strings;      uint32_t strings_size;
    const sgt_set *sets;      uint32_t nsets;
    const uint32_t *words;    uint32_t nwords;
    sgr_dfa *dfas;            uint32_t ndfas;    /* decoded views without the speed-ups
                               * (loops all 0, no sink, start_exit -2): enough to
                               * run and right, heap (sg_malloc) */
    sgr_dfa *dfa_fast;        /* [ndfas] the same with them (dfa.h), dfa i valid once
                               * dfa_state[i] is SGR_VIEW_READY: sgr_table_dfa, heap */
    _Atomic uint8_t *dfa_state; /* [ndfas] SGR_VIEW_*: a checked load builds every
                               * one (it reads every transition anyway), a trusted
                               * one none, heap */
    uint8_t *dfa_loops;       /* every dfa's loops[] (dfa.h), heap */
    uint8_t *dfa_noloops;     /* [the most states of any dfa] zeros: the plain views'
                               * loops, heap */
    const uint32_t *code;     uint32_t ncode;
    const sgt_rule *rules;    uint32_t nrules;
    const sgt_bucket *index;  uint32_t nbuckets;
    const uint32_t *lists;    uint32_t nlists;
    const sgt_progspec *progs; uint32_t nprogs;
    uint32_t *proghash;       /* [nproghash] progspec index + 1 by sgr_hash_name, 0 empty */
    uint32_t nproghash;       /* a power of two > 2 * nprogs, heap */
    uint8_t *subspecs;        /* [nprogs] 1 where some spec is named after this one, a
                               * blank and a subcommand ("git rebase"), heap */
    uint32_t *foldprogs;      /* the indices of the specs of a program whose name has
                               * an ASCII capital (Rscript), which a platform that folds
                               * case finds by any case (unwrap.c), heap */
    uint32_t nfoldprogs;
    /* What sgr_progopt_bits and sgr_progopt_abbrev read of a program spec, built
     * when a decision first asks about it (SGR_VIEW_*: sgr_table_progview): a
     * checked load builds every spec's, a trusted one none (a decision meets a
     * few of a pack's programs). */
    _Atomic uint8_t *prog_state; /* [nprogs] SGR_VIEW_*, heap */
    struct sgr_progview {     /* [nprogs], heap */
        uint32_t tab_off, tab_mask; /* its options: opttab[tab_off ..+ tab_mask + 1],
                               * open-addressed by sgr_fnv1a (set at load) */
        sgr_strfilt filt;     /* all its options, by length and second byte */
        uint64_t c2;          /* of each long value, script and unless option o
                               * ("--x..."), sgr_progopt_abbrev's first test: bit
                               * (o[2] & 63) */
        uint64_t c23;         /* bit sgr_abbr_pair(o[2], o[3]), o longer than "--x" */
    } *progview;
    struct sgr_optent {       /* an option of a progspec: what it is */
        uint32_t name;        /* string ref, SGT_NONE when the slot is empty */
        uint32_t len;         /* its length: a lookup compares with memcmp */
        uint32_t bits;        /* SGR_OPT_* */
    } *opttab;                /* [nopttab] every spec's slots, each spec's a power of
                               * two > 2 * the names its lists hold, heap */
    size_t nopttab;
    uint32_t (*shortopt)[128]; /* [nprogs][x] the SGR_OPT_* of option "-x" (ASCII x):
                               * sgr_progopt_bits without a hash, heap */
    const uint32_t *progopts; uint32_t nprogopts;
    sgr_table_lazy *lazy;     /* heap */
    const sgt_limit *limits;  uint32_t nlimits;
    const sgt_hook *hooks;    uint32_t nhooks;
    const sgt_test *tests;    uint32_t ntests;
    const sgt_pack *packs;    uint32_t npacks;
    const sgt_pattern *patterns; uint32_t npatterns;
} sgr_table;

/* Verify bytes[0..size) completely and build the view.  Returns 0 and *out, or -1
 * with a message in err ("table: checksum mismatch", "table: rule 3: set 99 out of
 * range", ...).  Requires the bytes to be 8-byte aligned. */
int sgr_table_load(const void *bytes, size_t size, sgr_table **out, char *err, size_t errlen);

/* sgr_table_load with flags.  SGR_LOAD_TRUSTED: the image is the program's own
 * constant data (a pack embedded at build time, which passed the full check in
 * that build: `compile` loads every table it writes and runs its inline tests),
 * so only the header and the section directory are checked and the view is
 * made, its larger parts left to first use (SGR_VIEW_*, sgr_table_longopts); the
 * checksum and the content checks are skipped.  Never for bytes read from a
 * file, a bundle or a caller. */
enum { SGR_LOAD_TRUSTED = 1 };
int sgr_table_load_flags(const void *bytes, size_t size, unsigned flags, sgr_table **out, char *err,
                         size_t errlen);
void sgr_table_free(sgr_table *t);

/* Write a readable listing of every section through out() (used by
 * `shellgate dump`; golden-tested).  Returns 0. */
typedef void (*sgr_out_fn)(void *ud, const char *text, size_t len);
int sgr_table_dump(const sgr_table *t, sgr_out_fn out, void *ud);

/* Write rule text that compiles to a table deciding like t: one pack, every rule
 * labelled, sets and patterns as the table keeps them (runtime/decompile.c).
 * Returns 0, or -1 with err set when t holds what text cannot express (Lua hook
 * sources, a glob with a space). */
int sgr_table_decompile(const sgr_table *t, sgr_out_fn out, void *ud, char *err, size_t errlen);

/* FNV-1a 64 over data with the header's checksum field taken as zero (the same
 * function the compiler uses to seal a table). */
uint64_t sgr_table_checksum(const uint8_t *data, size_t size);

static inline const char *sgr_str(const sgr_table *t, uint32_t ref)
{
    return t->strings + ref;
}

/* sgr_table_dfa's first call for dfa i: claims and builds its fast view, or
 * finds it built or being built by another thread (then the plain view). */
const sgr_dfa *sgr_table_dfa_build(const sgr_table *t, uint32_t i);

/* DFA i to run (i < t->ndfas): its view with the speed-ups (the loop bytes for
 * skipping, the accepting sink, the start state's one exit byte), built on first
 * use, or, while another thread builds it, the plain view t->dfas[i]: the same
 * answers, by one transition a byte.  Never fails, never waits.  A trusted load
 * leaves them unbuilt: most of a large pack's automata are never run by one
 * decision, and their loop bytes were half of a hook call's instructions. */
static inline const sgr_dfa *sgr_table_dfa(const sgr_table *t, uint32_t i)
{
    if (atomic_load_explicit(&t->dfa_state[i], memory_order_acquire) == SGR_VIEW_READY)
        return &t->dfa_fast[i];
    return sgr_table_dfa_build(t, i);
}

/* Index lookup: the rule-id list for a program basename, or NULL/0. */
const uint32_t *sgr_table_lookup(const sgr_table *t, const char *name, size_t len, uint32_t *n);
/* The program spec (wrapper/command declaration) for a basename, or NULL. */
const sgt_progspec *sgr_table_progspec(const sgr_table *t, const char *name, size_t len);
/* Is str one of set s's exact words? (binary search) */
int sgr_set_words_has(const sgr_table *t, uint32_t s, const char *str, size_t len);
/* Does set s contain/match str? (exact words by binary search, then the DFA) */
int sgr_set_match(const sgr_table *t, uint32_t s, const char *str, size_t len);
/* Is str, or a leading part of it that stops before a '/', in set s?  (`path inside`:
 * a path is inside a set when it or a directory above it is in it; one pass of the
 * DFA over str decides every such prefix.) */
int sgr_set_match_dirs(const sgr_table *t, uint32_t s, const char *str, size_t len);
/* The exact-word half of it, for the leading parts longer than from bytes (and
 * str itself): a caller that has checked a shared leading part resumes after it.
 * Parts longer than maxlen are skipped (the caller knows no word is longer). */
int sgr_set_words_dirs(const sgr_table *t, uint32_t s, const char *str, size_t len, size_t from,
                       size_t maxlen);
/* The table's long options "--c...", or NULL when there is no memory to list
 * them.  A checked load lists every c's at load; a trusted one a c's when first
 * asked (a decision asks only for a long option no declaration of its program
 * knows, and lists only the options starting as it does), and a thread that
 * finds no list makes one and publishes it unless another did first.  Valid
 * until sgr_table_free.  Every c's lists in c's order are every long option in
 * strcmp order. */
const sgr_longopts *sgr_table_longopts(const sgr_table *t, unsigned char c);
/* Every c's list at once (one look at every option instead of one per c): 0,
 * or -1 when there is no memory for them. */
int sgr_table_longopts_all(const sgr_table *t);
/* The long options a word "--x..." may be read as, by getopt_long's (and git's)
 * unique-prefix rule: *first and the count of lo->ref entries (lo: t's list for
 * str[2]) that str[0..slen) is a proper prefix of (0 when str is no "--x").
 * Whether str is an option of its own is the program's declaration's to say (the
 * caller asks it first): a rule about another program naming it says nothing of
 * this one. */
uint32_t sgr_longopt_range(const sgr_table *t, const sgr_longopts *lo, const char *str, size_t slen,
                           uint32_t *first);
/* Is str one of the PROGOPTS slice [off, off+len)? (binary search; the decompiler's
 * question: a decision asks sgr_progopt_bits) */
int sgr_progopt_has(const sgr_table *t, uint32_t off, uint32_t len, const char *str, size_t slen);
/* Which of program spec ps's option lists name str (one lookup for all of them). */
#define SGR_OPT_VALUE  0x01u          /* value_off: takes a value */
#define SGR_OPT_TEXT   0x02u          /* text_off: its value is text */
#define SGR_OPT_FIRST  0x04u          /* first_off: makes the first operand a file */
#define SGR_OPT_SCRIPT 0x08u
#define SGR_OPT_EXEC   0x10u
#define SGR_OPT_END    0x20u
#define SGR_OPT_LOOKUP 0x40u          /* lookup_off: names where the inner program is */
#define SGR_OPT_ARGV0  0x80u          /* argv0_off: names the inner program's argv[0] */
#define SGR_OPT_CODE   0x100u         /* code_off: its value is the program (not shell) */
#define SGR_OPT_STDIN  0x200u         /* stdin_off: the program is read from stdin */
#define SGR_OPT_FLAG   0x400u         /* flag_off: takes no value */
#define SGR_OPT_LINK   0x800u         /* link_off: the sources are link texts (ln -s) */
#define SGR_OPT_LINKREL 0x1000u       /* linkrel_off: ... made from cwd-relative ones (ln -r) */
#define SGR_OPT_NORUN  0x2000u        /* norun_off: a wrapper given it runs nothing */
#define SGR_OPT_CWD    0x4000u        /* cwd_off: names the directory it works in */
#define SGR_OPT_URL    0x8000u        /* url_off: names where it connects */
#define SGR_OPT_URLUNK 0x10000u       /* urlunk_off: names a file of where it connects */
/* sgr_progopt_bits's hash lookup, for spec index pi (progs[pi]), its view built. */
uint32_t sgr_progopt_bits_slow(const sgr_table *t, uint32_t pi, const char *str, size_t slen);
/* sgr_progopt_bits before spec pi's view is built: builds it, or, while another
 * thread builds it, searches each of the spec's lists (the same answer). */
uint32_t sgr_progopt_bits_unbuilt(const sgr_table *t, uint32_t pi, const char *str, size_t slen);
/* Build spec pi's view unless it is built or being built (SGR_VIEW_*): 1 when it
 * is built on return, 0 while another thread builds it. */
int sgr_table_progview(const sgr_table *t, uint32_t pi);
/* Inline for the commonest questions: a short option "-x" (a cluster's letters are
 * asked one by one), one load; a name none of the spec's options could be (by
 * length and second byte), a filter.  The rest is a hash lookup. */
static inline uint32_t sgr_progopt_bits(const sgr_table *t, const sgt_progspec *ps, const char *str,
                                        size_t slen)
{
    uint32_t pi = (uint32_t)(ps - t->progs);
    if (atomic_load_explicit(&t->prog_state[pi], memory_order_acquire) != SGR_VIEW_READY)
        return sgr_progopt_bits_unbuilt(t, pi, str, slen);
    if (slen == 2 && str[0] == '-' && (uint8_t)str[1] < 128)
        return t->shortopt[pi][(uint8_t)str[1]];
    if (!sgr_strfilt_may(&t->progview[pi].filt, str, slen, 1))
        return 0;
    return sgr_progopt_bits_slow(t, pi, str, slen);
}

/* A program spec's option lists (PROGOPTS slices), one order for all who walk
 * them: X(field, SGR_OPT_ bit, word in dumps, name in load errors). */
#define SGR_PROG_LISTS(X) \
    X(value,  SGR_OPT_VALUE,  "value",  "value options") \
    X(script, SGR_OPT_SCRIPT, "script", "script options") \
    X(exec,   SGR_OPT_EXEC,   "exec",   "exec words") \
    X(end,    SGR_OPT_END,    "end",    "end words") \
    X(text,   SGR_OPT_TEXT,   "text",   "text options") \
    X(first,  SGR_OPT_FIRST,  "unless", "text-operand options") \
    X(lookup, SGR_OPT_LOOKUP, "lookup", "lookup options") \
    X(argv0,  SGR_OPT_ARGV0,  "argv0",  "argv0 options") \
    X(code,   SGR_OPT_CODE,   "code",   "code options") \
    X(stdin,  SGR_OPT_STDIN,  "stdin",  "stdin options") \
    X(flag,   SGR_OPT_FLAG,   "flags",  "flag options") \
    X(link,   SGR_OPT_LINK,   "links",  "link options") \
    X(linkrel, SGR_OPT_LINKREL, "unless", "relative-link options") \
    X(norun,  SGR_OPT_NORUN,  "runs-nothing", "runs-nothing options") \
    X(cwd,    SGR_OPT_CWD,    "cwd",    "cwd options") \
    X(url,    SGR_OPT_URL,    "url",    "url options") \
    X(urlunk, SGR_OPT_URLUNK, "url-unknown", "url-unknown options")
#define SGR_NPROG_LISTS 17
typedef struct sgr_prog_list {
    uint32_t off, len, bit;
    const char *word, *name;
} sgr_prog_list;

/* Fill out[SGR_NPROG_LISTS] with p's lists, in SGR_PROG_LISTS order. */
static inline void sgr_prog_lists(const sgt_progspec *p, sgr_prog_list *out)
{
    int k = 0;
#define X(f, bit, word, name) out[k++] = (sgr_prog_list){ p->f##_off, p->f##_len, bit, word, name };
    SGR_PROG_LISTS(X)
#undef X
}
/* How many names p's lists hold together (a name in two lists counts twice). */
static inline uint64_t sgr_prog_nopts(const sgt_progspec *p)
{
    uint64_t n = 0;
#define X(f, bit, word, name) n += p->f##_len;
    SGR_PROG_LISTS(X)
#undef X
    return n;
}
/* The most option names all program specs' slices may list together (entries
 * shared by several slices count once per slice); a compiled pack lists each once. */
#define SGR_MAX_PROGOPT_REFS (1u << 20)
/* The SGR_OPT_* bits (VALUE, FIRST, SCRIPT, LOOKUP, ARGV0, CWD, URL, URLUNK) of ps's long options that str ("--x...")
 * starts and is shorter than: getopt_long takes an unambiguous abbreviation for
 * the option it starts (grep --regex=P is --regexp=P).  0 when str is no "--x". */
uint32_t sgr_progopt_abbrev(const sgr_table *t, const sgt_progspec *ps, const char *str, size_t slen);
/* The progview's c23 bit for the two bytes after "--": both in it (most long options
 * a command gives share their first letter with some declared one, few the
 * first two). */
static inline unsigned sgr_abbr_pair(char a, char b)
{
    return ((uint32_t)(uint8_t)a * 0x9e3779b1u ^ (uint32_t)(uint8_t)b * 0x85ebca6bu) >> 26;
}
/* Does the NUL-terminated table string w start with the counted query s[0..n)?
 * (A query holding a NUL never does: w ends there.) */
static inline int sgr_str_starts(const char *w, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w[i] == '\0' || w[i] != s[i])
            return 0;
    return 1;
}

/* Is the NUL-terminated table string w the counted query s[0..n)? */
static inline int sgr_str_eq(const char *w, const char *s, size_t n)
{
    return sgr_str_starts(w, s, n) && w[n] == '\0';
}

/* String hash used by INDEX (FNV-1a 32); the compiler uses the same.  A name lives
 * in bucket (hash & (nbuckets - 1)) or, probing linearly (wrapping), in the first
 * bucket after it; an empty bucket (name == SGT_NONE) ends the probe.  Strings in
 * WORDS slices, PROGOPTS slices and PROGSPECS are sorted by strcmp (bytes). */
uint32_t sgr_hash_name(const char *s, size_t len);
/* The same hash inline, four bytes a round: every segment's program name and most
 * options are hashed, and the loop's own count and test were a third of the work. */
static inline uint32_t sgr_fnv1a(const char *s, size_t len)
{
    const uint32_t P = 0x01000193u;
    uint32_t h = 0x811c9dc5u;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        h = (h ^ (uint8_t)s[i]) * P;
        h = (h ^ (uint8_t)s[i + 1]) * P;
        h = (h ^ (uint8_t)s[i + 2]) * P;
        h = (h ^ (uint8_t)s[i + 3]) * P;
    }
    for (; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * P;
    return h;
}

#endif
