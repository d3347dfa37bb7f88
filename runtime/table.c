/* table.c - loading, verifying and querying a matcher table (format: sgt.h, API: table.h). */
#include "table.h"
#include "common/checksum.h"
#include "common/alloc.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest DFA the loader accepts: keeps nstates * nclasses * 4 far from overflow and
 * bounds the verification work a hostile table can demand. */
#define SGR_DFA_MAX_STATES (1u << 20)

/* Record size of each section, from the X-macro list (ORDER SGT_LAYOUT). */
static const uint32_t sec_rec[SGT_NSECTIONS] = {
#define X(id, name, rec) (uint32_t)(rec),
    SGT_SECTIONS(X)
#undef X
};

static const char *const sec_name[SGT_NSECTIONS] = {
#define X(id, name, rec) name,
    SGT_SECTIONS(X)
#undef X
};

/* Which opcodes take a set in b (third field of SGT_OPS). */
static const uint8_t op_uses_set[SGT_NOPS] = {
#define X(id, name, uses_set) uses_set,
    SGT_OPS(X)
#undef X
};

static const char *const op_name[SGT_NOPS] = {
#define X(id, name, uses_set) name,
    SGT_OPS(X)
#undef X
};

/* Verification state: the table under construction plus the caller's error buffer. */
typedef struct vctx {
    sgr_table *t;
    char *err;
    size_t errlen;
    int trusted;                       /* SGR_LOAD_TRUSTED: make the view, check no content */
} vctx;

/* Format "table: <fmt>" into the caller's buffer; always returns -1 so callers can
 * `return fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(vctx *v, const char *fmt, ...)
{
    if (v->err && v->errlen) {
        int n = snprintf(v->err, v->errlen, "table: ");
        if (n >= 0 && (size_t)n < v->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* Compare the NUL-terminated table string w with the counted query s[0..n) in
 * bytewise lexicographic order (a proper prefix sorts first).  For NUL-free
 * queries this is strcmp order; a query holding a NUL never compares equal to a
 * table string, and still has a consistent place in the order, so binary searches
 * over strcmp-sorted slices stay correct.  No strlen on either side. */
static int cmp_counted(const char *w, const char *s, size_t n)
{
    /* most comparisons of a binary search end at the first byte */
    if (n && (unsigned char)w[0] != (unsigned char)s[0])
        return (unsigned char)w[0] < (unsigned char)s[0] ? -1 : 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i], d = (unsigned char)s[i];
        if (c == 0)
            return -1;
        if (c != d)
            return c < d ? -1 : 1;
    }
    return w[n] ? 1 : 0;
}

uint64_t sgr_table_checksum(const uint8_t *data, size_t size)
{
    return sg_checksum64(data, size, offsetof(sgt_header, checksum));
}

uint32_t sgr_hash_name(const char *s, size_t len)
{
    return sgr_fnv1a(s, len);
}

/* ---------------------------------------------------------------- verification */

/* ref must name a string: an offset inside STRINGS (whose last byte is NUL, so the
 * string is terminated inside the section). what/idx/field name it in the error. */
static int check_str(vctx *v, uint32_t ref, const char *what, uint32_t idx, const char *field)
{
    if (ref < v->t->strings_size)
        return 0;
    return fail(v, "%s %u: %s string ref %u out of range (strings are %u bytes)",
                what, idx, field, ref, v->t->strings_size);
}

/* A slice [off, off+len) of an array of n elements; 64-bit so off+len cannot wrap. */
static int slice_ok(uint32_t off, uint32_t len, uint32_t n)
{
    return (uint64_t)off + len <= n;
}

/* The u32 string refs strs[off..off+len) are valid and strictly increasing by strcmp. */
static int check_sorted_strs(vctx *v, const uint32_t *strs, uint32_t off, uint32_t len,
                             const char *what, uint32_t idx, const char *field)
{
    for (uint32_t i = 0; i < len; i++) {
        if (check_str(v, strs[off + i], what, idx, field))
            return -1;
        if (i && strcmp(sgr_str(v->t, strs[off + i - 1]), sgr_str(v->t, strs[off + i])) >= 0)
            return fail(v, "%s %u: %s not strictly sorted (entry %u)", what, idx, field, i);
    }
    return 0;
}

/* LISTS slice [off, off+len): in bounds, every id < nrules, strictly ascending. */
static int check_list(vctx *v, uint32_t off, uint32_t len, const char *what, const char *name)
{
    const sgr_table *t = v->t;
    if (!slice_ok(off, len, t->nlists))
        return fail(v, "%s%s: list [%u, +%u) outside lists (%u ids)", what, name, off, len,
                    t->nlists);
    for (uint32_t i = 0; i < len; i++) {
        uint32_t id = t->lists[off + i];
        if (id >= t->nrules)
            return fail(v, "%s%s: rule id %u out of range (%u rules)", what, name, id, t->nrules);
        if (i && t->lists[off + i - 1] >= id)
            return fail(v, "%s%s: rule ids not strictly ascending (entry %u)", what, name, i);
    }
    return 0;
}

/* check_list's test without the message (the hot path of loading a large index). */
static int list_ok(const sgr_table *t, uint32_t off, uint32_t len)
{
    if (!slice_ok(off, len, t->nlists))
        return 0;
    for (uint32_t i = 0; i < len; i++)
        if (t->lists[off + i] >= t->nrules || (i && t->lists[off + i - 1] >= t->lists[off + i]))
            return 0;
    return 1;
}

/* The header's fixed fields, in the order STYLE 10 wants: identity first, then the
 * checksum, before any offset inside the image is believed. */
static int check_header(vctx *v, const uint8_t *b, size_t size)
{
    const sgt_header *h = (const sgt_header *)b;
    if (memcmp(h->magic, SGT_MAGIC, 8) != 0)
        return fail(v, "bad magic (not a shellgate table)");
    if (h->version != SGT_VERSION)
        return fail(v, "format version %u, this runtime reads version %u", h->version,
                    SGT_VERSION);
    if (h->endian != SGT_ENDIAN)
        return fail(v, "byte order mismatch (endian probe 0x%08x)", h->endian);
    if (h->header_size != sizeof(sgt_header))
        return fail(v, "header size %u, expected %zu", h->header_size, sizeof(sgt_header));
    if (h->total_size != size)
        return fail(v, "truncated or padded: header says %u bytes, image is %zu",
                    h->total_size, size);
    if (h->nsections != SGT_NSECTIONS)
        return fail(v, "%u sections, expected %d", h->nsections, SGT_NSECTIONS);
    if (h->flags & ~SGT_HDR_KNOWN)
        return fail(v, "unknown header flags 0x%x", h->flags & ~SGT_HDR_KNOWN);
    if (!v->trusted && sgr_table_checksum(b, size) != h->checksum)
        return fail(v, "checksum mismatch");
    return 0;
}

/* The directory: every section aligned, inside the image, a whole number of records,
 * after the header and after the previous section (so none overlap). */
static int check_sections(vctx *v)
{
    const sgt_header *h = v->t->hdr;
    uint64_t prev_end = h->header_size;
    for (int i = 0; i < SGT_NSECTIONS; i++) {
        const sgt_section *s = &h->sec[i];
        if (s->off < h->header_size)
            return fail(v, "section %s: offset %u inside the header", sec_name[i], s->off);
        if (s->off % 8)
            return fail(v, "section %s: offset %u not 8-byte aligned", sec_name[i], s->off);
        if ((uint64_t)s->off + s->size > h->total_size)
            return fail(v, "section %s: [%u, +%u) runs past the end of the image (%u bytes)",
                        sec_name[i], s->off, s->size, h->total_size);
        if (s->size % sec_rec[i])
            return fail(v, "section %s: size %u not a multiple of its record size %u",
                        sec_name[i], s->size, sec_rec[i]);
        if (s->off < prev_end)
            return fail(v, "section %s: offset %u overlaps the previous section or is out of "
                        "directory order", sec_name[i], s->off);
        prev_end = (uint64_t)s->off + s->size;
    }
    return 0;
}

/* Point the view's arrays at the sections (already bounds-checked). */
static void map_sections(sgr_table *t)
{
    const sgt_section *s = t->hdr->sec;
#define SEC(id, ptr, n, type) \
    t->ptr = (const type *)(t->base + s[SGT_SEC_##id].off); \
    t->n = s[SGT_SEC_##id].size / (uint32_t)sizeof(type)
    t->meta = (const sgt_meta *)(t->base + s[SGT_SEC_META].off);
    t->strings = (const char *)(t->base + s[SGT_SEC_STRINGS].off);
    t->strings_size = s[SGT_SEC_STRINGS].size;
    SEC(SETS, sets, nsets, sgt_set);
    SEC(WORDS, words, nwords, uint32_t);
    SEC(CODE, code, ncode, uint32_t);
    SEC(RULES, rules, nrules, sgt_rule);
    SEC(INDEX, index, nbuckets, sgt_bucket);
    SEC(LISTS, lists, nlists, uint32_t);
    SEC(PROGSPECS, progs, nprogs, sgt_progspec);
    SEC(PROGOPTS, progopts, nprogopts, uint32_t);
    SEC(LIMITS, limits, nlimits, sgt_limit);
    SEC(HOOKS, hooks, nhooks, sgt_hook);
    SEC(TESTS, tests, ntests, sgt_test);
    SEC(PACKS, packs, npacks, sgt_pack);
    SEC(PATTERNS, patterns, npatterns, sgt_pattern);
#undef SEC
    t->ndfas = s[SGT_SEC_DFAS].size / (uint32_t)sizeof(sgt_dfa);
}

static int check_strings(vctx *v)
{
    const sgr_table *t = v->t;
    if (t->strings_size == 0)
        return fail(v, "strings section is empty (string 0 must be \"\")");
    if (t->strings[0] != '\0')
        return fail(v, "strings: string 0 is not \"\"");
    if (t->strings[t->strings_size - 1] != '\0')
        return fail(v, "strings: last string not NUL-terminated");
    return 0;
}

/* Each DFA (ORDER DFA_LAYOUT): its data inside DFADATA, every classmap entry a
 * class, every transition a state, state 0 dead, accepts -1 or a pattern id; then
 * the decoded views the matcher runs on: the plain one, and the fast one (its
 * loop bytes computed here as each row is checked).  Trusted: the plain views
 * and the room for the fast ones, which sgr_table_dfa_build fills on first use. */
static int check_dfas(vctx *v)
{
    sgr_table *t = v->t;
    const sgt_section *sd = &t->hdr->sec[SGT_SEC_DFADATA];
    const sgt_dfa *d = (const sgt_dfa *)(t->base + t->hdr->sec[SGT_SEC_DFAS].off);
    const uint8_t *data = t->base + sd->off;
    size_t nloops = 0, most = 1;
    for (uint32_t i = 0; i < t->ndfas; i++) {
        size_t ns = d[i].nstates <= SGR_DFA_MAX_STATES ? d[i].nstates : 0;
        nloops += ns;
        most = ns > most ? ns : most;
    }
    if (t->ndfas) {
        t->dfas = sg_malloc((size_t)t->ndfas * sizeof(sgr_dfa));
        t->dfa_fast = sg_malloc((size_t)t->ndfas * sizeof(sgr_dfa));
        t->dfa_state = sg_calloc(t->ndfas, sizeof *t->dfa_state);
        t->dfa_loops = sg_malloc(nloops ? nloops : 1);
        t->dfa_noloops = sg_calloc(most, 1);
        if (!t->dfas || !t->dfa_fast || !t->dfa_state || !t->dfa_loops || !t->dfa_noloops)
            return fail(v, "out of memory");
    }
    uint8_t *loops = t->dfa_loops;
    for (uint32_t i = 0; i < t->ndfas; i++) {
        uint32_t ns = d[i].nstates, nc = d[i].nclasses;
        uint64_t ntrans = (uint64_t)ns * nc;
        if (v->trusted) {              /* the views' fixed parts only */
            const uint8_t *cm = data + d[i].data_off;
            const uint32_t *tr = (const uint32_t *)(cm + 256);
            t->dfas[i] = (sgr_dfa){ ns, nc, cm, tr, (const int32_t *)(tr + ntrans), 0, -2, t->dfa_noloops };
            t->dfa_fast[i] = t->dfas[i];
            t->dfa_fast[i].loops = loops;
            loops += ns;
            continue;
        }
        if (ns < 2 || ns > SGR_DFA_MAX_STATES)
            return fail(v, "dfa %u: %u states (need 2..%u: dead and start)", i, ns,
                        SGR_DFA_MAX_STATES);
        if (nc < 1 || nc > 256)
            return fail(v, "dfa %u: %u byte classes (need 1..256)", i, nc);
        if (d[i].data_off % 4)
            return fail(v, "dfa %u: data offset %u not 4-byte aligned", i, d[i].data_off);
        uint64_t need = 256 + 4 * ntrans + 4 * (uint64_t)ns;
        if ((uint64_t)d[i].data_off + need > sd->size)
            return fail(v, "dfa %u: data [%u, +%llu) outside dfadata (%u bytes)", i,
                        d[i].data_off, (unsigned long long)need, sd->size);
        const uint8_t *cm = data + d[i].data_off;
        const uint32_t *tr = (const uint32_t *)(cm + 256);
        const int32_t *acc = (const int32_t *)(tr + ntrans);
        uint8_t top = 0;                  /* a max over a fixed 256: vectorises */
        for (uint32_t c = 0; c < 256; c++)
            top = cm[c] > top ? cm[c] : top;
        for (uint32_t c = 0; top >= nc && c < 256; c++)
            if (cm[c] >= nc)
                return fail(v, "dfa %u: byte 0x%02x maps to class %u (only %u classes)", i, c,
                            cm[c], nc);
        for (uint32_t st = 0; st < ns; st++) {
            const uint32_t *row = tr + (size_t)st * nc;
            uint32_t bad = 0;
            for (uint32_t c = 0; c < nc; c++)
                bad |= row[c] >= ns;
            if (bad)
                for (uint32_t c = 0; c < nc; c++)
                    if (row[c] >= ns)
                        return fail(v, "dfa %u: transition from state %u to %u out of range "
                                    "(%u states)", i, st, row[c], ns);
            loops[st] = sgr_dfa_state_loops(row, nc, st);
        }
        for (uint32_t c = 0; c < nc; c++)
            if (tr[c] != 0)
                return fail(v, "dfa %u: state 0 is not dead (class %u goes to %u)", i, c,
                            tr[c]);
        if (acc[0] != -1)
            return fail(v, "dfa %u: dead state 0 accepts", i);
        for (uint32_t s = 0; s < ns; s++)
            if (acc[s] != -1 && (acc[s] < 0 || (uint32_t)acc[s] >= d[i].npatterns))
                return fail(v, "dfa %u: state %u accepts %d (only %u patterns)", i, s,
                            (int)acc[s], d[i].npatterns);
        t->dfas[i] = (sgr_dfa){ ns, nc, cm, tr, acc, 0, -2, t->dfa_noloops };
        sgr_dfa_init(&t->dfa_fast[i], ns, nc, cm, tr, acc, loops);
        atomic_init(&t->dfa_state[i], SGR_VIEW_READY);
        loops += ns;
    }
    return 0;
}

const sgr_dfa *sgr_table_dfa_build(const sgr_table *t, uint32_t i)
{
    uint8_t st = SGR_VIEW_NONE;
    if (!atomic_compare_exchange_strong_explicit(&t->dfa_state[i], &st, SGR_VIEW_BUILDING, memory_order_acquire,
                                                 memory_order_acquire))
        return st == SGR_VIEW_READY ? &t->dfa_fast[i] : &t->dfas[i];
    /* claimed: dfa_fast[i] and its loop bytes are this thread's until published */
    const sgr_dfa *p = &t->dfas[i];
    sgr_dfa *f = &t->dfa_fast[i];
    uint8_t *loops = t->dfa_loops + (f->loops - t->dfa_loops);
    for (uint32_t s = 0; s < p->nstates; s++)
        loops[s] = sgr_dfa_state_loops(p->trans + (size_t)s * p->nclasses, p->nclasses, s);
    sgr_dfa_init(f, p->nstates, p->nclasses, p->classmap, p->trans, p->accept, loops);
    atomic_store_explicit(&t->dfa_state[i], SGR_VIEW_READY, memory_order_release);
    return f;
}

/* SETS: a known kind, words slice in WORDS and strictly sorted, dfa in range,
 * TEXT sets carry a DFA (the line is never one exact word). */
static int check_sets(vctx *v)
{
    const sgr_table *t = v->t;
    for (uint32_t i = 0; i < t->nsets; i++) {
        const sgt_set *s = &t->sets[i];
        if (check_str(v, s->name, "set", i, "name"))
            return -1;
        if (s->kind != SGT_SETK_MATCH && s->kind != SGT_SETK_TEXT)
            return fail(v, "set %u: unknown kind %u", i, s->kind);
        if (!slice_ok(s->words_off, s->nwords, t->nwords))
            return fail(v, "set %u: words [%u, +%u) outside words (%u)", i, s->words_off,
                        s->nwords, t->nwords);
        if (check_sorted_strs(v, t->words, s->words_off, s->nwords, "set", i, "words"))
            return -1;
        if (s->dfa != SGT_NONE && s->dfa >= t->ndfas)
            return fail(v, "set %u: dfa %u out of range (%u dfas)", i, s->dfa, t->ndfas);
        if (s->kind == SGT_SETK_TEXT && s->dfa == SGT_NONE)
            return fail(v, "set %u: text set without a dfa", i);
    }
    return 0;
}

/* A set operand of instruction k in what/idx: in range and of the kind the op needs. */
static int check_set_operand(vctx *v, uint32_t set, uint32_t kind, const char *what,
                             uint32_t idx, uint32_t k, uint32_t op)
{
    const sgr_table *t = v->t;
    if (set >= t->nsets)
        return fail(v, "%s %u: set %u out of range (instruction %u, %s; %u sets)", what, idx,
                    set, k, op_name[op], t->nsets);
    if (t->sets[set].kind != kind)
        return fail(v, "%s %u: set %u is a %s set, %s needs a %s set (instruction %u)", what,
                    idx, set, t->sets[set].kind == SGT_SETK_TEXT ? "text" : "match",
                    op_name[op], kind == SGT_SETK_TEXT ? "text" : "match", k);
    return 0;
}

/* Code slice [off, off+len) words of rule/limit idx: in CODE, whole instructions,
 * every operand in range, every jump forward and landing at most one past the end. */
static int check_code(vctx *v, uint32_t off, uint32_t len, int allow_empty, const char *what,
                      uint32_t idx)
{
    const sgr_table *t = v->t;
    if (!slice_ok(off, len, t->ncode))
        return fail(v, "%s %u: code [%u, +%u) outside code (%u words)", what, idx, off, len,
                    t->ncode);
    if (len % 2)
        return fail(v, "%s %u: code length %u is not a whole number of instructions", what,
                    idx, len);
    if (len == 0 && !allow_empty)
        return fail(v, "%s %u: empty condition code", what, idx);
    uint32_t n = len / 2;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t w0 = t->code[off + 2 * k], b = t->code[off + 2 * k + 1];
        uint32_t op = w0 & 0xff, a = w0 >> 8;
        if (op >= SGT_NOPS)
            return fail(v, "%s %u: unknown opcode %u (instruction %u)", what, idx, op, k);
        if (op_uses_set[op]) {
            uint32_t kind = op == SGT_OP_TEXT ? SGT_SETK_TEXT : SGT_SETK_MATCH;
            int none_ok = op == SGT_OP_REDIR_WRITES || op == SGT_OP_REDIR_READS;
            if (!(none_ok && b == SGT_NONE) && check_set_operand(v, b, kind, what, idx, k, op))
                return -1;
        }
        switch (op) {
        case SGT_OP_REDIR_READS:
            if (a > SGT_READS_HEREDOC || (a == SGT_READS_HEREDOC && b != SGT_NONE))
                return fail(v, "%s %u: redirect-reads form %u unknown (instruction %u)", what, idx, a, k);
            break;
        case SGT_OP_REDIR_WRITES:
            if (a > SGT_WRITES_INSIDE || (a && b != SGT_NONE))
                return fail(v, "%s %u: redirect-writes form %u unknown (instruction %u)", what, idx, a, k);
            break;
        case SGT_OP_DEST:
            if ((a & ~SGT_DEST_ONLY) >= SGT_NDEST_FIELDS)
                return fail(v, "%s %u: destination field %u unknown (instruction %u)", what, idx, a & ~SGT_DEST_ONLY, k);
            break;
        case SGT_OP_ASSIGNS_VAL:
        case SGT_OP_OPTION_VAL:
            if (check_set_operand(v, a & ~SGT_NEGATE_VALUE, SGT_SETK_MATCH, what, idx, k, op))
                return -1;
            break;
        case SGT_OP_ARGC:
            if (a >= SGT_NCMPS)
                return fail(v, "%s %u: argc comparison %u unknown (instruction %u)", what, idx,
                            a, k);
            break;
        case SGT_OP_LUA:
            if (b >= t->nhooks)
                return fail(v, "%s %u: hook %u out of range (instruction %u; %u hooks)", what,
                            idx, b, k, t->nhooks);
            break;
        case SGT_OP_JUMP_FALSE:
        case SGT_OP_JUMP_TRUE:
            if (b & 0x80000000u)
                return fail(v, "%s %u: backward jump (instruction %u, skip %d)", what, idx, k,
                            (int)(int32_t)b);
            if ((uint64_t)k + 1 + b > n)
                return fail(v, "%s %u: jump past the end of its code (instruction %u, skip %u, "
                            "%u instructions)", what, idx, k, b, n);
            break;
        default:
            break;
        }
    }
    return 0;
}

static int check_rules(vctx *v)
{
    const sgr_table *t = v->t;
    const uint32_t known = SGT_RULE_LINE | SGT_RULE_DYNAMIC | SGT_RULE_LUA;
    for (uint32_t i = 0; i < t->nrules; i++) {
        const sgt_rule *r = &t->rules[i];
        if (check_str(v, r->id, "rule", i, "id") || check_str(v, r->msg, "rule", i, "msg") ||
            check_str(v, r->hint, "rule", i, "hint"))
            return -1;
        if (r->decision >= SGT_NDECISIONS)
            return fail(v, "rule %u: unknown decision %u", i, r->decision);
        if (r->pack >= t->npacks)
            return fail(v, "rule %u: pack %u out of range (%u packs)", i, r->pack, t->npacks);
        if (r->flags & ~known)
            return fail(v, "rule %u: unknown flags 0x%x", i, r->flags & ~known);
        if (check_code(v, r->code_off, r->code_len, 0, "rule", i))
            return -1;
    }
    return 0;
}

/* Heap-sort idx[0..n) by the names of the buckets they point at (no recursion, no
 * allocation beyond idx itself; a hostile index cannot make this quadratic). */
static int bucket_less(const sgr_table *t, uint32_t x, uint32_t y)
{
    return strcmp(sgr_str(t, t->index[x].name), sgr_str(t, t->index[y].name)) < 0;
}

static void sift(const sgr_table *t, uint32_t *idx, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && bucket_less(t, idx[c], idx[c + 1]))
            c++;
        if (!bucket_less(t, idx[root], idx[c]))
            return;
        uint32_t tmp = idx[root];
        idx[root] = idx[c];
        idx[c] = tmp;
        root = c;
    }
}

/* Heap-sort 64-bit keys ascending (no recursion, no allocation). */
static void sift_u64(uint64_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && a[c] < a[c + 1])
            c++;
        if (a[root] >= a[c])
            return;
        uint64_t tmp = a[root];
        a[root] = a[c];
        a[c] = tmp;
        root = c;
    }
}

static void sort_u64(uint64_t *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_u64(a, i, n);
    for (size_t end = n; end-- > 1;) {
        uint64_t tmp = a[0];
        a[0] = a[end];
        a[end] = tmp;
        sift_u64(a, 0, end);
    }
}

static void sort_buckets(const sgr_table *t, uint32_t *idx, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(t, idx, i, n);
    for (size_t end = n; end-- > 1;) {
        uint32_t tmp = idx[0];
        idx[0] = idx[end];
        idx[end] = tmp;
        sift(t, idx, 0, end);
    }
}

/* INDEX: power-of-two size with at least one empty bucket (probes terminate), every
 * name reachable from its hash by linear probing without crossing an empty bucket
 * (lookups never miss), names unique, lists valid.  Linear time plus one sort. */
static int check_index(vctx *v)
{
    const sgr_table *t = v->t;
    uint32_t nb = t->nbuckets, mask = nb - 1, nfull = 0;
    if (nb == 0)
        return 0;
    if (nb & mask)
        return fail(v, "index: %u buckets is not a power of two", nb);
    uint32_t last_empty = SGT_NONE;
    for (uint32_t i = 0; i < nb; i++) {
        const sgt_bucket *b = &t->index[i];
        if (b->name == SGT_NONE) {
            if (b->list_off || b->list_len)
                return fail(v, "index: empty bucket %u has a list", i);
            last_empty = i;
            continue;
        }
        nfull++;
        if (check_str(v, b->name, "index bucket", i, "name"))
            return -1;
        if (!list_ok(t, b->list_off, b->list_len)) {
            char what[80];                   /* formatted only to report the failure */
            snprintf(what, sizeof what, "index bucket %u (\"%.40s\")", i, sgr_str(v->t, b->name));
            if (check_list(v, b->list_off, b->list_len, what, ""))
                return -1;
        }
    }
    if (last_empty == SGT_NONE)
        return fail(v, "index: no empty bucket (probes would not terminate)");
    /* Walk the buckets starting after an empty one so each run of full buckets is seen
     * whole: bucket p of a run that began at `start` is reachable iff its home lies in
     * [start, p] (cyclically). */
    uint32_t start = 0;
    for (uint32_t s = 1; s <= nb; s++) {
        uint32_t p = (last_empty + s) & mask;
        const sgt_bucket *b = &t->index[p];
        if (b->name == SGT_NONE)
            continue;
        if (t->index[(p - 1) & mask].name == SGT_NONE)
            start = p;
        const char *name = sgr_str(t, b->name);
        uint32_t home = sgr_hash_name(name, strlen(name)) & mask;
        if (((p - home) & mask) > ((p - start) & mask))
            return fail(v, "index bucket %u (\"%.40s\"): not reachable by probing from its "
                        "hash bucket %u", p, name, home);
    }
    /* names unique: sort (hash, bucket) keys as integers, then compare strings only
     * within a run of equal hashes (sorted by strcmp there, so a hostile run of
     * colliding names still costs n log n) */
    uint64_t *key = sg_malloc((size_t)nfull * sizeof *key);
    uint32_t *idx = sg_malloc((size_t)nfull * sizeof *idx);
    if (!key || !idx) {
        sg_free(key);
        sg_free(idx);
        return fail(v, "out of memory");
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < nb; i++)
        if (t->index[i].name != SGT_NONE) {
            const char *name = sgr_str(t, t->index[i].name);
            key[k++] = (uint64_t)sgr_hash_name(name, strlen(name)) << 32 | i;
        }
    sort_u64(key, nfull);
    int rc = 0;
    for (uint32_t a = 0; a < nfull && rc == 0;) {
        uint32_t b = a + 1;
        while (b < nfull && key[b] >> 32 == key[a] >> 32)
            b++;
        if (b - a > 1) {
            for (uint32_t j = a; j < b; j++)
                idx[j - a] = (uint32_t)key[j];
            sort_buckets(t, idx, b - a);
            for (uint32_t j = 1; j < b - a; j++)
                if (!bucket_less(t, idx[j - 1], idx[j])) {
                    rc = fail(v, "index: buckets %u and %u share the name \"%.40s\"", idx[j - 1], idx[j],
                              sgr_str(t, t->index[idx[j]].name));
                    break;
                }
        }
        a = b;
    }
    sg_free(key);
    sg_free(idx);
    return rc;
}

static int check_progspecs(vctx *v)
{
    const sgr_table *t = v->t;
    const uint32_t known = SGT_PROG_WRAPPER | SGT_PROG_RUNS_NOTHING | SGT_PROG_ASSIGNMENTS |
                           SGT_PROG_PERMUTE | SGT_PROG_JOIN | SGT_PROG_MOREARGS |
                           SGT_PROG_TEXT_OPERAND | SGT_PROG_STDIN | SGT_PROG_WRITES |
                           SGT_PROG_COPIES | SGT_PROG_RUNS_FILE | SGT_PROG_NO_STDIN | SGT_PROG_TREE |
                           SGT_PROG_TEXT_ALL | SGT_PROG_SCRIPTS | SGT_PROG_SUBCOMMANDS |
                           SGT_PROG_URL_OPS | SGT_PROG_REMOTE_OPS | SGT_PROG_HOST_OP;
    uint64_t total = 0;
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const sgt_progspec *p = &t->progs[i];
        if (check_str(v, p->name, "progspec", i, "name"))
            return -1;
        if (i && strcmp(sgr_str(t, t->progs[i - 1].name), sgr_str(t, p->name)) >= 0)
            return fail(v, "progspec %u: names not strictly sorted", i);
        if (p->flags & ~known)
            return fail(v, "progspec %u: unknown flags 0x%x", i, p->flags & ~known);
        const char *nm = sgr_str(t, p->name);
        if (strchr(nm, ' ') && strlen(nm) >= SGT_MAX_SUBSPEC_NAME)
            return fail(v, "progspec %u: a subcommand's name of %zu bytes (at most %d)", i, strlen(nm),
                        SGT_MAX_SUBSPEC_NAME - 1);
        sgr_prog_list sl[SGR_NPROG_LISTS];
        sgr_prog_lists(p, sl);
        if (p->first_len && !(p->flags & SGT_PROG_TEXT_OPERAND))
            return fail(v, "progspec %u: text-operand options without the text-operand flag", i);
        if (p->stdin_len && !(p->flags & SGT_PROG_STDIN))
            return fail(v, "progspec %u: stdin options without the stdin flag", i);
        if ((p->flags & SGT_PROG_STDIN) && (p->flags & SGT_PROG_NO_STDIN))
            return fail(v, "progspec %u: both stdin and stdin-nothing", i);
        /* slices may share entries, so their lengths may add up to far more than
         * PROGOPTS holds: the checks here and the option hashes (plan_progopts:
         * twice as many slots, their offsets a uint32_t) take time and memory by
         * that sum */
        for (int j = 0; j < SGR_NPROG_LISTS; j++)
            total += sl[j].len;
        if (total > SGR_MAX_PROGOPT_REFS)
            return fail(v, "progspec %u: more than %u option names in all program specs", i,
                        SGR_MAX_PROGOPT_REFS);
        for (int j = 0; j < SGR_NPROG_LISTS; j++) {
            if (!slice_ok(sl[j].off, sl[j].len, t->nprogopts))
                return fail(v, "progspec %u: %s [%u, +%u) outside progopts (%u)", i,
                            sl[j].name, sl[j].off, sl[j].len, t->nprogopts);
            if (check_sorted_strs(v, t->progopts, sl[j].off, sl[j].len, "progspec", i,
                                  sl[j].name))
                return -1;
        }
    }
    return 0;
}

static int check_limits(vctx *v)
{
    const sgr_table *t = v->t;
    uint32_t team = 0;
    for (uint32_t i = 0; i < t->nlimits; i++) {
        const sgt_limit *l = &t->limits[i];
        if (check_str(v, l->name, "limit", i, "name") || check_str(v, l->msg, "limit", i, "msg"))
            return -1;
        if (l->nwindows < 1 || l->nwindows > SGT_MAX_WINDOWS)
            return fail(v, "limit %u: %u windows (need 1..%d)", i, l->nwindows, SGT_MAX_WINDOWS);
        for (uint32_t w = 0; w < l->nwindows; w++)
            if (l->count[w] < 1 || l->seconds[w] < 1 || l->count[w] > SGT_MAX_LIMIT_COUNT)
                return fail(v, "limit %u: window %u allows %u per %u s (both must be >= 1, the count <= %u)", i,
                            w, l->count[w], l->seconds[w], SGT_MAX_LIMIT_COUNT);
        if (check_code(v, l->code_off, l->code_len, 1, "limit", i))
            return -1;
        if (l->key > SGT_LIMIT_PER_TEAM)
            return fail(v, "limit %u: unknown key %u (0 per agent, 1 per team)", i, l->key);
        team += l->key == SGT_LIMIT_PER_TEAM;
    }
    /* the flag is set exactly when a limit is per team: an older runtime refuses it */
    int flag = (t->hdr->flags & SGT_HDR_TEAM_LIMITS) != 0;
    if (team && !flag)
        return fail(v, "limits: %u per team, but the header lacks the team-limits flag", team);
    if (!team && flag)
        return fail(v, "limits: the header has the team-limits flag, but no limit is per team");
    return 0;
}

static int check_rest(vctx *v)
{
    const sgr_table *t = v->t;
    const sgt_meta *m = t->meta;
    if (check_str(v, m->pack_name, "meta", 0, "pack name") ||
        check_str(v, m->default_msg, "meta", 0, "default message") ||
        check_str(v, m->default_hint, "meta", 0, "default hint"))
        return -1;
    if (m->default_decision >= SGT_NDECISIONS)
        return fail(v, "meta: unknown default decision %u", m->default_decision);
    if (check_list(v, m->any_off, m->any_len, "meta", " any-rules") ||
        check_list(v, m->line_off, m->line_len, "meta", " line-rules"))
        return -1;
    for (uint32_t i = 0; i < t->nhooks; i++)
        if (check_str(v, t->hooks[i].name, "hook", i, "name") ||
            check_str(v, t->hooks[i].source, "hook", i, "source"))
            return -1;
    for (uint32_t i = 0; i < t->ntests; i++) {
        const sgt_test *x = &t->tests[i];
        if (x->decision >= SGT_NDECISIONS)
            return fail(v, "test %u: unknown decision %u", i, x->decision);
        if (check_str(v, x->command, "test", i, "command") ||
            check_str(v, x->rule, "test", i, "rule") || check_str(v, x->cwd, "test", i, "cwd") ||
            check_str(v, x->file, "test", i, "file"))
            return -1;
    }
    for (uint32_t i = 0; i < t->npatterns; i++) {
        const sgt_pattern *p = &t->patterns[i];
        if (p->set >= t->nsets || (i && p->set < t->patterns[i - 1].set))
            return fail(v, "pattern %u: set %u out of range or out of order", i, p->set);
        if (p->kind >= SGT_NPATKINDS || p->icase > 1)
            return fail(v, "pattern %u: unknown kind %u or case flag %u", i, p->kind, p->icase);
        if (check_str(v, p->text, "pattern", i, "text"))
            return -1;
    }
    if (t->npacks < 1)
        return fail(v, "packs: no pack");
    for (uint32_t i = 0; i < t->npacks; i++)
        if (check_str(v, t->packs[i].name, "pack", i, "name") ||
            check_str(v, t->packs[i].file, "pack", i, "file"))
            return -1;
    return 0;
}

/* A hash of the (verified, distinct) program spec names: every segment looks its
 * program up, in the unwrapper and again when normalising. */
static int hash_progspecs(sgr_table *t)
{
    uint32_t n = 4;
    while (n <= 2 * t->nprogs)
        n *= 2;
    t->proghash = sg_calloc(n, sizeof *t->proghash);
    if (!t->proghash)
        return -1;
    t->nproghash = n;
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const char *name = sgr_str(t, t->progs[i].name);
        uint32_t h = sgr_hash_name(name, strlen(name)) & (n - 1);
        while (t->proghash[h])
            h = (h + 1) & (n - 1);
        t->proghash[h] = i + 1;
    }
    /* a subcommand's spec ("git rebase") is looked for only where its program's is */
    t->subspecs = sg_calloc(t->nprogs ? t->nprogs : 1, 1);
    if (!t->subspecs)
        return -1;
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const char *name = sgr_str(t, t->progs[i].name), *sp = strchr(name, ' ');
        const sgt_progspec *base = sp ? sgr_table_progspec(t, name, (size_t)(sp - name)) : NULL;
        if (base)
            t->subspecs[base - t->progs] = 1;
    }
    t->foldprogs = sg_malloc(sizeof *t->foldprogs * (t->nprogs ? t->nprogs : 1));
    if (!t->foldprogs)
        return -1;
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const char *name = sgr_str(t, t->progs[i].name);
        size_t nl = strcspn(name, " ");
        if (!name[nl])
            for (size_t k = 0; k < nl; k++)
                if (name[k] >= 'A' && name[k] <= 'Z') {
                    t->foldprogs[t->nfoldprogs++] = i;
                    break;
                }
    }
    return 0;
}

/* Room for every program spec's option view (struct sgr_progview, built by
 * build_progview): each spec's slots in opttab, a power of two > 2 * the names
 * its lists hold (names in several lists share a slot), and its short-option
 * row.  Nothing is filled but where each spec's slots are. */
static int plan_progopts(sgr_table *t)
{
    size_t np = t->nprogs ? t->nprogs : 1, total = 0;
    t->prog_state = sg_calloc(np, sizeof *t->prog_state);
    t->progview = sg_malloc(np * sizeof *t->progview);
    t->shortopt = sg_malloc(np * sizeof *t->shortopt);
    if (!t->prog_state || !t->progview || !t->shortopt)
        return -1;
    for (uint32_t i = 0; i < t->nprogs; i++) {
        uint64_t n = sgr_prog_nopts(&t->progs[i]);
        uint32_t cap = 2;
        while (cap <= 2 * n)
            cap *= 2;
        t->progview[i].tab_off = (uint32_t)total;
        t->progview[i].tab_mask = cap - 1;
        total += cap;
    }
    t->opttab = sg_malloc(sizeof *t->opttab * (total ? total : 1));
    if (!t->opttab)
        return -1;
    t->nopttab = total;
    return 0;
}

/* Spec i's options (verified) in its slots, with the lists each is in as bits,
 * and in its filters: the normaliser asks what an option is once, not once per
 * list.  Short options "-x" (most of what is asked: a cluster's letters) also in
 * its row, indexed by x.  Writes only spec i's parts of the view. */
static void build_progview(const sgr_table *t, uint32_t i)
{
    const sgt_progspec *p = &t->progs[i];
    struct sgr_progview *v = &t->progview[i];
    struct sgr_optent *tab = t->opttab + v->tab_off;
    uint32_t mask = v->tab_mask;
    v->filt = (sgr_strfilt){ 0, 0 };
    v->c2 = v->c23 = 0;
    memset(t->shortopt[i], 0, sizeof t->shortopt[i]);
    for (uint32_t h = 0; h <= mask; h++)
        tab[h] = (struct sgr_optent){ SGT_NONE, 0, 0 };
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(p, sl);
    for (int j = 0; j < SGR_NPROG_LISTS; j++)
        for (uint32_t k = 0; k < sl[j].len; k++) {
            uint32_t ref = t->progopts[sl[j].off + k];
            const char *o = sgr_str(t, ref);
            size_t ol = strlen(o);
            sgr_strfilt_add(&v->filt, o, ol, 1);
            if (ol > 2 && o[0] == '-' && o[1] == '-'
                && (sl[j].bit & (SGR_OPT_VALUE | SGR_OPT_SCRIPT | SGR_OPT_FIRST))) {
                v->c2 |= 1ull << ((uint8_t)o[2] & 63);
                if (ol > 3)
                    v->c23 |= 1ull << sgr_abbr_pair(o[2], o[3]);
            }
            _Static_assert((SGR_OPT_VALUE | SGR_OPT_TEXT | SGR_OPT_FIRST | SGR_OPT_SCRIPT | SGR_OPT_EXEC
                            | SGR_OPT_END | SGR_OPT_LOOKUP | SGR_OPT_ARGV0 | SGR_OPT_CODE | SGR_OPT_STDIN
                            | SGR_OPT_FLAG | SGR_OPT_LINK | SGR_OPT_LINKREL | SGR_OPT_NORUN | SGR_OPT_CWD
                            | SGR_OPT_URL | SGR_OPT_URLUNK)
                           <= UINT32_MAX, "shortopt holds every SGR_OPT_ bit");
            if (ol == 2 && o[0] == '-' && (uint8_t)o[1] < 128)
                t->shortopt[i][(uint8_t)o[1]] |= sl[j].bit;
            uint32_t h = sgr_fnv1a(o, ol) & mask;
            while (tab[h].name != SGT_NONE && tab[h].name != ref
                   && !(tab[h].len == ol && memcmp(sgr_str(t, tab[h].name), o, ol) == 0))
                h = (h + 1) & mask;
            if (tab[h].name == SGT_NONE)
                tab[h] = (struct sgr_optent){ ref, (uint32_t)ol, 0 };
            tab[h].bits |= sl[j].bit;
        }
}

int sgr_table_progview(const sgr_table *t, uint32_t pi)
{
    uint8_t st = atomic_load_explicit(&t->prog_state[pi], memory_order_acquire);
    if (st == SGR_VIEW_NONE
        && atomic_compare_exchange_strong_explicit(&t->prog_state[pi], &st, SGR_VIEW_BUILDING, memory_order_acquire,
                                                   memory_order_acquire)) {
        build_progview(t, pi);              /* claimed: spec pi's parts are ours */
        atomic_store_explicit(&t->prog_state[pi], SGR_VIEW_READY, memory_order_release);
        return 1;
    }
    return st == SGR_VIEW_READY;
}

static int is_longopt(const char *o)
{
    return o[0] == '-' && o[1] == '-' && o[2] != '\0';
}

/* A long option to sort: key orders it as strcmp does by its bytes 2..9 (every
 * one starts with "--"), big-endian, zero after its end. */
typedef struct lo_ent {
    uint64_t key;
    uint32_t ref;
} lo_ent;

static uint64_t longopt_key(const sgr_table *t, uint32_t ref)
{
    const char *o = sgr_str(t, ref);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if ((uint64_t)ref + 10 <= t->strings_size) {  /* the eight bytes are the table's */
        uint64_t w, z;
        memcpy(&w, o + 2, 8);
        /* the lowest byte that is zero (the string's end) has the lowest bit of z;
         * it and every byte after it are cleared */
        z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
        if (z)
            w &= ((uint64_t)1 << (__builtin_ctzll(z) & ~7u)) - 1;
        return __builtin_bswap64(w);
    }
#endif
    uint64_t k = 0;
    size_t i = 2;
    for (; i < 10 && o[i]; i++)
        k = k << 8 | (uint8_t)o[i];
    return k << (8 * (10 - i));
}

/* Does a sort after b, their keys equal?  By what the key leaves out: the
 * bytes after the tenth (only when neither ends before it: a key with a zero
 * low byte is the whole string), then the ref, so of several equal strings the
 * same one comes first whatever order they were found in. */
__attribute__((noinline))
static int lo_tail_after(const sgr_table *t, const lo_ent *a, const lo_ent *b)
{
    int c = a->key & 0xff ? strcmp(sgr_str(t, a->ref) + 10, sgr_str(t, b->ref) + 10) : 0;
    return c ? c > 0 : a->ref > b->ref;
}

static inline int lo_after(const sgr_table *t, const lo_ent *a, const lo_ent *b)
{
    return a->key != b->key ? a->key > b->key : lo_tail_after(t, a, b);
}

/* Sort e[0..n) by key, then lo_tail_after, with tmp[0..n) as room; returns
 * whichever of the two holds the result.  A merge sort over integer keys: a
 * string is compared only where two keys are equal, and no table makes it
 * quadratic. */
static lo_ent *sort_longopts(const sgr_table *t, lo_ent *e, lo_ent *tmp, size_t n)
{
    enum { run = 8 };
    for (size_t a = 0; a < n; a += run)
        for (size_t i = a + 1; i < n && i < a + run; i++) {
            lo_ent x = e[i];
            size_t j = i;
            for (; j > a && lo_after(t, &e[j - 1], &x); j--)
                e[j] = e[j - 1];
            e[j] = x;
        }
    lo_ent *src = e, *dst = tmp;
    for (size_t w = run; w < n; w *= 2) {
        for (size_t a = 0; a < n; a += 2 * w) {
            size_t m = a + w < n ? a + w : n, b = a + 2 * w < n ? a + 2 * w : n, i = a, j = m, k = a;
            while (i < m && j < b)
                dst[k++] = lo_after(t, &src[i], &src[j]) ? src[j++] : src[i++];
            while (i < m)
                dst[k++] = src[i++];
            while (j < b)
                dst[k++] = src[j++];
        }
        lo_ent *x = src;
        src = dst;
        dst = x;
    }
    return src;
}

/* Room for a long option found at ref: 0 when seen (a bitmap of every ref) has
 * ref already, so each is keyed and sorted once however many lists name it.
 * Without the bitmap every one is kept, and the sort's runs of equal strings
 * are the same strings. */
static int lo_first(uint64_t *seen, uint32_t ref)
{
    if (!seen)
        return 1;
    uint64_t bit = (uint64_t)1 << (ref & 63);
    if (seen[ref >> 6] & bit)
        return 0;
    seen[ref >> 6] |= bit;
    return 1;
}

/* A letter no long option starts with: one list for all of them, not made. */
static const sgr_longopts no_longopts;

static void longopts_free(const sgr_longopts *l)
{
    if (l != &no_longopts)
        sg_free((void *)l);
}

/* The long options "--c..." for c = only, or for every c (only -1): those some
 * rule (or rate limit) tests with `option`, and those the program specs list,
 * so the normaliser can read an abbreviation as every option it may stand for
 * (sgr_longopts).  out[0] gets the one list, or out[c] each c's.  -1: out of
 * memory (nothing in out).  Verified code only: the sets exist.  One letter's
 * list still looks at every option the table names, but keys and sorts only
 * its own; every letter's, at once (a checked load), dedupes the refs through a
 * bitmap first, as most are named in several lists. */
static int collect_longopts(const sgr_table *t, int only, const sgr_longopts **out)
{
    /* the sets some `option` test names, each once: a table naming one big set from
     * many instructions costs its words once, not once per instruction */
    uint8_t *named = sg_calloc(t->nsets ? t->nsets : 1, 1);
    int bitmap = only < 0 && t->strings_size <= (1u << 24);
    uint64_t *seen = bitmap ? sg_calloc(t->strings_size / 64 + 1, sizeof *seen) : NULL;
    if (!named || (bitmap && !seen)) {
        sg_free(named);
        sg_free(seen);
        return -1;
    }
    size_t cap = 0;
    for (uint32_t r = 0; r < t->nrules + t->nlimits; r++) {
        uint32_t off = r < t->nrules ? t->rules[r].code_off : t->limits[r - t->nrules].code_off;
        uint32_t len = r < t->nrules ? t->rules[r].code_len : t->limits[r - t->nrules].code_len;
        for (uint32_t pc = 0; pc + 1 < len; pc += 2) {
            uint32_t op = t->code[off + pc] & 0xff, set = t->code[off + pc + 1];
            if (op == SGT_OP_OPTION_VAL)
                set = (t->code[off + pc] >> 8) & ~SGT_NEGATE_VALUE;
            if ((op == SGT_OP_OPTION_ANY || op == SGT_OP_OPTION_ALL || op == SGT_OP_OPTION_VAL) && !named[set]) {
                named[set] = 1;
                cap += t->sets[set].nwords;
            }
        }
    }
    /* with the bitmap each ref once: the specs' distinct refs are at most
     * PROGOPTS's entries (their slices may share entries, and their lengths add
     * up to more) */
    for (uint32_t i = 0; !seen && i < t->nprogs; i++)
        cap += sgr_prog_nopts(&t->progs[i]);
    cap += seen ? t->nprogopts : 0;
    lo_ent *e = sg_malloc(sizeof *e * 2 * (cap ? cap : 1));
    if (!e) {
        sg_free(named);
        sg_free(seen);
        return -1;
    }
    size_t n = 0;
    for (uint32_t b = 0; b < t->nsets; b++) {
        if (!named[b])
            continue;
        const sgt_set *st = &t->sets[b];
        for (uint32_t k = 0; k < st->nwords; k++) {
            uint32_t ref = t->words[st->words_off + k];
            const char *o = sgr_str(t, ref);
            if (is_longopt(o) && (only < 0 || (uint8_t)o[2] == only) && lo_first(seen, ref))
                e[n++] = (lo_ent){ longopt_key(t, ref), ref };
        }
    }
    /* through the specs' slices: only the entries some slice holds are verified
     * string refs (a corrupt table may hold others) */
    for (uint32_t i = 0; i < t->nprogs; i++) {
        sgr_prog_list sl[SGR_NPROG_LISTS];
        sgr_prog_lists(&t->progs[i], sl);
        for (int j = 0; j < SGR_NPROG_LISTS; j++)
            for (uint32_t k = 0; k < sl[j].len; k++) {
                uint32_t ref = t->progopts[sl[j].off + k];
                const char *o = sgr_str(t, ref);
                if (is_longopt(o) && (only < 0 || (uint8_t)o[2] == only) && lo_first(seen, ref))
                    e[n++] = (lo_ent){ longopt_key(t, ref), ref };
            }
    }
    sg_free(named);
    sg_free(seen);
    lo_ent *o = sort_longopts(t, e, e + cap, n);
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)           /* the first of each run of equal strings */
        if (!i || o[i].key != o[i - 1].key
            || ((o[i].key & 0xff) && strcmp(sgr_str(t, o[i].ref) + 10, sgr_str(t, o[i - 1].ref) + 10) != 0))
            o[d++] = o[i];
    /* the sorted run of each letter (a key's top byte) its own list */
    int made = 0, nout = only < 0 ? 256 : 1;
    for (size_t at = 0; made < nout; made++) {
        size_t end = at;
        while (end < d && (only >= 0 || (int)(o[end].key >> 56) == made))
            end++;
        sgr_longopts *l = end > at ? sg_malloc(sizeof *l + sizeof *l->ref * (end - at)) : NULL;
        if (end > at && !l)
            break;
        for (size_t k = at; k < end; k++)
            l->ref[k - at] = o[k].ref;
        if (l)
            l->n = (uint32_t)(end - at);
        out[made] = l ? l : &no_longopts;
        at = end;
    }
    sg_free(e);
    if (made == nout)
        return 0;
    while (made-- > 0)
        longopts_free(out[made]);
    return -1;
}

const sgr_longopts *sgr_table_longopts(const sgr_table *t, unsigned char c)
{
    const sgr_longopts *lo = atomic_load_explicit(&t->lazy->longopts[c], memory_order_acquire), *none = NULL;
    if (lo)
        return lo;
    if (collect_longopts(t, c, &lo) < 0)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(&t->lazy->longopts[c], &none, lo, memory_order_acq_rel,
                                                memory_order_acquire))
        return lo;
    longopts_free(lo);                       /* another thread's came first: the same list */
    return none;
}

int sgr_table_longopts_all(const sgr_table *t)
{
    int missing = 0;
    for (int c = 0; c < 256; c++)
        missing += atomic_load_explicit(&t->lazy->longopts[c], memory_order_acquire) == NULL;
    const sgr_longopts *lo[256];
    if (!missing)
        return 0;
    if (collect_longopts(t, -1, lo) < 0)
        return -1;
    for (int c = 0; c < 256; c++) {
        const sgr_longopts *none = NULL;
        if (!atomic_compare_exchange_strong_explicit(&t->lazy->longopts[c], &none, lo[c], memory_order_acq_rel,
                                                     memory_order_acquire))
            longopts_free(lo[c]);            /* listed already: the same list */
    }
    return 0;
}


int sgr_table_load(const void *bytes, size_t size, sgr_table **out, char *err, size_t errlen)
{
    return sgr_table_load_flags(bytes, size, 0, out, err, errlen);
}

int sgr_table_load_flags(const void *bytes, size_t size, unsigned flags, sgr_table **out, char *err,
                         size_t errlen)
{
    vctx v = {NULL, err, errlen, (flags & SGR_LOAD_TRUSTED) != 0};
    if (err && errlen)
        err[0] = '\0';
    *out = NULL;
    if (!bytes)
        return fail(&v, "no image");
    if (size < sizeof(sgt_header))
        return fail(&v, "truncated: %zu bytes, the header alone is %zu", size,
                    sizeof(sgt_header));
    if ((uintptr_t)bytes % 8)
        return fail(&v, "image not 8-byte aligned in memory");
    if (check_header(&v, bytes, size))
        return -1;
    sgr_table *t = sg_calloc(1, sizeof *t);
    if (!t)
        return fail(&v, "out of memory");
    v.t = t;
    t->base = bytes;
    t->size = size;
    t->hdr = bytes;
    if (check_sections(&v))
        goto bad;
    if (t->hdr->sec[SGT_SEC_META].size != sizeof(sgt_meta)) {
        fail(&v, "meta: %u bytes, expected exactly one record", t->hdr->sec[SGT_SEC_META].size);
        goto bad;
    }
    map_sections(t);
    /* Order matters: strings before anything holding a ref, dfas and hooks before the
     * sets and code that index them, packs counted before rules name them. */
    if (v.trusted ? check_dfas(&v)
                  : check_strings(&v) || check_dfas(&v) || check_sets(&v) || check_rules(&v) ||
                    check_index(&v) || check_progspecs(&v) || check_limits(&v) || check_rest(&v))
        goto bad;
    t->lazy = sg_calloc(1, sizeof *t->lazy);
    if (!t->lazy || hash_progspecs(t) < 0 || plan_progopts(t) < 0) {
        fail(&v, "out of memory");
        goto bad;
    }
    if (!v.trusted) {
        const sgr_longopts *lo[256];
        if (collect_longopts(t, -1, lo) < 0) {
            fail(&v, "out of memory");
            goto bad;
        }
        for (int c = 0; c < 256; c++)
            atomic_init(&t->lazy->longopts[c], lo[c]);
    }
    for (uint32_t i = 0; !v.trusted && i < t->nprogs; i++) {
        build_progview(t, i);               /* not shared yet */
        atomic_init(&t->prog_state[i], SGR_VIEW_READY);
    }
    *out = t;
    return 0;
bad:
    sgr_table_free(t);
    return -1;
}

void sgr_table_free(sgr_table *t)
{
    if (!t)
        return;
    sg_free(t->dfas);
    sg_free(t->dfa_fast);
    sg_free((void *)t->dfa_state);
    sg_free(t->dfa_loops);
    sg_free(t->dfa_noloops);
    sg_free(t->proghash);
    sg_free(t->subspecs);
    sg_free(t->foldprogs);
    sg_free(t->opttab);
    sg_free((void *)t->prog_state);
    sg_free(t->progview);
    sg_free(t->shortopt);
    for (int c = 0; t->lazy && c < 256; c++) {
        const sgr_longopts *l = atomic_load(&t->lazy->longopts[c]);
        if (l)
            longopts_free(l);
    }
    sg_free(t->lazy);
    sg_free(t);
}

/* ------------------------------------------------------------------- lookups */

const uint32_t *sgr_table_lookup(const sgr_table *t, const char *name, size_t len, uint32_t *n)
{
    *n = 0;
    if (t->nbuckets == 0)
        return NULL;
    uint32_t mask = t->nbuckets - 1;
    /* Terminates: the loader proved at least one bucket is empty. */
    for (uint32_t p = sgr_fnv1a(name, len) & mask;; p = (p + 1) & mask) {
        const sgt_bucket *b = &t->index[p];
        if (b->name == SGT_NONE)
            return NULL;
        if (sgr_str_eq(sgr_str(t, b->name), name, len)) {
            *n = b->list_len;
            return t->lists + b->list_off;
        }
    }
}

const sgt_progspec *sgr_table_progspec(const sgr_table *t, const char *name, size_t len)
{
    uint32_t mask = t->nproghash - 1;
    /* terminates: fewer than half the slots are used */
    for (uint32_t h = sgr_fnv1a(name, len) & mask; t->proghash[h]; h = (h + 1) & mask) {
        const sgt_progspec *p = &t->progs[t->proghash[h] - 1];
        if (sgr_str_eq(sgr_str(t, p->name), name, len))
            return p;
    }
    return NULL;
}

/* The first of the strcmp-sorted refs strs[0..cnt) that does not sort before s[0..n). */
static uint32_t lower_str(const sgr_table *t, const uint32_t *strs, uint32_t cnt, const char *s, size_t n)
{
    uint32_t lo = 0, hi = cnt;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_counted(sgr_str(t, strs[mid]), s, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Is s[0..n) one of the strcmp-sorted string refs strs[0..cnt)?  lower_str's
 * search, ending at an equal entry: every exact-word set test goes through here,
 * and stopping early is worth its own loop. */
static int find_str(const sgr_table *t, const uint32_t *strs, uint32_t cnt, const char *s,
                    size_t n)
{
    uint32_t lo = 0, hi = cnt;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = cmp_counted(sgr_str(t, strs[mid]), s, n);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int sgr_set_words_has(const sgr_table *t, uint32_t s, const char *str, size_t len)
{
    const sgt_set *set = &t->sets[s];
    return find_str(t, t->words + set->words_off, set->nwords, str, len);
}

int sgr_set_match(const sgr_table *t, uint32_t s, const char *str, size_t len)
{
    const sgt_set *set = &t->sets[s];
    if (find_str(t, t->words + set->words_off, set->nwords, str, len))
        return 1;
    return set->dfa != SGT_NONE && sgr_dfa_match(sgr_table_dfa(t, set->dfa), str, len) >= 0;
}

int sgr_set_words_dirs(const sgr_table *t, uint32_t s, const char *str, size_t len, size_t from,
                       size_t maxlen)
{
    const sgt_set *set = &t->sets[s];
    if (!set->nwords)
        return 0;
    const uint32_t *w = t->words + set->words_off;
    if (len <= maxlen && find_str(t, w, set->nwords, str, len))
        return 1;
    size_t at = from + 1 > 1 ? from + 1 : 1, lim = len < maxlen + 1 ? len : maxlen + 1;
    for (const char *q = lim > at ? memchr(str + at, '/', lim - at) : NULL; q;
         q = memchr(q + 1, '/', lim - (size_t)(q + 1 - str)))
        if (find_str(t, w, set->nwords, str, (size_t)(q - str)))
            return 1;
    return 0;
}

int sgr_set_match_dirs(const sgr_table *t, uint32_t s, const char *str, size_t len)
{
    const sgt_set *set = &t->sets[s];
    if (sgr_set_words_dirs(t, s, str, len, 0, SIZE_MAX))
        return 1;
    return set->dfa != SGT_NONE && sgr_dfa_match_dirs(sgr_table_dfa(t, set->dfa), str, len);
}

uint32_t sgr_progopt_bits_slow(const sgr_table *t, uint32_t pi, const char *str, size_t slen)
{
    const struct sgr_progview *v = &t->progview[pi];
    const struct sgr_optent *tab = t->opttab + v->tab_off;
    /* terminates: fewer than half the slots are used */
    for (uint32_t h = sgr_fnv1a(str, slen) & v->tab_mask; tab[h].name != SGT_NONE; h = (h + 1) & v->tab_mask)
        /* the name has exactly len bytes before its NUL: a query holding a NUL
         * differs from it at the NUL */
        if (tab[h].len == slen && memcmp(sgr_str(t, tab[h].name), str, slen) == 0)
            return tab[h].bits;
    return 0;
}

uint32_t sgr_progopt_bits_unbuilt(const sgr_table *t, uint32_t pi, const char *str, size_t slen)
{
    if (sgr_table_progview(t, pi))
        return sgr_progopt_bits(t, &t->progs[pi], str, slen);
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(&t->progs[pi], sl);
    uint32_t bits = 0;
    for (int j = 0; j < SGR_NPROG_LISTS; j++)
        if (find_str(t, t->progopts + sl[j].off, sl[j].len, str, slen))
            bits |= sl[j].bit;
    return bits;
}

uint32_t sgr_progopt_abbrev(const sgr_table *t, const sgt_progspec *ps, const char *str, size_t slen)
{
    if (slen < 3 || str[0] != '-' || str[1] != '-')
        return 0;
    /* the filters, unless another thread is building them (then the search
     * alone, which gives the same answer) */
    const struct sgr_progview *v = &t->progview[ps - t->progs];
    if (sgr_table_progview(t, (uint32_t)(ps - t->progs))) {
        if (!((v->c2 >> ((uint8_t)str[2] & 63)) & 1))
            return 0;
        /* str is a proper prefix only of a name longer than it: one with o[3]
         * when str has str[3] */
        if (slen > 3 && !((v->c23 >> sgr_abbr_pair(str[2], str[3])) & 1))
            return 0;
    }
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(ps, sl);
    uint32_t bits = 0;
    for (int j = 0; j < SGR_NPROG_LISTS; j++) {
        if (!(sl[j].bit & (SGR_OPT_VALUE | SGR_OPT_FIRST | SGR_OPT_SCRIPT | SGR_OPT_LOOKUP | SGR_OPT_ARGV0
                            | SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK)) || !sl[j].len)
            continue;
        /* a slice is sorted, so the names that str is a proper prefix of come right
         * after str's place in it (after str itself, when it is listed) */
        const uint32_t *o = t->progopts + sl[j].off;
        uint32_t k = lower_str(t, o, sl[j].len, str, slen);
        if (k < sl[j].len && sgr_str_eq(sgr_str(t, o[k]), str, slen))
            k++;
        const char *w = k < sl[j].len ? sgr_str(t, o[k]) : NULL;
        if (w && sgr_str_starts(w, str, slen) && w[slen] != '\0')
            bits |= sl[j].bit;
    }
    return bits;
}

uint32_t sgr_longopt_range(const sgr_table *t, const sgr_longopts *lo, const char *str, size_t slen,
                           uint32_t *first)
{
    *first = 0;
    if (slen < 3 || str[0] != '-' || str[1] != '-' || !lo->n)
        return 0;
    uint32_t k = lower_str(t, lo->ref, lo->n, str, slen);
    if (k < lo->n && sgr_str_eq(sgr_str(t, lo->ref[k]), str, slen))
        k++;                                 /* listed itself: the longer ones */
    uint32_t e = k;
    while (e < lo->n && sgr_str_starts(sgr_str(t, lo->ref[e]), str, slen))
        e++;
    *first = k;
    return e - k;
}

int sgr_progopt_has(const sgr_table *t, uint32_t off, uint32_t len, const char *str, size_t slen)
{
    return find_str(t, t->progopts + off, len, str, slen);
}
