/* Internal: the option parser used by mb_init() (and the unit tests). */
#ifndef MB_OPTIONS_H
#define MB_OPTIONS_H
#include "mb.h"

/* Parses argv into *out; returns NULL or a one-line message.  *action is
 * 1 for --help, 2 for --version, 3 for --list, else 0. */
const char *mb_parse_options(int argc, char **argv, const struct mb_program *prog, struct mb_opts *out,
                             int *action);
void mb_print_help(const struct mb_program *prog);
/* NULL, or why l is not a valid label (what names the setting: "--label") */
const char *mb_check_label(const char *what, const char *l);
/* tracing.c: --trace's pattern and --trace-out (NULL, or why not: in buf or static) */
const char *mb_trace_check(const struct mb_program *prog, const struct mb_opts *o, char *buf, size_t len);
/* The current value of one of prog's own options in canonical form (bytes
 * for sizes, list words in the option's order, "1"/"0" for flags); -1 if
 * prog has no such option. */
int mb_option_format(const struct mb_program *prog, const char *name, char *buf, size_t len);
/* The metadata's path for a CSV path: a.csv -> a.json, a -> a.json, a.dat -> a.dat.json. */
void mb_meta_path(const char *csv, char *json, size_t len);
#endif
