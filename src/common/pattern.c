/* Verification patterns.  Every element encodes (sender, tag, iteration,
 * index) through a 64-bit mix, so a message that arrives from the wrong
 * partner, direction or iteration, or shifted by one element, is caught. */
#include "mb.h"

#include <string.h>

static uint64_t mix(uint32_t sender, uint32_t tag, uint32_t iter, uint64_t i)
{
    /* splitmix64 finaliser over the packed key */
    uint64_t z = ((uint64_t)sender << 32 | tag) * 0x9E3779B97F4A7C15ull;
    z ^= ((uint64_t)iter << 40) + i * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* An integer below 2^52: exactly representable, never NaN or denormal. */
double mb_pattern_double(uint32_t sender, uint32_t tag, uint32_t iter, size_t i)
{
    return (double)(mix(sender, tag, iter, i) >> 12);
}

void mb_pattern_fill_doubles(double *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter)
{
    for (size_t i = 0; i < n; i++) buf[i] = mb_pattern_double(sender, tag, iter, i);
}

long mb_pattern_check_doubles(const double *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != mb_pattern_double(sender, tag, iter, i)) return (long)i;
    return -1;
}

static unsigned char pattern_byte(uint32_t sender, uint32_t tag, uint32_t iter, size_t i)
{
    return (unsigned char)(mix(sender, tag, iter, i / 8) >> (8 * (i % 8)));
}

void mb_pattern_fill_bytes(void *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++) b[i] = pattern_byte(sender, tag, iter, i);
}

long mb_pattern_check_bytes(const void *buf, size_t n, uint32_t sender, uint32_t tag, uint32_t iter)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern_byte(sender, tag, iter, i)) return (long)i;
    return -1;
}
