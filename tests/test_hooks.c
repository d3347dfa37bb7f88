/* test_hooks.c - Lua hooks: every escape and every limit ends in a clean error
 * naming the hook and the reason, the state stays usable after each, and the
 * stdlib hooks (stdlib/lua) decide their sample segments right. */
#include "runtime/hook_lua.h"
#include "common/alloc.h"
#include "check.h"
#include "slurp.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ a hand-built table */

/* sgr_hooks_new reads only t->hooks, t->nhooks, t->meta and strings; identical
 * strings are interned, as the compiler does, so equal sources share a ref. */
typedef struct hk {
    const char *name, *src;
} hk;

static uint32_t intern(char **blob, size_t *len, const char *s)
{
    for (size_t off = 0; off < *len; off += strlen(*blob + off) + 1)
        if (strcmp(*blob + off, s) == 0)
            return (uint32_t)off;
    size_t n = strlen(s) + 1;
    *blob = realloc(*blob, *len + n);
    memcpy(*blob + *len, s, n);
    *len += n;
    return (uint32_t)(*len - n);
}

/* Build the table, create the environment, free the table again (the
 * environment must not borrow from it). */
static sgr_hooks *mk(const hk *hs, uint32_t n, const sgr_hook_limits *lim, char *err, size_t errlen)
{
    char *blob = NULL;
    size_t len = 0;
    intern(&blob, &len, "");
    sgt_hook *recs = calloc(n ? n : 1, sizeof *recs);
    for (uint32_t i = 0; i < n; i++) {
        recs[i].name = intern(&blob, &len, hs[i].name);
        recs[i].source = intern(&blob, &len, hs[i].src);
    }
    sgr_table t;
    memset(&t, 0, sizeof t);
    t.strings = blob;
    t.strings_size = (uint32_t)len;
    t.hooks = recs;
    t.nhooks = n;
    err[0] = 0;
    sgr_hooks *h = sgr_hooks_new(&t, lim, err, errlen);
    memset(blob, 'X', len);          /* anything borrowed would now read garbage */
    free(blob);
    free(recs);
    return h;
}

/* ---------------------------------------------------------------- segments */

typedef struct segbuf {
    sgr_hook_seg seg;
    sgr_hook_sv argv[32], opts[32], assigns[8], ws[2];
    sgr_hook_redirect redir[2];
} segbuf;

static sgr_hook_sv sv(const char *s)
{
    return (sgr_hook_sv){s, s ? strlen(s) : 0};
}

/* A segment from words: leading NAME=value words are assignments, then argv;
 * options are the words that start with '-'; the subcommand is the first
 * operand (naively: the parser does better). */
static const sgr_hook_seg *seg_of(segbuf *b, const char *const *words)
{
    memset(b, 0, sizeof *b);
    size_t i = 0;
    while (words[i] && strchr(words[i], '=') && words[i][0] != '-')
        b->assigns[b->seg.nassignments++] = sv(words[i++]);
    for (; words[i]; i++) {
        b->argv[b->seg.argc++] = sv(words[i]);
        if (b->seg.argc > 1 && words[i][0] == '-')
            b->opts[b->seg.noptions++] = sv(words[i]);
        else if (b->seg.argc > 1 && !b->seg.subcommand.s)
            b->seg.subcommand = sv(words[i]);
    }
    const char *prog = b->seg.argc ? b->argv[0].s : "";
    const char *slash = strrchr(prog, '/');
    b->seg.program = sv(slash ? slash + 1 : prog);
    b->seg.path = sv(prog);
    b->seg.argv = b->argv;
    b->seg.options = b->opts;
    b->seg.assignments = b->assigns;
    b->seg.paths = NULL;
    b->ws[0] = sv("/w");
    b->seg.workspace = b->ws;
    b->seg.nworkspace = 1;
    b->seg.cwd = sv("/w");
    b->seg.line = sv("(test)");
    b->seg.redirects = b->redir;
    return &b->seg;
}

#define SEG(...) seg_of(&sb, (const char *const[]){__VA_ARGS__, NULL})

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", hay, needle);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ the sandbox */

enum {
    H_OK, H_SPIN, H_BOMB, H_DEEP, H_CDEEP, H_OSX, H_IOX, H_REQ, H_LOAD, H_DUMP, H_TAMPER,
    H_TAMPER2, H_STRCHECK, H_DEBUG, H_SETA, H_GETB, H_BOOM, H_TBL, H_NIL, H_NOTHING, H_DENY,
    H_ASK, H_BOGUS, H_NOMSG, H_CATCHY, H_CATCHMEM, H_FIN, H_FIELDS, H_MUT, H_HELPERS, H_BADRE,
    H_REBOMB, H_PATTERN, H_MATCH, H_F1, H_F2, H_XPCALL, H_GLOBALG, H_REHEAVY, H_COUNT
};

static const hk sandbox[] = {
    [H_OK] = {"ok", "function ok(seg) return seg.program == 'ls' end"},
    [H_SPIN] = {"spin", "function spin(seg) while true do end end"},
    [H_BOMB] = {"bomb", "function bomb(seg) local t = {} while true do t[#t+1] = string.rep('x', 1e6) end end"},
    [H_DEEP] = {"deep", "local function f(n) return 1 + f(n + 1) end\nfunction deep(seg) return f(1) end"},
    [H_CDEEP] = {"cdeep", "local function f() return tostring(setmetatable({}, {__tostring = f})) end\n"
                          "function cdeep(seg) return f() end"},
    [H_OSX] = {"osx", "function osx(seg) os.execute('touch /tmp/shellgate-pwned') return true end"},
    [H_IOX] = {"iox", "function iox(seg) return io.open('/etc/passwd') ~= nil end"},
    [H_REQ] = {"req", "function req(seg) local o = require 'os' return o ~= nil end"},
    [H_LOAD] = {"ld", "function ld(seg) return load(string.dump(function() end)) ~= nil end"},
    [H_DUMP] = {"dmp", "function dmp(seg) return ('').dump == nil and string.dump == nil "
                       "and load == nil and loadstring == nil and dofile == nil and loadfile == nil "
                       "and collectgarbage == nil and package == nil and coroutine == nil "
                       "and print == nil and os.getenv == nil and os.date == nil end"},
    [H_TAMPER] = {"tamper", "function tamper(seg)\n"
                            "  local mt = getmetatable('')\n"
                            "  if type(mt) == 'table' then mt.__index = {} end\n"
                            "  string.upper = function() return 'pwned' end\n"
                            "  string.rep = nil\n"
                            "  return type(mt) == 'string' and ('x'):upper() == 'X'\n"
                            "end"},
    [H_TAMPER2] = {"tamper2", "function tamper2(seg) rawset(getmetatable(''), '__index', {}) return true end"},
    [H_STRCHECK] = {"strcheck", "function strcheck(seg) return ('abc'):upper() == 'ABC' and "
                                "string.upper('x') == 'X' and string.rep('a', 3) == 'aaa' and "
                                "('a'):rep(2) == 'aa' end"},
    [H_DEBUG] = {"dbg", "function dbg(seg) return debug.getinfo(1) ~= nil end"},
    [H_SETA] = {"seta", "counter = 0\nfunction seta(seg) counter = counter + 1 leaked = 'yes' "
                        "_G.leaked2 = 'yes' return counter > 0 end"},
    [H_GETB] = {"getb", "function getb(seg) return leaked == nil and leaked2 == nil and counter == nil "
                        "and seta == nil end"},
    [H_BOOM] = {"boom", "function boom(seg) error('kaboom') end"},
    [H_TBL] = {"tbl", "function tbl(seg) return {} end"},
    [H_NIL] = {"nilr", "function nilr(seg) return nil end"},
    [H_NOTHING] = {"nothing", "function nothing(seg) end"},
    [H_DENY] = {"denyr", "function denyr(seg) return 'deny', 'no: ' .. seg.program end"},
    [H_ASK] = {"askr", "function askr(seg) return 'ask', 'sure?' end"},
    [H_BOGUS] = {"bogus", "function bogus(seg) return 'bogus', 'x' end"},
    [H_NOMSG] = {"nomsg", "function nomsg(seg) return 'deny' end"},
    [H_CATCHY] = {"catchy", "function catchy(seg) while true do pcall(function() while true do end end) end end"},
    [H_CATCHMEM] = {"catchmem", "function catchmem(seg)\n"
                                "  local ok = pcall(function() local t = {} while true do t[#t+1] = string.rep('y', 1e5) end end)\n"
                                "  return true\nend"},
    [H_FIN] = {"fin", "function fin(seg) setmetatable({}, {__gc = function() while true do end end}) return true end"},
    [H_FIELDS] = {"fields", "function fields(seg)\n"
                            "  return seg.program == 'git' and seg.path == '/usr/bin/git' and #seg.argv == 4\n"
                            "    and seg.argv[1] == '/usr/bin/git' and seg.argv[2] == 'push' and seg.argv[4] == '-f'\n"
                            "    and seg.subcommand == 'push' and seg.options[1] == '-f' and #seg.options == 1\n"
                            "    and seg.assignments[1] == 'A=1' and seg.cwd == '/w' and seg.workspace[1] == '/w'\n"
                            "    and seg.line == '(test)' and seg.index == 3 and #seg.paths == 0\n"
                            "    and seg.redirects[1].op == '>' and seg.redirects[1].target == 'out'\n"
                            "    and seg.redirects[1].fd == nil and seg.redirects[2].fd == 2\n"
                            "end"},
    [H_MUT] = {"mut", "function mut(seg) seg.argv[1] = 'x' seg.program = 'y' seg.redirects[1].op = '<' "
                      "table.remove(seg.argv) return true end"},
    [H_HELPERS] = {"helpers", "function helpers(seg)\n"
        "  assert(glob('*.txt', 'a/b.txt') and not glob('*.txt', 'b.txt.bak') and glob('?[a-c]*', 'xb'))\n"
        "  assert(glob('[!a]x', 'bx') and not glob('[!a]x', 'ax') and glob('\\\\*', '*') and not glob('\\\\*', 'a'))\n"
        "  assert(glob('[[:digit:]]*', '7up') and glob('', '') and not glob('', 'a') and glob('a*b*c', 'aXbYc'))\n"
        "  assert(not pcall(glob, '[abc', 'a'))\n"
        "  assert(re('^-{1,2}upload-pack', '--upload-pack=x') and not re('^-{1,2}upload-pack', 'x--upload-pack'))\n"
        "  assert(re('b', 'abc') and re('^abc$', 'abc') and not re('^abc$', 'abcd') and re('', 'x'))\n"
        "  assert(re('[[:digit:]]{3}', 'ab123') and not re('\\\\d{4}', 'a123b') and re('a|^q', 'qq'))\n"
        "  assert(re('HELLO', 'say hello', 'i') and not re('HELLO', 'say hello') and re('[^a]', 'A', 'i') == false)\n"
        "  assert(re('(ab)+c', 'xababc') and not re('(ab)+c', 'xac') and re('x\\\\.y', 'x.y') and not re('x\\\\.y', 'xzy'))\n"
        "  assert(re('a\\\\x00b', 'a\\0b') and re('(?:a|b){2}$', 'zab') and re('(a*)*b', 'aab'))\n"
        "  assert(not re('(a*)*b', string.rep('a', 20000)))\n"
        "  assert(re(string.rep('a|', 2000) .. 'b', 'xb') and re(string.rep('a', 3000), string.rep('a', 3000)))\n"
        "  assert(not pcall(re, string.rep('(', 201) .. 'a' .. string.rep(')', 201), 'a'))\n"
        "  assert(not pcall(re, 'a(b', 'x') and not pcall(re, 'a*?', 'x') and not pcall(re, '\\\\b', 'x'))\n"
        "  assert(path.resolve('../x/./y', '/a/b') == '/a/x/y' and path.resolve('/../..//etc/') == '/etc')\n"
        "  assert(path.resolve('.', '/') == '/' and path.resolve('a/..', '/w') == '/w')\n"
        "  assert(not pcall(path.resolve, 'rel') and not pcall(path.resolve, 'rel', 'also/rel'))\n"
        "  assert(path.inside('/etc/passwd', '/etc') and path.inside('/etc', '/etc/') and not path.inside('/etcx', '/etc'))\n"
        "  assert(path.inside('/etc/../tmp', '/tmp') and path.inside('/x', '/') and not path.inside('/tmp/../etc', '/tmp'))\n"
        "  assert(string.find('a.b', '.', 1, true) == 2 and string.find('abc', 'z', 1, true) == nil)\n"
        "  local t = localtime(0) assert(t.year >= 1969 and t.wday >= 1 and t.wday <= 7)\n"
        "  assert(type(os.time()) == 'number' and type(os.clock()) == 'number' and unpack({1, 2}) == 1)\n"
        "  return true\n"
        "end"},
    [H_BADRE] = {"badre", "function badre(seg) return re('a{1,2', 'a') end"},
    [H_REBOMB] = {"rebomb", "function rebomb(seg) return re('(a|aa)*c', string.rep('a', 200000)) end"},
    [H_PATTERN] = {"pattern", "function pattern(seg) return string.find(string.rep('a', 4000), 'a*a*b') end"},
    [H_MATCH] = {"matchr", "function matchr(seg) return ('x'):match('x') end"},
    [H_F1] = {"f1", "runs = (runs or 0) + 1\nfunction f1(seg) return runs == 1 end\nfunction f2(seg) return runs == 1 end"},
    [H_F2] = {"f2", "runs = (runs or 0) + 1\nfunction f1(seg) return runs == 1 end\nfunction f2(seg) return runs == 1 end"},
    [H_XPCALL] = {"xp", "function xp(seg) return xpcall(function() while true do end end, function(e) return e end) end"},
    [H_GLOBALG] = {"globalg", "function globalg(seg) _G.x = 1 setmetatable(_ENV, {__index = function() return 5 end}) "
                              "return x == 1 and y == 5 end"},
    [H_REHEAVY] = {"reheavy", "function reheavy(seg) local s = string.rep('ab', 5000) "
                              "for i = 1, 200 do re('(a|b)*c', s) end return true end"},
};

static sgr_hook_result res;

static int call(sgr_hooks *h, int hook, const sgr_hook_seg *seg)
{
    memset(&res, 0x55, sizeof res);
    sgr_hooks_call(h, (uint32_t)hook, seg, &res);
    return (int)res.status;
}

/* The hook fails with a message naming it and containing why; then the state
 * still answers a normal hook. */
static void expect_error(sgr_hooks *h, int hook, const char *why, int line)
{
    segbuf sb;
    double t0 = now_ms();
    int st = call(h, hook, SEG("ls"));
    double ms = now_ms() - t0;
    if (getenv("TEST_HOOKS_VERBOSE"))
        fprintf(stderr, "%6.1f ms  %s\n", ms, res.message);
    char named[64];
    snprintf(named, sizeof named, "hook '%s': ", sandbox[hook].name);
    if (st != SGR_HOOK_ERROR || strncmp(res.message, named, strlen(named)) != 0 || !has(res.message, why)) {
        fprintf(stderr, "test_hooks.c:%d: hook %s: status %d, message \"%s\"\n", line, sandbox[hook].name,
                st, res.message);
        sg_t_fail++;
    } else
        sg_t_pass++;
    CHECK(res.decision == SGT_DENY);
    CHECK(ms < 2000);               /* within the caps, not after a hang */
    CHECK(call(h, H_OK, SEG("ls")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_OK, SEG("cat", "x")) == SGR_HOOK_FALSE);
}
#define EXPECT_ERROR(h, hook, why) expect_error(h, hook, why, __LINE__)

static void test_sandbox(void)
{
    char err[256];
    /* a wall clock far above what the instruction budget allows, so which cap trips
     * does not depend on the machine's speed (the clock has its own test below) */
    sgr_hook_limits lim = {.instructions = 100000, .memory = 1u << 20, .millis = 20000};
    sgr_hooks *h = mk(sandbox, H_COUNT, &lim, err, sizeof err);
    CHECK(h != NULL);
    if (!h) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    segbuf sb;
    CHECK(call(h, H_OK, SEG("ls", "-la")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_OK, SEG("/bin/cat")) == SGR_HOOK_FALSE);

    /* limits */
    EXPECT_ERROR(h, H_SPIN, "ran past its instruction budget (100000)");
    EXPECT_ERROR(h, H_BOMB, "memory limit (1 MiB) exceeded");
    EXPECT_ERROR(h, H_BOMB, "memory limit (1 MiB) exceeded");   /* and again: recovered */
    EXPECT_ERROR(h, H_DEEP, "");        /* stack overflow or the memory cap, whichever first */
    EXPECT_ERROR(h, H_CDEEP, "stack overflow");
    EXPECT_ERROR(h, H_CATCHY, "ran past its instruction budget");
    EXPECT_ERROR(h, H_XPCALL, "ran past its instruction budget");
    EXPECT_ERROR(h, H_CATCHMEM, "memory limit (1 MiB) exceeded");
    EXPECT_ERROR(h, H_REBOMB, "ran past its instruction budget");
    EXPECT_ERROR(h, H_REHEAVY, "ran past its instruction budget");

    /* escapes */
    EXPECT_ERROR(h, H_OSX, "error: osx:1: attempt to call a nil value (field 'execute')");
    EXPECT_ERROR(h, H_IOX, "attempt to index a nil value (global 'io')");
    EXPECT_ERROR(h, H_REQ, "attempt to call a nil value (global 'require')");
    EXPECT_ERROR(h, H_LOAD, "attempt to call a nil value (field 'dump')");
    CHECK(call(h, H_DUMP, SEG("ls")) == SGR_HOOK_TRUE);
    EXPECT_ERROR(h, H_DEBUG, "attempt to index a nil value (global 'debug')");
    EXPECT_ERROR(h, H_FIN, "__gc is not available");
    EXPECT_ERROR(h, H_PATTERN, "patterns are not available in hooks");
    EXPECT_ERROR(h, H_MATCH, "string.match: Lua patterns are not available");

    /* the string metatable and library copies */
    CHECK(call(h, H_TAMPER, SEG("ls")) == SGR_HOOK_TRUE);
    EXPECT_ERROR(h, H_TAMPER2, "bad argument #1 to 'rawset'");
    CHECK(call(h, H_STRCHECK, SEG("ls")) == SGR_HOOK_TRUE);

    /* globals stay per hook (a hook's own state does persist) */
    CHECK(call(h, H_SETA, SEG("ls")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_GETB, SEG("ls")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_GLOBALG, SEG("ls")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_GETB, SEG("ls")) == SGR_HOOK_TRUE);
    CHECK(call(h, H_F1, SEG("ls")) == SGR_HOOK_TRUE);    /* one file, run once */
    CHECK(call(h, H_F2, SEG("ls")) == SGR_HOOK_TRUE);

    /* results */
    EXPECT_ERROR(h, H_BOOM, "error: boom:1: kaboom");
    EXPECT_ERROR(h, H_TBL, "returned a table, expected a boolean or a decision and a message");
    EXPECT_ERROR(h, H_NIL, "returned nil, expected");
    EXPECT_ERROR(h, H_NOTHING, "returned nothing, expected");
    EXPECT_ERROR(h, H_BOGUS, "returned 'bogus', expected true, false or a decision");
    EXPECT_ERROR(h, H_NOMSG, "returned 'deny' with no message");
    EXPECT_ERROR(h, H_BADRE, "re: missing '}'");
    CHECK(call(h, H_DENY, SEG("rm", "-rf")) == SGR_HOOK_DECIDE);
    CHECK(res.decision == SGT_DENY);
    CHECK_STR(res.message, "no: rm");
    CHECK(call(h, H_ASK, SEG("ls")) == SGR_HOOK_DECIDE);
    CHECK(res.decision == SGT_ASK);
    CHECK_STR(res.message, "sure?");

    /* the segment view, and that changing it changes nothing */
    const sgr_hook_seg *s = SEG("A=1", "/usr/bin/git", "push", "origin", "-f");
    sb.redir[0] = (sgr_hook_redirect){">", -1, sv("out")};
    sb.redir[1] = (sgr_hook_redirect){"2>&1", 2, sv("1")};
    sb.seg.nredirects = 2;
    sb.seg.index = 2;
    CHECK(call(h, H_FIELDS, s) == SGR_HOOK_TRUE);
    CHECK(call(h, H_MUT, s) == SGR_HOOK_TRUE);
    CHECK(call(h, H_FIELDS, s) == SGR_HOOK_TRUE);
    CHECK(strcmp(sb.argv[0].s, "/usr/bin/git") == 0);

    /* helpers */
    sgr_hooks_free(h);
    sgr_hook_limits big = {.instructions = 10000000, .memory = 4u << 20, .millis = 2000};
    h = mk(sandbox, H_COUNT, &big, err, sizeof err);
    CHECK(h != NULL);
    if (h) {
        CHECK(call(h, H_HELPERS, SEG("ls")) == SGR_HOOK_TRUE);
        if (res.status != SGR_HOOK_TRUE)
            fprintf(stderr, "  %s\n", res.message);
        CHECK(call(h, 9999, SEG("ls")) == SGR_HOOK_ERROR);
        CHECK(has(res.message, "no such hook"));
    }

    /* the wall clock, with an instruction budget too large to matter */
    sgr_hooks_free(h);
    sgr_hook_limits slow = {.instructions = UINT64_C(1) << 50, .memory = 1u << 20, .millis = 50};
    h = mk(sandbox, H_COUNT, &slow, err, sizeof err);
    CHECK(h != NULL);
    if (h) {
        double t0 = now_ms();
        EXPECT_ERROR(h, H_SPIN, "took longer than 50 ms");
        CHECK(now_ms() - t0 < 1000);
    }
    sgr_hooks_free(h);
}

/* ------------------------------------------------------------ creation errors */

static void test_create(void)
{
    char err[256];
    sgr_hook_limits lim = {.instructions = 100000, .memory = 1u << 20, .millis = 20000};
    static const struct {
        hk h;
        const char *why;
    } bad[] = {
        {{"syn", "function syn(seg) return end end"}, "hook 'syn': error: syn:1:"},
        {{"top", "error('at load')"}, "hook 'top': error: top:1: at load"},
        {{"nofn", "x = 1"}, "hook 'nofn': error: the source does not define a function 'nofn'"},
        {{"loop", "while true do end"}, "hook 'loop': ran past its instruction budget (100000)"},
        {{"mem", "t = {} for i = 1, 1e9 do t[i] = i end function mem() end"}, "hook 'mem': memory limit (1 MiB)"},
        {{"bin", "\x1bLuaT\x01\x02"}, "attempt to load a binary chunk (mode is 't')"},
        {{"esc", "os.execute('true') function esc() end"}, "hook 'esc': error: esc:1: attempt to call a nil value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hk two[2] = {{"ok", "function ok(seg) return true end"}, bad[i].h};
        sgr_hooks *h = mk(two, 2, &lim, err, sizeof err);
        CHECK(h == NULL);
        CHECK(has(err, bad[i].why));
        sgr_hooks_free(h);
    }
    /* no hooks at all is fine; NULL limits take the defaults */
    sgr_hooks *h = mk(NULL, 0, NULL, err, sizeof err);
    CHECK(h != NULL);
    sgr_hooks_free(h);
    hk one = {"ok", "function ok(seg) return seg.program == 'ls' end"};
    h = mk(&one, 1, NULL, err, sizeof err);
    segbuf sb;
    CHECK(h && call(h, 0, SEG("ls")) == SGR_HOOK_TRUE);
    sgr_hooks_free(h);
    /* a memory cap too small for the libraries is an error, not a crash */
    sgr_hook_limits tiny = {.memory = 4096};
    CHECK(mk(&one, 1, &tiny, err, sizeof err) == NULL);
    CHECK(has(err, "memory"));
}

/* ------------------------------------------------------------ stdlib hooks */

static sgr_hooks *std_hooks(void)
{
    static const char *const files[] = {"no_secrets", "protect_branch", "time_window"};
    char *src[3];
    char path[128];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "../stdlib/lua/%s.lua", files[i]);
        src[i] = sg_slurp(path, NULL);
        if (!src[i]) {
            fprintf(stderr, "cannot read %s\n", path);
            exit(1);
        }
    }
    /* a probe for time_window's decision at a chosen time: argv = {_, wday, hour} */
    size_t n = strlen(src[2]) + 256;
    char *probe = malloc(n);
    snprintf(probe, n, "%s\nfunction tw_probe(seg)\n"
                       "  return time_window_at({wday = tonumber(seg.argv[2]), hour = tonumber(seg.argv[3]), min = 5})\n"
                       "end\n", src[2]);
    hk hs[4] = {{"no_secrets", src[0]}, {"protect_branch", src[1]}, {"time_window", src[2]},
                {"tw_probe", probe}};
    char err[256];
    sgr_hooks *h = mk(hs, 4, NULL, err, sizeof err);
    if (!h)
        fprintf(stderr, "stdlib hooks: %s\n", err);
    for (int i = 0; i < 3; i++)
        free(src[i]);
    free(probe);
    return h;
}

#define STD(hook, want, ...) do { \
    int st_ = call(h, hook, SEG(__VA_ARGS__)); \
    if (st_ != (want)) { sg_t_fail++; fprintf(stderr, "test_hooks.c:%d: %s: got %d want %d (%s)\n", \
        __LINE__, #__VA_ARGS__, st_, (int)(want), res.message); } else sg_t_pass++; } while (0)

static void test_stdlib(void)
{
    sgr_hooks *h = std_hooks();
    CHECK(h != NULL);
    if (!h)
        return;
    segbuf sb;
    enum { NS, PB, TW, TWP };
    const int T = SGR_HOOK_TRUE, F = SGR_HOOK_FALSE;

    STD(NS, T, "curl", "-H", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijklmnop", "https://x");
    STD(NS, T, "aws", "configure", "set", "aws_access_key_id", "AKIAIOSFODNN7EXAMPLE");
    STD(NS, T, "echo", "ghp_0123456789abcdefghijABCDEFGHIJabcdef");
    STD(NS, T, "gh", "auth", "--with-token=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz");
    STD(NS, T, "SLACK_TOKEN=xoxb-1234567890-abcdefghij", "./notify.sh");
    STD(NS, T, "export", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234");
    STD(NS, T, "printf", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n");
    STD(NS, T, "curl", "https://maps.googleapis.com/x?key=AIzaSyA1234567890abcdefghijklmnopqrstuv");
    STD(NS, T, "aws", "configure", "set", "aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    STD(NS, T, "deploy", "--token", "9a0364b9e99bb480dd25e1f0284c8555");
    STD(NS, F, "ls", "-la", "src");
    STD(NS, F, "git", "show", "3f786850e387550fdab836ed7e6dc881de23001b");
    STD(NS, F, "docker", "pull", "img@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    STD(NS, F, "git", "commit", "-m", "fix the login page for JIRA-12345-add-login-page");
    STD(NS, F, "cat", "src/components/Button/index.tsx", "/tmp/build-2024-01-05/out");
    STD(NS, F, "apt-get", "install", "linux-image-5.15.0-91-generic", "--no-install-recommends");
    STD(NS, F, "curl", "-H", "Accept: application/json", "https://api.example.com/v1/users?page=2");
    STD(NS, F, "PATH=/usr/local/bin:/usr/bin", "make", "test_user_login_with_invalid_password_123");
    STD(NS, F, "echo", "550e8400-e29b-41d4-a716-446655440000");

    STD(PB, T, "git", "push", "origin", "main");
    STD(PB, T, "git", "push", "origin", "master");
    STD(PB, T, "git", "push", "origin", "HEAD:main");
    STD(PB, T, "git", "push", "origin", "HEAD:refs/heads/main");
    STD(PB, T, "git", "push", "origin", "+main");
    STD(PB, T, "git", "push", "--force", "origin", "main");
    STD(PB, T, "git", "push", "-f", "origin", "feature", "main");
    STD(PB, T, "git", "push", "--force-with-lease", "origin", "master");
    STD(PB, T, "git", "push", "--force-with-lease=main:abc123", "origin", "main");
    STD(PB, T, "git", "push", "origin", ":main");
    STD(PB, T, "git", "push", "origin", "--delete", "main");
    STD(PB, T, "git", "push", "--all", "origin");
    STD(PB, T, "git", "push", "--mirror");
    STD(PB, T, "git", "-C", "repo", "-c", "push.default=current", "push", "origin", "main");
    STD(PB, T, "/usr/bin/git", "push", "-o", "ci.skip", "origin", "main");
    STD(PB, T, "git", "push", "origin", "--", "main");
    STD(PB, F, "git", "push", "origin", "feature");
    STD(PB, F, "git", "push", "origin", "main:feature");
    STD(PB, F, "git", "push", "origin", "mainline");
    STD(PB, F, "git", "push", "--force-with-lease=main:abc123", "origin", "feature");
    STD(PB, F, "git", "push", "-o", "main", "origin", "feature");
    STD(PB, F, "git", "push");
    STD(PB, F, "git", "push", "origin");
    STD(PB, F, "git", "status");
    STD(PB, F, "git", "log", "main");
    STD(PB, F, "echo", "git", "push", "origin", "main");

    STD(TWP, F, "x", "2", "10");      /* Monday 10:05 */
    STD(TWP, F, "x", "6", "18");      /* Friday 18:05 */
    STD(TWP, F, "x", "4", "8");       /* Wednesday 08:05 */
    STD(TWP, SGR_HOOK_DECIDE, "x", "2", "7");
    CHECK(res.decision == SGT_ASK);
    CHECK_STR(res.message, "outside working hours (Mon 07:05; allowed Mon-Fri 08:00-19:00)");
    STD(TWP, SGR_HOOK_DECIDE, "x", "3", "19");
    STD(TWP, SGR_HOOK_DECIDE, "x", "1", "12"); /* Sunday */
    CHECK(has(res.message, "Sun 12:05"));
    STD(TWP, SGR_HOOK_DECIDE, "x", "7", "12"); /* Saturday */
    int st = call(h, TW, SEG("ls"));
    CHECK(st == SGR_HOOK_FALSE || (st == SGR_HOOK_DECIDE && res.decision == SGT_ASK));
    sgr_hooks_free(h);
}

int main(void)
{
    test_sandbox();
    test_create();
    test_stdlib();
    FILE *pwned = fopen("/tmp/shellgate-pwned", "r");
    CHECK(pwned == NULL);
    if (pwned)
        fclose(pwned);
    return sg_test_summary();
}
