/* admit_store.c - the one place a verb turns its store options into a backend
 * (admit_store.h): the local state file, or Redis with its failure mode. */
#include <stdio.h>
#include <string.h>
#include "admit_store.h"

static const char *const down_names[] = {
#define X(id, name) name,
    SGR_STORE_DOWN(X)
#undef X
};

int sgr_admit_store_down_parse(const char *s)
{
    for (size_t i = 0; i < sizeof down_names / sizeof *down_names; i++)
        if (s && strcmp(s, down_names[i]) == 0)
            return (int)i;
    return -1;
}

sgr_admit *sgr_admit_store_open(const sgr_admit_store_opts *o, char *err, size_t errlen)
{
    if (!o->url || !o->url[0])
        return sgr_admit_file_open(o->state, err, errlen);
    if (strncmp(o->url, "redis://", 8) == 0)
        return sgr_admit_redis_open(o, err, errlen);
    snprintf(err, errlen, "rate store '%.200s': expected redis://HOST[:PORT][/DB]", o->url);
    return NULL;
}

const char *sgr_admit_store_where(const sgr_admit *a)
{
    const char *u = sgr_admit_redis_url(a);
    return u ? u : sgr_admit_file_path(a);
}
