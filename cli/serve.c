/* serve.c - `shellgate serve --socket PATH`: decisions as JSON lines over a Unix
 * socket, for agents that keep one gate open instead of starting a process per
 * command (docs/integrations.md, "The server").
 *
 * One thread and one epoll set serve every client: a decision takes microseconds,
 * so the loop answers each client's complete lines in turn, a bounded number per
 * round, and never waits on any one client.  Each client has its own input buffer
 * (a request longer than --max-request without a newline cuts that client off)
 * and its own output buffer (a client that stops reading is no longer read from
 * once its answers pile up, so it holds only its own memory and stalls no one).
 * Signals arrive through a signalfd: SIGHUP reloads the policy, SIGTERM and
 * SIGINT stop accepting, answer what was already received, flush, remove the
 * socket and exit.  Decisions come from the gate (gate_seam.h) alone. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "cli/verbs.h"
#include "cli/gateopt.h"
#include "cli/help.h"
#include "common/utf8.h"
#include "common/jsontext.h"

#define EX_USAGE 64
#define EX_SOFTWARE 70
#define SERVE_MAX_REQUEST_DEFAULT (1u << 20)
#define SERVE_OUT_HIGH (4u << 20)      /* stop reading a client whose answers wait past this */
#define SERVE_LINES_PER_ROUND 64       /* a client's lines answered before the next client's */
#define SERVE_MAX_CLIENTS 4096
#define SERVE_DRAIN_SECONDS 5          /* how long SIGTERM waits for answers to leave */

typedef struct client {
    int fd;
    char *in;                          /* bytes received, in[0..inlen) */
    size_t inlen, incap;
    char *out;                         /* answers not yet sent, out[outpos..outlen) */
    size_t outlen, outpos, outcap;
    int reading;                       /* EPOLLIN registered */
    int writing;                       /* EPOLLOUT registered */
    int eof;                           /* the client closed its side */
    int cut;                           /* close once out is sent */
    int has_line;                      /* in[] holds a complete line */
    size_t tail;                       /* in[tail..inlen): the line not yet complete */
    struct client *next_ready;         /* in the ready list: complete lines wait */
    int ready;
    struct client *prev, *next;        /* every client */
} client;

typedef struct server {
    sg_gateopt go;
    sg_gate *g;
    const char *path;
    int lfd, ep, sfd;
    size_t max_request;
    int approve;                       /* --approve: the approve op is taken */
    client *ready;                     /* clients with complete lines not yet answered */
    client *all;
    unsigned nclients;
    int stopping;
    /* stats */
    unsigned long long requests, by_decision[3], errors, reloads, reload_failures, cut_off;
    struct timespec start;
    char diag[1200];                   /* the last diagnostic, for an answer */
} server;

static void diag_keep(void *ud, const char *msg)
{
    server *s = ud;
    fprintf(stderr, "%s\n", msg);
    snprintf(s->diag, sizeof s->diag, "%s", strncmp(msg, "shellgate: ", 11) == 0 ? msg + 11 : msg);
}

/* ---- buffers ---------------------------------------------------------------------- */

static int grow(char **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *nb = realloc(*b, c);
    if (!nb)
        return -1;
    *b = nb;
    *cap = c;
    return 0;
}

/* Queue s[0..n) and a newline for c.  -1 when memory runs out (c is cut off). */
static int queue(client *c, const char *s, size_t n)
{
    if (c->outpos && c->outpos == c->outlen)
        c->outpos = c->outlen = 0;
    if (grow(&c->out, &c->outcap, c->outlen + n + 1) < 0) {
        c->cut = 1;
        return -1;
    }
    memcpy(c->out + c->outlen, s, n);
    c->outlen += n;
    c->out[c->outlen++] = '\n';
    return 0;
}

static void set_events(server *s, client *c)
{
    /* read no more while complete lines wait or answers pile up: a client's
     * memory is bounded by one request and its unsent answers */
    int want_in = !c->eof && !c->cut && !s->stopping && !c->has_line && c->outlen - c->outpos < SERVE_OUT_HIGH;
    int want_out = c->outlen > c->outpos;
    if (want_in == c->reading && want_out == c->writing)
        return;
    struct epoll_event ev = { (want_in ? EPOLLIN : 0) | (want_out ? EPOLLOUT : 0) | EPOLLRDHUP, { .ptr = c } };
    epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->reading = want_in;
    c->writing = want_out;
}

static void drop(server *s, client *c)
{
    epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->ready) {                    /* unlink from the ready list */
        for (client **p = &s->ready; *p; p = &(*p)->next_ready)
            if (*p == c) {
                *p = c->next_ready;
                break;
            }
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        s->all = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c->in);
    free(c->out);
    free(c);
    s->nclients--;
}

/* Send what is queued.  0, or -1 when the client is gone. */
static int flush_out(client *c)
{
    while (c->outpos < c->outlen) {
        ssize_t w = send(c->fd, c->out + c->outpos, c->outlen - c->outpos, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (c->outpos > c->outlen / 2) {    /* keep the buffer from creeping */
                memmove(c->out, c->out + c->outpos, c->outlen - c->outpos);
                c->outlen -= c->outpos;
                c->outpos = 0;
            }
            return 0;
        }
        if (w <= 0)
            return -1;
        c->outpos += (size_t)w;
    }
    c->outpos = c->outlen = 0;
    return 0;
}

/* ---- requests -------------------------------------------------------------------- */

/* Queue json with "id": ID put first (the request's id, as it came). */
static void answer_with_id(client *c, const cJSON *id, const char *json, size_t n)
{
    char *ids = id ? cJSON_PrintUnformatted(id) : NULL;
    if (!ids || n < 2 || json[0] != '{') {
        queue(c, json, n);
        cJSON_free(ids);
        return;
    }
    size_t il = strlen(ids), total = il + n + 8;
    char stack[8192], *b = total <= sizeof stack ? stack : malloc(total);
    if (!b) {
        cJSON_free(ids);
        queue(c, "{\"decision\":\"deny\",\"error\":\"out of memory\"}", 43);
        return;
    }
    size_t k = 0;
    memcpy(b + k, "{\"id\":", 6);
    k += 6;
    memcpy(b + k, ids, il);
    k += il;
    if (n > 2)
        b[k++] = ',';
    memcpy(b + k, json + 1, n - 1);
    k += n - 1;
    queue(c, b, k);
    if (b != stack)
        free(b);
    cJSON_free(ids);
}

static void answer_object(client *c, const cJSON *id, cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    if (s)
        answer_with_id(c, id, s, strlen(s));
    else
        answer_with_id(c, id, "{\"ok\":false,\"error\":\"out of memory\"}", 36);
    cJSON_free(s);
    cJSON_Delete(o);
}

static void answer_error(server *s, client *c, const cJSON *id, const char *err)
{
    s->errors++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "decision", "deny");
    cJSON_AddStringToObject(o, "error", err);
    answer_object(c, id, o);
}

static const char *str_of(const cJSON *req, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void op_decide(server *s, client *c, const cJSON *req, const cJSON *id, int explain)
{
    const char *cmd = str_of(req, "cmd"), *cwd = str_of(req, "cwd");
    if (!cmd) {
        answer_error(s, c, id, "the request has no \"cmd\" string");
        return;
    }
    if (cwd && cwd[0] != '/') {
        answer_error(s, c, id, "\"cwd\" must be an absolute path");
        return;
    }
    const char *roots[64];
    size_t nroots = 0;
    const cJSON *r, *rs = cJSON_GetObjectItemCaseSensitive(req, "roots");
    cJSON_ArrayForEach(r, rs) {
        if (!cJSON_IsString(r) || nroots == 64) {
            answer_error(s, c, id, "\"roots\" must be a list of at most 64 strings");
            return;
        }
        roots[nroots++] = r->valuestring;
    }
    const char *agent = str_of(req, "agent"), *team = str_of(req, "team"), *session = str_of(req, "session");
    const char *const keyed[] = { agent, team, session };
    static const char *const keyed_name[] = { "agent", "team", "session" };
    for (int k = 0; k < 3; k++)       /* the same bounds as --agent and --team */
        if (keyed[k] && (!keyed[k][0] || strlen(keyed[k]) > 200)) {
            char why[80];
            snprintf(why, sizeof why, "\"%s\" takes 1 to 200 bytes", keyed_name[k]);
            answer_error(s, c, id, why);
            return;
        }
    sg_gate_where w = { cwd, roots, nroots, agent ? agent : s->go.agent, session, team ? team : s->go.team };
    sg_gate_verdict v;
    if (explain)
        sg_gate_explain(s->g, cmd, strlen(cmd), &w, &v);
    else
        sg_gate_decide(s->g, cmd, strlen(cmd), &w, &v);
    if (v.decision >= 0 && v.decision < 3)
        s->by_decision[v.decision]++;
    answer_with_id(c, id, v.json, v.json_len);
}

static void op_reload(server *s, client *c, const cJSON *id)
{
    s->diag[0] = '\0';
    int r = sg_gate_reload(s->g, NULL);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", r == 0);
    if (r) {
        s->reload_failures++;
        cJSON_AddStringToObject(o, "error", s->diag[0] ? s->diag : "the policy did not load");
        cJSON_AddStringToObject(o, "kept", sg_gate_pack(s->g));
    } else {
        s->reloads++;
        cJSON_AddStringToObject(o, "pack", sg_gate_pack(s->g));
    }
    if (c)
        answer_object(c, id, o);
    else
        cJSON_Delete(o);
}

static void op_approve(server *s, client *c, const cJSON *req, const cJSON *id)
{
    const char *cmd = NULL;
    if (!s->approve) {
        /* an agent that can reach the socket must not answer its own asks */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "ok", 0);
        cJSON_AddStringToObject(o, "error", "this server takes no approvals (start it with --approve, on a socket "
                                "the agents cannot reach, or run shellgate approve ID)");
        answer_object(c, id, o);
        return;
    }
    s->diag[0] = '\0';
    int r = sg_gate_approve(s->g, str_of(req, "approval_id"), str_of(req, "scope"), str_of(req, "session"), &cmd);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", r == 0);
    if (r == 0)
        cJSON_AddStringToObject(o, "approved", cmd);
    else
        cJSON_AddStringToObject(o, "error", r == 1 ? "no command waits for that approval id" : s->diag);
    answer_object(c, id, o);
}

static void op_stats(server *s, client *c, const cJSON *id)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    cJSON *o = cJSON_CreateObject(), *d = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", 1);
    cJSON_AddStringToObject(o, "pack", sg_gate_pack(s->g));
    cJSON_AddStringToObject(o, "policy", sg_gate_source(s->g));
    cJSON_AddNumberToObject(o, "uptime_seconds", (double)(now.tv_sec - s->start.tv_sec)
                                                 + (double)(now.tv_nsec - s->start.tv_nsec) / 1e9);
    cJSON_AddNumberToObject(o, "clients", s->nclients);
    cJSON_AddNumberToObject(o, "requests", (double)s->requests);
    cJSON_AddNumberToObject(d, "allow", (double)s->by_decision[0]);
    cJSON_AddNumberToObject(d, "deny", (double)s->by_decision[1]);
    cJSON_AddNumberToObject(d, "ask", (double)s->by_decision[2]);
    cJSON_AddItemToObject(o, "decisions", d);
    cJSON_AddNumberToObject(o, "errors", (double)s->errors);
    cJSON_AddNumberToObject(o, "reloads", (double)s->reloads);
    cJSON_AddNumberToObject(o, "reload_failures", (double)s->reload_failures);
    cJSON_AddNumberToObject(o, "cut_off", (double)s->cut_off);
    answer_object(c, id, o);
}

/* Answer one request line (line[0..n), no newline). */
static void handle(server *s, client *c, const char *line, size_t n)
{
    s->requests++;
    cJSON *req = cJSON_ParseWithLength(line, n);
    if (!cJSON_IsObject(req)) {
        answer_error(s, c, NULL, req ? "the request is not a JSON object" : "the request is not valid JSON");
        cJSON_Delete(req);
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(req, "id");
    if (!sg_utf8_valid(line, n)) {        /* as check --batch refuses it, first */
        answer_error(s, c, id, "the input line is not UTF-8, as JSON text is: the command cannot be checked as sent");
        cJSON_Delete(req);
        return;
    }
    if (sg_json_has_nul(line, n)) {     /* cJSON cut a string short: check --batch's refusal */
        answer_error(s, c, id, "a NUL character in the input line: the command cannot be checked as sent");
        cJSON_Delete(req);
        return;
    }
    const char *op = str_of(req, "op");
    if (!op || strcmp(op, "check") == 0)
        op_decide(s, c, req, id, 0);
    else if (strcmp(op, "explain") == 0)
        op_decide(s, c, req, id, 1);
    else if (strcmp(op, "approve") == 0)
        op_approve(s, c, req, id);
    else if (strcmp(op, "reload") == 0)
        op_reload(s, c, id);
    else if (strcmp(op, "stats") == 0)
        op_stats(s, c, id);
    else if (strcmp(op, "run") == 0)
        answer_error(s, c, id, "op run is not served yet: run commands with `shellgate run` (docs/integrations.md)");
    else
        answer_error(s, c, id, "unknown op (check, explain, approve, reload, stats)");
    cJSON_Delete(req);
}

/* Answer up to SERVE_LINES_PER_ROUND complete lines of c.  1 when complete lines
 * remain (answers pile up or the round ended), else 0. */
static int answer_lines(server *s, client *c)
{
    size_t pos = 0;
    int done = 0;
    while (done < SERVE_LINES_PER_ROUND && c->outlen - c->outpos < SERVE_OUT_HIGH && !c->cut) {
        char *nl = memchr(c->in + pos, '\n', c->inlen - pos);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (c->in + pos));
        size_t m = n;
        while (m && c->in[pos + m - 1] == '\r')
            m--;
        if (m)
            handle(s, c, c->in + pos, m);
        pos += n + 1;
        done++;
    }
    memmove(c->in, c->in + pos, c->inlen - pos);
    c->inlen -= pos;
    c->tail -= pos;
    c->has_line = c->tail > 0;
    return !c->cut && c->has_line;
}

static void mark_ready(server *s, client *c, int ready)
{
    if (ready && !c->ready) {
        c->ready = 1;
        c->next_ready = s->ready;
        s->ready = c;
    }
}

/* Read what c sent, up to its first complete line.  -1 when c is to be dropped. */
static int read_in(server *s, client *c)
{
    while (!c->has_line) {
        if (c->inlen - c->tail > s->max_request) {
            /* a request past the limit: say so and cut this client off */
            char msg[160];
            int k = snprintf(msg, sizeof msg, "{\"decision\":\"deny\",\"error\":\"request longer than %zu bytes; "
                             "the connection is closed\"}", s->max_request);
            queue(c, msg, (size_t)k);
            c->cut = 1;
            c->inlen = c->tail = 0;
            s->cut_off++;
            return 0;
        }
        if (grow(&c->in, &c->incap, c->inlen + 65536) < 0)
            return -1;
        ssize_t r = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r <= 0) {
            c->eof = 1;
            return 0;
        }
        char *last = memrchr(c->in + c->inlen, '\n', (size_t)r);
        c->inlen += (size_t)r;
        if (last) {
            c->tail = (size_t)(last - c->in) + 1;
            c->has_line = 1;
        }
    }
    return 0;
}

/* After reading, answering or writing: send, re-arm, or drop. */
static void settle(server *s, client *c)
{
    if (flush_out(c) < 0) {
        drop(s, c);
        return;
    }
    if (c->outpos == c->outlen && (c->cut || ((c->eof || s->stopping) && !c->has_line))) {
        drop(s, c);
        return;
    }
    set_events(s, c);
}

static void accept_all(server *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (s->nclients >= SERVE_MAX_CLIENTS) {
            static const char busy[] = "{\"decision\":\"deny\",\"error\":\"too many clients\"}\n";
            if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                (void)0;
            close(fd);
            continue;
        }
        client *c = calloc(1, sizeof *c);
        struct epoll_event ev = { EPOLLIN | EPOLLRDHUP, { .ptr = c } };
        if (!c || epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->reading = 1;
        c->next = s->all;
        if (s->all)
            s->all->prev = c;
        s->all = c;
        s->nclients++;
    }
}

/* ---- the socket -------------------------------------------------------------------- */

static int listen_on(server *s, mode_t mode)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(s->path) >= sizeof a.sun_path) {
        fprintf(stderr, "shellgate: serve: the socket path is longer than %zu bytes\n", sizeof a.sun_path - 1);
        return -1;
    }
    strcpy(a.sun_path, s->path);
    struct stat st;
    if (lstat(s->path, &st) == 0) {
        /* a socket left by a server that is gone may be replaced; a live one may not */
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0;
        if (probe >= 0)
            close(probe);
        if (!S_ISSOCK(st.st_mode) || live) {
            fprintf(stderr, "shellgate: serve: %s %s\n", s->path,
                    live ? "is a socket another server answers on" : "exists and is not a socket");
            return -1;
        }
        unlink(s->path);
    }
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    mode_t old = umask(0777 & ~mode);  /* the socket is born with its mode: no window */
    int r = s->lfd < 0 ? -1 : bind(s->lfd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (r < 0 || chmod(s->path, mode) < 0 || listen(s->lfd, 128) < 0) {
        fprintf(stderr, "shellgate: serve: %s: %s\n", s->path, strerror(errno));
        return -1;
    }
    return 0;
}

/* an argument serve does not take: unknown, with the nearest of its options, or a
 * value that is missing */
static int bad_option(const char *a)
{
    static const char *const own[] = { "--socket", "--mode", "--max-request", "--approve", "--help" };
    for (size_t i = 0; i < 3; i++)     /* the three of its own that take a value */
        if (strcmp(a, own[i]) == 0) {
            fprintf(stderr, "shellgate serve: %s needs a value\n", a);
            return EX_USAGE;
        }
    const char *near = sg_gateopt_nearest(a, own, sizeof own / sizeof *own);
    fprintf(stderr, "shellgate serve: unknown %s '%s'", a[0] == '-' ? "option" : "operand", a);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fputc('\n', stderr);
    cli_print_usage(stderr, "serve");
    return EX_USAGE;
}

int cli_serve(int argc, char **argv)
{
    server s;
    memset(&s, 0, sizeof s);
    s.lfd = s.ep = s.sfd = -1;
    s.max_request = SERVE_MAX_REQUEST_DEFAULT;
    mode_t mode = 0600;
    char err[300];
    for (int i = 0; i < argc; i++) {
        int t = sg_gateopt_take(&s.go, argc, argv, &i, err, sizeof err);
        if (t < 0) {
            fprintf(stderr, "shellgate: serve: %s\n", err);
            return EX_USAGE;
        }
        if (t)
            continue;
        char *end;
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            s.path = argv[++i];
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            unsigned long m = strtoul(argv[++i], &end, 8);
            if (*end || !argv[i][0] || m > 0777 || (m & 0600) != 0600) {
                fprintf(stderr, "shellgate: serve: --mode takes octal permissions that include 0600\n");
                return EX_USAGE;
            }
            mode = (mode_t)m;
        } else if (strcmp(argv[i], "--max-request") == 0 && i + 1 < argc) {
            unsigned long long m = strtoull(argv[++i], &end, 10);
            if (*end || !argv[i][0] || argv[i][0] == '-' || m < 256 || m > (1ull << 30)) {
                fprintf(stderr, "shellgate: serve: --max-request takes 256 to 1073741824 bytes\n");
                return EX_USAGE;
            }
            s.max_request = (size_t)m;
        } else if (strcmp(argv[i], "--approve") == 0) {
            s.approve = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            cli_verb_usage(stdout, "serve");
            return 0;
        } else {
            return bad_option(argv[i]);
        }
    }
    if (!s.path) {
        fprintf(stderr, "shellgate serve: serve needs --socket PATH (the Unix socket to listen on)\n");
        cli_print_usage(stderr, "serve");
        return EX_USAGE;
    }
    s.go.g.admit = s.go.g.state || s.go.g.rate_store;
    s.go.g.diag = diag_keep;
    s.go.g.diag_ud = &s;
    int st = sg_gate_open(&s.go.g, &s.g);
    if (st)
        return st;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    s.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    s.ep = epoll_create1(EPOLL_CLOEXEC);
    if (s.sfd < 0 || s.ep < 0 || listen_on(&s, mode) < 0) {
        sg_gate_free(s.g);
        return EX_SOFTWARE;
    }
    struct epoll_event lev = { EPOLLIN, { .ptr = &s.lfd } }, sev = { EPOLLIN, { .ptr = &s.sfd } };
    epoll_ctl(s.ep, EPOLL_CTL_ADD, s.lfd, &lev);
    epoll_ctl(s.ep, EPOLL_CTL_ADD, s.sfd, &sev);
    clock_gettime(CLOCK_MONOTONIC, &s.start);
    fprintf(stderr, "shellgate: serving %s (pack %s) on %s\n", sg_gate_source(s.g), sg_gate_pack(s.g), s.path);
    time_t deadline = 0;
    struct epoll_event evs[128];
    for (;;) {
        if (s.stopping && s.nclients == 0)
            break;
        if (s.stopping && time(NULL) >= deadline)
            break;
        int n = epoll_wait(s.ep, evs, 128, s.ready ? 0 : s.stopping ? 200 : -1);
        if (n < 0 && errno != EINTR)
            break;
        for (int k = 0; k < n; k++) {
            void *p = evs[k].data.ptr;
            if (p == &s.lfd) {
                accept_all(&s);
                continue;
            }
            if (p == &s.sfd) {
                struct signalfd_siginfo si;
                while (read(s.sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo == SIGHUP) {
                        op_reload(&s, NULL, NULL);
                        fprintf(stderr, "shellgate: SIGHUP: %s\n", s.diag[0] ? "the old policy stays in force"
                                                                               : "policy reloaded");
                    } else if (!s.stopping) {
                        /* stop accepting, answer what came in, flush, then go */
                        s.stopping = 1;
                        deadline = time(NULL) + SERVE_DRAIN_SECONDS;
                        epoll_ctl(s.ep, EPOLL_CTL_DEL, s.lfd, NULL);
                        close(s.lfd);
                        s.lfd = -1;
                        unlink(s.path);
                    }
                }
                continue;
            }
            client *c = p;
            if (evs[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                if (read_in(&s, c) < 0) {
                    drop(&s, c);
                    continue;
                }
                mark_ready(&s, c, c->has_line);
            }
            if ((evs[k].events & EPOLLOUT) && c->has_line && !c->ready) {
                /* its answers had piled up past the mark, so its lines waited:
                 * once they drain below it, answer the lines again */
                if (flush_out(c) < 0) {
                    drop(&s, c);
                    continue;
                }
                mark_ready(&s, c, c->outlen - c->outpos < SERVE_OUT_HIGH);
            }
            if (!c->ready)
                settle(&s, c);
        }
        /* one round over the clients with complete lines */
        client *list = s.ready;
        s.ready = NULL;
        while (list) {
            client *c = list;
            list = c->next_ready;
            c->ready = 0;
            c->next_ready = NULL;
            int more = answer_lines(&s, c);
            if (more && c->outlen - c->outpos < SERVE_OUT_HIGH)
                mark_ready(&s, c, 1);
            settle(&s, c);
        }
        if (s.stopping)                /* those with nothing left to answer or send are done */
            for (client *c = s.all, *nx; c; c = nx) {
                nx = c->next;
                if (!c->ready)
                    settle(&s, c);
            }
    }
    if (s.lfd >= 0) {
        close(s.lfd);
        unlink(s.path);
    }
    close(s.ep);
    close(s.sfd);
    sg_gate_free(s.g);
    fprintf(stderr, "shellgate: served %llu requests; stopped\n", s.requests);
    return 0;
}
