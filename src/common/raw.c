/* --raw FILE: every repetition's time on every rank, one line each, for
 * distribution plots.  Long format; (run_id, row) joins a line to its CSV
 * row (row = the 1-based data row of the CSV).  The columns are defined in
 * analysis/mpimb/schema/raw.schema.json.
 *
 * A row's samples reach the file only after the row reaches the CSV: the
 * timing loop hands them over (mb_raw_write) before the program ends the
 * test, so rank 0 keeps them here, each row's apart (a group's rows are all
 * measured before the first of them ends), until mb_end has written and
 * flushed that row (mb_raw_flush, from term.c's update); the row number is
 * written in then, when the row has its place in the CSV.  Whenever the job
 * dies, the raw file holds no row the CSV lacks. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const raw_columns = "run_id,row,test,method,comm,bytes,rep,rank,seconds";

/* rank 0: the lines of a row measured and not ended yet, after their run id and row number */
struct held {
    const struct mb_row *row;
    char *lines;
    size_t len, cap;
};
static struct held *held;
static int nheld, cap_held;

static struct held *held_for(const struct mb_row *row)
{
    for (int i = 0; i < nheld; i++)
        if (held[i].row == row) return &held[i];
    if (nheld == cap_held) {
        cap_held = cap_held ? 2 * cap_held : 8;
        held = realloc(held, (size_t)cap_held * sizeof *held);
    }
    held[nheld] = (struct held){row, NULL, 0, 0};
    return &held[nheld++];
}

static void keep(struct held *h, const char *s, size_t n)
{
    if (h->len + n > h->cap) {
        h->cap = 2 * (h->len + n) + 4096;
        h->lines = realloc(h->lines, h->cap);
    }
    memcpy(h->lines + h->len, s, n);
    h->len += n;
}

void mb_raw_discard(void)
{
    for (int i = 0; i < nheld; i++) free(held[i].lines);
    nheld = 0;
}

/* The row's lines, each behind "run id,row number,", as one piece: all of them or none. */
static int write_row(struct mb_run *run, const struct held *h)
{
    char lead[160];
    int n = snprintf(lead, sizeof lead, "%s,%d,", run->run_id, run->nrows);
    size_t ln = n > 0 ? (size_t)n : 0, lines = 0;
    for (size_t i = 0; i < h->len; i++) lines += h->lines[i] == '\n';
    char *buf = malloc(h->len + lines * ln + 1), *w = buf;
    for (const char *p = h->lines, *end = h->lines + h->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)(nl - p) + 1;
        memcpy(w, lead, ln);
        memcpy(w + ln, p, len);
        w += ln + len;
        p += len;
    }
    int rc = mb_write_whole(run->raw, buf, (size_t)(w - buf));
    free(buf);
    return rc;
}

int mb_raw_flush(struct mb_run *run, const struct mb_row *row)
{
    int rc = 0;
    for (int i = 0; i < nheld; i++) {
        if (held[i].row != row) continue;
        if (run->raw && held[i].len) rc = write_row(run, &held[i]);
        free(held[i].lines);
        held[i] = held[--nheld];
        break;
    }
    return rc ? -1 : 0;
}

void mb_raw_release(void)
{
    mb_raw_discard();
    free(held);
    held = NULL;
    cap_held = 0;
}

int mb_raw_open(struct mb_run *run, char *err, size_t len)
{
    char *aside = mb_aside_path(run->opts.raw);
    int fd = mb_aside_create(aside, 1, err, len, run->opts.raw), e = errno;
    run->raw = fd < 0 ? NULL : fdopen(fd, "w");
    if (run->raw && fprintf(run->raw, "%s\n", raw_columns) > 0 && !fflush(run->raw)) {
        free(aside);
        return 0;
    }
    if (fd >= 0) { /* made, not written */
        e = errno;
        snprintf(err, len, "cannot write '%s': %s", run->opts.raw, strerror(e));
        run->raw ? fclose(run->raw) : close(fd);
        remove(aside);
    }
    run->raw = NULL;
    free(aside);
    errno = e;
    return -1;
}

/* Each rank sends [world rank, idle, n samples] to the rank of comm that
 * is world rank 0, which writes the lines of the ranks that took part. */
void mb_raw_write(struct mb_run *run, const struct mb_kernel *k, const struct mb_row *row, int reference,
                  const double *mine, long n)
{
    if (!run->opts.raw) return;
    int size, me, root, mine_if_writer;
    MPI_Comm_size(k->comm, &size);
    MPI_Comm_rank(k->comm, &me);
    mine_if_writer = run->rank == 0 ? me : -1;
    MPI_Allreduce(&mine_if_writer, &root, 1, MPI_INT, MPI_MAX, k->comm);
    if (root < 0) return; /* world rank 0 is not in comm: nobody to write */
    size_t w = (size_t)n + 2;
    double *rec = malloc(w * sizeof *rec), *all = NULL;
    rec[0] = run->rank;
    rec[1] = k->idle;
    memcpy(rec + 2, mine, (size_t)n * sizeof *rec);
    if (me == root) all = malloc((size_t)size * w * sizeof *all);
    MPI_Gather(rec, (int)w, MPI_DOUBLE, all, (int)w, MPI_DOUBLE, root, k->comm);
    if (me == root && run->raw) {
        char bytes[32] = "", line[512];
        struct held *h = held_for(row);
        if (row->bytes >= 0) snprintf(bytes, sizeof bytes, "%lld", row->bytes);
        for (int r = 0; r < size; r++) {
            const double *x = all + (size_t)r * w;
            for (long i = 0; i < n && !x[1]; i++) {
                int l = snprintf(line, sizeof line, "%s,%s,%s,%s,%ld,%d,%.9g\n",
                                 reference && k->ref_test ? k->ref_test : row->test, reference ? "reference" : row->method,
                                 row->comm, bytes, i, (int)x[0], x[2 + i]);
                if (l > 0 && (size_t)l < sizeof line) keep(h, line, (size_t)l);
            }
        }
    }
    free(rec);
    free(all);
}
