/* test_compile.c - the compiler and the evaluator together, without the CLI:
 * determinism, a real table refused after any byte flip or truncation, the
 * "fail the Nth allocation" sweep over compile, load and evaluate, and the
 * evaluator's semantics one behaviour per check. */
#include "check.h"
#include "common/alloc.h"
#include "compiler/compile.h"
#include "runtime/eval.h"
#include "runtime/table.h"
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char PACK[] =
    "pack t version 7\n"
    "wrapper sudo env { value { -u } assignments }\n"
    "wrapper sh bash { script { -c } runs nothing }\n"
    "wrapper find { exec { -exec } end { \";\" } permute runs nothing }\n"
    "command git { value { -C } }\n"
    "command grep { value { -f -e } }\n"
    "default deny \"'{program}' is not allowed\" hint \"ask\"\n"
    "set tools = { ls cat grep wc echo cd }\n"
    "read: allow program in tools and not path outside workspace\n"
    "git_read: allow program git and subcommand in { log status }\n"
    "rm_rf: deny program rm and option all { -r -f } \"no {program} {option}\"\n"
    "rm_any: ask program rm\n"
    "pipe_sh: deny program in { sh bash } and piped from { curl }\n"
    "curl: ask program curl\n"
    "bomb: deny text contains { \":(){\" }\n"
    "dyn_echo: ask dynamic and program /^\\$[A-Z]+$/\n"
    "secret: deny path inside { */.ssh } \"{path} is secret\"\n"
    "test allow \"ls | wc -l\"\n"
    "test deny \"rm -fr x\" rule rm_rf\n";

static uint8_t *compile(const char *text, size_t *len)
{
    sgc_input in = { "t.rules", text, strlen(text) };
    sgc_options o;
    memset(&o, 0, sizeof o);
    uint8_t *out = NULL;
    int r = sgc_compile(&o, &in, 1, &out, len);
    return r == 0 ? out : NULL;
}

/* Create an empty file at p (for the tests that build a tree). */
static void touch(const char *p)
{
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
}

static sgr_ctx *ctx;
static const sgr_result *ev(const char *cmd)
{
    sgr_opts o = { "/w/proj", NULL, 0, "/w" };
    return sgr_eval(ctx, cmd, strlen(cmd), &o);
}

static void expect(const char *cmd, uint32_t dec, const char *rule)
{
    const sgr_result *r = ev(cmd);
    int ok = r->decision == dec && strcmp(r->rule_id, rule) == 0;
    if (!ok)
        fprintf(stderr, "  %s: got %s %s (%s), want %s %s\n", cmd, sgr_decision_name(r->decision),
                r->rule_id, r->message, sgr_decision_name(dec), rule);
    CHECK(ok);
}

/* Compile and load a pack for one test: the table, whose bytes are *img (free
 * both), or NULL (the failed check counted). */
static sgr_table *load_pack(const char *text, uint8_t **img)
{
    size_t len = 0;
    char err[256];
    sgr_table *t = NULL;
    *img = compile(text, &len);
    CHECK(*img != NULL);
    if (*img && sgr_table_load(*img, len, &t, err, sizeof err) != 0) {
        fprintf(stderr, "  load: %s\n", err);
        t = NULL;
    }
    CHECK(t != NULL);
    if (!t) {
        free(*img);
        *img = NULL;
    }
    return t;
}

static void unload_pack(sgr_table *t, uint8_t *img)
{
    sgr_table_free(t);
    free(img);
}

/* A pack loaded for one test and a fresh context on it, which ev and expect use
 * until pack_end frees both and puts the suite's context back. */
typedef struct pack_scope {
    sgr_table *t;
    uint8_t *img;
    sgr_ctx *saved;
} pack_scope;

/* 0, or -1 when the pack did not load or no context could be made (counted). */
static int pack_begin(pack_scope *ps, const char *text)
{
    ps->t = load_pack(text, &ps->img);
    if (!ps->t)
        return -1;
    sgr_ctx *c = sgr_ctx_new(ps->t);
    CHECK(c != NULL);
    if (!c) {
        unload_pack(ps->t, ps->img);
        return -1;
    }
    ps->saved = ctx;
    ctx = c;
    return 0;
}

static void pack_end(pack_scope *ps)
{
    sgr_ctx_free(ctx);
    ctx = ps->saved;
    unload_pack(ps->t, ps->img);
}

/* Decompiled text, appended to a growing NUL-terminated buffer. */
typedef struct dbuf {
    char *p;
    size_t n;
} dbuf;

static void dbuf_out(void *ud, const char *s, size_t n)
{
    dbuf *b = ud;
    char *q = realloc(b->p, b->n + n + 1);
    CHECK(q != NULL);
    if (!q)
        return;
    memcpy(q + b->n, s, n);
    b->n += n;
    q[b->n] = '\0';
    b->p = q;
}

/* A rule that can hold only when some `path inside S` does, S decided by the path
 * group alone, is skipped for a segment none of whose paths the group puts in any
 * such set (F_PGHIT in runtime/eval.c); a rule whose `path inside` can fail while
 * it holds (`or`, `not`, an `and` that is not the whole rule) is run as before, and
 * so is one over a set the group runs only in part. */
static void path_req_tests(void)
{
    static const char pack[] =
        "pack p version 1\n"
        "default allow\n"
        "one: deny path inside { */.ssh } \"one {path}\"\n"
        "and: deny path inside { /etc/shadow /etc/gshadow } and program cat \"and {path}\"\n"
        "or: deny path inside { */.aws } or arg zz\n"
        "andor: deny path inside { */.kube } and arg kk or arg yy\n"
        "neg: ask not path inside { */tmpok } and program touch\n"
        "notor: ask not path inside { */.cfg } or arg qq\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        CHECK_STR(ev("cat ~/.ssh/id")->message, "one /w/.ssh/id");
        CHECK_STR(ev("cat a /etc/shadow")->message, "and /etc/shadow");
        expect("cat a ~/.ssh/id /etc/shadow", SGT_DENY, "p:one");
        expect("cat /etc/shadowy ~/.ssh", SGT_DENY, "p:one");
        expect("ls /etc/shadow ~/.cfg", SGT_ALLOW, "default");
        expect("cat zz ~/.cfg", SGT_DENY, "p:or");
        expect("cat ~/.aws/x ~/.cfg", SGT_DENY, "p:or");
        expect("cat yy ~/.cfg", SGT_DENY, "p:andor");
        expect("cat ~/.kube/c kk ~/.cfg", SGT_DENY, "p:andor");
        expect("cat ~/.kube/c ~/.cfg", SGT_ALLOW, "default");
        expect("cat kk ~/.cfg", SGT_ALLOW, "default");
        expect("touch a ~/.cfg", SGT_ASK, "p:neg");
        expect("touch /x/tmpok ~/.cfg", SGT_ALLOW, "default");
        expect("ls", SGT_ASK, "p:notor");
        expect("ls ~/.cfg qq", SGT_ASK, "p:notor");
        expect("ls ~/.cfg", SGT_ALLOW, "default");
    }
    pack_end(&ps);

    /* a set with too many words for the group's trie: the group runs its pattern
     * alone, so a path outside the pattern may still be one of the words */
    enum { NW = 800 };
    char *big = malloc(NW * 16 + 256), w[NW][14];
    uint32_t x = 12345;
    int o = sprintf(big, "pack b version 1\ndefault allow\nbig: deny path inside { *.big");
    for (int k = 0; k < NW; k++) {
        memcpy(w[k], "/b/", 3);
        for (int j = 3; j < 13; j++) {
            x = x * 1103515245u + 12345u;
            w[k][j] = (char)('a' + (x >> 16) % 26);
        }
        w[k][13] = 0;
        o += sprintf(big + o, " %s", w[k]);
    }
    sprintf(big + o, " } \"big {path}\"\n");
    int loaded = pack_begin(&ps, big);
    free(big);
    if (loaded < 0)
        return;
    for (int round = 0; round < 2; round++) {
        char cmd[64], msg[64];
        snprintf(cmd, sizeof cmd, "cat %s", w[NW / 2]);
        snprintf(msg, sizeof msg, "big %s", w[NW / 2]);
        expect(cmd, SGT_DENY, "b:big");
        CHECK_STR(ev(cmd)->message, msg);
        expect("cat x.big", SGT_DENY, "b:big");
        expect("cat /b/abcdefghij", SGT_ALLOW, "default");
    }
    pack_end(&ps);
}

/* `text` options and `text operand` (std/programs): what they take out of the path
 * candidates, and only that, for both `path inside` and `path outside workspace`;
 * then the same decisions from the decompiled and recompiled table. */
static void text_decl_cases(void)
{
    static const struct { const char *cmd; uint32_t dec; const char *rule; } cases[] = {
        { "g sec1 x", SGT_ALLOW, "default" },          /* the first operand is text */
        { "g x sec1", SGT_DENY, "t:sec" },             /* the second is a file */
        { "g /etc/x docs", SGT_ALLOW, "default" },
        { "g docs /etc/x", SGT_ASK, "t:out" },
        { "g -e sec1 x", SGT_ALLOW, "default" },       /* -e's value is text */
        { "g -e x sec1", SGT_DENY, "t:sec" },          /* with -e the first operand is a file */
        { "g -ex sec1", SGT_DENY, "t:sec" },
        { "g -re x sec1", SGT_DENY, "t:sec" },
        { "g -f sec1 x", SGT_DENY, "t:sec" },          /* -f takes a file */
        { "g -f x sec1", SGT_DENY, "t:sec" },
        { "g --key=sec1 x", SGT_ALLOW, "default" },    /* --opt=VALUE */
        { "g --key sec1 x", SGT_ALLOW, "default" },
        { "g -ksec1 x", SGT_ALLOW, "default" },        /* -xVALUE in a cluster */
        { "g -rk sec1 x", SGT_ALLOW, "default" },
        { "g -k /etc/x", SGT_ALLOW, "default" },
        { "g x y -e sec1", SGT_DENY, "t:sec" },        /* after an operand: a file */
        { "g x y --key=sec1", SGT_DENY, "t:sec" },
        { "g x -k sec1", SGT_DENY, "t:sec" },
        { "g sec1 y -e z", SGT_DENY, "t:sec" },        /* -e anywhere: sec1 is a file */
        { "g -- -e sec1", SGT_DENY, "t:sec" },         /* "-e" is the pattern */
        { "g -- sec1", SGT_ALLOW, "default" },
        { "g sec1 < sec2", SGT_DENY, "t:sec" },        /* redirections stay */
        { "p a -x sec1", SGT_ALLOW, "default" },       /* permute: text anywhere */
        { "p a -y sec1", SGT_DENY, "t:sec" },
        { "p a --long=sec1", SGT_ALLOW, "default" },
        { "q /etc/passwd", SGT_ALLOW, "default" },     /* text operand, no unless */
        { "q a /etc/passwd", SGT_ASK, "t:out" },
        { "h sec1 x", SGT_DENY, "t:sec" },             /* undeclared: every operand */
        { "h -e sec1", SGT_DENY, "t:sec" },
    };
    static const char pack[] =
        "pack t version 1\n"
        "default allow\n"
        "command g { value { -f } text { -e -k --key } text operand unless { -e -f } }\n"
        "command p { text { -x --long } permute }\n"
        "command q { text operand }\n"
        "sec: deny path inside { /w/proj/sec* } \"sec {path}\"\n"
        "out: ask path outside workspace \"out {path}\"\n";
    uint8_t *img, *img2 = NULL;
    sgr_table *t = load_pack(pack, &img), *t2 = NULL;
    if (!t)
        return;
    dbuf d = { NULL, 0 };
    char err[256];
    CHECK(sgr_table_decompile(t, dbuf_out, &d, err, sizeof err) == 0);
    CHECK(d.p && strstr(d.p, "command \"g\" { value { \"-f\" } text { \"--key\" \"-e\" \"-k\" } text operand unless { \"-e\" \"-f\" } }"));
    CHECK(d.p && strstr(d.p, "command \"p\" { text { \"--long\" \"-x\" } permute }"));
    CHECK(d.p && strstr(d.p, "command \"q\" { text operand }"));
    if (d.p)
        t2 = load_pack(d.p, &img2);
    sgr_table *tabs[2] = { t, t2 };
    for (int k = 0; k < 2 && tabs[k]; k++) {
        ctx = sgr_ctx_new(tabs[k]);
        CHECK(ctx != NULL);
        for (size_t i = 0; ctx && i < sizeof cases / sizeof *cases; i++)
            expect(cases[i].cmd, cases[i].dec, cases[i].rule);
        sgr_ctx_free(ctx);
        ctx = NULL;
    }
    free(d.p);
    if (t2)
        unload_pack(t2, img2);
    unload_pack(t, img);
}

/* A rule the index files under a program skips its leading `program` test when
 * reached through the index (index_implies in runtime/eval.c): the decisions must
 * be those of running it whole, for one-test rules, `program S and ...`, tests
 * joined by `or` (never skipped), and rules outside the index. */
static void index_implies_tests(void)
{
    static const char pack[] =
        "pack i version 1\n"
        "default allow\n"
        "set ab = { a b }\n"
        "one: ask program in ab\n"
        "two: deny program { c d } and arg zz\n"
        "three: deny program { e } and program { e f } and arg yy\n"
        "four: deny (program { g } or program { h }) and arg xx\n"
        "five: deny program { k } and arg ww or arg vv\n"
        "six: deny program { m } or program { n }\n"
        "seven: deny program { p q } or program { p }\n"
        "eight: deny program { r } and arg a1 and arg a2\n"
        "nine: deny program { s } and (arg b1 or arg b2) and arg b3\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        expect("a", SGT_ASK, "i:one");
        expect("/usr/bin/b q", SGT_ASK, "i:one");
        expect("x a", SGT_ALLOW, "default");
        expect("c zz", SGT_DENY, "i:two");
        expect("/opt/d q zz", SGT_DENY, "i:two");
        expect("c", SGT_ALLOW, "default");
        expect("e yy", SGT_DENY, "i:three");
        expect("f yy", SGT_ALLOW, "default");
        expect("e", SGT_ALLOW, "default");
        expect("g xx", SGT_DENY, "i:four");
        expect("h xx", SGT_DENY, "i:four");
        expect("h", SGT_ALLOW, "default");
        expect("k ww", SGT_DENY, "i:five");
        expect("x vv", SGT_DENY, "i:five");
        expect("k", SGT_ALLOW, "default");
        expect("m", SGT_DENY, "i:six");
        expect("n", SGT_DENY, "i:six");
        expect("q", SGT_DENY, "i:seven");
        expect("p", SGT_DENY, "i:seven");
        expect("r a1 a2", SGT_DENY, "i:eight");    /* a chain of jump-falses */
        expect("r a1", SGT_ALLOW, "default");
        expect("r a2", SGT_ALLOW, "default");
        expect("s b2 b3", SGT_DENY, "i:nine");
        expect("s b1 b3", SGT_DENY, "i:nine");
        expect("s b1", SGT_ALLOW, "default");
        expect("s b3", SGT_ALLOW, "default");
        expect("x b1 b3", SGT_ALLOW, "default");
    }
    pack_end(&ps);
}

/* The index files a rule under the programs of every side of an `or`, however
 * many sides (emit.c, index_sets); a rule naming more program sets than the index
 * keeps stays unindexed.  Either way the decisions are those of running it. */
static void index_or_tests(void)
{
    char pack[2048];
    int o = snprintf(pack, sizeof pack, "pack o version 1\ndefault allow\n"
                     "three: deny program { a } or program { b } and arg x or program { c }\n"
                     "many: ask program { p0 }");
    for (int k = 1; k < 20; k++)
        o += snprintf(pack + o, sizeof pack - (size_t)o, " or program { p%d }", k);
    snprintf(pack + o, sizeof pack - (size_t)o, "\n");
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    const sgr_table *t = ps.t;
    const char *names[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++) {
        uint32_t n = 0;
        const uint32_t *l = sgr_table_lookup(t, names[i], 1, &n);
        CHECK(l && n == 1 && l[0] == 0);
    }
    uint32_t n = 0;
    CHECK(sgr_table_lookup(t, "p0", 2, &n) == NULL);
    CHECK(t->meta->any_len == 1 && t->lists[t->meta->any_off] == 1);
    for (int round = 0; round < 2; round++) {
        expect("c", SGT_DENY, "o:three");
        expect("a q", SGT_DENY, "o:three");
        expect("b x", SGT_DENY, "o:three");
        expect("b", SGT_ALLOW, "default");
        expect("d x", SGT_ALLOW, "default");
        expect("p7", SGT_ASK, "o:many");
        expect("p19 z", SGT_ASK, "o:many");
    }
    pack_end(&ps);
}

/* A word shorter than anything a set's automaton accepts is refused on its length
 * (dfa_min in runtime/eval.c): the bound must be the shortest accepted length
 * exactly, over alternatives of different lengths, with the empty string, in a set
 * that also has exact words (shorter than the automaton's shortest), and through
 * every predicate that tests words. */
static void dfa_min_tests(void)
{
    static const char pack[] =
        "pack m version 1\n"
        "default allow\n"
        "short: deny arg matches /abc|x{5}/ \"arg {arg}\"\n"
        "empty: ask program echo and arg matches /^q*$/\n"
        "mixed: deny program tool and arg in { ab *.longer }\n"
        "prog: deny program /^[a-z]{7}$/\n"
        "sub: deny program git and subcommand /^[a-z]{4}-x$/\n"
        "opt: deny program ls and option /^--[a-z]{3}$/ \"opt {option}\"\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        expect("cat abc", SGT_DENY, "m:short");
        CHECK_STR(ev("cat q zabcz")->message, "arg zabcz");
        expect("cat ab", SGT_ALLOW, "default");
        expect("cat xxxxx", SGT_DENY, "m:short");
        expect("cat xxxx", SGT_ALLOW, "default");
        expect("cat xxxxabxx", SGT_ALLOW, "default");
        expect("echo ''", SGT_ASK, "m:empty");
        expect("echo q", SGT_ASK, "m:empty");
        expect("echo ab", SGT_ALLOW, "default");
        expect("tool ab", SGT_DENY, "m:mixed");
        expect("tool a", SGT_ALLOW, "default");
        expect("tool .longer", SGT_DENY, "m:mixed");
        expect("tool longer", SGT_ALLOW, "default");
        expect("abcdefg", SGT_DENY, "m:prog");
        expect("abcdef", SGT_ALLOW, "default");
        expect("git wxyz-x", SGT_DENY, "m:sub");
        expect("git wxy-x", SGT_ALLOW, "default");
        expect("ls --wxy", SGT_DENY, "m:opt");
        CHECK_STR(ev("ls -l --wxy")->message, "opt --wxy");
        expect("ls --wx", SGT_ALLOW, "default");
    }
    pack_end(&ps);
}

/* An automaton whose every match holds a byte below 128 of one class (a blank in
 * `/drop\s+table/i`) is run only on strings with a byte below that class's
 * highest + 1, tested 8 bytes at a time (dfa_low in runtime/eval.c): the blank at
 * every place in strings of 10 to 29 bytes, after bytes of 128 and more, and a
 * class of one byte ('-') next to the bytes just above it. */
static void dfa_low_tests(void)
{
    static const char pack[] =
        "pack l version 1\n"
        "default allow\n"
        "sql: ask arg matches /(drop|truncate)\\s+table/i \"arg {arg}\"\n"
        "dash: deny program tool and arg matches /a-b/\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        for (int pre = 0; pre < 10; pre++)
            for (int post = 0; post < 10; post++) {
                char cmd[128], want[64];
                const char *blank = (pre + post) % 3 == 0 ? "\t" : (pre + post) % 3 == 1 ? " " : "   ";
                snprintf(cmd, sizeof cmd, "psql '%.*sDROP%stable%.*s'", pre, "xxxxxxxxxx", blank, post, "yyyyyyyyyy");
                snprintf(want, sizeof want, "arg %.*sDROP%stable%.*s", pre, "xxxxxxxxxx", blank, post, "yyyyyyyyyy");
                const sgr_result *r = ev(cmd);
                CHECK(r->decision == SGT_ASK);
                CHECK_STR(r->message, want);
                snprintf(cmd, sizeof cmd, "psql %.*sDROP_table%.*s", pre, "xxxxxxxxxx", post, "yyyyyyyyyy");
                expect(cmd, SGT_ALLOW, "default");
            }
        expect("psql '\xc3\xa9\xff\xfe\xc3\xa9\xff\xfeZdrop table'", SGT_ASK, "l:sql");
        expect("psql '\xc3\xa9\xff\xfe\xc3\xa9\xff\xfeZdrop\xa0table'", SGT_ALLOW, "default");
        expect("psql truncate\ntable", SGT_ALLOW, "default");     /* two words */
        expect("psql 'truncate\ntable'", SGT_ASK, "l:sql");
        expect("tool xxxxxxxxxxxa-bxxxxxxxxxx", SGT_DENY, "l:dash");
        expect("tool xxxxxxxxxxxa.bxxxxxxxxxx", SGT_ALLOW, "default");
        expect("tool xxxxxxxxxxxa,bxxxxxxxxxx", SGT_ALLOW, "default");
        expect("tool a-b", SGT_DENY, "l:dash");
    }
    pack_end(&ps);
}

/* Messages are parsed once per context (fill_parsed in runtime/eval.c) and read
 * as they always were: a brace pair naming no placeholder, a brace without its
 * pair, a name inside braces inside braces, and {program} where no segment
 * decided (a whole-line rule) stay text. */
static void message_tests(void)
{
    static const char pack[] =
        "pack g version 1\n"
        "default ask \"{Nope} {program} {{subcommand}} x{rule\"\n"
        "a: deny program aa \"{a{program}} [{option}] {arg}{path}{reason}|{}{rule}{rule}{\"\n"
        "b: deny program bb and option -x \"{subcommand}:{option}:{program}\"\n"
        "c: deny text contains { ZZZ } \"{program} saw {rule}, {reason}\"\n"
        "d: deny program dd and path inside { /etc/* } \"{path}/{arg}/{program}\"\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        CHECK_STR(ev("zz sub")->message, "{Nope} zz {sub} x{rule");
        CHECK_STR(ev("aa q")->message, "{aaa} [] |{}g:ag:a{");
        CHECK_STR(ev("bb -x sub")->message, "sub:-x:bb");
        CHECK_STR(ev("echo ZZZ")->message, "{program} saw g:c, ");
        CHECK_STR(ev("dd /etc/passwd")->message, "/etc/passwd//etc/passwd/dd");
    }
    pack_end(&ps);
}

/* Messages are parsed as they are first filled, into a pool of room made with
 * the context (tmpl_for in runtime/eval.c); once thousands of rules have decided
 * the pool is full and the rest are filled from their text: the message is the
 * same either way, for every rule, the first time and again. */
static void message_pool_tests(void)
{
    enum { N = 3000 };                     /* 7 pieces a message: past the pool */
    size_t cap = (size_t)N * 80 + 64, len = 0;
    char *src = malloc(cap);
    if (!src)
        return;
    len += (size_t)snprintf(src + len, cap - len, "pack g version 1\ndefault ask\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(src + len, cap - len, "r%d: deny program p%d \"{program} {rule} [{arg}] {path}\"\n", i, i);
    pack_scope ps;
    int loaded = pack_begin(&ps, src);
    free(src);
    if (loaded < 0)
        return;
    int right = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            char cmd[32], want[64];
            snprintf(cmd, sizeof cmd, "p%d x", i);
            snprintf(want, sizeof want, "p%d g:r%d [] ", i, i);
            right += strcmp(ev(cmd)->message, want) == 0;
        }
    CHECK(right == 2 * N);
    pack_end(&ps);
}

/* In a program's walk, `program S` for a set without the program's name can hold
 * only through argv[0] (F_ARGV0 in runtime/eval.c): the rule is skipped for
 * `git`, and still run for `/opt/bin/git`. */
static void argv0_tests(void)
{
    static const char pack[] =
        "pack v version 1\n"
        "default allow\n"
        "git_ok: allow program git\n"
        "opt: deny program /^\\/opt\\/.*$/ \"{program}\"\n"
        "mk: deny program in { mkfs } or program /^mkfs\\..*$/\n"
        "two: ask program in { tool } and not program tool\n";
    pack_scope ps;
    if (pack_begin(&ps, pack) < 0)
        return;
    for (int round = 0; round < 2; round++) {
        expect("git status", SGT_ALLOW, "v:git_ok");
        expect("/opt/bin/git status", SGT_DENY, "v:opt");
        /* {program} of a program given by path is the path as written */
        CHECK_STR(ev("/opt/bin/git status")->message, "/opt/bin/git");
        CHECK_STR(ev("git status;/opt/bin/git status")->message, "/opt/bin/git");
        expect("/opt/x/mkfs", SGT_DENY, "v:opt");
        expect("mkfs /dev/x", SGT_DENY, "v:mk");
        expect("/sbin/mkfs.ext4 /dev/x", SGT_DENY, "v:mk");
        expect("git x; mkfs.xfs y", SGT_DENY, "v:mk");
        expect("tool", SGT_ALLOW, "default");
    }
    pack_end(&ps);
}

/* Path resolution goes through a per-context cache from a context's second call
 * on (runtime/pathcache.h): a name swapped for a symlink between two calls on one
 * context is seen by the next call, and so is a cwd swapped for a symlink. */
static void swap_tests(void)
{
    char tmpl[] = "/tmp/sg-evalswap-XXXXXX", ws[128], old[128], out[128], ssh[128], notes[128], onotes[128];
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d)
        return;
    snprintf(ws, sizeof ws, "%s/ws", d);
    snprintf(old, sizeof old, "%s/ws.old", d);
    snprintf(out, sizeof out, "%s/out", d);
    snprintf(ssh, sizeof ssh, "%s/out/.ssh", d);
    snprintf(notes, sizeof notes, "%s/ws/notes", d);
    snprintf(onotes, sizeof onotes, "%s/out/notes", d);
    CHECK(mkdir(ws, 0700) == 0 && mkdir(out, 0700) == 0 && mkdir(ssh, 0700) == 0);
    touch(notes);
    CHECK(symlink("/etc/hostname", onotes) == 0);
    sgr_opts o = { ws, NULL, 0, "/w" };
    const sgr_result *r = NULL;
    for (int i = 0; i < 3; i++) {
        r = sgr_eval(ctx, "cat notes", 9, &o);
        CHECK(r->decision == SGT_ALLOW && strcmp(r->rule_id, "t:read") == 0);
    }
    /* the file becomes a symlink out of the workspace, then into a secret */
    CHECK(unlink(notes) == 0 && symlink(out, notes) == 0);
    r = sgr_eval(ctx, "cat notes", 9, &o);
    CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "default") == 0);
    CHECK(unlink(notes) == 0 && symlink(ssh, notes) == 0);
    r = sgr_eval(ctx, "cat notes", 9, &o);
    CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "t:secret") == 0);
    /* and back to a plain file */
    CHECK(unlink(notes) == 0);
    touch(notes);
    r = sgr_eval(ctx, "cat notes", 9, &o);
    CHECK(r->decision == SGT_ALLOW);
    /* the cwd itself swapped for a symlink to out/, where notes leads out */
    CHECK(rename(ws, old) == 0 && symlink(out, ws) == 0);
    r = sgr_eval(ctx, "cat notes", 9, &o);
    CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "default") == 0);
    r = sgr_eval(ctx, "cat .ssh/config", 15, &o);
    CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "t:secret") == 0);
    unlink(ws);
    char oldnotes[160];
    snprintf(oldnotes, sizeof oldnotes, "%s/notes", old);
    unlink(oldnotes);
    rmdir(old);
    unlink(onotes);
    rmdir(ssh);
    rmdir(out);
    rmdir(d);
}

/* On a case-folding directory ~/.SSH/ID_RSA opens ~/.ssh/id_rsa: the path, and a
 * pattern over it, match a set in either case there, and only there.  No such
 * filesystem can be mounted in a test, so sgr_fold_force stands for one (its
 * detection, dir_folds in eval.c, reads statfs and FS_IOC_GETFLAGS). */
static void casefold_tests(void)
{
    char tmpl[] = "/tmp/sg-fold-XXXXXX", ws[128], ssh[128], key[160];
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d)
        return;
    snprintf(ws, sizeof ws, "%s/ws", d);
    snprintf(ssh, sizeof ssh, "%s/ws/.ssh", d);
    snprintf(key, sizeof key, "%s/ws/.ssh/id_rsa", d);
    CHECK(mkdir(ws, 0700) == 0 && mkdir(ssh, 0700) == 0);
    touch(key);
    sgr_opts o = { ws, NULL, 0, ws };
    static const char *const cmds[] = { "cat .SSH/ID_RSA", "cat .Ss?/*", "cat ./.SSH", "cat ~/.SSH/config" };
    for (int fold = 0; fold < 2; fold++) {
        sgr_fold_force = fold ? d : NULL;
        for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
            const sgr_result *r = sgr_eval(ctx, cmds[i], strlen(cmds[i]), &o);
            int ok = fold ? r->decision == SGT_DENY && strcmp(r->rule_id, "t:secret") == 0
                          : r->decision == SGT_ALLOW;
            if (!ok)
                fprintf(stderr, "  fold %d: %s: %s %s\n", fold, cmds[i], sgr_decision_name(r->decision), r->rule_id);
            CHECK(ok);
        }
        /* lower case is a secret either way; other names are not */
        CHECK(sgr_eval(ctx, "cat .ssh/id_rsa", 15, &o)->decision == SGT_DENY);
        CHECK(sgr_eval(ctx, "cat NOTES.md", 12, &o)->decision == SGT_ALLOW);
    }
    sgr_fold_force = NULL;
    unlink(key);
    rmdir(ssh);
    rmdir(ws);
    rmdir(d);
}

/* Plain names relative to the cwd are resolved by a short path (resolve_plain);
 * `cat NAME` and `cat ./NAME`, which takes the general walk, must resolve to the
 * same place, for files, directories, symlinks in and out (last or in the
 * middle), loops, missing names, trailing and doubled slashes, and names that
 * only look special. */
static void resolve_plain_tests(void)
{
    static const char pack[] =
        "pack r version 1\n"
        "default allow\n"
        "out: ask path outside workspace \"out {path}\"\n"
        "sec: deny path inside { */sec* } \"sec {path}\"\n"
        "any: allow path inside { /* } \"any {path}\"\n";
    uint8_t *img;
    sgr_table *t = load_pack(pack, &img);
    if (!t)
        return;
    char tmpl[] = "/tmp/sg-evalname-XXXXXX", p[256], q[256];
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d) {
        unload_pack(t, img);
        return;
    }
    static const char *const files[] = { "f", "sec1", "...", ".h", "..x", "a b", "-" };
    static const struct { const char *name, *target; } links[] = {
        { "lnk_out", "/etc" }, { "lnk_in", "f" }, { "lnk_sec", "sec1" }, { "loop", "loop" },
        { "lnk_dir", "d" }, { "dangling", "nowhere/x" }, { "lnk_up", ".." },
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", d, files[i]);
        touch(p);
    }
    snprintf(p, sizeof p, "%s/d", d);
    CHECK(mkdir(p, 0700) == 0);
    static const char *const inner[] = { "d/inner", "d/sec2" };
    for (size_t i = 0; i < sizeof inner / sizeof *inner; i++) {
        snprintf(p, sizeof p, "%s/%s", d, inner[i]);
        touch(p);
    }
    snprintf(p, sizeof p, "%s/d/lnk", d);
    CHECK(symlink("/etc", p) == 0);
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        snprintf(p, sizeof p, "%s/%s", d, links[i].name);
        CHECK(symlink(links[i].target, p) == 0);
    }
    sgr_ctx *c = sgr_ctx_new(t);
    sgr_opts o = { d, NULL, 0, "/w" };
    static const char *const names[] = { "f", "sec1", "...", ".h", "..x", "a b", "-", "d", "lnk_out", "lnk_in",
                                         "lnk_sec", "loop", "lnk_dir", "dangling", "lnk_up", "missing", "sec_missing",
                                         "d/inner", "d/sec2", "d/", "d//", "d/inner/", "d//inner", "d/lnk",
                                         "d/lnk/passwd", "lnk_dir/inner", "lnk_dir/sec2", "lnk_up/x", "f/x",
                                         "missing/x/sec3", "d/missing/y", "d/../f", "d/./inner", "missing/../f",
                                         "loop/x", "dangling/y", "lnk_in/z", ".../x", "d/..x" };
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            snprintf(p, sizeof p, "cat '%s'", names[i]);
            snprintf(q, sizeof q, "cat './%s'", names[i]);
            const sgr_result *r = sgr_eval(c, p, strlen(p), &o);
            uint32_t dec = r->decision;
            char rid[64], msg[512];
            snprintf(rid, sizeof rid, "%s", r->rule_id);
            snprintf(msg, sizeof msg, "%s", r->message);
            r = sgr_eval(c, q, strlen(q), &o);
            int same = dec == r->decision && strcmp(rid, r->rule_id) == 0 && strcmp(msg, r->message) == 0;
            if (!same)
                fprintf(stderr, "  %s: %s %s / %s: %s %s\n", p, rid, msg, q, r->rule_id, r->message);
            CHECK(same);
        }
    }
    /* and the answers themselves, for a few */
    CHECK(sgr_eval(c, "cat lnk_out", 11, &o)->decision == SGT_ASK);
    CHECK(sgr_eval(c, "cat lnk_sec", 11, &o)->decision == SGT_DENY);
    const sgr_result *rf = sgr_eval(c, "cat f", 5, &o);
    snprintf(p, sizeof p, "any %s/f", d);
    CHECK(rf->decision == SGT_ALLOW && strcmp(rf->message, p) == 0);
    sgr_ctx_free(c);
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        snprintf(p, sizeof p, "%s/%s", d, links[i].name);
        unlink(p);
    }
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", d, files[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/d/lnk", d);
    unlink(p);
    for (size_t i = 0; i < sizeof inner / sizeof *inner; i++) {
        snprintf(p, sizeof p, "%s/%s", d, inner[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/d", d);
    rmdir(p);
    rmdir(d);
    unload_pack(t, img);
}

/* A relative --root is a name under the cwd, resolved by resolve_plain against the
 * cwd of this call: calls alternating between cwds of different lengths on one
 * context must each take the root from their own cwd. */
static void root_name_tests(void)
{
    char tmpl[] = "/tmp/sg-evalroot-XXXXXX", a[128], b[128], p[192];
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d)
        return;
    snprintf(a, sizeof a, "%s/aaaa", d);
    snprintf(b, sizeof b, "%s/b", d);
    const char *dirs[] = { a, b };
    for (int i = 0; i < 2; i++) {
        CHECK(mkdir(dirs[i], 0700) == 0);
        snprintf(p, sizeof p, "%s/ws", dirs[i]);
        CHECK(mkdir(p, 0700) == 0);
        snprintf(p, sizeof p, "%s/ws/f", dirs[i]);
        touch(p);
    }
    const char *roots[] = { "ws" };
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 2; i++) {
            sgr_opts o = { dirs[i], roots, 1, "/w" };
            CHECK(sgr_eval(ctx, "cat ws/f", 8, &o)->decision == SGT_ALLOW);
            const char *out = i ? "cat ../aaaa/ws/f" : "cat ../b/ws/f";
            const sgr_result *r = sgr_eval(ctx, out, strlen(out), &o);
            CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "default") == 0);
        }
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/ws/f", dirs[i]);
        unlink(p);
        snprintf(p, sizeof p, "%s/ws", dirs[i]);
        rmdir(p);
        rmdir(dirs[i]);
    }
    rmdir(d);
}

/* `path inside` for sets the path group cannot take: past its 32 automata, and
 * exact words that would make too large a trie, are decided set by set
 * (path_inside_set, words_inside); absolute paths and paths under the cwd, whose
 * run over the cwd is shared, must decide as the grouped sets do. */
static void path_fallback_tests(void)
{
    enum { NGLOB = 36, NBIG = 300 };
    size_t cap = 64 * 1024, o = 0;
    char *pack = malloc(cap);
    CHECK(pack != NULL);
    if (!pack)
        return;
    o += (size_t)snprintf(pack + o, cap - o, "pack f version 1\ndefault allow\n");
    for (int k = 0; k < NGLOB; k++)
        o += (size_t)snprintf(pack + o, cap - o, "g%d: deny path inside { /x%d/* } \"g{path}\"\n", k, k);
    o += (size_t)snprintf(pack + o, cap - o, "big: ask path inside {");
    for (int k = 0; k < NBIG; k++)             /* 300 words of 20 bytes: a trie of 4,800+ states */
        o += (size_t)snprintf(pack + o, cap - o, " /big/%08x%07d", (unsigned)(k * 2654435761u), k);
    o += (size_t)snprintf(pack + o, cap - o, " }\n");
    uint8_t *img;
    sgr_table *t = load_pack(pack, &img);
    free(pack);
    if (!t)
        return;
    sgr_ctx *c = sgr_ctx_new(t);
    char cmd[128], want[64], big[64];
    snprintf(big, sizeof big, "/big/%08x%07d", (unsigned)(7 * 2654435761u), 7);
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < NGLOB; k += 5) {
            char cwd[32];
            snprintf(cwd, sizeof cwd, "/x%d", k);
            sgr_opts o2 = { cwd, NULL, 0, "/w" };
            snprintf(want, sizeof want, "f:g%d", k);
            /* absolute, and relative to a cwd the set's glob covers the inside of */
            snprintf(cmd, sizeof cmd, "cat /x%d/a", k);
            const sgr_result *r = sgr_eval(c, cmd, strlen(cmd), &o2);
            CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, want) == 0);
            r = sgr_eval(c, "cat a/b", 7, &o2);
            CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, want) == 0);
            r = sgr_eval(c, "cat /x100/a /y", 14, &o2);
            CHECK(r->decision == SGT_ALLOW);
            /* the exact words: the path, a directory above it, and near misses */
            snprintf(cmd, sizeof cmd, "cat %s/z", big);
            r = sgr_eval(c, cmd, strlen(cmd), &o2);
            CHECK(r->decision == SGT_ASK && strcmp(r->rule_id, "f:big") == 0);
            snprintf(cmd, sizeof cmd, "cat %s", big);
            CHECK(sgr_eval(c, cmd, strlen(cmd), &o2)->decision == SGT_ASK);
            snprintf(cmd, sizeof cmd, "cat %sz /big", big);
            CHECK(sgr_eval(c, cmd, strlen(cmd), &o2)->decision == SGT_ALLOW);
        }
    sgr_ctx_free(c);
    unload_pack(t, img);
}

/* The resolved cwd is kept between calls while the path cache's epoch stands
 * (resolve_cwd): a cwd reached through a symlink that is repointed between two
 * calls must be resolved afresh, or operands would be taken from the old place. */
static void cwd_link_tests(void)
{
    char tmpl[] = "/tmp/sg-evalcwd-XXXXXX", ws[128], out[128], cur[128], p[160];
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d)
        return;
    snprintf(ws, sizeof ws, "%s/ws", d);
    snprintf(out, sizeof out, "%s/out", d);
    snprintf(cur, sizeof cur, "%s/cur", d);
    CHECK(mkdir(ws, 0700) == 0 && mkdir(out, 0700) == 0 && symlink("ws", cur) == 0);
    snprintf(p, sizeof p, "%s/notes", ws);
    touch(p);
    snprintf(p, sizeof p, "%s/notes", out);
    CHECK(symlink("/etc/hostname", p) == 0);
    const char *roots[] = { ws };
    sgr_opts o = { cur, roots, 1, "/w" };
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++)
            CHECK(sgr_eval(ctx, "cat notes", 9, &o)->decision == SGT_ALLOW);
        CHECK(unlink(cur) == 0 && symlink("out", cur) == 0);
        for (int i = 0; i < 2; i++) {
            const sgr_result *r = sgr_eval(ctx, "cat notes", 9, &o);
            CHECK(r->decision == SGT_DENY && strcmp(r->rule_id, "default") == 0);
        }
        CHECK(unlink(cur) == 0 && symlink("ws", cur) == 0);
    }
    unlink(cur);
    unlink(p);
    snprintf(p, sizeof p, "%s/notes", ws);
    unlink(p);
    rmdir(ws);
    rmdir(out);
    rmdir(d);
}

/* `path inside` runs a set once per call over the resolved cwd and resumes each
 * path after it: the cwd itself, or a directory above it, being in the set makes
 * every path under it match; paths elsewhere and later calls are unaffected. */
static void cwd_prefix_tests(void)
{
    static const char P[] = "pack p version 1\ndefault allow\n"
                            "secret: deny path inside { */.ssh /srv/keys } \"{path}\"\n";
    size_t len = 0;
    uint8_t *img = compile(P, &len);
    char err[256];
    sgr_table *t = NULL;
    CHECK(img && sgr_table_load(img, len, &t, err, sizeof err) == 0);
    sgr_ctx *cx = t ? sgr_ctx_new(t) : NULL;
    CHECK(cx != NULL);
    if (!cx) {
        sgr_table_free(t);
        free(img);
        return;
    }
    static const struct { const char *cwd, *cmd; uint32_t dec; } cases[] = {
        { "/nonexistent-sg/u/.ssh", "cat config", SGT_DENY },          /* the cwd: glob */
        { "/nonexistent-sg/u/.ssh/keys/old", "cat a b", SGT_DENY },    /* above the cwd */
        { "/nonexistent-sg/u/proj", "cat config", SGT_ALLOW },         /* a later call */
        { "/nonexistent-sg/u/proj", "cat ../.ssh/id x", SGT_DENY },    /* not under the cwd */
        { "/nonexistent-sg/u/proj", "cat .ssh", SGT_DENY },            /* after the cwd */
        { "/srv/keys", "cat x", SGT_DENY },                             /* the cwd: a word */
        { "/srv/keys/deploy", "cat x", SGT_DENY },                      /* above: a word */
        { "/srv/keysx", "cat x", SGT_ALLOW },
        { "/srv", "cat keys/x", SGT_DENY },
        { "/srv", "cat keysx y", SGT_ALLOW },
    };
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            sgr_opts o = { cases[i].cwd, NULL, 0, "/w" };
            const sgr_result *r = sgr_eval(cx, cases[i].cmd, strlen(cases[i].cmd), &o);
            if (r->decision != cases[i].dec)
                fprintf(stderr, "  cwd %s: %s: got %s (%s)\n", cases[i].cwd, cases[i].cmd,
                        sgr_decision_name(r->decision), r->message);
            CHECK(r->decision == cases[i].dec);
        }
    sgr_ctx_free(cx);
    sgr_table_free(t);
    free(img);
}

int main(void)
{
    size_t len = 0, len2 = 0;
    uint8_t *a = compile(PACK, &len), *b = compile(PACK, &len2);
    CHECK(a && b);
    if (!a || !b)
        return sg_test_summary();
    /* equal sources give identical bytes */
    CHECK(len == len2 && memcmp(a, b, len) == 0);

    char err[256];
    sgr_table *t = NULL;
    CHECK(sgr_table_load(a, len, &t, err, sizeof err) == 0);
    index_implies_tests();
    text_decl_cases();
    path_req_tests();
    index_or_tests();
    dfa_min_tests();
    dfa_low_tests();
    message_tests();
    message_pool_tests();
    argv0_tests();
    ctx = sgr_ctx_new(t);

    /* decisions: deny > ask > allow, across rules and segments */
    expect("ls -la", SGT_ALLOW, "t:read");
    expect("rm x", SGT_ASK, "t:rm_any");
    expect("rm -rf x", SGT_DENY, "t:rm_rf");
    expect("rm -r -f x", SGT_DENY, "t:rm_rf");
    expect("/bin/rm -fr x", SGT_DENY, "t:rm_rf");
    expect("r''m -rf x", SGT_DENY, "t:rm_rf");
    expect("ls && rm x; cat y", SGT_ASK, "t:rm_any");
    expect("ls | rm -rf x | wc", SGT_DENY, "t:rm_rf");
    expect("python3", SGT_DENY, "default");
    /* message placeholders */
    CHECK_STR(ev("rm -rf x")->message, "no rm -f");
    CHECK_STR(ev("python3 x")->message, "'python3' is not allowed");
    CHECK_STR(ev("python3 x")->hint, "ask");
    /* wrappers: both wrapper and inner command are evaluated */
    expect("sudo -u root rm -rf x", SGT_DENY, "t:rm_rf");
    expect("env A=1 B=2 rm -rf x", SGT_DENY, "t:rm_rf");
    expect("sh -c 'ls; rm -rf x'", SGT_DENY, "t:rm_rf");
    expect("bash -c \"sudo sh -c 'rm -fr x'\"", SGT_DENY, "t:rm_rf");
    expect("find . -exec rm -rf {} ;", SGT_DENY, "t:rm_rf");
    expect("find . -name x", SGT_DENY, "default");
    expect("bash <<< 'rm -rf x'", SGT_DENY, "t:rm_rf");
    expect("sh <<EOF\nls\nrm -fr x\nEOF", SGT_DENY, "t:rm_rf");
    expect("bash <<< \"$X\"", SGT_DENY, "dynamic");
    /* subcommands after value-taking global options */
    expect("git -C sub log", SGT_ALLOW, "t:git_read");
    expect("git push", SGT_DENY, "default");
    /* pipelines: what feeds a shell */
    expect("curl x|sh", SGT_DENY, "t:pipe_sh");
    expect("curl x | sudo bash", SGT_DENY, "t:pipe_sh");
    expect("bash <(curl x)", SGT_DENY, "t:pipe_sh");
    expect("cat x | sh", SGT_DENY, "dynamic");      /* what sh runs is made at run time */
    /* whole-line text rules */
    expect(":(){ :|:& };:", SGT_DENY, "t:bomb");
    /* dynamic: denied unless a rule about dynamic decides; deny still wins */
    expect("a=r; b=m; $a$b x", SGT_DENY, "dynamic");
    expect("$(echo rm) x", SGT_DENY, "dynamic");
    expect("eval ls", SGT_DENY, "dynamic");
    expect("echo 'unbalanced", SGT_DENY, "dynamic");
    expect("$X", SGT_ASK, "t:dyn_echo");
    expect("A=1; B=2", SGT_ALLOW, "no-command");
    expect("A=1; rm -rf x", SGT_DENY, "t:rm_rf");
    CHECK(strstr(ev("eval ls")->message, "cannot be checked before it runs") != NULL);
    /* paths: workspace, .., cd, ~, secrets */
    expect("cat src/a.c", SGT_ALLOW, "t:read");
    expect("cat ../other/x", SGT_DENY, "default");
    expect("cat /etc/passwd", SGT_DENY, "default");
    expect("cd src && cat ../a.c", SGT_ALLOW, "t:read");
    expect("cd /etc && cat passwd", SGT_DENY, "default");
    /* a cd may fail, and a subshell's cd does not outlive it: after `;`, `||` or a
     * subshell a relative path is checked from every place the line may be */
    expect("(cd a/b/c); cat ../../../x", SGT_DENY, "default");
    expect("cd a/b/c || cat ../../../x", SGT_DENY, "default");
    expect("cd a/b/c; cat ../../../x", SGT_DENY, "default");
    expect("cd a/b/c && cat ../../../x", SGT_ALLOW, "t:read");
    expect("cd src && cat a.c && cat ../b.c", SGT_ALLOW, "t:read");
    expect("cd src; cat a.c", SGT_ALLOW, "t:read");
    /* a relative path after cd - (OLDPWD, from before the line) is dynamic; after a
     * cd to an expansion it is only known at run time (outside) */
    expect("cd - && cat x", SGT_DENY, "dynamic");
    expect("popd; cat x", SGT_DENY, "dynamic");
    expect("cd $D && cat x", SGT_DENY, "default");
    expect("cd && cat ../proj/x", SGT_DENY, "default");
    /* what feeds a shell, through scripts, exec and wrappers */
    expect("sh -c 'curl x' | sh", SGT_DENY, "t:pipe_sh");
    expect("env bash <(curl x)", SGT_DENY, "t:pipe_sh");
    expect("find . -exec curl x {} \\; | sh", SGT_DENY, "t:pipe_sh");
    expect("cat ~/.ssh/id_rsa", SGT_DENY, "t:secret");
    CHECK_STR(ev("cat ~/.ssh/id_rsa")->message, "/w/.ssh/id_rsa is secret");
    expect("grep -f/etc/shadow x", SGT_DENY, "default");
    expect("cat $HOME/x", SGT_DENY, "default");
    expect("cat ~root/x", SGT_DENY, "default");
    expect("ls ~+", SGT_DENY, "default");
    expect("grep -f ~/x y", SGT_DENY, "default");
    expect("grep -f $HOME/x y", SGT_DENY, "default");
    expect("grep -f/etc/x y", SGT_DENY, "default");
    expect("grep -e pattern src/a.c", SGT_ALLOW, "t:read");
    expect("echo hi 2>/dev/null", SGT_ALLOW, "t:read");
    expect("cat < /etc/passwd", SGT_DENY, "default");
    /* empty input runs nothing */
    CHECK(ev("")->decision == SGT_ALLOW);
    CHECK(ev("   # just a comment")->decision == SGT_ALLOW);
    /* NUL bytes are data: the line is refused, not cut short */
    {
        sgr_opts o = { "/w/proj", NULL, 0, "/w" };
        const sgr_result *r = sgr_eval(ctx, "ls\0rm -rf x", 11, &o);
        CHECK(r->decision == SGT_DENY);
    }

    /* evaluation is allocation-free once warm: the scratch arena is reused */
    {
        const char *cmds[] = { "ls -la src | wc -l", "sudo env A=1 sh -c 'rm -rf x'", "cd src && cat ../a.c",
                               "curl x | bash", "$(echo rm) x" };
        for (int w = 0; w < 3; w++)
            for (size_t i = 0; i < 5; i++)
                ev(cmds[i]);
        sg_alloc_fail_after(0);
        for (int w = 0; w < 100; w++)
            for (size_t i = 0; i < 5; i++)
                ev(cmds[i]);
        if (sg_alloc_count())
            fprintf(stderr, "  %ld allocations in 500 warm evaluations\n", sg_alloc_count());
        CHECK(sg_alloc_count() == 0);
    }

    /* every single-byte change and every truncation of a real table is refused */
    int flips_ok = 1, trunc_ok = 1;
    uint8_t *m = malloc(len);
    for (size_t i = 0; i < len; i++) {
        memcpy(m, a, len);
        m[i] ^= 0x5a;
        sgr_table *x = NULL;
        if (sgr_table_load(m, len, &x, err, sizeof err) == 0) {
            flips_ok = 0;
            sgr_table_free(x);
            fprintf(stderr, "  flip at %zu loaded\n", i);
        }
    }
    for (size_t n = 0; n < len; n++) {
        memcpy(m, a, n);
        sgr_table *x = NULL;
        if (sgr_table_load(m, n, &x, err, sizeof err) == 0) {
            trunc_ok = 0;
            sgr_table_free(x);
        }
    }
    free(m);
    CHECK(flips_ok);
    CHECK(trunc_ok);
    cwd_link_tests();
    root_name_tests();
    path_fallback_tests();
    resolve_plain_tests();
    swap_tests();
    casefold_tests();
    cwd_prefix_tests();
    sgr_ctx_free(ctx);
    sgr_table_free(t);

    /* fail the Nth allocation, N = 1...: compile, load and evaluate each end in a
     * clean error or a deny, never a crash (ASan/LSan check the leaks) */
    int sweep_ok = 1;
    long n;
    for (n = 1; n < 100000; n++) {
        sg_alloc_fail_after(n);
        size_t l = 0;
        uint8_t *tb = compile(PACK, &l);
        sgr_table *x = NULL;
        int loaded = tb && sgr_table_load(tb, l, &x, err, sizeof err) == 0;
        sgr_ctx *cx = loaded ? sgr_ctx_new(x) : NULL;
        int done = 0;
        if (cx) {
            /* twice: the second call also makes the context's path cache */
            sgr_opts o = { "/w/proj", NULL, 0, "/w" };
            const sgr_result *r = sgr_eval(cx, "sudo env A=1 sh -c 'ls | rm -rf x'", 34, &o);
            if (r->decision != SGT_DENY)
                sweep_ok = 0;
            done = !r->oom;
            r = sgr_eval(cx, "cat /tmp/../etc/passwd ~/.ssh/id", 32, &o);
            if (r->decision != SGT_DENY)
                sweep_ok = 0;
            done = done && !r->oom;
        }
        sgr_ctx_free(cx);
        sgr_table_free(x);
        sg_free(tb);
        sg_alloc_fail_after(0);
        if (done)
            break;
    }
    CHECK(sweep_ok);
    CHECK(n > 10 && n < 100000);
    printf("allocation sweep: %ld points\n", n);
    free(a);
    free(b);
    return sg_test_summary();
}
