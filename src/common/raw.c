/* --raw FILE: every repetition's time on every rank, one line each, for
 * distribution plots.  Long format; (run_id, row) joins a line to its CSV
 * row (row = the 1-based data row of the CSV).  The columns are defined in
 * analysis/mpimb/schema/raw.schema.json.
 *
 * A row's samples reach the file only after the row reaches the CSV: the
 * timing loop hands them over (mb_raw_write) before the program ends the
 * test, so rank 0 keeps them here until mb_end has written and flushed the
 * row (mb_raw_flush, from term.c's update).  Whenever the job dies, the raw
 * file holds no row the CSV lacks. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const raw_columns = "run_id,row,test,method,comm,bytes,rep,rank,seconds";

static char *pending; /* rank 0: the lines of the row not yet ended */
static size_t pending_len, pending_cap;

static void keep(const char *s, size_t n)
{
    if (pending_len + n > pending_cap) {
        pending_cap = 2 * (pending_len + n) + 4096;
        pending = realloc(pending, pending_cap);
    }
    memcpy(pending + pending_len, s, n);
    pending_len += n;
}

void mb_raw_discard(void) { pending_len = 0; }

int mb_raw_flush(struct mb_run *run)
{
    int rc = 0;
    if (run->raw && pending_len) rc = mb_write_whole(run->raw, pending, pending_len); /* a row's lines: all or none */
    pending_len = 0;
    return rc ? -1 : 0;
}

void mb_raw_release(void)
{
    free(pending);
    pending = NULL;
    pending_len = pending_cap = 0;
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
        if (row->bytes >= 0) snprintf(bytes, sizeof bytes, "%lld", row->bytes);
        for (int r = 0; r < size; r++) {
            const double *x = all + (size_t)r * w;
            for (long i = 0; i < n && !x[1]; i++) {
                int l = snprintf(line, sizeof line, "%s,%d,%s,%s,%s,%s,%ld,%d,%.9g\n", run->run_id, run->nrows + 1,
                                 reference && k->ref_test ? k->ref_test : row->test, reference ? "reference" : row->method,
                                 row->comm, bytes, i, (int)x[0], x[2 + i]);
                if (l > 0) keep(line, (size_t)l < sizeof line ? (size_t)l : sizeof line - 1);
            }
        }
    }
    free(rec);
    free(all);
}
