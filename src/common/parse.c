/* Strict parsers for option values: the whole string must be a value. */
#include "mb.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int mb_parse_long(const char *s, long long min, long long max, long long *out)
{
    char *end;
    if (!s || !*s) return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int mb_parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    unsigned shift = 0;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        default: return -1;
        }
        if (end[1] && !((end[1] == 'B' || end[1] == 'b') && !end[2])) return -1;
    }
    if (v > (1ull << 40) >> shift) return -1; /* at most 1 TiB */
    *out = (size_t)(v << shift);
    return 0;
}

int mb_parse_double(const char *s, double *out)
{
    char *end;
    if (!s || !*s) return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int mb_parse_range(const char *s, size_t *lo, size_t *hi)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    char buf[64];
    if (!colon || (size_t)(colon - s) >= sizeof buf) return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = 0;
    if (mb_parse_size(buf, lo) || mb_parse_size(colon + 1, hi) || *lo > *hi) return -1;
    return 0;
}

/* Index of word (wlen bytes) in a comma-separated list, or -1. */
int mb_choice_index(const char *choices, const char *word, size_t wlen)
{
    int idx = 0;
    for (const char *p = choices; p && *p; idx++) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n == wlen && !strncmp(p, word, n)) return idx;
        p = c ? c + 1 : NULL;
    }
    return -1;
}
