/* capture.h - one output stream of a run, kept in bounded memory.
 *
 * A stream keeps at most `cap` bytes however much a command prints: the first
 * cap/2 and the last cap/2 (head+tail, a ring for the tail), or the first cap
 * (head only).  Every byte is counted, so the caller knows how many were dropped.
 * Streaming mode forwards the head to a descriptor as it arrives and the tail at
 * the end (sgx_cap_finish_stream).  sgx_json_string writes any bytes as a JSON
 * string: invalid UTF-8 and NUL become U+FFFD / \u0000, so the result is valid
 * JSON whatever the command printed.
 *
 * Ownership: a sgx_cap owns its buffers (sg_malloc'd at init, never grown);
 * sgx_cap_text hands out a string the caller sg_frees. */
#ifndef SGX_CAPTURE_H
#define SGX_CAPTURE_H
#include <stddef.h>
#include <stdint.h>

#define SGX_CAP_MIN        1024u                /* --max-output floor */
#define SGX_CAP_DEFAULT    (64u * 1024u)        /* per stream */
#define SGX_CAP_MAX        (4u * 1024u * 1024u)

enum { SGX_TRUNC_HEADTAIL, SGX_TRUNC_HEAD };

typedef struct sgx_cap {
    size_t cap;                  /* bytes kept at most */
    int mode;                    /* SGX_TRUNC_* */
    char *head;                  /* [hcap]: the first bytes */
    size_t hcap, hlen;
    char *tail;                  /* [tcap] ring of the latest bytes past the head */
    size_t tcap, tlen, tpos;     /* tpos: where the next byte goes */
    uint64_t total;              /* every byte seen */
    int fwd;                     /* streaming: forward the head here (-1: keep) */
} sgx_cap;

/* cap is clamped to [SGX_CAP_MIN, SGX_CAP_MAX].  fwd >= 0 streams.  0, or -1 OOM. */
int sgx_cap_init(sgx_cap *c, size_t cap, int mode, int fwd);
void sgx_cap_free(sgx_cap *c);
/* Take n more bytes of the stream (forwarding what falls in the head). */
void sgx_cap_add(sgx_cap *c, const char *p, size_t n);
/* Bytes dropped (total minus what is kept). */
uint64_t sgx_cap_dropped(const sgx_cap *c);
/* The kept text: head, then when bytes were dropped "\n... [truncated N bytes] ...\n"
 * and, head+tail, the tail.  sg_malloc'd, NUL-terminated (the text itself may hold
 * NULs: *len says how long it is); NULL on OOM. */
char *sgx_cap_text(const sgx_cap *c, size_t *len);
/* Streaming: write the marker and the tail to the forward descriptor. */
void sgx_cap_finish_stream(sgx_cap *c);
/* The marker for n dropped bytes, into buf; returns its length. */
size_t sgx_cap_marker(char *buf, size_t n, uint64_t dropped);

/* Append s[0..n) as a quoted JSON string to the growable buffer *out (sg_malloc'd,
 * *len bytes used, *cap allocated): \" \\ \n \t \r \b \f and \u00XX for other
 * control bytes, valid UTF-8 kept, every byte of an invalid sequence replaced by
 * U+FFFD.  0, or -1 OOM. */
int sgx_json_string(char **out, size_t *len, size_t *cap, const char *s, size_t n);

#endif
