/* session.c - durable session state: one JSON file and one lock per session. */
#include "session.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/alloc.h"

int sgx_session_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (!n || n > SGX_SESSION_ID_MAX || id[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
              || c == '-'))
            return 0;
    }
    return 1;
}

int sgx_session_dir(char *buf, size_t n, const char *given)
{
    const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
    int k;
    if (given && *given)
        k = snprintf(buf, n, "%s", given);
    else if (x && x[0] == '/')
        k = snprintf(buf, n, "%s/shellgate/sessions", x);
    else if (h && h[0] == '/')
        k = snprintf(buf, n, "%s/.local/state/shellgate/sessions", h);
    else
        return -1;
    return k > 0 && (size_t)k < n ? 0 : -1;
}

static int mkdirs(const char *path)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
        return -1;
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return -1;
            *q = '/';
        }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static char *path_of(const char *dir, const char *id, const char *ext)
{
    size_t n = strlen(dir) + strlen(id) + strlen(ext) + 3;
    char *p = sg_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, id, ext);
    return p;
}

static char *dupstr(const char *s)
{
    return s ? sg_strndup(s, strlen(s)) : NULL;
}

static void clear_state(sgx_session *s)
{
    sg_free(s->cwd);
    s->cwd = NULL;
    for (uint32_t i = 0; i < s->nroots; i++)
        sg_free(s->roots[i]);
    sg_free(s->roots);
    s->roots = NULL;
    s->nroots = 0;
    sgx_vars_free(&s->set);
    for (uint32_t i = 0; i < s->nunset; i++)
        sg_free(s->unset[i]);
    sg_free(s->unset);
    s->unset = NULL;
    s->nunset = 0;
}

static int load(sgx_session *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (16u << 20)) {
                snprintf(err, errlen, "%s: too large for a session", path);
                break;
            }
            char *nb = sg_realloc(buf, cap + 1);
            if (!nb)
                break;
            buf = nb;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
    }
    int ferr = ferror(f);
    fclose(f);
    cJSON *j = buf && !ferr ? cJSON_ParseWithLength(buf, len) : NULL;
    sg_free(buf);
    if (!j) {
        /* a damaged session is a fresh one, never a half-read one */
        return 0;
    }
    int rc = 0;
    s->existed = 1;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cwd");
    if (cJSON_IsString(c) && c->valuestring[0] == '/' && !(s->cwd = dupstr(c->valuestring)))
        rc = -1;
    const cJSON *e, *env = cJSON_GetObjectItemCaseSensitive(j, "env");
    cJSON_ArrayForEach(e, env)
        if (rc == 0 && cJSON_IsString(e) && e->string && sgx_is_name(e->string, strlen(e->string))
            && sgx_vars_set(&s->set, e->string, strlen(e->string), e->valuestring, 1) < 0)
            rc = -1;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "unset");
    cJSON_ArrayForEach(e, u)
        if (rc == 0 && cJSON_IsString(e) && sgx_is_name(e->valuestring, strlen(e->valuestring))
            && sgx_session_unset_var(s, e->valuestring) < 0)
            rc = -1;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "roots");
    cJSON_ArrayForEach(e, r) {
        if (rc || !cJSON_IsString(e) || e->valuestring[0] != '/')
            continue;
        char **nr = sg_realloc(s->roots, (s->nroots + 1) * sizeof *nr);
        if (!nr || !(nr[s->nroots] = dupstr(e->valuestring))) {
            if (nr)
                s->roots = nr;
            rc = -1;
            continue;
        }
        s->roots = nr;
        s->nroots++;
    }
    const cJSON *cr = cJSON_GetObjectItemCaseSensitive(j, "created"), *us = cJSON_GetObjectItemCaseSensitive(j, "used");
    s->created = cJSON_IsNumber(cr) ? (int64_t)cr->valuedouble : 0;
    s->used = cJSON_IsNumber(us) ? (int64_t)us->valuedouble : 0;
    cJSON_Delete(j);
    if (rc)
        snprintf(err, errlen, "out of memory");
    return rc;
}

int sgx_session_open(sgx_session *s, const char *dir, const char *id, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->lockfd = -1;
    if (!sgx_session_id_ok(id)) {
        snprintf(err, errlen, "'%.80s' is not a session id (1 to %d of A-Z a-z 0-9 . _ -, not starting with '.')", id,
                 SGX_SESSION_ID_MAX);
        return SGX_SESSION_ERROR;
    }
    snprintf(s->id, sizeof s->id, "%s", id);
    if (!(s->dir = dupstr(dir))) {
        snprintf(err, errlen, "out of memory");
        return SGX_SESSION_ERROR;
    }
    if (mkdirs(dir) < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        sgx_session_close(s);
        return SGX_SESSION_ERROR;
    }
    char *lp = path_of(dir, id, ".lock"), *sp = path_of(dir, id, ".json");
    int rc = SGX_SESSION_ERROR;
    if (!lp || !sp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* lock the file the name refers to now: a session reset or evicted between
     * our open and our flock leaves us holding a name that is gone, so look again */
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "%s: %s", lp, strerror(errno));
            goto out;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (e == EWOULDBLOCK) {
                snprintf(err, errlen, "session busy: another command is using session '%s'", id);
                rc = SGX_SESSION_BUSY;
            } else {
                snprintf(err, errlen, "%s: %s", lp, strerror(e));
            }
            goto out;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lp, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            s->lockfd = fd;
            break;
        }
        close(fd);
    }
    if (s->lockfd < 0) {
        snprintf(err, errlen, "%s: the lock keeps being replaced", lp);
        goto out;
    }
    if (load(s, sp, err, errlen) < 0)
        goto out;
    if (!s->created)
        s->created = (int64_t)time(NULL);
    rc = SGX_SESSION_OK;
out:
    sg_free(lp);
    sg_free(sp);
    if (rc != SGX_SESSION_OK)
        sgx_session_close(s);
    return rc;
}

char *sgx_session_json(const sgx_session *s)
{
    cJSON *j = cJSON_CreateObject(), *env = cJSON_CreateObject(), *un = cJSON_CreateArray(), *ro = cJSON_CreateArray();
    char *out = NULL;
    if (!j || !env || !un || !ro) {
        cJSON_Delete(j);
        cJSON_Delete(env);
        cJSON_Delete(un);
        cJSON_Delete(ro);
        return NULL;
    }
    cJSON_AddItemToObject(j, "env", env);
    cJSON_AddItemToObject(j, "unset", un);
    cJSON_AddItemToObject(j, "roots", ro);
    int ok = cJSON_AddStringToObject(j, "session", s->id) != NULL;
    ok = ok && (s->cwd ? cJSON_AddStringToObject(j, "cwd", s->cwd) : cJSON_AddNullToObject(j, "cwd")) != NULL;
    for (uint32_t i = 0; ok && i < s->set.n; i++)
        ok = cJSON_AddStringToObject(env, s->set.v[i].name, s->set.v[i].value) != NULL;
    for (uint32_t i = 0; ok && i < s->nunset; i++) {
        cJSON *x = cJSON_CreateString(s->unset[i]);
        ok = x && cJSON_AddItemToArray(un, x);
    }
    for (uint32_t i = 0; ok && i < s->nroots; i++) {
        cJSON *x = cJSON_CreateString(s->roots[i]);
        ok = x && cJSON_AddItemToArray(ro, x);
    }
    ok = ok && cJSON_AddNumberToObject(j, "created", (double)s->created)
         && cJSON_AddNumberToObject(j, "used", (double)s->used);
    if (ok) {
        char *t = cJSON_PrintUnformatted(j);
        if (t) {
            out = sg_strndup(t, strlen(t));
            cJSON_free(t);
        }
    }
    cJSON_Delete(j);
    return out;
}

int sgx_session_save(sgx_session *s, char *err, size_t errlen)
{
    s->used = (int64_t)time(NULL);
    char *text = sgx_session_json(s);
    char *sp = path_of(s->dir, s->id, ".json");
    char *tp = path_of(s->dir, s->id, ".json.tmp");
    int rc = -1;
    if (!text || !sp || !tp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    int fd = open(tp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t n = strlen(text);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tp, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tp);
        goto out;
    }
    if (close(fd) != 0 || rename(tp, sp) != 0) {
        snprintf(err, errlen, "%s: %s", sp, strerror(errno));
        unlink(tp);
        goto out;
    }
    rc = 0;
out:
    sg_free(text);
    sg_free(sp);
    sg_free(tp);
    return rc;
}

int sgx_session_reset(sgx_session *s, char *err, size_t errlen)
{
    clear_state(s);
    s->existed = 0;
    s->created = (int64_t)time(NULL);
    char *sp = path_of(s->dir, s->id, ".json");
    if (!sp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int r = unlink(sp) != 0 && errno != ENOENT ? -1 : 0;
    if (r)
        snprintf(err, errlen, "%s: %s", sp, strerror(errno));
    sg_free(sp);
    return r;
}

void sgx_session_close(sgx_session *s)
{
    clear_state(s);
    if (s->lockfd >= 0)
        close(s->lockfd);               /* releases the flock */
    s->lockfd = -1;
    sg_free(s->dir);
    s->dir = NULL;
}

int sgx_session_apply(const sgx_session *s, sgx_vars *v)
{
    for (uint32_t i = 0; i < s->nunset; i++)
        sgx_vars_unset(v, s->unset[i], strlen(s->unset[i]));
    for (uint32_t i = 0; i < s->set.n; i++)
        if (sgx_vars_set(v, s->set.v[i].name, strlen(s->set.v[i].name), s->set.v[i].value, 1) < 0)
            return -1;
    return 0;
}

int sgx_session_set_var(sgx_session *s, const char *name, const char *value)
{
    for (uint32_t i = 0; i < s->nunset; i++)
        if (strcmp(s->unset[i], name) == 0) {
            sg_free(s->unset[i]);
            s->unset[i] = s->unset[--s->nunset];
            break;
        }
    return sgx_vars_set(&s->set, name, strlen(name), value, 1);
}

int sgx_session_unset_var(sgx_session *s, const char *name)
{
    sgx_vars_unset(&s->set, name, strlen(name));
    for (uint32_t i = 0; i < s->nunset; i++)
        if (strcmp(s->unset[i], name) == 0)
            return 0;
    char **nu = sg_realloc(s->unset, (s->nunset + 1) * sizeof *nu);
    if (!nu)
        return -1;
    s->unset = nu;
    if (!(nu[s->nunset] = dupstr(name)))
        return -1;
    s->nunset++;
    return 0;
}

int sgx_session_set_cwd(sgx_session *s, const char *cwd)
{
    char *d = dupstr(cwd);
    if (!d)
        return -1;
    sg_free(s->cwd);
    s->cwd = d;
    return 0;
}

int sgx_session_set_roots(sgx_session *s, const char *const *roots, size_t n)
{
    char **v = sg_calloc(n ? n : 1, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = dupstr(roots[i]))) {
            while (i)
                sg_free(v[--i]);
            sg_free(v);
            return -1;
        }
    for (uint32_t i = 0; i < s->nroots; i++)
        sg_free(s->roots[i]);
    sg_free(s->roots);
    s->roots = v;
    s->nroots = (uint32_t)n;
    return 0;
}

int sgx_session_record(sgx_session *s, const sgx_vars *base, const sgx_vars *final)
{
    sgx_vars_free(&s->set);
    for (uint32_t i = 0; i < s->nunset; i++)
        sg_free(s->unset[i]);
    s->nunset = 0;
    for (uint32_t i = 0; i < final->n; i++) {
        const sgx_var *f = &final->v[i];
        if (!f->exported || strcmp(f->name, "PWD") == 0)
            continue;                   /* the executor's own, never the agent's */
        const sgx_var *b = sgx_vars_get(base, f->name, strlen(f->name));
        if ((!b || strcmp(b->value, f->value) != 0) && sgx_vars_set(&s->set, f->name, strlen(f->name), f->value, 1) < 0)
            return -1;
    }
    for (uint32_t i = 0; i < base->n; i++) {
        const sgx_var *f = sgx_vars_get(final, base->v[i].name, strlen(base->v[i].name));
        if ((!f || !f->exported) && sgx_session_unset_var(s, base->v[i].name) < 0)
            return -1;
    }
    return 0;
}

/* ---- eviction and listing --------------------------------------------------------- */

typedef struct sess_ent {
    char id[SGX_SESSION_ID_MAX + 1];
    int64_t used;                /* the state file's mtime, ns: the last save */
} sess_ent;

static int64_t used_of(const char *dir, const char *id)
{
    char *p = path_of(dir, id, ".json");
    struct stat sb;
    int64_t t = p && stat(p, &sb) == 0 ? (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec : 0;
    sg_free(p);
    return t;
}

static sess_ent *scan(const char *dir, uint32_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    sess_ent *v = NULL;
    uint32_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0 || l - 5 > SGX_SESSION_ID_MAX)
            continue;
        char id[SGX_SESSION_ID_MAX + 1];
        memcpy(id, e->d_name, l - 5);
        id[l - 5] = '\0';
        if (!sgx_session_id_ok(id))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            sess_ent *nv = sg_realloc(v, cap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
        }
        memcpy(v[*n].id, id, l - 4);
        v[(*n)++].used = used_of(dir, id);
    }
    closedir(d);
    return v;
}

/* Remove session id if nobody holds it. */
static int evict_one(const char *dir, const char *id)
{
    sgx_session s;
    char err[256];
    if (sgx_session_open(&s, dir, id, err, sizeof err) != SGX_SESSION_OK)
        return 0;
    int ok = sgx_session_reset(&s, err, sizeof err) == 0;
    char *lp = path_of(dir, id, ".lock");
    if (ok && lp)
        unlink(lp);                     /* while still holding it: see sgx_session_open */
    sg_free(lp);
    sgx_session_close(&s);
    return ok;
}

static int by_used(const void *a, const void *b)
{
    const sess_ent *x = a, *y = b;
    return x->used < y->used ? -1 : x->used > y->used ? 1 : strcmp(x->id, y->id);
}

uint32_t sgx_session_evict(const char *dir, const char *keep_id, uint32_t max, int64_t ttl_s)
{
    uint32_t n, removed = 0;
    sess_ent *v = scan(dir, &n);
    if (!v)
        return 0;
    qsort(v, n, sizeof *v, by_used);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    uint32_t live = n;
    for (uint32_t i = 0; i < n; i++) {
        int keep = keep_id && strcmp(v[i].id, keep_id) == 0;
        int expired = ttl_s > 0 && now - v[i].used > ttl_s * 1000000000;
        int over = max && live > max;
        if (keep || !(expired || over))
            continue;
        if (evict_one(dir, v[i].id)) {
            removed++;
            live--;
        }
    }
    sg_free(v);
    return removed;
}

int sgx_session_list(const char *dir, void (*fn)(void *ud, const char *id, const char *cwd, int64_t used), void *ud)
{
    uint32_t n;
    sess_ent *v = scan(dir, &n);
    if (!v)
        return 0;
    qsort(v, n, sizeof *v, by_used);
    for (uint32_t i = 0; i < n; i++) {
        char *p = path_of(dir, v[i].id, ".json");
        char cwd[4096] = "";
        FILE *f = p ? fopen(p, "rb") : NULL;
        if (f) {
            char buf[65536];
            size_t k = fread(buf, 1, sizeof buf - 1, f);
            buf[k] = '\0';
            fclose(f);
            cJSON *j = cJSON_Parse(buf);
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cwd");
            if (cJSON_IsString(c))
                snprintf(cwd, sizeof cwd, "%s", c->valuestring);
            cJSON_Delete(j);
        }
        sg_free(p);
        fn(ud, v[i].id, cwd, v[i].used / 1000000000);
    }
    sg_free(v);
    return (int)n;
}
