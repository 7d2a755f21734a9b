/* --order: the order a program's tests run in, and the place each finished
 * row takes among the run's rows.  Under shuffle, tests run in a seeded
 * random order (ReproMPI's shuffled jobs: Hunold and Carpen-Amarie,
 * "Reproducible MPI Benchmarking Is Still Not As Easy As You Think", IEEE
 * TPDS 27(12), 2016), so that a slow drift of the machine spreads over all
 * methods instead of falling on the last ones; the tables still come out in
 * the usual order because rows are kept sorted by the items they belong to. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): small and well mixed; the
 * same seed gives the same sequence on every rank and every machine. */
static unsigned long long next(unsigned long long *x)
{
    unsigned long long z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void mb_permutation(unsigned long long seed, int *perm, int n)
{
    unsigned long long x = seed;
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int k = (int)(next(&x) % (unsigned long long)(i + 1)), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
}

void mb_order_seed(struct mb_run *run)
{
    long long seed = run->opts.order_seed;
    if (seed < 0 && run->rank == 0) { /* not given: one from the clock, recorded in the JSON */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20);
        x ^= (unsigned)getpid();
        seed = (long long)(next(&x) & 0xffffffffull);
    }
    MPI_Bcast(&seed, 1, MPI_LONG_LONG, 0, run->world);
    run->opts.order_seed = run->opts.shuffle ? seed : -1;
}

int mb_order(struct mb_run *run, int depth, int n, int j, int keep)
{
    if (depth < 0 || depth >= MB_ORDER_DEPTH || j < 0 || j >= n) return j; /* outside what is tracked */
    if (j == 0) { /* a loop starts: a fresh permutation for it */
        free(run->order_perm[depth]);
        run->order_perm[depth] = NULL;
        if (run->opts.shuffle && !keep && n > 1) {
            run->order_perm[depth] = malloc((size_t)n * sizeof(int));
            mb_permutation((unsigned long long)run->opts.order_seed * 0x2545f4914f6cdd1dull + ++run->order_draws,
                           run->order_perm[depth], n);
        }
    }
    int i = run->order_perm[depth] ? run->order_perm[depth][j] : j;
    run->order_path[depth] = i;
    for (int d = depth + 1; d < MB_ORDER_DEPTH; d++) run->order_path[d] = -1; /* before any inner item */
    return i;
}

static int before(const int *a, const int *b)
{
    for (int d = 0; d < MB_ORDER_DEPTH; d++)
        if (a[d] != b[d]) return a[d] < b[d];
    return 0;
}

void mb_order_mark(const struct mb_run *run, struct mb_row *row)
{
    memcpy(row->order, run->order_path, sizeof row->order);
}

void mb_order_insert(struct mb_run *run, const struct mb_row *row)
{
    int p = run->nrows; /* after every row that is not later in the fixed order: stable */
    while (p > 0 && before(row->order, run->rows[p - 1].order)) p--;
    memmove(&run->rows[p + 1], &run->rows[p], (size_t)(run->nrows - p) * sizeof *run->rows);
    run->rows[p] = *row;
    run->nrows++;
}

void mb_order_free(struct mb_run *run)
{
    for (int d = 0; d < MB_ORDER_DEPTH; d++) {
        free(run->order_perm[d]);
        run->order_perm[d] = NULL;
    }
}
