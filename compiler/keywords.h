/* keywords.h - the rule language's keywords, in one list: the lexer reads a word
 * that is one of them as its token (lex.re), the grammar lets each stand for a
 * plain word where no rule takes it (its %fallback line is made from this list at
 * build time: CMakeLists.txt), and tests/keywords.sh checks that the fuzz
 * dictionaries and docs/language.md know every one.  X(NAME, spelling): TK_NAME
 * (grammar.h); a token may have two spellings (flag, flags). */
#ifndef SGC_KEYWORDS_H
#define SGC_KEYWORDS_H

#define SGC_KEYWORDS(X) \
    X(PACK,        "pack") \
    X(VERSION,     "version") \
    X(USE,         "use") \
    X(HOOKS,       "hooks") \
    X(DEFAULT,     "default") \
    X(SET,         "set") \
    X(ALLOW,       "allow") \
    X(ASK,         "ask") \
    X(DENY,        "deny") \
    X(HINT,        "hint") \
    X(PROGRAM,     "program") \
    X(SUBCOMMAND,  "subcommand") \
    X(OPTION,      "option") \
    X(FLAG,        "flag") \
    X(FLAG,        "flags") \
    X(ARG,         "arg") \
    X(AT,          "at") \
    X(ARGC,        "argc") \
    X(PATH,        "path") \
    X(OUTSIDE,     "outside") \
    X(WORKSPACE,   "workspace") \
    X(INSIDE,      "inside") \
    X(IS,          "is") \
    X(OPERANDS,    "operands") \
    X(COPIES,      "copies") \
    X(LINKS,       "links") \
    X(HOST,        "host") \
    X(URL,         "url") \
    X(SCHEME,      "scheme") \
    X(PORT,        "port") \
    X(ONLY,        "only") \
    X(REMOTE,      "remote") \
    X(UNKNOWN,     "unknown") \
    X(REDIRECT,    "redirect") \
    X(WRITES,      "writes") \
    X(READS,       "reads") \
    X(TO,          "to") \
    X(FROM,        "from") \
    X(ASSIGNS,     "assigns") \
    X(VALUE,       "value") \
    X(PIPED,       "piped") \
    X(DYNAMIC,     "dynamic") \
    X(LUA,         "lua") \
    X(TEXT,        "text") \
    X(CONTAINS,    "contains") \
    X(MATCHES,     "matches") \
    X(AND,         "and") \
    X(OR,          "or") \
    X(NOT,         "not") \
    X(IN,          "in") \
    X(ALL,         "all") \
    X(ANY,         "any") \
    X(WRAPPER,     "wrapper") \
    X(COMMAND,     "command") \
    X(SKIP,        "skip") \
    X(SCRIPT,      "script") \
    X(EXEC,        "exec") \
    X(END,         "end") \
    X(RUNS,        "runs") \
    X(NOTHING,     "nothing") \
    X(ASSIGNMENTS, "assignments") \
    X(PERMUTE,     "permute") \
    X(JOIN,        "join") \
    X(MOREARGS,    "moreargs") \
    X(MODULE,      "module") \
    X(PROJECT,     "project") \
    X(SCRIPTS,     "scripts") \
    X(SUBCOMMANDS, "subcommands") \
    X(RELAX,       "relax") \
    X(LOOKUP,      "lookup") \
    X(ARGV0,       "argv0") \
    X(CODE,        "code") \
    X(STDIN,       "stdin") \
    X(EXPANDS,     "expands") \
    X(TREE,        "tree") \
    X(HEREDOC,     "heredoc") \
    X(OPERAND,     "operand") \
    X(UNLESS,      "unless") \
    X(LIMIT,       "limit") \
    X(PER,         "per") \
    X(WHEN,        "when") \
    X(TEST,        "test") \
    X(RULE,        "rule") \
    X(CWD,         "cwd") \
    X(NESTED,      "nested") \
    X(LINE,        "line")

#endif
