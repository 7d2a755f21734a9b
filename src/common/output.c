/* CSV rows, progress lines and the plain-text table printer. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The results columns, in order: analysis/mpimb/schema/results.schema.json
 * is their one definition (types, meaning); tests/test_schema.py fails when
 * this list or mb_csv_row() drifts from it. */
static const char *const columns =
    "run_id,program,test,method,comm,neighbors,periodic,bytes,nprocs,nnodes,ppn,threads,thread_level,params,"
    "iters,reps,stop_reason,time_min_s,time_median_s,time_mean_s,time_max_s,time_stddev_s,time_ci_lo_s,"
    "time_ci_hi_s,time_p90_s,time_p99_s,rank_min_s,rank_mean_s,reps_rejected,sync_error_s,cpu_pct,mbps,"
    "agg_mbps,calls,total_bytes,slowest_rank,verified,label";

void mb_csv_header(FILE *f) { fprintf(f, "%s\n", columns); }

/* RFC 4180: quote a field that holds a comma, quote or newline. */
static void field(FILE *f, const char *s, int last)
{
    if (s && strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else if (s) {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void num(FILE *f, double v, int present)
{
    if (present && isfinite(v)) fprintf(f, "%.9g", v); /* NAN: no such figure (a CI below 6 repetitions) */
    fputc(',', f);
}

static void integer(FILE *f, long long v)
{
    if (v >= 0) fprintf(f, "%lld", v);
    fputc(',', f);
}

static const int thread_levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                     MPI_THREAD_MULTIPLE};

int mb_thread_level_of(int index) { return thread_levels[index >= 0 && index < 4 ? index : 3]; }

/* The words of MB_THREAD_LEVEL_WORDS, the one list of the names, split once
 * (threads may ask at the same time). */
static char thread_words[4][16];
static pthread_once_t thread_words_once = PTHREAD_ONCE_INIT;

const char *mb_word(const char *list, int i, char *buf, size_t len)
{
    const char *w = list;
    for (; i > 0 && w; i--) w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL;
    snprintf(buf, len, "%.*s", w ? (int)strcspn(w, ",") : 0, w ? w : "");
    return buf;
}

static void split_thread_words(void)
{
    for (int i = 0; i < 4; i++) mb_word(MB_THREAD_LEVEL_WORDS, i, thread_words[i], sizeof thread_words[i]);
}

const char *mb_thread_level_name(int l)
{
    pthread_once(&thread_words_once, split_thread_words);
    int index = 3;
    for (int i = 0; i < 4; i++)
        if (thread_levels[i] == l) index = i;
    return thread_words[index];
}

/* A full disk (or quota, or size limit) takes a write only in part: the
 * part is cut off again, so a file ends with whole lines (rows, their raw
 * samples, a group's rounds). */
int mb_write_whole(FILE *f, const char *buf, size_t len)
{
    if (fflush(f)) return -1;
    int fd = fileno(f);
    off_t at = lseek(fd, 0, SEEK_CUR);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            if (at >= 0 && ftruncate(fd, at) == 0) lseek(fd, at, SEEK_SET); /* none of it, then */
            errno = e;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

int mb_csv_row(const struct mb_run *run, const struct mb_row *r)
{
    /* the line is made in memory and goes out as one piece (a full disk: none of it, outputs.c) */
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    if (!f) return -1;
    int m = !r->na; /* measured */
    field(f, run->run_id, 0);
    field(f, run->prog->name, 0);
    field(f, r->test, 0);
    field(f, r->method, 0);
    field(f, r->comm, 0);
    integer(f, r->neighbors);
    integer(f, r->periodic);
    integer(f, r->bytes);
    integer(f, run->nprocs);
    integer(f, run->nnodes);
    integer(f, run->ppn);
    integer(f, r->threads);
    field(f, mb_thread_level_name(run->thread_level), 0);
    field(f, r->params, 0);
    integer(f, m ? r->iters : -1);
    integer(f, m ? r->reps : -1);
    field(f, r->stop_reason, 0);
    const double v[] = {r->t.min,   r->t.median, r->t.mean, r->t.max, r->t.stddev,
                        r->t.ci_lo, r->t.ci_hi,  r->t.p90,  r->t.p99};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) num(f, v[i], m);
    num(f, r->t.rank_min, m && r->t.rank_min >= 0);
    num(f, r->t.rank_mean, m && r->t.rank_mean >= 0);
    integer(f, m ? r->reps_rejected : -1);
    num(f, r->sync_error, m && r->sync_error >= 0);
    num(f, r->cpu_pct, m && r->cpu_pct >= 0);
    num(f, r->mbps, m && r->mbps > 0);
    num(f, r->agg_mbps, m && r->agg_mbps > 0);
    integer(f, r->calls);
    integer(f, r->total_bytes);
    integer(f, r->slowest_rank);
    field(f, r->verified, 0);
    field(f, run->label, 1);
    int rc = fclose(f) ? -1 : mb_write_whole(run->csv, line, len); /* a killed job keeps every finished row */
    free(line);
    return rc;
}

/* v as the CSV keeps it (9 significant digits): the one input of a table
 * cell here and in mpimb-report (render.shown), so that a figure at a
 * rounding tie (0.6965 us) shows alike from memory and from the CSV. */
static double shown(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", v);
    return strtod(buf, NULL);
}

void mb_fmt_ratio(char *buf, size_t len, double v)
{
    if (isfinite(v))
        snprintf(buf, len, "%.2f", shown(v));
    else
        snprintf(buf, len, "-");
}

void mb_fmt_value(char *buf, size_t len, double v)
{
    if (isfinite(v)) v = shown(v);
    if (!(v > 0) || !isfinite(v))
        snprintf(buf, len, "%s", v == 0 ? "0" : "-");
    else if (v >= 1000)
        snprintf(buf, len, "%.0f", v);
    else if (v >= 100)
        snprintf(buf, len, "%.1f", v);
    else if (v >= 10)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

/* Characters a cell shows: UTF-8 continuation bytes take no column ("±"). */
static int shown_len(const char *s)
{
    int n = 0;
    for (; s && *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Tables wider than this wrap into blocks of columns, each repeating the
 * row labels (column 0), so that no line is longer than a terminal's. */
enum { MB_TABLE_WIDTH = 120 };

/* One block: columns [c0, c1) after column 0.  A group that began before c0
 * gets its label again, marked as continued. */
static void print_block(FILE *f, int nrows, int ncols, char **cells, const char *const *groups, const int *w, int c0,
                        int c1)
{
    int cols[256], n = 0;
    cols[n++] = 0;
    for (int c = c0; c < c1 && n < 256; c++) cols[n++] = c;
    int total = 0;
    for (int i = 0; i < n; i++) total += w[cols[i]] + (i ? 2 : 0);
    if (groups) { /* each group label starts above its group's first column */
        int width = total > MB_TABLE_WIDTH ? total : MB_TABLE_WIDTH; /* a last label may overhang */
        char *line = malloc((size_t)width + 1);
        memset(line, ' ', (size_t)width);
        line[width] = 0;
        int start[256], at = w[0];
        for (int i = 1; i < n; i++) start[i] = at += 2, at += w[cols[i]];
        for (int i = 1; i < n; i++) {
            const char *g = groups[cols[i]];
            char buf[128];
            if (!g && i == 1) /* the block starts inside a group: name it again */
                for (int c = cols[i] - 1; c >= 1 && !g; c--) g = groups[c];
            if (!g) continue;
            int room = width - start[i]; /* up to the next label in this block */
            for (int j = i + 1; j < n; j++)
                if (groups[cols[j]]) {
                    room = start[j] - 2 - start[i];
                    break;
                }
            if (!groups[cols[i]] && snprintf(buf, sizeof buf, "%s (cont.)", g) <= room) g = buf;
            int len = (int)strlen(g) < room ? (int)strlen(g) : room;
            if (len > 0) memcpy(line + start[i], g, (size_t)len);
        }
        for (int e = width - 1; e >= 0 && line[e] == ' '; e--) line[e] = 0;
        fprintf(f, "%s\n", line);
        free(line);
    }
    for (int r = 0; r < nrows; r++) {
        for (int i = 0; i < n; i++) {
            const char *s = cells[r * ncols + cols[i]];
            int pad = w[cols[i]] - shown_len(s);
            if (i)
                fprintf(f, "  %*s%s", pad, "", s ? s : "");
            else
                fprintf(f, "%s%*s", s ? s : "", pad, "");
        }
        fputc('\n', f);
        if (r == 0) {
            for (int i = 0; i < total; i++) fputc('-', f);
            fputc('\n', f);
        }
    }
}

void mb_table_print(FILE *f, int nrows, int ncols, char **cells, const char *const *groups)
{
    int *w = calloc((size_t)ncols, sizeof *w);
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < ncols; c++) {
            const char *s = cells[r * ncols + c];
            int l = shown_len(s);
            if (l > w[c]) w[c] = l;
        }
    /* a group label wider than its first column still has to fit the line */
    for (int c0 = 1; c0 < ncols || c0 == 1;) {
        int used = w[0], c1 = c0;
        while (c1 < ncols && (c1 == c0 || used + 2 + w[c1] <= MB_TABLE_WIDTH)) used += 2 + w[c1++];
        if (groups && c1 < ncols && !groups[c1]) /* rather end where a group ends, if not much is lost */
            for (int g = c1 - 1; g > c0; g--)
                if (groups[g]) {
                    if (2 * (g - c0) >= c1 - c0) c1 = g;
                    break;
                }
        if (c0 > 1) fputc('\n', f);
        print_block(f, nrows, ncols, cells, groups, w, c0, c1);
        if (c1 >= ncols) break;
        c0 = c1;
    }
    free(w);
}

/* Ended by the time budget with fewer repetitions than a 95 % interval needs (render.few_by_budget's rule); a
 * --max-reps below that ends rows on max-reps, and is said once, at the start. */
int mb_row_few(const struct mb_row *r)
{
    return !r->na && r->reps > 0 && r->reps < MB_CI_MIN_REPS && !strcmp(r->stop_reason, "budget");
}

char *mb_cell(const struct mb_row *r, double v)
{
    char buf[32];
    if (!r)
        snprintf(buf, sizeof buf, "-");
    else if (r->na)
        snprintf(buf, sizeof buf, "n/a");
    else if (!strcmp(r->verified, "no")) /* a failed check is a result, shown loudly */
        snprintf(buf, sizeof buf, "FAILED");
    else {
        mb_fmt_value(buf, sizeof buf, v);
        if (mb_row_few(r) && strlen(buf) + 1 < sizeof buf) strcat(buf, "~"); /* as mpimb-report: render.FEW */
    }
    return strdup(buf);
}

char *mb_ci_cell(const struct mb_row *r)
{
    char buf[32] = "-";
    const struct mb_stats *t = r ? &r->t : NULL;
    if (t && !r->na && t->median > 0 && isfinite(t->ci_lo) && isfinite(t->ci_hi)) {
        double half = t->median - t->ci_lo > t->ci_hi - t->median ? t->median - t->ci_lo : t->ci_hi - t->median;
        double pct = 100 * half / t->median;
        snprintf(buf, sizeof buf, pct < 10 ? "\u00b1%.1f%%" : "\u00b1%.0f%%", pct);
    }
    return strdup(buf);
}

void mb_table_emit(FILE *f, int nrows, int ncols, char **cells, const char *const *groups)
{
    mb_table_print(f, nrows, ncols, cells, groups);
    for (int i = 0; i < nrows * ncols; i++) free(cells[i]);
    free(cells);
}

void mb_table_new(struct mb_table *t, int ncols, const char *const *head)
{
    t->ncols = ncols;
    t->nrows = 1;
    t->cells = calloc((size_t)ncols, sizeof *t->cells);
    for (int i = 0; i < ncols; i++) t->cells[i] = strdup(head[i]);
}

char **mb_table_row(struct mb_table *t)
{
    t->cells = realloc(t->cells, (size_t)(t->nrows + 1) * (size_t)t->ncols * sizeof *t->cells);
    char **r = t->cells + (size_t)t->nrows * (size_t)t->ncols;
    for (int i = 0; i < t->ncols; i++) r[i] = NULL;
    t->nrows++;
    return r;
}

void mb_table_done(FILE *f, struct mb_table *t, const char *title, const char *const *groups)
{
    if (t->nrows > 1) {
        fprintf(f, "\n%s\n", title);
        mb_table_emit(f, t->nrows, t->ncols, t->cells, groups);
    } else {
        for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
        free(t->cells);
    }
    t->cells = NULL;
}

/* "halocompare halo irecv-isend world 4-nbr periodic 16000 B": a row as the progress lines and warnings name it. */
void mb_row_init(struct mb_row *row, const char *test, const char *method)
{
    *row = (struct mb_row){.neighbors = -1, .periodic = -1, .threads = -1, .bytes = -1, .verified = "",
                           .reps_rejected = -1, .sync_error = -1, .cpu_pct = -1,
                           .calls = -1, .total_bytes = -1, .slowest_rank = -1,
                           .t = {.rank_min = -1, .rank_mean = -1}};
    snprintf(row->test, sizeof row->test, "%s", test ? test : "");
    snprintf(row->method, sizeof row->method, "%s", method ? method : "");
}

void mb_row_desc(const struct mb_run *run, const struct mb_row *r, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s %s", run->prog->name, r->test);
    if (r->method[0] && n < (int)len) n += snprintf(buf + n, len - (size_t)n, " %s", r->method);
    if (r->comm[0] && n < (int)len) n += snprintf(buf + n, len - (size_t)n, " %s", r->comm);
    if (r->neighbors >= 0 && n < (int)len) n += snprintf(buf + n, len - (size_t)n, " %d-nbr", r->neighbors);
    if (r->periodic >= 0 && n < (int)len)
        n += snprintf(buf + n, len - (size_t)n, " %s", r->periodic ? "periodic" : "non-periodic");
    if (r->threads > 1 && n < (int)len) n += snprintf(buf + n, len - (size_t)n, " %dT", r->threads);
    if (r->bytes >= 0 && n < (int)len) snprintf(buf + n, len - (size_t)n, " %lld B", r->bytes);
}
