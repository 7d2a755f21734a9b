/* How fast can a face of one double per row be copied on this machine?  The
 * pack goal of issue 28 (pack >= 0.5 x memcpy at 16 KB faces) meets this
 * bound: each element of a strided face is its own cache line.  Outside MPI
 * and halocompare, the faces of --layout array's local arrays (2-D: the east
 * and west columns of a 2048 x 2048 interior; 3-D: the x faces of 45^3),
 * packed and unpacked as halocompare's copy loops do (one face at a time),
 * both faces of a pair in one pass down the rows, and memcpy of the same
 * bytes between two contiguous buffers.  Prints ns per double, median of 9.
 * Two ways the pass might have gone faster, each measured beside it: the
 * array on 2 MiB pages (MADV_HUGEPAGE: no TLB miss per row) and software
 * prefetch 8 rows ahead.
 *   cc -O2 -o strided bench/halo-array/strided.c && ./strided */
#define _DEFAULT_SOURCE /* madvise */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct geo {
    const char *name;
    size_t planes, rows, row; /* faces: planes x rows doubles, rows `row` doubles apart */
};

static double *A, *buf[4];
static size_t plane_stride;

static void face(const struct geo *g, size_t x, double *b, int in)
{
    for (size_t z = 0; z < g->planes; z++) {
        double *p = A + (z + 1) * plane_stride + g->row + x;
        for (size_t y = 0; y < g->rows; y++, p += g->row) {
            if (in) *p = *b++;
            else *b++ = *p;
        }
    }
}

static void pair(const struct geo *g, size_t xa, size_t xb, double *ba, double *bb, int in)
{
    for (size_t z = 0; z < g->planes; z++) {
        double *p = A + (z + 1) * plane_stride + g->row;
        for (size_t y = 0; y < g->rows; y++, p += g->row) {
            if (in) { p[xa] = *ba++; p[xb] = *bb++; }
            else { *ba++ = p[xa]; *bb++ = p[xb]; }
        }
    }
}

enum { AHEAD = 8 }; /* rows the prefetching pass looks ahead (past the face's end too: prefetches do not fault) */

/* pair() with software prefetch: a loop of its own, since a test in pair()'s loop slows it (0.42 -> 0.55). */
static void pair_prefetch(const struct geo *g, size_t xa, size_t xb, double *ba, double *bb, int in)
{
    for (size_t z = 0; z < g->planes; z++) {
        double *p = A + (z + 1) * plane_stride + g->row;
        const size_t ahead = AHEAD * g->row;
        if (in)
            for (size_t y = 0; y < g->rows; y++, p += g->row) {
                __builtin_prefetch(p + ahead + xa, 1), __builtin_prefetch(p + ahead + xb, 1);
                p[xa] = *ba++, p[xb] = *bb++;
            }
        else
            for (size_t y = 0; y < g->rows; y++, p += g->row) {
                __builtin_prefetch(p + ahead + xa, 0), __builtin_prefetch(p + ahead + xb, 0);
                *ba++ = p[xa], *bb++ = p[xb];
            }
    }
}

/* One pack-and-unpack of both faces, one pass each: ns per double. */
static double pass(const struct geo *g, long it, int prefetch)
{
    size_t n = g->planes * g->rows, inner = g->row - 2;
    void (*copy)(const struct geo *, size_t, size_t, double *, double *, int) = prefetch ? pair_prefetch : pair;
    double s = now();
    for (long i = 0; i < it; i++) {
        copy(g, 1, inner, buf[0], buf[1], 0);
        copy(g, 0, inner + 1, buf[2], buf[3], 1);
    }
    return (now() - s) / (double)it / (4.0 * (double)n) * 1e9;
}

/* The array: 2 MiB-aligned, on huge pages if asked (and the kernel grants them: THP "madvise" or "always"). */
static double *array(size_t doubles, int huge)
{
    size_t bytes = (doubles * sizeof(double) + (1u << 21) - 1) & ~(size_t)((1u << 21) - 1);
    void *p = NULL;
    if (posix_memalign(&p, 1u << 21, bytes)) return NULL;
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);
    for (size_t i = 0; i < doubles; i++) ((double *)p)[i] = (double)i;
    return p;
}

/* kB of this process on huge pages (/proc/self/smaps_rollup's AnonHugePages), -1 if unknown. */
static long huge_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(void)
{
    const struct geo geos[] = {{"2-D 2048x2048, east/west columns", 1, 2048, 2050},
                               {"3-D 45^3, x faces", 45, 45, 47}};
    for (size_t k = 0; k < sizeof geos / sizeof *geos; k++) {
        const struct geo *g = &geos[k];
        size_t n = g->planes * g->rows, inner = g->row - 2;
        plane_stride = g->planes > 1 ? g->row * g->row : 0;
        size_t total = plane_stride ? (g->planes + 2) * plane_stride : g->row * g->row;
        double *small = array(total, 0), *huge = array(total, 1);
        long huge_in_use = huge_kb();
        for (int i = 0; i < 4; i++) buf[i] = malloc(n * sizeof *A);
        if (!small || !huge || !buf[0] || !buf[1] || !buf[2] || !buf[3]) return 1;
        long it = (long)(40e6 / (double)n);
        double t[5][9];
        for (int r = 0; r < 9; r++) {
            A = small;
            double s = now();
            for (long i = 0; i < it; i++) {
                face(g, 1, buf[0], 0), face(g, inner, buf[1], 0);
                face(g, 0, buf[2], 1), face(g, inner + 1, buf[3], 1);
            }
            t[0][r] = (now() - s) / (double)it / (4.0 * (double)n) * 1e9;
            t[1][r] = pass(g, it, 0);
            s = now();
            for (long i = 0; i < it; i++) {
                for (int j = 0; j < 2; j++) {
                    memcpy(buf[2 + j], buf[j], n * sizeof *A);
                    memcpy(buf[j], buf[2 + j], n * sizeof *A);
                }
                __asm__ volatile("" ::"r"(buf[0]) : "memory"); /* keep the copies */
            }
            t[2][r] = (now() - s) / (double)it / (4.0 * (double)n) * 1e9;
            t[3][r] = pass(g, it, 1);
            A = huge;
            t[4][r] = pass(g, it, 0);
        }
        for (int j = 0; j < 5; j++) qsort(t[j], 9, sizeof t[j][0], cmp);
        printf("%s (%zu-byte faces): one face at a time %.2f ns/double, both faces per pass %.2f, "
               "memcpy %.2f; best strided / memcpy rate %.2f\n", g->name, n * sizeof *A, t[0][4], t[1][4], t[2][4],
               t[2][4] / t[1][4]);
        printf("    both faces per pass with prefetch %d rows ahead %.2f ns/double; on huge pages (%ld KiB of them "
               "in use) %.2f\n", AHEAD, t[3][4], huge_in_use, t[4][4]);
        free(small);
        free(huge);
        for (int i = 0; i < 4; i++) free(buf[i]);
    }
    return 0;
}
