/* store.c - the one place admission turns its store options into a store
 * (admit_int.h): the local state file, or Redis with its failure mode. */
#include <stdio.h>
#include <string.h>
#include "admit/admit_int.h"

static const char *const down_names[] = {
#define X(id, name) name,
    SGA_STORE_DOWN(X)
#undef X
};

int sga_store_down_parse(const char *s)
{
    for (size_t i = 0; i < sizeof down_names / sizeof *down_names; i++)
        if (s && strcmp(s, down_names[i]) == 0)
            return (int)i;
    return -1;
}

sga_store *sga_store_open(const sga_store_opts *o, char *err, size_t errlen)
{
    if (!o->url || !o->url[0])
        return sga_file_open(o->state, err, errlen);
    if (strncmp(o->url, "redis://", 8) == 0)
        return sga_redis_open(o, err, errlen);
    snprintf(err, errlen, "rate store '%.200s': expected redis://HOST[:PORT][/DB]", o->url);
    return NULL;
}

const char *sga_store_where(const sga_store *a)
{
    const char *u = sga_redis_url(a);
    return u ? u : sga_file_path(a);
}
