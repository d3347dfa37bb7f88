/* replay_main.c - a main() for fuzz harnesses without libFuzzer: calls
 * LLVMFuzzerTestOneInput once on every file named, and on every file in every
 * directory named (sorted, dotfiles skipped, not recursive).  This is how the
 * corpora run as regression tests in the gcc and ASan builds (tests/CMakeLists.txt).
 *
 * Each input is copied into a buffer of exactly its size, as libFuzzer does, so
 * ASan catches a read past the end.  Exits 0 when every input returned, 1 when a
 * path cannot be read or a directory holds no input (a misconfigured test must
 * not pass by replaying nothing).  A failing input aborts in the harness; the
 * last "replay:" line on stderr (with -v) or the crash report names it. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

static int verbose;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "replay: %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return -1;
    }
    /* exact-size copy: no slack after the last byte */
    unsigned char *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    if (verbose)
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int no_dots(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    long count = 0;
    int status = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = 1;
            continue;
        }
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0)
                status = 1;
            else
                count++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, no_dots, alphasort);
        if (n < 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        long before = count;
        for (int k = 0; k < n; k++) {
            size_t len = strlen(argv[i]) + strlen(names[k]->d_name) + 2;
            char *path = malloc(len);
            if (path) {
                snprintf(path, len, "%s/%s", argv[i], names[k]->d_name);
                if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                    if (replay_file(path) != 0)
                        status = 1;
                    else
                        count++;
                }
            } else {
                status = 1;
            }
            free(path);
            free(names[k]);
        }
        free(names);
        if (count == before) {
            fprintf(stderr, "replay: %s: no input files\n", argv[i]);
            status = 1;
        }
    }
    printf("replayed %ld input%s%s\n", count, count == 1 ? "" : "s", status ? " (with errors)" : "");
    return status;
}
