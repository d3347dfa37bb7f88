/* names.c - name tables generated from the X-macro lists in shparse.h. */
#include "shparse.h"

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
