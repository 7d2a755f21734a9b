/* Option parsing: values, ranges, suffixes, lists, quick defaults, errors. */
#include "check.h"
#include "mb.h"
#include "options.h"

#include <string.h>

static long count = 2000;
static unsigned long methods;
static int mode = -1;
static const struct mb_option opts[] = {
    {"count", 'c', MB_OPT_INT, &count, 1, 1 << 24, NULL, "doubles"},
    {"methods", 0, MB_OPT_LIST, &methods, 0, 0, "a,bb,c", "methods"},
    {"mode", 0, MB_OPT_CHOICE, &mode, 0, 0, "x,y", "mode"},
    {0},
};
static const struct mb_program prog = {.name = "t", .summary = "", .options = opts};
static const struct mb_program own = {
    .name = "o", .summary = "", .options = opts, .rel_ci = 0.01, .sweep_budget = 1.4, .min_rep_time = 5e-5};
static const struct mb_program sized = {
    .name = "s", .summary = "", .options = opts, .flags = MB_USES_SIZES, .size_max = 1 << 22, .quick_size_max = 4096};

static const char *parse(const struct mb_program *p, struct mb_opts *o, int *action, const char *a1, const char *a2,
                         const char *a3)
{
    char *argv[5] = {(char *)"t", (char *)a1, (char *)a2, (char *)a3, NULL};
    int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
    return mb_parse_options(argc, argv, p, o, action);
}

static int says(const char *err, const char *what) { return err && strstr(err, what); }

int main(void)
{
    struct mb_opts o;
    int action;
    long long v;
    size_t s, lo, hi;
    double d;

    CHECK(mb_parse_long("42", 1, 100, &v) == 0 && v == 42);
    CHECK(mb_parse_long("-5", 1, 100, &v) != 0);
    CHECK(mb_parse_long("0", 1, 100, &v) != 0);
    CHECK(mb_parse_long("12abc", 1, 100, &v) != 0);
    CHECK(mb_parse_long("", 1, 100, &v) != 0);
    CHECK(mb_parse_long("99999999999999999999999", 1, 100, &v) != 0);
    CHECK(mb_parse_size("4K", &s) == 0 && s == 4096);
    CHECK(mb_parse_size("1M", &s) == 0 && s == 1048576);
    CHECK(mb_parse_size("2GB", &s) == 0 && s == 2147483648u);
    CHECK(mb_parse_size("0", &s) == 0 && s == 0);
    CHECK(mb_parse_size("-1", &s) != 0 && mb_parse_size("1X", &s) != 0 && mb_parse_size("K", &s) != 0);
    CHECK(mb_parse_range("8:1M", &lo, &hi) == 0 && lo == 8 && hi == 1048576);
    CHECK(mb_parse_range("8:4", &lo, &hi) != 0 && mb_parse_range("8", &lo, &hi) != 0);
    CHECK(mb_parse_double("0.5", &d) == 0 && d == 0.5);
    CHECK(mb_parse_double("nan", &d) != 0 && mb_parse_double("1e999", &d) != 0);
    CHECK(mb_choice_index("a,bb,c", "bb", 2) == 1 && mb_choice_index("a,bb,c", "b", 1) == -1);

    /* defaults */
    CHECK(parse(&prog, &o, &action, NULL, NULL, NULL) == NULL && action == 0);
    CHECK(o.reps == 10 && o.max_reps == 1000 && o.rel_ci == 0.02 && o.timeout == 300 && o.stat == MB_STAT_MEDIAN);
    /* values and the messages users see */
    CHECK(parse(&prog, &o, &action, "--count", "77", NULL) == NULL && count == 77);
    CHECK(parse(&prog, &o, &action, "-c", "5", NULL) == NULL && count == 5);
    CHECK(parse(&prog, &o, &action, "--count=9", NULL, NULL) == NULL && count == 9);
    CHECK(says(parse(&prog, &o, &action, "--count", "-5", NULL), "--count must be a positive integer, got '-5'"));
    CHECK(says(parse(&prog, &o, &action, "--count", "0", NULL), "got '0'"));
    CHECK(says(parse(&prog, &o, &action, "--count", "abc", NULL), "got 'abc'"));
    CHECK(says(parse(&prog, &o, &action, "--count", "99999999999", NULL), "got '99999999999'"));
    CHECK(says(parse(&prog, &o, &action, "--count", NULL, NULL), "--count needs a value"));
    CHECK(says(parse(&prog, &o, &action, "--bogus", NULL, NULL), "unrecognized option '--bogus'"));
    CHECK(says(parse(&prog, &o, &action, "stray", NULL, NULL), "unexpected argument 'stray'"));
    CHECK(says(parse(&prog, &o, &action, "--quick=1", NULL, NULL), "takes no value"));
    CHECK(parse(&prog, &o, &action, "--methods", "bb,c", NULL) == NULL && methods == 6);
    CHECK(parse(&prog, &o, &action, "--methods", "all", NULL) == NULL && methods == ~0ul);
    CHECK(says(parse(&prog, &o, &action, "--methods", "a,zz", NULL), "unknown value 'zz'"));
    CHECK(says(parse(&prog, &o, &action, "--mode", "z", NULL), "--mode: unknown value 'z'"));
    CHECK(parse(&prog, &o, &action, "--stat", "min", NULL) == NULL && o.stat == MB_STAT_MIN);
    CHECK(says(parse(&prog, &o, &action, "--reps", "20", "--max-reps=5"), "--max-reps (5) must be at least --reps (20)"));
    CHECK(parse(&prog, &o, &action, "--reps", "20", NULL) == NULL && o.max_reps == 1000);
    CHECK(says(parse(&prog, &o, &action, "--timeout", "0", NULL), "--timeout must be a positive number"));
    CHECK(says(parse(&prog, &o, &action, "--rel-ci", "2", NULL), "--rel-ci must be below 1"));
    CHECK(parse(&prog, &o, &action, "--min-rep-time", "0", NULL) == NULL && o.min_rep_time == 0);
    CHECK(says(parse(&prog, &o, &action, "--label", "a/b", NULL), "--label may contain only"));
    CHECK(says(parse(&prog, &o, &action, "--label", "a b", NULL), "--label may contain only"));
    CHECK(says(parse(&prog, &o, &action, "-m", "1:8", NULL), "--sizes does not apply to t"));
    /* --quick lowers what was not given */
    CHECK(parse(&prog, &o, &action, "--quick", NULL, NULL) == NULL && o.reps == 3 && o.max_reps == 3 &&
          o.min_rep_time == 0);
    CHECK(parse(&prog, &o, &action, "--quick", "--reps", "7") == NULL && o.reps == 7 && o.max_reps == 7);
    /* a program's own defaults: over the common ones, under what the user gives and under --quick */
    CHECK(parse(&own, &o, &action, NULL, NULL, NULL) == NULL && o.rel_ci == 0.01 && o.sweep_budget == 1.4 &&
          o.min_rep_time == 5e-5);
    CHECK(parse(&own, &o, &action, "--min-rep-time", "0.002", NULL) == NULL && o.min_rep_time == 0.002);
    CHECK(parse(&own, &o, &action, "--quick", NULL, NULL) == NULL && o.min_rep_time == 0 && o.sweep_budget == 0);
    /* sizes */
    CHECK(parse(&sized, &o, &action, NULL, NULL, NULL) == NULL && o.size_min == 0 && o.size_max == 1 << 22);
    CHECK(parse(&sized, &o, &action, "--quick", NULL, NULL) == NULL && o.size_max == 4096);
    CHECK(parse(&sized, &o, &action, "-m", "8:64K", NULL) == NULL && o.size_min == 8 && o.size_max == 65536);
    CHECK(says(parse(&sized, &o, &action, "-m", "64:8", NULL), "MIN <= MAX"));
    /* actions */
    CHECK(parse(&prog, &o, &action, "--help", NULL, NULL) == NULL && action == 1);
    CHECK(parse(&prog, &o, &action, "--version", NULL, NULL) == NULL && action == 2);
    CHECK(parse(&prog, &o, &action, "--list", NULL, NULL) == NULL && action == 3);
    return CHECK_DONE();
}
