/* gateopt.c - the gate's options for `hook` and `serve` (gateopt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/gateopt.h"
#include "cli/help.h"

static int is(const char *a, const char *name)
{
    return strcmp(a, name) == 0;
}

/* The gate's options that take a value; --non-interactive, the one that takes
 * none, is last in gate_names. */
static const char *const gate_names[] = { "-p", "--policy", "-I", "--state", "--log", "--log-max-bytes",
                                          "--rate-store", "--rate-store-down", "--rate-store-timeout",
                                          "--require-signature", "--scope", "--agent", "--team",
                                          "--non-interactive" };
#define NGATE (sizeof gate_names / sizeof *gate_names)

const char *sg_gateopt_nearest(const char *a, const char *const *own, size_t nown)
{
    const char *cands[NGATE + 32];
    size_t n = 0;
    for (size_t i = 0; i < NGATE; i++)
        cands[n++] = gate_names[i];
    for (size_t i = 0; i < nown && n < sizeof cands / sizeof *cands; i++)
        cands[n++] = own[i];
    return a[0] == '-' ? cli_nearest(a, cands, n) : NULL;
}

int sg_gateopt_take(sg_gateopt *o, int argc, char **argv, int *i, char *err, size_t n)
{
    const char *a = argv[*i];
    const char *const *valued = gate_names;
    const size_t nvalued = NGATE - 1;
    if (is(a, "--non-interactive")) {
        o->g.non_interactive = 1;
        return 1;
    }
    size_t k = 0;
    while (k < nvalued && !is(a, valued[k]))
        k++;
    if (k == nvalued)
        return 0;
    if (*i + 1 >= argc) {
        snprintf(err, n, "%s needs a value", a);
        return -1;
    }
    const char *v = argv[++*i];
    char *end;
    if (is(a, "-p") || is(a, "--policy"))
        o->g.policy = v;
    else if (is(a, "-I")) {
        if (o->g.ninc == SG_GATEOPT_MAX_INC) {
            snprintf(err, n, "too many -I");
            return -1;
        }
        o->incs[o->g.ninc++] = v;
        o->g.incs = o->incs;
    } else if (is(a, "--state"))
        o->g.state = v;
    else if (is(a, "--log"))
        o->g.log = v;
    else if (is(a, "--log-max-bytes")) {
        o->g.log_max = strtoull(v, &end, 10);
        if (*end || !v[0] || v[0] == '-') {
            snprintf(err, n, "--log-max-bytes takes a number of bytes");
            return -1;
        }
    } else if (is(a, "--rate-store"))
        o->g.rate_store = v;
    else if (is(a, "--rate-store-down")) {
        if (!is(v, "deny") && !is(v, "local")) {
            snprintf(err, n, "--rate-store-down takes deny or local");
            return -1;
        }
        o->g.rate_down = is(v, "local");
    } else if (is(a, "--rate-store-timeout")) {
        unsigned long ms = strtoul(v, &end, 10);
        if (*end || !v[0] || v[0] == '-' || ms < 1 || ms > 60000) {
            snprintf(err, n, "--rate-store-timeout takes milliseconds, 1 to 60000");
            return -1;
        }
        o->g.rate_timeout_ms = (unsigned)ms;
    } else if (is(a, "--require-signature"))
        o->g.require_sig = v;
    else if (is(a, "--scope"))
        o->g.deploy_scope = v;
    else {
        if (!v[0] || strlen(v) > 200) {
            snprintf(err, n, "%s takes 1 to 200 bytes", a);
            return -1;
        }
        *(is(a, "--team") ? &o->team : &o->agent) = v;
    }
    return 1;
}

/* Append " NAME 'VALUE'" (VALUE quoted for sh) to buf. */
static int word(char *buf, size_t n, const char *name, const char *v)
{
    size_t k = strlen(buf);
    int w = snprintf(buf + k, n - k, " %s", name);
    if (w < 0 || (size_t)w >= n - k)
        return -1;
    k += (size_t)w;
    if (!v)
        return 0;
    if (k + 3 >= n)
        return -1;
    buf[k++] = ' ';
    buf[k++] = '\'';
    for (; *v; v++) {
        const char *piece = *v == '\'' ? "'\\''" : NULL;
        size_t pl = piece ? 4 : 1;
        if (k + pl + 2 >= n)
            return -1;
        if (piece)
            memcpy(buf + k, piece, pl);
        else
            buf[k] = *v;
        k += pl;
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return 0;
}

int sg_gateopt_words(const sg_gateopt *o, char *buf, size_t n)
{
    const sg_gate_opts *g = &o->g;
    char num[32];
    int r = 0;
    if (g->policy)
        r |= word(buf, n, "-p", g->policy);
    for (size_t i = 0; i < g->ninc; i++)
        r |= word(buf, n, "-I", g->incs[i]);
    if (g->state)
        r |= word(buf, n, "--state", g->state);
    if (g->log)
        r |= word(buf, n, "--log", g->log);
    if (g->log_max) {
        snprintf(num, sizeof num, "%llu", g->log_max);
        r |= word(buf, n, "--log-max-bytes", num);
    }
    if (g->rate_store)
        r |= word(buf, n, "--rate-store", g->rate_store);
    if (g->rate_down)
        r |= word(buf, n, "--rate-store-down", "local");
    if (g->rate_timeout_ms) {
        snprintf(num, sizeof num, "%u", g->rate_timeout_ms);
        r |= word(buf, n, "--rate-store-timeout", num);
    }
    if (g->require_sig)
        r |= word(buf, n, "--require-signature", g->require_sig);
    if (g->deploy_scope)
        r |= word(buf, n, "--scope", g->deploy_scope);
    if (o->agent)
        r |= word(buf, n, "--agent", o->agent);
    if (o->team)
        r |= word(buf, n, "--team", o->team);
    if (g->non_interactive)
        r |= word(buf, n, "--non-interactive", NULL);
    return r ? -1 : 0;
}

int sg_store_words(char *buf, size_t n, const char *state, const char *rate_store)
{
    const char *name = rate_store ? "--rate-store" : state ? "--state" : NULL;
    const char *v = rate_store ? rate_store : state;
    if (!n)
        return -1;
    buf[0] = '\0';
    if (!name)
        return 0;
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+=,-";
    if (v[0] && strspn(v, plain) == strlen(v)) {
        int w = snprintf(buf, n, " %s %s", name, v);
        return w < 0 || (size_t)w >= n ? -1 : 0;
    }
    return word(buf, n, name, v);
}
