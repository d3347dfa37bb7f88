/* jsontext.h - facts about JSON text before it is parsed.
 *
 * cJSON ends its decoded strings at a NUL, so a command sent as "ls\u0000; rm x"
 * would be decided as "ls" while the agent runs the whole string.  Every reader of
 * an agent's JSON (check --batch, the hooks, the server) refuses such text first. */
#ifndef SG_JSONTEXT_H
#define SG_JSONTEXT_H
#include <stddef.h>
#include <string.h>

/* Does s[0..n) hold a NUL character: a raw one, or a \u0000 escape (the backslash
 * itself not escaped)? */
static inline int sg_json_has_nul(const char *s, size_t n)
{
    if (memchr(s, '\0', n))
        return 1;
    for (size_t i = 0; i + 6 <= n; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0' && s[i + 4] == '0' && s[i + 5] == '0')
            return 1;
        i++;                                    /* an escaped character, maybe '\\' */
    }
    return 0;
}

#endif
