/* Verification patterns: distinct per sender, tag, iteration and index;
 * a single wrong element is found at its index. */
#include "check.h"
#include "mb.h"

#include <math.h>
#include <string.h>

int main(void)
{
    enum { N = 4096 };
    static double a[N];
    static unsigned char b[N + 3];
    mb_pattern_fill_doubles(a, N, 3, 2, 7);
    CHECK(mb_pattern_check_doubles(a, N, 3, 2, 7) == -1);
    CHECK(mb_pattern_check_doubles(a, N, 4, 2, 7) == 0); /* other sender */
    CHECK(mb_pattern_check_doubles(a, N, 3, 1, 7) == 0); /* other direction/tag */
    CHECK(mb_pattern_check_doubles(a, N, 3, 2, 8) == 0); /* other iteration */
    a[1234] += 1;
    CHECK(mb_pattern_check_doubles(a, N, 3, 2, 7) == 1234);
    /* shifted by one element: caught at once */
    mb_pattern_fill_doubles(a, N, 3, 2, 7);
    memmove(a + 1, a, (N - 1) * sizeof *a);
    CHECK(mb_pattern_check_doubles(a, N, 3, 2, 7) == 0 || mb_pattern_check_doubles(a, N, 3, 2, 7) == 1);
    /* values are finite integers below 2^52 (exact through any MPI_DOUBLE path) */
    int ok = 1;
    for (size_t i = 0; i < N; i++) {
        double v = mb_pattern_double(9, 5, 1, i);
        ok &= isfinite(v) && v >= 0 && v < 4503599627370496.0 && v == floor(v);
    }
    CHECK(ok);

    mb_pattern_fill_bytes(b, N + 3, 1, 0, 0); /* odd length */
    CHECK(mb_pattern_check_bytes(b, N + 3, 1, 0, 0) == -1);
    b[N + 2] ^= 0x40;
    CHECK(mb_pattern_check_bytes(b, N + 3, 1, 0, 0) == N + 2);
    CHECK(mb_pattern_check_bytes(b, 0, 1, 0, 0) == -1); /* empty message */
    /* bytes are not constant: a zeroed buffer fails */
    memset(b, 0, sizeof b);
    CHECK(mb_pattern_check_bytes(b, 64, 1, 0, 0) >= 0);
    return CHECK_DONE();
}
