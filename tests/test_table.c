/* test_table.c - the table loader accepts hand-built tables, answers lookups, dumps a golden
 * listing, and refuses every corrupt, truncated or hostile-but-resealed image. */
#include "runtime/table.h"
#include "common/alloc.h"
#include "check.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ tiny table builder */

/* Sections are collected separately, then laid out after the header, 8-aligned. */
typedef struct tb {
    uint8_t *p[SGT_NSECTIONS];
    size_t len[SGT_NSECTIONS], cap[SGT_NSECTIONS];
    uint32_t meta_records;           /* how many META records to emit (normally 1) */
} tb;

/* An assembled image; w keeps it 8-aligned. */
typedef struct img {
    uint64_t *w;
    uint8_t *p;
    size_t size;
} img;

/* Append n bytes to section s; returns the byte offset they start at. */
static uint32_t tb_add(tb *b, int s, const void *data, size_t n)
{
    if (b->len[s] + n > b->cap[s]) {
        size_t cap = b->cap[s] ? b->cap[s] * 2 : 256;
        while (cap < b->len[s] + n)
            cap *= 2;
        b->p[s] = sg_realloc(b->p[s], cap);
        if (!b->p[s])
            abort();
        b->cap[s] = cap;
    }
    memcpy(b->p[s] + b->len[s], data, n);
    b->len[s] += n;
    return (uint32_t)(b->len[s] - n);
}

/* A string ref; "" is always ref 0. */
static uint32_t tb_str(tb *b, const char *s)
{
    if (b->len[SGT_SEC_STRINGS] == 0)
        tb_add(b, SGT_SEC_STRINGS, "", 1);
    if (!*s)
        return 0;
    return tb_add(b, SGT_SEC_STRINGS, s, strlen(s) + 1);
}

/* Append u32 string refs for words[0..n) to WORDS or PROGOPTS; returns the index. */
static uint32_t tb_strs(tb *b, int sec, const char *const *words, uint32_t n)
{
    uint32_t first = (uint32_t)(b->len[sec] / 4);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = tb_str(b, words[i]);
        tb_add(b, sec, &r, 4);
    }
    return first;
}

/* A program spec's option list `field` in PROGOPTS: the names of the array arr. */
#define PROG_SLICE(b, p, field, arr)                                                           \
    ((p).field##_len = (uint32_t)(sizeof(arr) / sizeof *(arr)),                                \
     (p).field##_off = tb_strs((b), SGT_SEC_PROGOPTS, (arr), (p).field##_len))

static uint32_t tb_list(tb *b, const uint32_t *ids, uint32_t n)
{
    uint32_t first = (uint32_t)(b->len[SGT_SEC_LISTS] / 4);
    if (n)
        tb_add(b, SGT_SEC_LISTS, ids, 4 * (size_t)n);
    return first;
}

static uint32_t tb_ins(tb *b, uint32_t op, uint32_t a, uint32_t bb)
{
    uint32_t w[2] = {op | a << 8, bb};
    return tb_add(b, SGT_SEC_CODE, w, 8) / 4;
}

static uint32_t tb_set(tb *b, const char *name, uint32_t kind, const char *const *words,
                       uint32_t n, uint32_t dfa)
{
    sgt_set s = {tb_str(b, name), kind, tb_strs(b, SGT_SEC_WORDS, words, n), n, dfa};
    return tb_add(b, SGT_SEC_SETS, &s, sizeof s) / (uint32_t)sizeof s;
}

/* A 3-state DFA: dead, start, accepting sink; byte `hit` is class 1.  start_loops:
 * class 0 keeps the start state (substring "*x*") instead of dying (glob "g*"). */
static uint32_t tb_dfa3(tb *b, uint8_t hit, int start_loops)
{
    uint8_t cm[256] = {0};
    cm[hit] = 1;
    uint32_t tr[6] = {0, 0, start_loops ? 1 : 0, 2, 2, 2};
    int32_t acc[3] = {-1, -1, 0};
    sgt_dfa d = {3, 2, 0, 1};
    d.data_off = tb_add(b, SGT_SEC_DFADATA, cm, sizeof cm);
    tb_add(b, SGT_SEC_DFADATA, tr, sizeof tr);
    tb_add(b, SGT_SEC_DFADATA, acc, sizeof acc);
    return tb_add(b, SGT_SEC_DFAS, &d, sizeof d) / (uint32_t)sizeof d;
}

static uint32_t tb_rule(tb *b, const char *id, uint32_t decision, uint32_t flags,
                        uint32_t code_off, const char *msg, const char *hint, uint32_t line)
{
    uint32_t end = (uint32_t)(b->len[SGT_SEC_CODE] / 4);
    sgt_rule r = {tb_str(b, id), 0, decision, flags, code_off, end - code_off,
                  tb_str(b, msg), tb_str(b, hint), line, 0};
    return tb_add(b, SGT_SEC_RULES, &r, sizeof r) / (uint32_t)sizeof r;
}

/* INDEX with nb buckets (power of two), names placed by the runtime's own probe rule. */
static void tb_index(tb *b, uint32_t nb, const char *const *names, const uint32_t *const *lists,
                     const uint32_t *lens, uint32_t n)
{
    sgt_bucket *bk = sg_malloc(nb * sizeof *bk);
    for (uint32_t i = 0; i < nb; i++)
        bk[i] = (sgt_bucket){SGT_NONE, 0, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = sgr_hash_name(names[i], strlen(names[i])) & (nb - 1);
        while (bk[p].name != SGT_NONE)
            p = (p + 1) & (nb - 1);
        bk[p] = (sgt_bucket){tb_str(b, names[i]), tb_list(b, lists[i], lens[i]), lens[i]};
    }
    tb_add(b, SGT_SEC_INDEX, bk, nb * sizeof *bk);
    sg_free(bk);
}

/* Lay the sections out after the header and seal with sgr_table_checksum. */
static img tb_build(tb *b)
{
    size_t off = sizeof(sgt_header);
    for (int i = 0; i < SGT_NSECTIONS; i++)
        off = ((off + 7) & ~(size_t)7) + b->len[i];
    img m;
    m.size = off;
    m.w = sg_calloc((off + 7) / 8, 8);
    m.p = (uint8_t *)m.w;
    sgt_header *h = (sgt_header *)m.p;
    memcpy(h->magic, SGT_MAGIC, 8);
    h->version = SGT_VERSION;
    h->endian = SGT_ENDIAN;
    h->header_size = sizeof(sgt_header);
    h->total_size = (uint32_t)m.size;
    h->nsections = SGT_NSECTIONS;
    for (int i = 0; i < 32; i++)
        h->source_sha256[i] = (uint8_t)(0xa0 + i);
    off = sizeof(sgt_header);
    for (int i = 0; i < SGT_NSECTIONS; i++) {
        off = (off + 7) & ~(size_t)7;
        h->sec[i].off = (uint32_t)off;
        h->sec[i].size = (uint32_t)b->len[i];
        if (b->len[i])
            memcpy(m.p + off, b->p[i], b->len[i]);
        off += b->len[i];
    }
    h->checksum = sgr_table_checksum(m.p, m.size);
    return m;
}

static void tb_free(tb *b)
{
    for (int i = 0; i < SGT_NSECTIONS; i++)
        sg_free(b->p[i]);
    memset(b, 0, sizeof *b);
}

static void img_free(img *m)
{
    sg_free(m->w);
    m->w = NULL;
}

static void reseal(img *m)
{
    sgt_header *h = (sgt_header *)m->p;
    h->checksum = sgr_table_checksum(m->p, m->size);
}

/* The sample table:
 *   set#0 "tools" match {ls rm} + dfa#0 (glob g*)
 *   set#1 ""      match {-f -r}
 *   set#2 ""      text  {}      + dfa#1 (substring x)
 *   set#3 ""      match {rm}
 *   rule#0 allow  program set#0
 *   rule#1 deny   program set#3; jump-false +1; option-all set#1
 *   rule#2 deny   text set#2                       (line)
 *   rule#3 ask    argc > 2; jump-false +1; lua hook#0
 *   index rm -> [0 1], ls -> [0]; any -> [0 3]; line -> [2]
 *   progspecs env, sudo; limits shell (every command), rmrate (when ...) */
static void build_sample(tb *b)
{
    memset(b, 0, sizeof *b);
    tb_str(b, "");
    static const char *const tools[] = {"ls", "rm"}, *const fr[] = {"-f", "-r"},
                             *const rm[] = {"rm"};
    uint32_t g = tb_dfa3(b, 'g', 0), x = tb_dfa3(b, 'x', 1);
    tb_set(b, "tools", SGT_SETK_MATCH, tools, 2, g);
    tb_set(b, "", SGT_SETK_MATCH, fr, 2, SGT_NONE);
    tb_set(b, "", SGT_SETK_TEXT, NULL, 0, x);
    tb_set(b, "", SGT_SETK_MATCH, rm, 1, SGT_NONE);

    uint32_t c = tb_ins(b, SGT_OP_PROGRAM, 0, 0);
    tb_rule(b, "demo:tools", SGT_ALLOW, 0, c, "", "", 4);
    c = tb_ins(b, SGT_OP_PROGRAM, 0, 3);
    tb_ins(b, SGT_OP_JUMP_FALSE, 0, 1);
    tb_ins(b, SGT_OP_OPTION_ALL, 0, 1);
    tb_rule(b, "demo:rm_rf", SGT_DENY, 0, c, "recursive {program} is denied", "use trash", 5);
    c = tb_ins(b, SGT_OP_TEXT, 0, 2);
    tb_rule(b, "demo:x", SGT_DENY, SGT_RULE_LINE, c, "no \"x\"\there", "", 6);
    c = tb_ins(b, SGT_OP_ARGC, SGT_CMP_GT, 2);
    tb_ins(b, SGT_OP_JUMP_FALSE, 0, 1);
    tb_ins(b, SGT_OP_LUA, 0, 0);
    tb_rule(b, "demo:hook", SGT_ASK, SGT_RULE_LUA, c, "hook says ask", "", 7);

    static const uint32_t l_rm[] = {0, 1}, l_ls[] = {0};
    static const char *const names[] = {"rm", "ls"};
    static const uint32_t *const lists[] = {l_rm, l_ls};
    static const uint32_t lens[] = {2, 1};
    tb_index(b, 4, names, lists, lens, 2);
    static const uint32_t any[] = {0, 3}, line[] = {2};
    sgt_meta m = {0};
    m.pack_name = tb_str(b, "demo");
    m.pack_version = 1;
    m.default_decision = SGT_DENY;
    m.default_msg = tb_str(b, "'{program}' is not allowed");
    m.default_hint = tb_str(b, "ask an admin");
    m.any_off = tb_list(b, any, 2);
    m.any_len = 2;
    m.line_off = tb_list(b, line, 1);
    m.line_len = 1;
    m.dynamic_rules = 0;
    m.hook_budget = 1000;
    tb_add(b, SGT_SEC_META, &m, sizeof m);

    static const char *const env_v[] = {"-u"}, *const sudo_v[] = {"-g", "-u"},
                             *const sudo_e[] = {"--"};
    sgt_progspec p = {0};
    p.name = tb_str(b, "env");
    p.flags = SGT_PROG_WRAPPER | SGT_PROG_ASSIGNMENTS;
    p.value_off = tb_strs(b, SGT_SEC_PROGOPTS, env_v, 1);
    p.value_len = 1;
    tb_add(b, SGT_SEC_PROGSPECS, &p, sizeof p);
    memset(&p, 0, sizeof p);
    p.name = tb_str(b, "sudo");
    p.flags = SGT_PROG_WRAPPER;
    p.value_off = tb_strs(b, SGT_SEC_PROGOPTS, sudo_v, 2);
    p.value_len = 2;
    p.end_off = tb_strs(b, SGT_SEC_PROGOPTS, sudo_e, 1);
    p.end_len = 1;
    tb_add(b, SGT_SEC_PROGSPECS, &p, sizeof p);

    sgt_limit l = {0};
    l.name = tb_str(b, "shell");
    l.nwindows = 2;
    l.count[0] = 3, l.seconds[0] = 10, l.count[1] = 10, l.seconds[1] = 60;
    l.msg = tb_str(b, "slow down");
    tb_add(b, SGT_SEC_LIMITS, &l, sizeof l);
    memset(&l, 0, sizeof l);
    l.name = tb_str(b, "rmrate");
    l.nwindows = 1;
    l.count[0] = 1, l.seconds[0] = 5;
    l.code_off = tb_ins(b, SGT_OP_PROGRAM, 0, 3);
    tb_ins(b, SGT_OP_JUMP_TRUE, 0, 1);
    tb_ins(b, SGT_OP_REDIR_WRITES, 0, SGT_NONE);
    l.code_len = (uint32_t)(b->len[SGT_SEC_CODE] / 4) - l.code_off;
    tb_add(b, SGT_SEC_LIMITS, &l, sizeof l);

    sgt_hook h = {tb_str(b, "no_secrets"), tb_str(b, "function no_secrets(c)\n  return true\nend\n"),
                  {0}};
    for (int i = 0; i < 32; i++)
        h.sha256[i] = (uint8_t)i;
    tb_add(b, SGT_SEC_HOOKS, &h, sizeof h);

    sgt_test t = {SGT_DENY, tb_str(b, "rm -rf /"), tb_str(b, "demo:rm_rf"), 0,
                  tb_str(b, "demo.rules"), 9};
    tb_add(b, SGT_SEC_TESTS, &t, sizeof t);
    t = (sgt_test){SGT_ALLOW, tb_str(b, "ls"), 0, tb_str(b, "/tmp"), tb_str(b, "demo.rules"), 10};
    tb_add(b, SGT_SEC_TESTS, &t, sizeof t);

    sgt_pack pk = {tb_str(b, "demo"), 1, tb_str(b, "demo.rules"), 0};
    tb_add(b, SGT_SEC_PACKS, &pk, sizeof pk);
}

static img sample_image(void)
{
    tb b;
    build_sample(&b);
    img m = tb_build(&b);
    tb_free(&b);
    return m;
}

/* Load m, expecting failure with an error containing want; returns 1 if so. */
static int refused(const img *m, size_t size, const char *want)
{
    sgr_table *t = (sgr_table *)1;
    char err[256];
    int rc = sgr_table_load(m->p, size, &t, err, sizeof err);
    if (rc == 0) {
        sgr_table_free(t);
        fprintf(stderr, "  loaded, expected refusal \"%s\"\n", want ? want : "");
        return 0;
    }
    if (t != NULL || strncmp(err, "table: ", 7) != 0) {
        fprintf(stderr, "  bad failure: \"%s\"\n", err);
        return 0;
    }
    if (want && !strstr(err, want)) {
        fprintf(stderr, "  error \"%s\", want \"%s\"\n", err, want);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ dump capture */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sbuf_out(void *ud, const char *text, size_t len)
{
    sbuf *s = ud;
    if (s->n + len + 1 > s->cap) {
        s->cap = (s->n + len + 1) * 2;
        s->p = sg_realloc(s->p, s->cap);
        if (!s->p)
            abort();
    }
    memcpy(s->p + s->n, text, len);
    s->n += len;
    s->p[s->n] = '\0';
}

/* ------------------------------------------------------------ tests */

/* Load m one of three ways: 0 with every check (every part of the view built at
 * load), 1 trusted (built on first use), 2 trusted with every part marked as
 * being built by another thread (the answers without them). */
static sgr_table *load_mode(const img *m, int mode, char *err, size_t errlen)
{
    sgr_table *t = NULL;
    if (sgr_table_load_flags(m->p, m->size, mode ? SGR_LOAD_TRUSTED : 0, &t, err, errlen) != 0)
        return NULL;
    for (uint32_t i = 0; mode == 2 && i < t->ndfas; i++)
        atomic_store(&t->dfa_state[i], SGR_VIEW_BUILDING);
    for (uint32_t i = 0; mode == 2 && i < t->nprogs; i++)
        atomic_store(&t->prog_state[i], SGR_VIEW_BUILDING);
    return t;
}

static void test_hashes(void)
{
    CHECK(sgr_hash_name("", 0) == 0x811c9dc5u);
    CHECK(sgr_hash_name("a", 1) == 0xe40c292cu);
    CHECK(sgr_hash_name("foobar", 6) == 0xbf9cf968u);
    /* shorter than one word: lane 0 takes the bytes, then the lanes combine */
    CHECK(sgr_table_checksum((const uint8_t *)"a", 1) == 0x1f9ca9b75d3a187aull);
    CHECK(sgr_table_checksum((const uint8_t *)"foobar", 6) == 0x151c198d8f1eb8abull);
    /* the checksum field does not feed itself */
    img m = sample_image();
    uint64_t c = sgr_table_checksum(m.p, m.size);
    ((sgt_header *)m.p)->checksum ^= 0x123456789ull;
    CHECK(sgr_table_checksum(m.p, m.size) == c);
    img_free(&m);
}

static void test_load_and_lookup(void)
{
    img m = sample_image();
    for (int mode = 0; mode < 3; mode++) {  /* the automata's views: built, on first use, plain */
        char err[256] = "";
        sgr_table *t = load_mode(&m, mode, err, sizeof err);
        CHECK(t != NULL);
        CHECK_STR(err, "");
        if (!t)
            break;
        CHECK(t->nsets == 4 && t->nrules == 4 && t->ndfas == 2 && t->nbuckets == 4);
        CHECK_STR(sgr_str(t, t->meta->pack_name), "demo");

        uint32_t n = 99;
        const uint32_t *l = sgr_table_lookup(t, "rm", 2, &n);
        CHECK(l && n == 2 && l[0] == 0 && l[1] == 1);
        l = sgr_table_lookup(t, "ls", 2, &n);
        CHECK(l && n == 1 && l[0] == 0);
        CHECK(sgr_table_lookup(t, "r", 1, &n) == NULL && n == 0);
        CHECK(sgr_table_lookup(t, "rmx", 3, &n) == NULL);
        CHECK(sgr_table_lookup(t, "rm\0", 3, &n) == NULL);
        CHECK(sgr_table_lookup(t, "", 0, &n) == NULL);
        CHECK(sgr_table_lookup(t, "rmdir", 2, &n) != NULL); /* length, not NUL, ends the query */

        const sgt_progspec *p = sgr_table_progspec(t, "sudo", 4);
        CHECK(p && p->flags == SGT_PROG_WRAPPER);
        CHECK(sgr_table_progspec(t, "env", 3) != NULL);
        CHECK(sgr_table_progspec(t, "su", 2) == NULL);
        CHECK(sgr_table_progspec(t, "sudox", 5) == NULL);
        CHECK(sgr_table_progspec(t, "a", 1) == NULL);
        CHECK(sgr_table_progspec(t, "zz", 2) == NULL);
        if (p) {
            CHECK(sgr_progopt_has(t, p->value_off, p->value_len, "-u", 2));
            CHECK(sgr_progopt_has(t, p->value_off, p->value_len, "-g", 2));
            CHECK(!sgr_progopt_has(t, p->value_off, p->value_len, "-", 1));
            CHECK(!sgr_progopt_has(t, p->value_off, p->value_len, "-uu", 3));
            CHECK(!sgr_progopt_has(t, p->value_off, p->value_len, "-x", 2));
            CHECK(!sgr_progopt_has(t, p->value_off, p->value_len, "-u\0", 3));
            CHECK(sgr_progopt_has(t, p->end_off, p->end_len, "--", 2));
            CHECK(!sgr_progopt_has(t, p->exec_off, p->exec_len, "--", 2));
        }

        /* words, then the glob g* */
        CHECK(sgr_set_match(t, 0, "ls", 2));
        CHECK(sgr_set_match(t, 0, "rm", 2));
        CHECK(sgr_set_match(t, 0, "git", 3));
        CHECK(sgr_set_match(t, 0, "g", 1));
        CHECK(!sgr_set_match(t, 0, "", 0));
        CHECK(!sgr_set_match(t, 0, "l", 1));
        CHECK(!sgr_set_match(t, 0, "lss", 3));
        CHECK(!sgr_set_match(t, 0, "xg", 2));
        CHECK(!sgr_set_match(t, 0, "rm\0", 3));
        CHECK(sgr_set_match(t, 0, "rmdir", 2));
        CHECK(sgr_set_match(t, 1, "-r", 2) && sgr_set_match(t, 1, "-f", 2));
        CHECK(!sgr_set_match(t, 1, "-rf", 3));
        CHECK(sgr_set_match(t, 2, "echo x", 6));
        CHECK(sgr_set_match(t, 2, "x", 1));
        CHECK(!sgr_set_match(t, 2, "echo y", 6));
        CHECK(!sgr_set_match(t, 2, "", 0));
        CHECK(sgr_set_match(t, 3, "rm", 2) && !sgr_set_match(t, 3, "ls", 2));
        sgr_table_free(t);
    }
    img_free(&m);
}

/* The whole listing of the sample table, pinned (STYLE 11). */
static const char golden_dump[] =
    "table v8, 2176 bytes, checksum f7cb7d482ba93abc\n"
    "source sha256 a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf\n"
    "sections\n"
    "  meta       off    208 size     56\n"
    "  strings    off    264 size    341\n"
    "  sets       off    608 size     80\n"
    "  words      off    688 size     20\n"
    "  dfas       off    712 size     32\n"
    "  dfadata    off    744 size    584\n"
    "  code       off   1328 size     88\n"
    "  rules      off   1416 size    160\n"
    "  index      off   1576 size     48\n"
    "  lists      off   1624 size     24\n"
    "  progspecs  off   1648 size    296\n"
    "  progopts   off   1944 size     16\n"
    "  limits     off   1960 size    112\n"
    "  hooks      off   2072 size     40\n"
    "  tests      off   2112 size     48\n"
    "  packs      off   2160 size     16\n"
    "  patterns   off   2176 size      0\n"
    "meta\n"
    "  pack \"demo\" version 1\n"
    "  default deny \"'{program}' is not allowed\" hint \"ask an admin\"\n"
    "  any-rules [0 3]\n"
    "  line-rules [2]\n"
    "  dynamic-rules 0\n"
    "  hook budget 1000 memory 0 millis 0\n"
    "  counts: 4 sets, 5 words, 2 dfas, 22 code words, 4 rules, 4 buckets, 6 list ids, 2 progspecs, 4 progopts, 2 limits, 1 hooks, 2 tests, 1 packs\n"
    "sets\n"
    "  set#0 \"tools\" match {ls rm} dfa#0 (3 states, 2 classes)\n"
    "  set#1 \"\" match {-f -r}\n"
    "  set#2 \"\" text {} dfa#1 (3 states, 2 classes)\n"
    "  set#3 \"\" match {rm}\n"
    "dfas\n"
    "  dfa#0 3 states, 2 classes, 1 patterns, data +0\n"
    "  dfa#1 3 states, 2 classes, 1 patterns, data +292\n"
    "rules\n"
    "  rule#0 \"demo:tools\" allow pack#0 line 4\n"
    "    message \"\"\n"
    "    0: program  set#0 tools {ls rm} +dfa#0\n"
    "  rule#1 \"demo:rm_rf\" deny pack#0 line 5\n"
    "    message \"recursive {program} is denied\"\n"
    "    hint \"use trash\"\n"
    "    0: program  set#3 {rm}\n"
    "    1: jump-false  +1 -> 3\n"
    "    2: option-all  set#1 {-f -r}\n"
    "  rule#2 \"demo:x\" deny pack#0 line 6 flags line\n"
    "    message \"no \\\"x\\\"\\there\"\n"
    "    0: text  set#2 {} +dfa#1\n"
    "  rule#3 \"demo:hook\" ask pack#0 line 7 flags lua\n"
    "    message \"hook says ask\"\n"
    "    0: argc  > 2\n"
    "    1: jump-false  +1 -> 3\n"
    "    2: lua  hook#0 no_secrets\n"
    "index (4 buckets)\n"
    "  0: rm -> [0 1]\n"
    "  1: ls -> [0]\n"
    "progspecs\n"
    "  env wrapper|assignments skip 0\n"
    "    value {-u}\n"
    "  sudo wrapper skip 0\n"
    "    value {-g -u}\n"
    "    end {--}\n"
    "limits\n"
    "  limit#0 shell 3 per 10s, 10 per 60s message \"slow down\"\n"
    "    when every command\n"
    "  limit#1 rmrate 1 per 5s\n"
    "    when\n"
    "      0: program  set#3 {rm}\n"
    "      1: jump-true  +1 -> 3\n"
    "      2: redirect-writes  any\n"
    "hooks\n"
    "  hook#0 no_secrets sha256 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f source 41 bytes\n"
    "tests\n"
    "  test#0 deny \"rm -rf /\" rule \"demo:rm_rf\" at \"demo.rules\":9\n"
    "  test#1 allow \"ls\" cwd \"/tmp\" at \"demo.rules\":10\n"
    "packs\n"
    "  pack#0 \"demo\" version 1 file \"demo.rules\"\n";

static void test_dump(void)
{
    img m = sample_image();
    sgr_table *t = NULL;
    char err[256];
    if (sgr_table_load(m.p, m.size, &t, err, sizeof err)) {
        CHECK(0);
        img_free(&m);
        return;
    }
    sbuf s = {0};
    CHECK(sgr_table_dump(t, sbuf_out, &s) == 0);
    CHECK_STR(s.p, golden_dump);
    sg_free(s.p);
    sgr_table_free(t);
    img_free(&m);
}

/* A table with nothing but meta, the "" string and one pack loads: empty sections,
 * zero buckets, no rules are all legal; lookups on it find nothing. */
static void test_minimal(void)
{
    tb b;
    memset(&b, 0, sizeof b);
    tb_str(&b, "");
    sgt_meta meta = {0};
    meta.default_decision = SGT_DENY;
    tb_add(&b, SGT_SEC_META, &meta, sizeof meta);
    sgt_pack pk = {0};
    tb_add(&b, SGT_SEC_PACKS, &pk, sizeof pk);
    img m = tb_build(&b);
    sgr_table *t = NULL;
    char err[256] = "";
    CHECK(sgr_table_load(m.p, m.size, &t, err, sizeof err) == 0);
    CHECK_STR(err, "");
    if (t) {
        uint32_t n = 7;
        CHECK(sgr_table_lookup(t, "rm", 2, &n) == NULL && n == 0);
        CHECK(sgr_table_progspec(t, "sudo", 4) == NULL);
        sgr_table_free(t);
    }
    img_free(&m);

    /* the same without a pack: refused */
    b.len[SGT_SEC_PACKS] = 0;
    m = tb_build(&b);
    CHECK(refused(&m, m.size, "table: packs: no pack"));
    img_free(&m);

    /* two meta records: refused */
    tb_add(&b, SGT_SEC_META, &meta, sizeof meta);
    tb_add(&b, SGT_SEC_PACKS, &pk, sizeof pk);
    m = tb_build(&b);
    CHECK(refused(&m, m.size, "table: meta: 112 bytes, expected exactly one record"));
    img_free(&m);
    tb_free(&b);
}

/* Every single-bit flip anywhere is refused; past the header's identity fields the
 * reason is the checksum. */
static void test_bit_flips(void)
{
    img m = sample_image();
    size_t ck = offsetof(sgt_header, checksum);
    int all = 1;
    for (size_t i = 0; i < m.size; i++)
        for (int bit = 0; bit < 8; bit++) {
            m.p[i] ^= (uint8_t)(1u << bit);
            if (!refused(&m, m.size, i >= ck ? "table: checksum mismatch" : NULL)) {
                fprintf(stderr, "  flip at byte %zu bit %d\n", i, bit);
                all = 0;
            }
            m.p[i] ^= (uint8_t)(1u << bit);
        }
    CHECK(all);
    for (size_t i = 0; i < m.size; i++) {
        m.p[i] ^= 0xff;
        if (!refused(&m, m.size, NULL))
            all = 0;
        m.p[i] ^= 0xff;
    }
    CHECK(all);
    img_free(&m);
}

/* Every truncation is refused, and so is a padded image (total_size says otherwise). */
static void test_truncation(void)
{
    img m = sample_image();
    int all = 1;
    for (size_t n = 0; n < m.size; n++)
        if (!refused(&m, n, n < sizeof(sgt_header) ? "table: truncated" : "table: truncated or padded")) {
            fprintf(stderr, "  truncated to %zu\n", n);
            all = 0;
        }
    CHECK(all);
    img big;
    big.size = m.size + 8;
    big.w = sg_calloc(big.size / 8 + 1, 8);
    big.p = (uint8_t *)big.w;
    memcpy(big.p, m.p, m.size);
    CHECK(refused(&big, big.size, "table: truncated or padded"));
    img_free(&big);
    sgr_table *t = NULL;
    char err[256];
    CHECK(sgr_table_load(m.p, m.size, &t, err, sizeof err) == 0); /* the intact image */
    sgr_table_free(t);
    img_free(&m);
}

static void test_alignment_and_args(void)
{
    img m = sample_image();
    img shifted;
    shifted.w = sg_calloc(m.size / 8 + 2, 8);
    shifted.p = (uint8_t *)shifted.w + 4;
    shifted.size = m.size;
    memcpy(shifted.p, m.p, m.size);
    CHECK(refused(&shifted, shifted.size, "table: image not 8-byte aligned"));
    img_free(&shifted);
    sgr_table *t = (sgr_table *)1;
    char err[64];
    CHECK(sgr_table_load(NULL, 100, &t, err, sizeof err) == -1 && t == NULL);
    /* a tiny error buffer is truncated, never overrun; NULL err is allowed */
    char tiny[8];
    CHECK(sgr_table_load(m.p, 10, &t, tiny, sizeof tiny) == -1 && strcmp(tiny, "table: ") == 0);
    CHECK(sgr_table_load(m.p, 10, &t, NULL, 0) == -1);
    img_free(&m);
}

/* Each allocation the loader makes can fail, checked or trusted; each failure
 * is a clean error.  So can each the long-option list makes when a trusted
 * table is first asked for it: no list, and a list when asked again. */
static void test_alloc_failures(void)
{
    img m = sample_image();
    for (int trusted = 0; trusted < 2; trusted++) {
        int clean = 1, loaded = 0;
        for (long nth = 1; nth < 60 && !loaded; nth++) {
            sgr_table *t = NULL;
            char err[256];
            sg_alloc_fail_after(nth);
            int rc = sgr_table_load_flags(m.p, m.size, trusted ? SGR_LOAD_TRUSTED : 0, &t, err, sizeof err);
            sg_alloc_fail_after(0);
            if (rc == 0) {
                loaded = 1;
                sgr_table_free(t);
            } else if (strcmp(err, "table: out of memory") != 0 || t) {
                fprintf(stderr, "  allocation %ld: \"%s\"\n", nth, err);
                clean = 0;
            }
        }
        CHECK(clean && loaded);
    }
    sgr_table *t = NULL;
    CHECK(sgr_table_load_flags(m.p, m.size, SGR_LOAD_TRUSTED, &t, NULL, 0) == 0);
    int failed = 0, listed = 0;
    for (long nth = 1; t && nth < 20 && !listed; nth++) {
        sg_alloc_fail_after(nth);
        const sgr_longopts *lo = sgr_table_longopts(t, '-');
        sg_alloc_fail_after(0);
        failed += lo == NULL;
        listed = lo != NULL;
    }
    CHECK(failed > 0 && listed);
    sgr_table_free(t);
    img_free(&m);
}

/* -------------------------------------------- hostile tables with a valid checksum */

static sgt_header *H(img *m) { return (sgt_header *)m->p; }
#define REC(m, id, type) ((type *)((m)->p + H(m)->sec[SGT_SEC_##id].off))
#define SECSIZE(m, id) (H(m)->sec[SGT_SEC_##id].size)

/* Word k*2 (w0) of instruction k in rule r; [1] is b. */
static uint32_t *ins(img *m, uint32_t r, uint32_t k)
{
    return REC(m, CODE, uint32_t) + REC(m, RULES, sgt_rule)[r].code_off + 2 * k;
}

static uint8_t *classmap(img *m, uint32_t d)
{
    return REC(m, DFADATA, uint8_t) + REC(m, DFAS, sgt_dfa)[d].data_off;
}

static uint32_t *trans(img *m, uint32_t d)
{
    return (uint32_t *)(classmap(m, d) + 256);
}

static int32_t *accepts(img *m, uint32_t d)
{
    const sgt_dfa *x = &REC(m, DFAS, sgt_dfa)[d];
    return (int32_t *)(trans(m, d) + x->nstates * x->nclasses);
}

static sgt_bucket *bucket(img *m, const char *name)
{
    sgt_bucket *b = REC(m, INDEX, sgt_bucket);
    for (uint32_t i = 0; i < SECSIZE(m, INDEX) / sizeof *b; i++)
        if (b[i].name != SGT_NONE && !strcmp(REC(m, STRINGS, char) + b[i].name, name))
            return &b[i];
    return NULL;
}

static sgt_bucket *empty_bucket(img *m)
{
    sgt_bucket *b = REC(m, INDEX, sgt_bucket);
    for (uint32_t i = 0;; i++)
        if (b[i].name == SGT_NONE)
            return &b[i];
}

#define MUT(fname) static void fname(img *m)
MUT(m_set_range) { ins(m, 0, 0)[1] = 99; }
MUT(m_set_kind_text) { ins(m, 0, 0)[1] = 2; }
MUT(m_set_kind_match) { ins(m, 2, 0)[1] = 0; }
MUT(m_backward_jump) { ins(m, 1, 1)[1] = 0xffffffffu; }
MUT(m_long_jump) { ins(m, 1, 1)[1] = 2; }
MUT(m_limit_jump) { REC(m, CODE, uint32_t)[REC(m, LIMITS, sgt_limit)[1].code_off + 3] = 5; }
MUT(m_limit_set) { REC(m, CODE, uint32_t)[REC(m, LIMITS, sgt_limit)[1].code_off + 5] = 4; }
MUT(m_opcode) { ins(m, 0, 0)[0] = SGT_NOPS; }
MUT(m_argc_cmp) { ins(m, 3, 0)[0] = SGT_OP_ARGC | SGT_NCMPS << 8; }
MUT(m_lua_hook) { ins(m, 3, 2)[1] = 1; }
MUT(m_assigns_val) { ins(m, 0, 0)[0] = SGT_OP_ASSIGNS_VAL | 7u << 8; }
MUT(m_option_val) { ins(m, 0, 0)[0] = SGT_OP_OPTION_VAL | 7u << 8; }
MUT(m_redir_none_ok) { ins(m, 0, 0)[0] = SGT_OP_REDIR_READS, ins(m, 0, 0)[1] = SGT_NONE; }
MUT(m_redir_heredoc_ok) { ins(m, 0, 0)[0] = SGT_OP_REDIR_READS | SGT_READS_HEREDOC << 8, ins(m, 0, 0)[1] = SGT_NONE; }
MUT(m_redir_heredoc_set) { ins(m, 0, 0)[0] = SGT_OP_REDIR_READS | SGT_READS_HEREDOC << 8; }
MUT(m_redir_form) { ins(m, 0, 0)[0] = SGT_OP_REDIR_READS | 2u << 8, ins(m, 0, 0)[1] = SGT_NONE; }
MUT(m_redir_writes_form) { ins(m, 0, 0)[0] = SGT_OP_REDIR_WRITES | 3u << 8, ins(m, 0, 0)[1] = SGT_NONE; }
/* outside/inside the workspace take no set */
MUT(m_redir_writes_set) { ins(m, 0, 0)[0] = SGT_OP_REDIR_WRITES | SGT_WRITES_OUTSIDE << 8; }
MUT(m_dest_field) { ins(m, 0, 0)[0] = SGT_OP_DEST | (SGT_NDEST_FIELDS | SGT_DEST_ONLY) << 8; }
MUT(m_none_not_ok) { ins(m, 0, 0)[1] = SGT_NONE; }
MUT(m_odd_code) { REC(m, RULES, sgt_rule)[1].code_len = 5; }
MUT(m_empty_code) { REC(m, RULES, sgt_rule)[0].code_len = 0; }
MUT(m_code_slice) { REC(m, RULES, sgt_rule)[3].code_off = SECSIZE(m, CODE) / 4 - 4; }
MUT(m_rule_decision) { REC(m, RULES, sgt_rule)[0].decision = SGT_NDECISIONS; }
MUT(m_rule_pack) { REC(m, RULES, sgt_rule)[0].pack = 1; }
MUT(m_rule_flags) { REC(m, RULES, sgt_rule)[0].flags = 0x8; }
MUT(m_rule_msg) { REC(m, RULES, sgt_rule)[0].msg = SECSIZE(m, STRINGS); }
MUT(m_rule_id) { REC(m, RULES, sgt_rule)[2].id = SGT_NONE; }
MUT(m_words_unsorted)
{
    uint32_t *w = REC(m, WORDS, uint32_t) + REC(m, SETS, sgt_set)[0].words_off;
    uint32_t tmp = w[0];
    w[0] = w[1], w[1] = tmp;
}
MUT(m_words_dup)
{
    uint32_t *w = REC(m, WORDS, uint32_t) + REC(m, SETS, sgt_set)[0].words_off;
    w[1] = w[0];
}
MUT(m_words_slice) { REC(m, SETS, sgt_set)[3].words_off = SECSIZE(m, WORDS) / 4; }
MUT(m_word_ref) { REC(m, WORDS, uint32_t)[4] = SECSIZE(m, STRINGS) + 1; }
MUT(m_set_kind) { REC(m, SETS, sgt_set)[1].kind = 2; }
MUT(m_set_dfa) { REC(m, SETS, sgt_set)[0].dfa = 2; }
MUT(m_text_no_dfa) { REC(m, SETS, sgt_set)[2].dfa = SGT_NONE; }
MUT(m_set_name) { REC(m, SETS, sgt_set)[0].name = 0x7fffffffu; }
MUT(m_dfa_trans) { trans(m, 0)[1 * 2 + 1] = 3; }
MUT(m_dfa_class) { classmap(m, 1)['a'] = 2; }
MUT(m_dfa_dead) { trans(m, 1)[0] = 1; }
MUT(m_dfa_dead_accepts) { accepts(m, 0)[0] = 0; }
MUT(m_dfa_accept) { accepts(m, 1)[2] = 1; }
MUT(m_dfa_accept_neg) { accepts(m, 1)[2] = -2; }
MUT(m_dfa_states) { REC(m, DFAS, sgt_dfa)[0].nstates = 1; }
MUT(m_dfa_huge) { REC(m, DFAS, sgt_dfa)[0].nstates = 0x40000000u; }
MUT(m_dfa_classes0) { REC(m, DFAS, sgt_dfa)[1].nclasses = 0; }
MUT(m_dfa_classes257) { REC(m, DFAS, sgt_dfa)[1].nclasses = 257; }
MUT(m_dfa_data) { REC(m, DFAS, sgt_dfa)[1].data_off = 296; }
MUT(m_dfa_align) { REC(m, DFAS, sgt_dfa)[0].data_off = 2; }
MUT(m_overlap) { H(m)->sec[SGT_SEC_SETS].off = H(m)->sec[SGT_SEC_STRINGS].off; }
MUT(m_order)
{
    /* both hold u32s, so only the order can give them away */
    sgt_section t = H(m)->sec[SGT_SEC_LISTS];
    H(m)->sec[SGT_SEC_LISTS] = H(m)->sec[SGT_SEC_PROGOPTS];
    H(m)->sec[SGT_SEC_PROGOPTS] = t;
}
MUT(m_misaligned) { H(m)->sec[SGT_SEC_SETS].off += 4; }
MUT(m_in_header) { H(m)->sec[SGT_SEC_META].off = 192; }
MUT(m_past_end) { H(m)->sec[SGT_SEC_PACKS].size += 16; }
MUT(m_wrap) { H(m)->sec[SGT_SEC_PACKS].off = 0xfffffff8u; }
MUT(m_rec_size) { H(m)->sec[SGT_SEC_RULES].size -= 4; }
MUT(m_meta_size) { H(m)->sec[SGT_SEC_META].size = 0; }
MUT(m_magic) { H(m)->magic[0] = 'X'; }
MUT(m_version) { H(m)->version = SGT_VERSION + 1; }
MUT(m_endian) { H(m)->endian = 0x04030201u; }
MUT(m_hdr_size) { H(m)->header_size += 8; }
MUT(m_nsections) { H(m)->nsections = SGT_NSECTIONS + 1; }
MUT(m_flags) { H(m)->flags = 2; }
MUT(m_flag_team) { H(m)->flags = SGT_HDR_TEAM_LIMITS; }
MUT(m_flag_team_ok) { H(m)->flags = SGT_HDR_TEAM_LIMITS; REC(m, LIMITS, sgt_limit)[1].key = SGT_LIMIT_PER_TEAM; }
MUT(m_strings_end) { REC(m, STRINGS, char)[SECSIZE(m, STRINGS) - 1] = 'x'; }
MUT(m_strings_start) { REC(m, STRINGS, char)[0] = 'x'; }
MUT(m_strings_empty) { SECSIZE(m, STRINGS) = 0; }
MUT(m_pow2) { SECSIZE(m, INDEX) = 3 * sizeof(sgt_bucket); }
MUT(m_unreachable)
{
    /* keep only "rm", one past its hash bucket, with that bucket empty */
    sgt_bucket *b = REC(m, INDEX, sgt_bucket), rm = *bucket(m, "rm");
    uint32_t h = sgr_hash_name("rm", 2) & 3;
    for (int i = 0; i < 4; i++)
        b[i] = (sgt_bucket){SGT_NONE, 0, 0};
    b[(h + 1) & 3] = rm;
}
MUT(m_dup_bucket)
{
    sgt_bucket *b = REC(m, INDEX, sgt_bucket), rm = *bucket(m, "rm");
    uint32_t h = sgr_hash_name("rm", 2) & 3;
    for (int i = 0; i < 4; i++)
        b[i] = (sgt_bucket){SGT_NONE, 0, 0};
    b[h] = rm;
    b[(h + 1) & 3] = rm;
}
MUT(m_no_empty)
{
    sgt_bucket *b = REC(m, INDEX, sgt_bucket);
    for (int i = 0; i < 4; i++)
        if (b[i].name == SGT_NONE)
            b[i].name = 0;
}
MUT(m_empty_with_list) { empty_bucket(m)->list_len = 1; }
MUT(m_bucket_name) { bucket(m, "ls")->name = SECSIZE(m, STRINGS); }
MUT(m_list_range) { REC(m, LISTS, uint32_t)[bucket(m, "rm")->list_off + 1] = 99; }
MUT(m_list_order) { REC(m, LISTS, uint32_t)[bucket(m, "rm")->list_off + 1] = 0; }
MUT(m_list_slice) { bucket(m, "ls")->list_off = SECSIZE(m, LISTS) / 4; }
MUT(m_meta_any) { REC(m, LISTS, uint32_t)[REC(m, META, sgt_meta)->any_off + 1] = 4; }
MUT(m_meta_line) { REC(m, META, sgt_meta)->line_len = 0x80000000u; }
MUT(m_meta_default) { REC(m, META, sgt_meta)->default_decision = 3; }
MUT(m_meta_hint) { REC(m, META, sgt_meta)->default_hint = SGT_NONE; }
MUT(m_prog_order)
{
    sgt_progspec *p = REC(m, PROGSPECS, sgt_progspec), t = p[0];
    p[0] = p[1], p[1] = t;
}
MUT(m_prog_opts)
{
    sgt_progspec *p = REC(m, PROGSPECS, sgt_progspec);
    uint32_t *o = REC(m, PROGOPTS, uint32_t) + p[1].value_off, t = o[0];
    o[0] = o[1], o[1] = t;
}
MUT(m_prog_flags) { REC(m, PROGSPECS, sgt_progspec)[0].flags |= 0x80000; }
MUT(m_prog_stdin) { REC(m, PROGSPECS, sgt_progspec)[0].stdin_len = 1; }
MUT(m_prog_no_stdin) { REC(m, PROGSPECS, sgt_progspec)[0].flags |= SGT_PROG_STDIN | SGT_PROG_NO_STDIN; }
MUT(m_prog_slice) { REC(m, PROGSPECS, sgt_progspec)[1].exec_len = 5; }
MUT(m_prog_text) { REC(m, PROGSPECS, sgt_progspec)[1].text_len = 5; }
MUT(m_prog_first) { REC(m, PROGSPECS, sgt_progspec)[0].first_len = 1; }
MUT(m_limit_nwin0) { REC(m, LIMITS, sgt_limit)[0].nwindows = 0; }
MUT(m_limit_nwin5) { REC(m, LIMITS, sgt_limit)[0].nwindows = SGT_MAX_WINDOWS + 1; }
MUT(m_limit_count) { REC(m, LIMITS, sgt_limit)[0].count[1] = 0; }
MUT(m_limit_key) { REC(m, LIMITS, sgt_limit)[0].key = 2; }
MUT(m_limit_team_noflag) { REC(m, LIMITS, sgt_limit)[1].key = SGT_LIMIT_PER_TEAM; }
MUT(m_limit_count_cap) { REC(m, LIMITS, sgt_limit)[0].count[0] = SGT_MAX_LIMIT_COUNT + 1; }
MUT(m_limit_secs) { REC(m, LIMITS, sgt_limit)[1].seconds[0] = 0; }
MUT(m_limit_msg) { REC(m, LIMITS, sgt_limit)[1].msg = SECSIZE(m, STRINGS); }
MUT(m_hook_src) { REC(m, HOOKS, sgt_hook)[0].source = SECSIZE(m, STRINGS); }
MUT(m_test_decision) { REC(m, TESTS, sgt_test)[1].decision = 7; }
MUT(m_test_cwd) { REC(m, TESTS, sgt_test)[1].cwd = SECSIZE(m, STRINGS); }
MUT(m_pack_file) { REC(m, PACKS, sgt_pack)[0].file = SECSIZE(m, STRINGS); }

static const struct {
    const char *what;
    void (*fn)(img *);
    const char *want;                /* NULL: must still load */
} hostile[] = {
    {"set index out of range", m_set_range, "table: rule 0: set 99 out of range"},
    {"match op on a text set", m_set_kind_text, "rule 0: set 2 is a text set, program needs a match set"},
    {"text op on a match set", m_set_kind_match, "rule 2: set 0 is a match set, text needs a text set"},
    {"backward jump", m_backward_jump, "table: rule 1: backward jump"},
    {"overlong jump", m_long_jump, "table: rule 1: jump past the end of its code"},
    {"limit jump", m_limit_jump, "table: limit 1: jump past the end of its code"},
    {"limit set", m_limit_set, "table: limit 1: set 4 out of range"},
    {"unknown opcode", m_opcode, "table: rule 0: unknown opcode 32"}, /* == SGT_NOPS */
    {"argc comparison", m_argc_cmp, "table: rule 3: argc comparison 6 unknown"},
    {"lua hook", m_lua_hook, "table: rule 3: hook 1 out of range"},
    {"assigns-value name set", m_assigns_val, "table: rule 0: set 7 out of range"},
    {"option-value option set", m_option_val, "table: rule 0: set 7 out of range"},
    {"redirect-reads any", m_redir_none_ok, NULL},
    {"redirect-reads heredoc", m_redir_heredoc_ok, NULL},
    {"redirect-reads heredoc with a set", m_redir_heredoc_set, "table: rule 0: redirect-reads form 1 unknown"},
    {"redirect-reads form", m_redir_form, "table: rule 0: redirect-reads form 2 unknown"},
    {"redirect-writes form", m_redir_writes_form, "table: rule 0: redirect-writes form 3 unknown"},
    {"redirect-writes outside with a set", m_redir_writes_set, "table: rule 0: redirect-writes form 1 unknown"},
    {"destination field", m_dest_field, "table: rule 0: destination field 4 unknown"},
    {"program any", m_none_not_ok, "table: rule 0: set 4294967295 out of range"},
    {"odd code length", m_odd_code, "table: rule 1: code length 5 is not a whole number"},
    {"empty rule code", m_empty_code, "table: rule 0: empty condition code"},
    {"code slice", m_code_slice, "table: rule 3: code [18, +6) outside code (22 words)"},
    {"rule decision", m_rule_decision, "table: rule 0: unknown decision 3"},
    {"rule pack", m_rule_pack, "table: rule 0: pack 1 out of range"},
    {"rule flags", m_rule_flags, "table: rule 0: unknown flags 0x8"},
    {"rule msg ref", m_rule_msg, "table: rule 0: msg string ref 341 out of range"},
    {"rule id ref", m_rule_id, "table: rule 2: id string ref 4294967295 out of range"},
    {"unsorted words", m_words_unsorted, "table: set 0: words not strictly sorted"},
    {"duplicate words", m_words_dup, "table: set 0: words not strictly sorted"},
    {"words slice", m_words_slice, "table: set 3: words [5, +1) outside words"},
    {"word string ref", m_word_ref, "table: set 3: words string ref 342 out of range"},
    {"set kind", m_set_kind, "table: set 1: unknown kind 2"},
    {"set dfa", m_set_dfa, "table: set 0: dfa 2 out of range"},
    {"text set without dfa", m_text_no_dfa, "table: set 2: text set without a dfa"},
    {"set name", m_set_name, "table: set 0: name string ref"},
    {"dfa transition", m_dfa_trans, "table: dfa 0: transition from state 1 to 3 out of range"},
    {"dfa classmap", m_dfa_class, "table: dfa 1: byte 0x61 maps to class 2"},
    {"dfa dead state", m_dfa_dead, "table: dfa 1: state 0 is not dead"},
    {"dfa dead accepts", m_dfa_dead_accepts, "table: dfa 0: dead state 0 accepts"},
    {"dfa accept", m_dfa_accept, "table: dfa 1: state 2 accepts 1 (only 1 patterns)"},
    {"dfa accept negative", m_dfa_accept_neg, "table: dfa 1: state 2 accepts -2"},
    {"dfa one state", m_dfa_states, "table: dfa 0: 1 states"},
    {"dfa huge", m_dfa_huge, "table: dfa 0: 1073741824 states"},
    {"dfa no classes", m_dfa_classes0, "table: dfa 1: 0 byte classes"},
    {"dfa 257 classes", m_dfa_classes257, "table: dfa 1: 257 byte classes"},
    {"dfa data", m_dfa_data, "table: dfa 1: data [296, +292) outside dfadata (584 bytes)"},
    {"dfa data alignment", m_dfa_align, "table: dfa 0: data offset 2 not 4-byte aligned"},
    {"overlapping sections", m_overlap, "table: section sets: offset 264 overlaps"},
    {"sections out of order", m_order, "table: section progspecs: offset 1648 overlaps the previous section or is out of directory order"},
    {"misaligned section", m_misaligned, "table: section sets: offset 612 not 8-byte aligned"},
    {"section in header", m_in_header, "table: section meta: offset 192 inside the header"},
    {"section past end", m_past_end, "table: section packs: [2160, +32) runs past the end"},
    {"section offset wraps", m_wrap, "table: section packs: [4294967288, +16) runs past the end"},
    {"record size", m_rec_size, "table: section rules: size 156 not a multiple of its record size 40"},
    {"no meta", m_meta_size, "table: meta: 0 bytes, expected exactly one record"},
    {"magic", m_magic, "table: bad magic"},
    {"version", m_version, "table: format version 9, this runtime reads version 8"},
    {"endianness", m_endian, "table: byte order mismatch"},
    {"header size", m_hdr_size, "table: header size 216, expected 208"},
    {"section count", m_nsections, "table: 18 sections, expected 17"},
    {"header flags", m_flags, "table: unknown header flags 0x2"},
    {"team-limits flag, no team limit", m_flag_team, "table: limits: the header has the team-limits flag, but no limit is per team"},
    {"team-limits flag and a team limit", m_flag_team_ok, NULL},
    {"strings unterminated", m_strings_end, "table: strings: last string not NUL-terminated"},
    {"string 0", m_strings_start, "table: strings: string 0 is not \"\""},
    {"no strings", m_strings_empty, "table: strings section is empty"},
    {"buckets not power of two", m_pow2, "table: index: 3 buckets is not a power of two"},
    {"bucket unreachable", m_unreachable, "not reachable by probing from its hash bucket"},
    {"duplicate bucket", m_dup_bucket, "share the name \"rm\""},
    {"no empty bucket", m_no_empty, "table: index: no empty bucket"},
    {"empty bucket with list", m_empty_with_list, "has a list"},
    {"bucket name ref", m_bucket_name, "name string ref 341 out of range"},
    {"list id out of range", m_list_range, "(\"rm\"): rule id 99 out of range (4 rules)"},
    {"list not ascending", m_list_order, "(\"rm\"): rule ids not strictly ascending"},
    {"list slice", m_list_slice, "(\"ls\"): list [6, +1) outside lists"},
    {"meta any list", m_meta_any, "table: meta any-rules: rule id 4 out of range"},
    {"meta line list", m_meta_line, "table: meta line-rules: list"},
    {"meta default", m_meta_default, "table: meta: unknown default decision 3"},
    {"meta hint", m_meta_hint, "table: meta 0: default hint string ref"},
    {"progspecs unsorted", m_prog_order, "table: progspec 1: names not strictly sorted"},
    {"progopts unsorted", m_prog_opts, "table: progspec 1: value options not strictly sorted"},
    {"progspec flags", m_prog_flags, "table: progspec 0: unknown flags 0x80000"},
    {"progspec stdin and stdin nothing", m_prog_no_stdin, "table: progspec 0: both stdin and stdin-nothing"},
    {"progspec stdin list", m_prog_stdin, "table: progspec 0: stdin options without the stdin flag"},
    {"progspec text slice", m_prog_text, "table: progspec 1: text options [0, +5) outside progopts (4)"},
    {"progspec text-operand list", m_prog_first, "table: progspec 0: text-operand options without the text-operand flag"},
    {"progspec slice", m_prog_slice, "table: progspec 1: exec words [0, +5) outside progopts"},
    {"limit no windows", m_limit_nwin0, "table: limit 0: 0 windows"},
    {"limit 5 windows", m_limit_nwin5, "table: limit 0: 5 windows"},
    {"limit count", m_limit_count, "table: limit 0: window 1 allows 0 per 60 s"},
    {"limit key", m_limit_key, "table: limit 0: unknown key 2 (0 per agent, 1 per team)"},
    {"team limit without the flag", m_limit_team_noflag, "table: limits: 1 per team, but the header lacks the team-limits flag"},
    {"limit count past the ring", m_limit_count_cap, "table: limit 0: window 0 allows 100001 per 10 s (both must be >= 1, the count <= 100000)"},
    {"limit seconds", m_limit_secs, "table: limit 1: window 0 allows 1 per 0 s"},
    {"limit msg", m_limit_msg, "table: limit 1: msg string ref"},
    {"hook source", m_hook_src, "table: hook 0: source string ref"},
    {"test decision", m_test_decision, "table: test 1: unknown decision 7"},
    {"test cwd", m_test_cwd, "table: test 1: cwd string ref"},
    {"pack file", m_pack_file, "table: pack 0: file string ref"},
};

static void test_hostile(void)
{
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        img m = sample_image();
        hostile[i].fn(&m);
        reseal(&m);
        if (hostile[i].want) {
            int ok = refused(&m, m.size, hostile[i].want);
            if (!ok)
                fprintf(stderr, "  case: %s\n", hostile[i].what);
            CHECK(ok);
        } else {
            sgr_table *t = NULL;
            char err[256] = "";
            CHECK(sgr_table_load(m.p, m.size, &t, err, sizeof err) == 0);
            CHECK_STR(err, "");
            sgr_table_free(t);
        }
        img_free(&m);
    }
}

/* Whatever the loader accepts is safe to use: change each byte past the header's
 * identity fields, reseal, and if it loads, run every lookup and the dump over it
 * (ASan/UBSan watch the reads). */
static void null_out(void *ud, const char *text, size_t len) { (void)ud, (void)text, (void)len; }

static void exercise(const sgr_table *t)
{
    static const char *const probes[] = {"", "rm", "ls", "g", "git", "x", "-u", "-g", "--",
                                         "sudo", "env", "a x b", "rm\0x"};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        const char *s = probes[i];
        size_t n = i == 12 ? 4 : strlen(s);
        uint32_t cnt;
        const uint32_t *l = sgr_table_lookup(t, s, n, &cnt);
        for (uint32_t k = 0; l && k < cnt; k++)
            CHECK(l[k] < t->nrules);
        (void)sgr_table_progspec(t, s, n);
        for (uint32_t j = 0; j < t->nsets; j++)
            (void)sgr_set_match(t, j, s, n);
        for (uint32_t j = 0; j < t->nprogs; j++) {
            const sgt_progspec *p = &t->progs[j];
            (void)sgr_progopt_has(t, p->value_off, p->value_len, s, n);
            (void)sgr_progopt_has(t, p->end_off, p->end_len, s, n);
        }
    }
    sgr_table_dump(t, null_out, NULL);
}

static void test_resealed_mutations(void)
{
    img m = sample_image();
    static const uint8_t xors[] = {0x01, 0x02, 0x10, 0x80, 0xff};
    long loads = 0, refusals = 0;
    int clean = 1;
    for (size_t i = offsetof(sgt_header, checksum) + 8; i < m.size; i++)
        for (size_t x = 0; x < sizeof xors; x++) {
            m.p[i] ^= xors[x];
            reseal(&m);
            sgr_table *t = NULL;
            char err[256] = "";
            if (sgr_table_load(m.p, m.size, &t, err, sizeof err) == 0) {
                loads++;
                exercise(t);
                sgr_table_free(t);
            } else {
                refusals++;
                if (strncmp(err, "table: ", 7) != 0 || !strcmp(err, "table: checksum mismatch"))
                    clean = 0;
            }
            m.p[i] ^= xors[x];
        }
    CHECK(clean);
    CHECK(loads > 0 && refusals > 0);
    img_free(&m);
}

/* Program specs whose slices share one PROGOPTS run: a few hundred KB of table
 * naming n * 6 * 1024 options.  The loader's checks and option hash grew with that
 * sum (past 2^31 the hash's size, a uint32_t doubling, wrapped to 0 and looped
 * forever); past SGR_MAX_PROGOPT_REFS the table is refused. */
static img shared_slices_image(uint32_t n)
{
    tb b;
    build_sample(&b);
    static char names[1024][8];
    const char *opts[1024];
    for (int i = 0; i < 1024; i++) {
        snprintf(names[i], sizeof names[i], "--o%04d", i);
        opts[i] = names[i];
    }
    uint32_t off = tb_strs(&b, SGT_SEC_PROGOPTS, opts, 1024);
    for (uint32_t i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "zz%05u", i);
        sgt_progspec p = {0};
        p.name = tb_str(&b, nm);
        p.flags = SGT_PROG_TEXT_OPERAND;
        p.value_off = p.script_off = p.exec_off = p.end_off = p.text_off = p.first_off = off;
        p.value_len = p.script_len = p.exec_len = p.end_len = p.text_len = p.first_len = 1024;
        tb_add(&b, SGT_SEC_PROGSPECS, &p, sizeof p);
    }
    img m = tb_build(&b);
    tb_free(&b);
    return m;
}

static void test_shared_slices(void)
{
    img m = shared_slices_image(100);      /* 614,400 names: loads */
    sgr_table *t = NULL;
    char err[256];
    CHECK(sgr_table_load(m.p, m.size, &t, err, sizeof err) == 0);
    if (t) {
        const sgt_progspec *p = sgr_table_progspec(t, "zz00042", 7);
        CHECK(p != NULL);
        if (p)
            CHECK(sgr_progopt_bits(t, p, "--o0512", 7) == (SGR_OPT_VALUE | SGR_OPT_TEXT | SGR_OPT_FIRST
                                                          | SGR_OPT_SCRIPT | SGR_OPT_EXEC | SGR_OPT_END));
    }
    sgr_table_free(t);
    img_free(&m);
    m = shared_slices_image(200);          /* 1,228,800 names */
    CHECK(refused(&m, m.size, "option names in all program specs"));
    img_free(&m);
}

/* The abbreviation search (a binary search per slice) against its definition:
 * the lists, among value, script and unless, that have a name str is a proper
 * prefix of.  Every prefix of every name, each name with a byte changed or
 * added, and strings holding a NUL. */
static uint32_t abbrev_by_definition(const sgr_table *t, const sgt_progspec *p, const char *s, size_t n)
{
    if (n < 3 || s[0] != '-' || s[1] != '-')
        return 0;
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(p, sl);
    uint32_t bits = 0;
    for (int j = 0; j < SGR_NPROG_LISTS; j++)
        for (uint32_t k = 0; k < sl[j].len; k++) {
            const char *o = sgr_str(t, t->progopts[sl[j].off + k]);
            if ((sl[j].bit & (SGR_OPT_VALUE | SGR_OPT_SCRIPT | SGR_OPT_FIRST)) && strlen(o) > n
                && memcmp(o, s, n) == 0)
                bits |= sl[j].bit;
        }
    return bits;
}

static void test_abbrev(void)
{
    static const char *const value[] = { "--col", "--color", "--colour", "--context", "--regexp", "-e" };
    static const char *const script[] = { "--co", "--command", "--exec" };
    static const char *const text[] = { "--colour", "--textonly" };
    static const char *const first[] = { "--file", "--regexp", "--regexp-extended" };
    tb b;
    build_sample(&b);
    sgt_progspec p = {0};
    p.name = tb_str(&b, "zgrep");
    p.flags = SGT_PROG_TEXT_OPERAND;
    PROG_SLICE(&b, p, value, value);
    PROG_SLICE(&b, p, script, script);
    PROG_SLICE(&b, p, text, text);
    PROG_SLICE(&b, p, first, first);
    tb_add(&b, SGT_SEC_PROGSPECS, &p, sizeof p);
    img m = tb_build(&b);
    tb_free(&b);
    for (int mode = 0; mode < 3; mode++) {
        char err[256] = "";
        sgr_table *t = load_mode(&m, mode, err, sizeof err);
        CHECK(t != NULL);
        CHECK_STR(err, "");
        const sgt_progspec *ps = t ? sgr_table_progspec(t, "zgrep", 5) : NULL;
        CHECK(ps != NULL);
        if (ps) {
            CHECK(sgr_progopt_abbrev(t, ps, "--col", 5) == SGR_OPT_VALUE);     /* --color, --colour */
            CHECK(sgr_progopt_abbrev(t, ps, "--co", 4) == (SGR_OPT_VALUE | SGR_OPT_SCRIPT));
            CHECK(sgr_progopt_abbrev(t, ps, "--regexp", 8) == SGR_OPT_FIRST);  /* --regexp-extended */
            CHECK(sgr_progopt_abbrev(t, ps, "--colour", 8) == 0);              /* itself, no longer one */
            CHECK(sgr_progopt_abbrev(t, ps, "--text", 6) == 0);                /* text is not asked for */
            CHECK(sgr_progopt_abbrev(t, ps, "-e", 2) == 0);
            const char *const *lists[] = { value, script, text, first };
            const size_t lens[] = { 6, 3, 2, 3 };
            int agree = 1, tried = 0;
            for (int l = 0; l < 4; l++)
                for (size_t k = 0; k < lens[l]; k++) {
                    const char *o = lists[l][k];
                    size_t ol = strlen(o);
                    char q[64];
                    for (size_t n = 0; n <= ol + 1 && n < sizeof q; n++) {
                        memcpy(q, o, ol < n ? ol : n);
                        for (int v = 0; v < 4; v++) {
                            size_t qn = n;
                            if (n > ol)
                                q[ol] = v == 0 ? 'x' : v == 1 ? '\0' : v == 2 ? '-' : '\xff';
                            else if (n > 2 && v > 0)
                                q[n - 1] = v == 1 ? '\0' : v == 2 ? (char)(o[n - 1] + 1) : (char)(o[n - 1] - 1);
                            tried++;
                            if (sgr_progopt_abbrev(t, ps, q, qn) != abbrev_by_definition(t, ps, q, qn))
                                agree = 0;
                            if (n <= ol)
                                memcpy(q, o, n);
                        }
                    }
                }
            CHECK(agree && tried > 300);
        }
        sgr_table_free(t);
    }
    img_free(&m);
}

/* What an option is (sgr_progopt_bits: the short-option rows, the hash of the
 * rest, the filters in front of both) against its definition: the lists that
 * name exactly s[0..n). */
static uint32_t bits_by_definition(const sgr_table *t, const sgt_progspec *p, const char *s, size_t n)
{
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(p, sl);
    uint32_t bits = 0;
    for (int j = 0; j < SGR_NPROG_LISTS; j++)
        for (uint32_t k = 0; k < sl[j].len; k++) {
            const char *o = sgr_str(t, t->progopts[sl[j].off + k]);
            if (strlen(o) == n && memcmp(o, s, n) == 0)
                bits |= sl[j].bit;
        }
    return bits;
}

static void test_progopt_bits(void)
{
    /* two specs sharing some names with different lists, one sharing nothing */
    static const char *const a_value[] = { "--key", "-e", "-k", "-t", "-\x7f" };
    static const char *const a_text[] = { "-k", "-t", "-x" };
    static const char *const a_exec[] = { "-", "-exec", "-z", "-\xe9" };
    static const char *const a_end[] = { "+", "-z", ";" };
    static const char *const b_value[] = { "--e", "-E", "-e", "-m" };
    static const char *const b_script[] = { "-c" };
    static const char *const b_first[] = { "-e", "-f" };
    tb b;
    build_sample(&b);
    sgt_progspec pa = {0}, pb = {0}, pc = {0};
    pa.name = tb_str(&b, "za");
    PROG_SLICE(&b, pa, value, a_value);
    PROG_SLICE(&b, pa, text, a_text);
    PROG_SLICE(&b, pa, exec, a_exec);
    PROG_SLICE(&b, pa, end, a_end);
    pb.name = tb_str(&b, "zb");
    pb.flags = SGT_PROG_TEXT_OPERAND;
    PROG_SLICE(&b, pb, value, b_value);
    PROG_SLICE(&b, pb, script, b_script);
    PROG_SLICE(&b, pb, first, b_first);
    pc.name = tb_str(&b, "zc");
    tb_add(&b, SGT_SEC_PROGSPECS, &pa, sizeof pa);
    tb_add(&b, SGT_SEC_PROGSPECS, &pb, sizeof pb);
    tb_add(&b, SGT_SEC_PROGSPECS, &pc, sizeof pc);
    img m = tb_build(&b);
    tb_free(&b);
    for (int mode = 0; mode < 3; mode++) {
        char err[256] = "";
        sgr_table *t = load_mode(&m, mode, err, sizeof err);
        CHECK(t != NULL);
        CHECK_STR(err, "");
        const char *names[] = { "za", "zb", "zc" };
        for (int k = 0; t && k < 3; k++) {
            const sgt_progspec *ps = sgr_table_progspec(t, names[k], 2);
            CHECK(ps != NULL);
            if (!ps)
                continue;
            int agree = 1, nonzero = 0;
            char q[4];
            /* every string of one or two bytes, and three starting with '-' */
            for (int x = 0; x < 256; x++) {
                q[0] = (char)x;
                agree &= sgr_progopt_bits(t, ps, q, 1) == bits_by_definition(t, ps, q, 1);
                for (int y = 0; y < 256; y++) {
                    q[1] = (char)y;
                    uint32_t got = sgr_progopt_bits(t, ps, q, 2);
                    agree &= got == bits_by_definition(t, ps, q, 2);
                    nonzero += got != 0;
                    if (x == '-') {
                        for (int z = 0; z < 256; z++) {
                            q[2] = (char)z;
                            agree &= sgr_progopt_bits(t, ps, q, 3) == bits_by_definition(t, ps, q, 3);
                        }
                    }
                }
            }
            CHECK(agree);
            CHECK(nonzero == (k == 0 ? 7 : k == 1 ? 5 : 0));
        }
        if (t) {
            const sgt_progspec *pa2 = sgr_table_progspec(t, "za", 2), *pb2 = sgr_table_progspec(t, "zb", 2);
            CHECK(sgr_progopt_bits(t, pa2, "-k", 2) == (SGR_OPT_VALUE | SGR_OPT_TEXT));
            CHECK(sgr_progopt_bits(t, pa2, "-z", 2) == (SGR_OPT_EXEC | SGR_OPT_END));
            CHECK(sgr_progopt_bits(t, pa2, "-\xe9", 2) == SGR_OPT_EXEC);
            CHECK(sgr_progopt_bits(t, pa2, "-\0", 2) == 0);
            CHECK(sgr_progopt_bits(t, pa2, "-", 1) == SGR_OPT_EXEC);
            CHECK(sgr_progopt_bits(t, pa2, "-exec", 5) == SGR_OPT_EXEC);
            CHECK(sgr_progopt_bits(t, pa2, "--key", 5) == SGR_OPT_VALUE);
            CHECK(sgr_progopt_bits(t, pa2, "-c", 2) == 0);
            CHECK(sgr_progopt_bits(t, pb2, "-c", 2) == SGR_OPT_SCRIPT);
            CHECK(sgr_progopt_bits(t, pb2, "-e", 2) == (SGR_OPT_VALUE | SGR_OPT_FIRST));
            CHECK(sgr_progopt_bits(t, pb2, "-k", 2) == 0);
        }
        sgr_table_free(t);
    }
    img_free(&m);
}

/* The long-option lists (sgr_table_longopts) against their definition: every long option
 * ("--x...") of every program spec's lists, in strcmp order, each text once.  The
 * builder does not share strings, so a name in two lists is two refs here; names
 * that agree in their first ten bytes (what the loader's sort key holds) and
 * differ after, names that end inside it, and bytes above 0x7f. */
static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_longopts(void)
{
    static const char *const a_value[] = { "--abcdefg", "--abcdefgh", "--abcdefghi", "--no-verify",
                                           "--no-verify-signatures", "-x" };
    static const char *const a_flag[] = { "--", "--a", "--ab", "--no-verifx", "--no-verify", "--\x7f" };
    static const char *const b_value[] = { "--a", "--abcdefghi", "--abcdefghj", "--no-verify-sign", "--\xc3\xa9t\xc3\xa9" };
    static const char *const b_end[] = { "--abcdefgh", "--z" };
    tb b;
    build_sample(&b);
    sgt_progspec pa = {0}, pb = {0};
    pa.name = tb_str(&b, "za");
    PROG_SLICE(&b, pa, value, a_value);
    PROG_SLICE(&b, pa, flag, a_flag);
    pb.name = tb_str(&b, "zb");
    PROG_SLICE(&b, pb, value, b_value);
    PROG_SLICE(&b, pb, end, b_end);
    tb_add(&b, SGT_SEC_PROGSPECS, &pa, sizeof pa);
    tb_add(&b, SGT_SEC_PROGSPECS, &pb, sizeof pb);
    img m = tb_build(&b);
    tb_free(&b);
    const char *want[32];
    size_t nw = 0;
    const char *const *lists[] = { a_value, a_flag, b_value, b_end };
    const size_t lens[] = { 6, 6, 5, 2 };
    for (int l = 0; l < 4; l++)
        for (size_t k = 0; k < lens[l]; k++) {
            const char *o = lists[l][k];
            int dup = 0;
            for (size_t j = 0; j < nw; j++)
                dup |= strcmp(want[j], o) == 0;
            if (o[0] == '-' && o[1] == '-' && o[2] && !dup)
                want[nw++] = o;
        }
    qsort(want, nw, sizeof *want, cmp_strp);
    /* checked (every letter's list made at load), trusted and asked a letter at a
     * time, trusted and asked for every letter at once */
    for (int mode = 0; mode < 3; mode++) {
        sgr_table *t = NULL;
        char err[256];
        CHECK(sgr_table_load_flags(m.p, m.size, mode ? SGR_LOAD_TRUSTED : 0, &t, err, sizeof err) == 0);
        CHECK_STR(err, "");
        if (!t)
            continue;
        int unlisted = 0;
        for (int c = 0; c < 256; c++)
            unlisted += atomic_load(&t->lazy->longopts[c]) == NULL;
        CHECK(unlisted == (mode ? 256 : 0));
        CHECK(mode != 2 || sgr_table_longopts_all(t) == 0);
        /* every letter's in order is every long option in strcmp order, each once */
        const char *got[32];
        size_t ng = 0;
        int listed = 1;
        for (int c = 0; c < 256; c++) {
            const sgr_longopts *lo = sgr_table_longopts(t, (unsigned char)c);
            listed &= lo != NULL && lo == sgr_table_longopts(t, (unsigned char)c);
            for (uint32_t k = 0; lo && k < lo->n && ng < 32; k++) {
                got[ng++] = sgr_str(t, lo->ref[k]);
                listed &= (unsigned char)got[ng - 1][2] == c;
            }
        }
        CHECK(listed);
        CHECK(ng == nw);
        int same = ng == nw;
        for (size_t k = 0; same && k < nw; k++)
            same = strcmp(got[k], want[k]) == 0;
        CHECK(same);
        const sgr_longopts *n = sgr_table_longopts(t, 'n'), *a = sgr_table_longopts(t, 'a');
        uint32_t first = 0;
        if (n && a) {
            CHECK(sgr_longopt_range(t, n, "--no-verif", 10, &first) == 4);   /* -verifx, -verify, -verify-sign... */
            CHECK(first < n->n && strcmp(sgr_str(t, n->ref[first]), "--no-verifx") == 0);
            CHECK(sgr_longopt_range(t, n, "--no-verify-sig", 15, &first) == 2);
            CHECK(sgr_longopt_range(t, a, "--abcdefgh", 10, &first) == 2);   /* ...ghi, ...ghj */
            CHECK(sgr_longopt_range(t, a, "--a", 3, &first) == 5);           /* not --a itself */
            CHECK(sgr_longopt_range(t, a, "-a", 2, &first) == 0 && sgr_longopt_range(t, a, "--", 2, &first) == 0);
        }
        sgr_table_free(t);
    }
    img_free(&m);
}

int main(void)
{
    test_hashes();
    test_load_and_lookup();
    test_dump();
    test_minimal();
    test_bit_flips();
    test_truncation();
    test_alignment_and_args();
    test_alloc_failures();
    test_hostile();
    test_resealed_mutations();
    test_shared_slices();
    test_abbrev();
    test_progopt_bits();
    test_longopts();
    return sg_test_summary();
}
