/* names.c - name tables generated from the X-macro lists in shparse.h and unwrap.h. */
#include <string.h>
#include "shparse.h"
#include "unwrap.h"

const char *const sgr_redir_names[SGR_REDIR__COUNT] = {
#define X(name, text) text,
    SGR_REDIR_KINDS(X)
#undef X
};

const char *const sgr_nest_names[SGR_NEST__COUNT] = {
#define X(name, text) text,
    SGR_NEST_KINDS(X)
#undef X
};

const char *const sgr_platform_names[SGR_PLATFORM__COUNT] = {
    "host",
#define X(name, text) text,
    SGR_PLATFORMS(X)
#undef X
};

int sgr_platform_of(const char *name, size_t len)
{
    for (int p = 1; p < SGR_PLATFORM__COUNT; p++)
        if (strlen(sgr_platform_names[p]) == len && memcmp(sgr_platform_names[p], name, len) == 0)
            return p;
    return -1;
}

sgr_platform sgr_platform_resolve(sgr_platform p)
{
    if (p != SGR_PLATFORM_HOST)
        return p;
#if defined(__APPLE__)
    return SGR_PLATFORM_MACOS;
#elif defined(_WIN32) || defined(__CYGWIN__)
    return SGR_PLATFORM_WINDOWS;
#else
    return SGR_PLATFORM_LINUX;
#endif
}
