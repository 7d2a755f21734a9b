/* --order: the seeded permutation, and rows kept in the fixed order whatever
 * order the loops ran in; the measurement options' parsing and defaults. */
#include "check.h"
#include "internal.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>

static int is_perm(const int *p, int n)
{
    int seen[64] = {0};
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]]) return 0;
        seen[p[i]] = 1;
    }
    return 1;
}

/* Three nested loops as a program writes them (sizes kept in order at depth
 * 1, between two shuffled levels), a row per innermost item. */
static void run_loops(struct mb_run *run, int *order_seen, int *nseen)
{
    for (int j = 0; j < 4; j++) {
        int t = mb_order(run, 0, 4, j, 0);
        for (int z = 0; z < 3; z++) {
            mb_order(run, 1, 3, z, 1);
            for (int k = 0; k < 5; k++) {
                int m = mb_order(run, 2, 5, k, 0);
                struct mb_row row;
                mb_row_init(&row, "t", "m");
                row.bytes = t * 100 + z * 10 + m; /* the fixed order is increasing */
                order_seen[(*nseen)++] = (int)row.bytes;
                mb_order_mark(run, &row); /* mb_begin's */
                mb_order_insert(run, &row);
            }
        }
    }
}

int main(void)
{
    int a[40], b[40], c[40];
    mb_permutation(7, a, 40);
    mb_permutation(7, b, 40);
    mb_permutation(8, c, 40);
    CHECK(is_perm(a, 40) && is_perm(c, 40));
    CHECK(!memcmp(a, b, sizeof a)); /* the same seed, the same order: on every rank */
    CHECK(memcmp(a, c, sizeof a));   /* another seed, another order */
    int ident = 1;
    for (int i = 0; i < 40; i++) ident &= a[i] == i;
    CHECK(!ident);
    mb_permutation(1, a, 1);
    CHECK(a[0] == 0);

    for (int shuffle = 0; shuffle < 2; shuffle++) {
        struct mb_run run;
        memset(&run, 0, sizeof run);
        run.opts.shuffle = shuffle;
        run.opts.order_seed = 12345;
        for (int d = 0; d < MB_ORDER_DEPTH; d++) run.order_path[d] = -1;
        run.rows = calloc(60, sizeof *run.rows);
        int seen[60], n = 0;
        run_loops(&run, seen, &n);
        CHECK(n == 60 && run.nrows == 60);
        int sorted = 1, measured_sorted = 1;
        for (int i = 1; i < 60; i++) {
            sorted &= run.rows[i - 1].bytes < run.rows[i].bytes;
            measured_sorted &= seen[i - 1] < seen[i];
        }
        CHECK(sorted); /* the tables' order, always */
        CHECK(measured_sorted == !shuffle); /* the order things ran in: as listed only under fixed */
        if (shuffle) { /* sizes (depth 1, keep) still ran in order within each item */
            for (int i = 1; i < 60; i++)
                if (seen[i] / 100 == seen[i - 1] / 100 && seen[i] / 10 % 10 != seen[i - 1] / 10 % 10)
                    CHECK(seen[i] / 10 % 10 == seen[i - 1] / 10 % 10 + 1);
        }
        mb_order_free(&run);
        free(run.rows);
    }

    /* the options */
    static const struct mb_program sized = {.name = "s", .summary = "", .flags = MB_USES_SIZES, .size_max = 1 << 20,
                                            .rel_ci = 0.01, .sweep_budget = 1.5};
    static const struct mb_program plain = {.name = "p", .summary = ""};
    struct mb_opts o;
    int action;
    const char *err;
    char *none[] = {(char *)"s", NULL};
    CHECK(mb_parse_options(1, none, &sized, &o, &action) == NULL);
    CHECK(o.rel_ci == 0.01 && o.sweep_budget == 1.5 && o.sync == MB_SYNC_AUTO && !o.shuffle && o.order_seed == -1);
    CHECK(o.window_us == 0);
    char *quick[] = {(char *)"s", (char *)"--quick", NULL};
    CHECK(mb_parse_options(2, quick, &sized, &o, &action) == NULL && o.sweep_budget == 0);
    char *given[] = {(char *)"s", (char *)"--rel-ci", (char *)"0.05", (char *)"--sweep-budget", (char *)"3",
                     (char *)"--sync", (char *)"window", (char *)"--window-us", (char *)"250",
                     (char *)"--order", (char *)"shuffle", (char *)"--order-seed", (char *)"9", NULL};
    CHECK(mb_parse_options(13, given, &sized, &o, &action) == NULL);
    CHECK(o.rel_ci == 0.05 && o.sweep_budget == 3 && o.sync == MB_SYNC_WINDOW && o.window_us == 250);
    CHECK(o.shuffle && o.order_seed == 9);
    char *plain_def[] = {(char *)"p", NULL};
    CHECK(mb_parse_options(1, plain_def, &plain, &o, &action) == NULL && o.rel_ci == 0.02 && o.sweep_budget == 0);
    char *bar[] = {(char *)"p", (char *)"--sync", (char *)"barrier", NULL};
    CHECK(mb_parse_options(3, bar, &plain, &o, &action) == NULL && o.sync == MB_SYNC_BARRIER);
    char *win_plain[] = {(char *)"p", (char *)"--window-us", (char *)"50", NULL}; /* p starts on barriers */
    err = mb_parse_options(3, win_plain, &plain, &o, &action);
    CHECK(err && !strcmp(err, "--window-us needs --sync window"));
    char *sweep_plain[] = {(char *)"p", (char *)"--sweep-budget", (char *)"2", NULL};
    err = mb_parse_options(3, sweep_plain, &plain, &o, &action);
    CHECK(err && strstr(err, "--sweep-budget does not apply to p"));
    return CHECK_DONE();
}
