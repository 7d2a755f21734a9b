/* Sizes (issue 26, parts 3, 5 and 6): a size above 2^31 is carried exactly
 * from the option parser into the row's bytes and the CSV; an MPI call with
 * an int count refuses it with an n/a that says why; every -m is capped at
 * 1G and the messages say the limits; outputs that would overwrite each
 * other are refused before MPI starts. */
#include "check.h"
#include "internal.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t big;
static long count = 8;
static const struct mb_option opts[] = {
    {"big", 0, MB_OPT_SIZE, &big, 0, 1ll << 40, NULL, "a size option with a limit above 2^31"},
    {"count", 'c', MB_OPT_INT, &count, 1, 1 << 24, NULL, "doubles"},
    {0},
};
static const struct mb_program prog = {.name = "t", .summary = "", .options = opts, .flags = MB_USES_SIZES,
                                       .size_max = 1 << 20};

static const char *parse(struct mb_opts *o, const char *a1, const char *a2, const char *a3, const char *a4)
{
    char *argv[6] = {(char *)"t", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL};
    int argc = 1, action;
    while (argc < 5 && argv[argc]) argc++;
    return mb_parse_options(argc, argv, &prog, o, &action);
}

static int says(const char *err, const char *what) { return err && strstr(err, what); }

/* The bytes column of the one data row of a CSV written to f. */
static long long csv_bytes(FILE *f)
{
    char line[4096];
    rewind(f);
    if (!fgets(line, sizeof line, f) || !fgets(line, sizeof line, f)) return -2;
    char *p = line;
    for (int col = 0; col < 7; col++) p = strchr(p, ',') + 1; /* bytes is the 8th column */
    return strtoll(p, NULL, 10);
}

int main(void)
{
    struct mb_opts o;

    /* 4 GiB through the parser and into the row and the CSV, exactly */
    CHECK(parse(&o, "--big", "4G", NULL, NULL) == NULL && big == 4294967296ull);
    CHECK(parse(&o, "--big", "5000000000", NULL, NULL) == NULL && big == 5000000000ull);
    struct mb_run run = {.prog = &prog, .nprocs = 2, .nnodes = 1, .ppn = 2, .thread_level = MPI_THREAD_SINGLE};
    snprintf(run.run_id, sizeof run.run_id, "r");
    snprintf(run.label, sizeof run.label, "l");
    struct mb_row row;
    mb_row_init(&row, "latency", "m");
    row.bytes = (long long)big;
    run.csv = tmpfile();
    mb_csv_header(run.csv);
    mb_csv_row(&run, &row);
    CHECK(csv_bytes(run.csv) == 5000000000ll);
    fclose(run.csv);

    /* an MPI call's int count: refused with a reason, the size kept */
    CHECK(mb_int_count(&run, &row, 1ll << 30, 1) == 1 << 30 && !row.na);
    CHECK(mb_int_count(&run, &row, 4294967296ll, 8) == 536870912 && !row.na);
    CHECK(mb_int_count(&run, &row, 4294967296ll, 1) == -1 && row.na);
    CHECK(strstr(row.stop_reason, "n/a: 4294967296 B is 4294967296 elements, more than the int count") != NULL);
    CHECK(row.bytes == 5000000000ll); /* the row still says what was asked */

    /* -m: 1G at most, and the message says so (not "MIN <= MAX") */
    CHECK(parse(&o, "-m", "1G:1G", NULL, NULL) == NULL && o.size_min == 1u << 30 && o.size_max == 1u << 30);
    CHECK(says(parse(&o, "-m", "64G:64G", NULL, NULL), "--sizes: messages are at most 1G bytes (1073741824), got '64G:64G'"));
    CHECK(says(parse(&o, "-m", "0:1T", NULL, NULL), "messages are at most 1G bytes"));
    CHECK(says(parse(&o, "-m", "0:2G", NULL, NULL), "messages are at most 1G bytes"));
    CHECK(says(parse(&o, "-m", "64:8", NULL, NULL), "--sizes must be MIN:MAX in bytes with MIN <= MAX, got '64:8'"));
    CHECK(says(parse(&o, "-m", "8:1P", NULL, NULL), "--sizes must be MIN:MAX in bytes (K/M/G/T suffixes allowed)"));
    /* an integer above its limit: the limit */
    CHECK(says(parse(&o, "--count", "16777217", NULL, NULL), "--count must be at most 16777216, got '16777217'"));
    CHECK(parse(&o, "--count", "16777216", NULL, NULL) == NULL && count == 16777216);
    CHECK(says(parse(&o, "--count", "-5", NULL, NULL), "--count must be a positive integer, got '-5'"));

    /* outputs: each its own file */
    char dir[] = "/tmp/mpimb-unit-XXXXXX";
    CHECK(mkdtemp(dir) != NULL && chdir(dir) == 0);
    CHECK(says(parse(&o, "-o", "a.csv", "--raw", "a.json"), "--raw 'a.json' is the metadata of -o 'a.csv'"));
    CHECK(says(parse(&o, "-o", "a.csv", "--raw", "a.csv"), "is the CSV of -o 'a.csv'"));
    CHECK(says(parse(&o, "-o", "a", "--raw", "./a.json"), "is the metadata of -o 'a'"));
    CHECK(says(parse(&o, "-o", "a.csv", "--raw", "a.json.term"), "a temporary file of the metadata"));
    CHECK(mkdir("sub", 0777) == 0);
    CHECK(says(parse(&o, "-o", "sub/../a.csv", "--raw", "a.json"), "is the metadata"));
    CHECK(says(parse(&o, "-o", "a.csv", "--raw", "sub/../sub/../a.csv"), "is the CSV"));
    CHECK(symlink("a.csv", "link.csv") == 0 && fclose(fopen("a.csv", "w")) == 0);
    CHECK(says(parse(&o, "-o", "a.csv", "--raw", "link.csv"), "is the CSV"));
    CHECK(parse(&o, "-o", "a.csv", "--raw", "a.raw.csv") == NULL);
    CHECK(parse(&o, "-o", "sub", "--raw", "a.json") == NULL); /* a directory: the CSV gets a new name */
    CHECK(unlink("link.csv") == 0 && unlink("a.csv") == 0 && rmdir("sub") == 0 && chdir("/") == 0 && rmdir(dir) == 0);
    return CHECK_DONE();
}
