/* test_sha256.c - the FIPS 180-4 test vectors, including a multi-block message
 * fed in odd-sized pieces. */
#include "check.h"
#include "common/sha256.h"

static void hex(const uint8_t d[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static const char *digest(const char *msg, size_t piece)
{
    static char out[65];
    sg_sha256 c;
    uint8_t d[32];
    size_t n = strlen(msg);
    sg_sha256_init(&c);
    for (size_t i = 0; i < n; i += piece)
        sg_sha256_update(&c, msg + i, n - i < piece ? n - i : piece);
    sg_sha256_final(&c, d);
    hex(d, out);
    return out;
}

int main(void)
{
    CHECK_STR(digest("", 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK_STR(digest("abc", 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK_STR(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 7),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK_STR(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 64),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    return sg_test_summary();
}
