/* A tiny assertion helper for the C unit tests: count, report, exit status. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>

static int check_passed, check_failed;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            check_passed++;                                                          \
        } else {                                                                     \
            check_failed++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)
#define CHECK_DONE()                                                           \
    (printf("%s: %d passed, %d failed\n", __FILE__, check_passed, check_failed), \
     check_failed ? 1 : 0)
#endif
