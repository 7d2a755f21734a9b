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

void mb_rounds_write(const struct mb_run *run, long group, int n, const int *row, const double *const *t,
                     const int *const *pos, long nrounds)
{
    if (!rounds || run->rank != 0 || run->lost) return; /* (lost: its rows are not in the CSV) */
    /* the group's lines go out together, after its rows (the caller wrote them) */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    for (long r = 0; r < nrounds; r++)
        for (int j = 0; j < n; j++) fprintf(f, "%ld,%ld,%d,%d,%.9g\n", group, r, row[j], pos[j][r], t[j][r]);
    fclose(f);
    if (mb_write_whole(rounds, buf, len)) /* the group whole, or none of it */
        fprintf(stderr, "%s: warning: per-round samples of group %ld were lost: %s\n", run->prog->name, group,
                strerror(errno));
    free(buf);
}
