/* sgx_standin.c - the stand-in for every program in the executor's differential
 * test (tests/test_exec_diff.c): it appends the argv it received to the file
 * $SGX_STANDIN_LOG, one line per run (the count, then each argument in hex), and
 * exits 0.  It reads nothing and writes nothing else. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *log = getenv("SGX_STANDIN_LOG");
    if (!log)
        return 0;
    size_t n = 32;
    for (int i = 0; i < argc; i++)
        n += 2 * strlen(argv[i]) + 2;
    char *buf = malloc(n), *o = buf;
    if (!buf)
        return 1;
    o += sprintf(o, "%d", argc);
    for (int i = 0; i < argc; i++) {
        *o++ = ' ';
        *o++ = '=';                    /* so an empty argument is still a field */
        for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++)
            o += sprintf(o, "%02x", *p);
    }
    *o++ = '\n';
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return 1;
    /* one write: O_APPEND keeps concurrent pipeline members' lines whole */
    ssize_t len = o - buf, w = write(fd, buf, (size_t)len);
    close(fd);
    free(buf);
    return w == len ? 0 : 1;
}
