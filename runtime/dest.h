/* dest.h - where a word says a program connects: the syntax of URLs, of
 * [user@]host[:port][/path] and of scp's [user@]host:path, read as the programs
 * read them and normalised for matching (docs/language.md "Destinations").
 *
 * Pure functions over a word's text as the parser keeps it (quotes removed, an
 * expansion kept verbatim: shparse.h SGR_W_*).  A part that cannot be known
 * before the line runs, or that programs read in different ways, is unknown
 * (s NULL), never guessed.  URL grammar, shared by the evaluator and the
 * reference evaluator as the shell parser is; which words are destinations is
 * each evaluator's own business.
 *
 * Ownership: the normalised strings are in the caller's arena, or point into
 * the word. */
#ifndef SGR_DEST_H
#define SGR_DEST_H
#include <stddef.h>
#include <stdint.h>
#include "../common/arena.h"
#include "eval.h"

typedef struct sgr_dest {
    sgr_sv host;                  /* lower case, no trailing dot, no user, no port */
    sgr_sv url;                   /* scheme://host[:port]rest with scheme and host
                                   * normalised; unknown for the forms without one */
    sgr_sv scheme;                /* lower case ("ssh" for scp's form) */
    sgr_sv port;                  /* digits, no leading zeros; the scheme's own when
                                   * none is written and the scheme has one */
    sgr_sv word;                  /* the text it was read from */
} sgr_dest;

/* How a word is read. */
enum {
    SGR_DEST_SCHEMED,             /* only as scheme://...: any other word is none */
    SGR_DEST_BARE,                /* a URL, or else [user@]host[:port][/path] (curl's operands) */
    SGR_DEST_REMOTE,              /* a URL, or else scp's [user@]host:path (no '/' before
                                   * the ':'); any other word is none (a file, a remote's name) */
    SGR_DEST_SSH,                 /* a URL, or else ssh's [user@]host: the scheme ssh, no
                                   * port (-p and ssh_config choose it; host:22 is no host) */
    SGR_DEST_UNKNOWN              /* a place known only at run time (curl -K FILE) */
};

/* The length of the scheme that starts w[0..n) and is followed by "://", 0: none. */
size_t sgr_dest_scheme_len(const char *w, size_t n);

/* Read w[0..n) with word flags (SGR_W_*) as `how` says into *out: 1 it is a
 * destination, 0 it is none, -1 the arena ran out. */
int sgr_dest_parse(sg_arena *a, const char *w, uint32_t n, uint32_t flags, int how, sgr_dest *out);

/* Does NAME (n bytes) name a proxy programs connect through: an environment
 * variable *_proxy (http_proxy, HTTPS_PROXY, ALL_PROXY; not no_proxy) or a
 * setting *.proxy (git's http.proxy)? */
int sgr_dest_proxy_var(const char *name, size_t n);

#endif
