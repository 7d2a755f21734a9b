/* The rounds file: for every group of tests measured interleaved
 * (mb_measure_group), each kept round's sample of each member, so that a
 * comparison between two members can pair them round by round.  Beside the
 * CSV, named like it with "-rounds.csv" for ".csv"; the JSON names it
 * ("rounds") with the seed of the rounds' orders ("rounds_seed").  Format:
 * docs/results-format.md, "The rounds file". */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static FILE *rounds;
static int opened; /* tried already (rank 0) */

static const char *const rounds_columns = "group,round,row,pos,time_s";

void mb_rounds_begin(struct mb_run *run, unsigned long long seed)
{
    if (opened || run->rank != 0 || !run->csv_path) return;
    opened = 1;
    char *path = mb_beside(run->csv_path, MB_ROUNDS_SUFFIX);
    rounds = mb_aside_fopen(path); /* made afresh: nothing found there is written through */
    if (!rounds || fprintf(rounds, "%s\n", rounds_columns) < 0 || fflush(rounds)) {
        fprintf(stderr, "%s: warning: cannot write '%s': %s; the run goes on without per-round samples\n",
                run->prog->name, path, strerror(errno));
        if (rounds) fclose(rounds);
        rounds = NULL;
        remove(path);
        free(path);
        return;
    }
    /* the file's name, as a JSON string (it sits beside the CSV) */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char *json = malloc(2 * strlen(base) + 3), *p = json;
    *p++ = '"';
    for (const char *c = base; *c; c++) {
        if (*c == '"' || *c == '\\') *p++ = '\\';
        *p++ = (unsigned char)*c < 0x20 ? ' ' : *c;
    }
    *p++ = '"';
    *p = 0;
    char s[32];
    snprintf(s, sizeof s, "%llu", seed);
    mb_meta_add(run, "rounds", json);
    mb_meta_add(run, "rounds_seed", s);
    free(json);
    free(path);
}

/* rank 0: the last group's samples, until its rows have ended */
static struct {
    long group, nrounds;
    int n, ended;
    const struct mb_row **rows;
    int *csv_row; /* each row's 1-based data row in the CSV, once it ended */
    double *t;    /* [j * nrounds + r] */
    int *pos;
} kept;

static void drop(void)
{
    free(kept.rows);
    free(kept.csv_row);
    free(kept.t);
    free(kept.pos);
    kept.rows = NULL, kept.csv_row = NULL, kept.t = NULL, kept.pos = NULL;
    kept.n = 0;
}

void mb_rounds_keep(long group, int n, const struct mb_row *rows, const double *const *t, const int *const *pos,
                    long nrounds)
{
    drop();
    if (!rounds) return;
    size_t all = (size_t)n * (size_t)(nrounds > 0 ? nrounds : 1);
    kept.group = group, kept.nrounds = nrounds, kept.n = n, kept.ended = 0;
    kept.rows = malloc((size_t)n * sizeof *kept.rows);
    kept.csv_row = malloc((size_t)n * sizeof *kept.csv_row);
    kept.t = malloc(all * sizeof *kept.t);
    kept.pos = malloc(all * sizeof *kept.pos);
    for (int j = 0; j < n; j++) {
        kept.rows[j] = &rows[j];
        kept.csv_row[j] = 0;
        memcpy(kept.t + j * nrounds, t[j], (size_t)nrounds * sizeof *kept.t);
        memcpy(kept.pos + j * nrounds, pos[j], (size_t)nrounds * sizeof *kept.pos);
    }
}

/* The group's lines, by round then member, as one piece: all of them or none. */
static void write_kept(const struct mb_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    for (long r = 0; r < kept.nrounds; r++)
        for (int j = 0; j < kept.n; j++)
            fprintf(f, "%ld,%ld,%d,%d,%.9g\n", kept.group, r, kept.csv_row[j], kept.pos[j * kept.nrounds + r],
                    kept.t[j * kept.nrounds + r]);
    fclose(f);
    if (mb_write_whole(rounds, buf, len))
        fprintf(stderr, "%s: warning: per-round samples of group %ld were lost: %s\n", run->prog->name, kept.group,
                strerror(errno));
    free(buf);
}

void mb_rounds_ended(const struct mb_run *run, const struct mb_row *row)
{
    int j = 0;
    while (j < kept.n && kept.rows[j] != row) j++;
    if (j == kept.n || run->rank != 0) return; /* not a kept group's row */
    kept.csv_row[j] = run->nrows;
    if (++kept.ended < kept.n) return;
    if (rounds && !run->lost) write_kept(run); /* (lost: its rows are not in the CSV) */
    drop();
}
