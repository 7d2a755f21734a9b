/* Fault injection for the suite's own tests: one variable, MPIMB_FAULT, one
 * parser, six kinds of fault (what each does, and who uses it:
 * docs/architecture.md, "Fault injection").
 *
 *   MPIMB_FAULT = FAULT[;FAULT...]           (',' separates too)
 *   FAULT       = verify:MATCH[@RANK]        stale send data in verification (measure.c);
 *                                            MATCH[@RANK] alone is its short form
 *               | delay:FRACTION/MATCH       each timed repetition FRACTION longer (measure.c)
 *               | drift:SECONDS/MATCH        the n-th drifted repetition (and its paired reference)
 *                                            n x SECONDS longer: a machine slowing down (measure.c)
 *               | clock:OFFSET[:DRIFT]       world rank r's clock r * (OFFSET + DRIFT t) off (sync.c)
 *               | row-delay:SECONDS          the row-to-metadata moment held open (term.c)
 *               | load:SHARE                 the others' measured share of the ranks' PUs replaced (busy.c)
 *   MATCH       = TEST[/METHOD[/COMM]]       a row's test, method and comm columns */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MATCHES = 8 };
enum kind { VERIFY, DELAY, DRIFT };

struct match {
    enum kind kind;
    char test[32], method[48], comm[32];
    int rank;        /* verify: -1 every rank */
    double fraction; /* delay: the fraction; drift: the seconds per step */
    int matched;
    char text[128]; /* as given, for the warning */
};

static struct {
    struct match m[MAX_MATCHES];
    int n;
    double clock_offset, clock_drift, row_delay, load;
    int load_set;
    long drifted; /* repetitions drifted so far, across tests */
} F;

static char why[320];

static const char *bad(const char *item, size_t len, const char *form)
{
    snprintf(why, sizeof why, "MPIMB_FAULT: '%.*s' is not %s (docs/architecture.md, \"Fault injection\")",
             (int)(len > 80 ? 80 : len), item, form);
    return why;
}

/* a field of MATCH: [s, e) into buf, non-empty and short enough */
static int field(const char *s, const char *e, char *buf, size_t size)
{
    size_t l = (size_t)(e - s);
    if (l == 0 || l >= size) return -1;
    memcpy(buf, s, l);
    buf[l] = 0;
    return 0;
}

/* MATCH = TEST[/METHOD[/COMM]] in [s, e) */
static int parse_match(const char *s, const char *e, struct match *m)
{
    const char *a = memchr(s, '/', (size_t)(e - s)), *b = a ? memchr(a + 1, '/', (size_t)(e - a - 1)) : NULL;
    m->method[0] = m->comm[0] = 0;
    if (field(s, a ? a : e, m->test, sizeof m->test)) return -1;
    if (a && field(a + 1, b ? b : e, m->method, sizeof m->method)) return -1;
    if (b && field(b + 1, e, m->comm, sizeof m->comm)) return -1;
    return strchr(m->comm, '/') ? -1 : 0;
}

/* a number that is all of [s, e) */
static int number(const char *s, const char *e, double *x)
{
    char buf[64], *end;
    if (field(s, e, buf, sizeof buf)) return -1;
    *x = strtod(buf, &end);
    return *end || !isfinite(*x) ? -1 : 0;
}

static const char *parse_item(const char *s, const char *e)
{
    static const char *const V = "verify:TEST[/METHOD[/COMM]][@RANK] (e.g. halo/irecv-isend@0)",
                              *D = "delay:FRACTION/TEST[/METHOD[/COMM]] with 0 < FRACTION <= 10 (e.g. delay:0.05/halo/irecv-send)",
                              *T = "drift:SECONDS/TEST[/METHOD[/COMM]] with 0 < SECONDS <= 1 (e.g. drift:1e-5/bcast)",
                              *C = "clock:OFFSET[:DRIFT] in seconds", *R = "row-delay:SECONDS with 0 <= SECONDS <= 3600",
                              *L = "load:SHARE with 0 <= SHARE <= 1",
                              *K = "a fault: verify:..., delay:..., drift:..., clock:..., row-delay:... or load:...";
    size_t len = (size_t)(e - s);
    const char *colon = memchr(s, ':', len), *args = colon ? colon + 1 : s;
    size_t klen = colon ? (size_t)(colon - s) : 0;
#define IS(word) (klen == sizeof word - 1 && !memcmp(s, word, klen))
    if (!colon || IS("verify")) {
        if (F.n == MAX_MATCHES) return bad(s, len, "one of at most 8 verify, delay and drift faults");
        struct match *m = &F.m[F.n];
        const char *at = memchr(args, '@', (size_t)(e - args));
        m->kind = VERIFY;
        m->rank = -1;
        if (parse_match(args, at ? at : e, m)) return bad(s, len, V);
        if (at) {
            char buf[16];
            long long r;
            if (field(at + 1, e, buf, sizeof buf) || mb_parse_long(buf, 0, 1 << 30, &r)) return bad(s, len, V);
            m->rank = (int)r;
        }
    } else if (IS("delay") || IS("drift")) { /* NUMBER/MATCH, 0 < NUMBER <= max */
        if (F.n == MAX_MATCHES) return bad(s, len, "one of at most 8 verify, delay and drift faults");
        struct match *m = &F.m[F.n];
        const char *slash = memchr(args, '/', (size_t)(e - args));
        m->kind = IS("delay") ? DELAY : DRIFT;
        m->rank = -1;
        double max = m->kind == DELAY ? 10 : 1;
        if (!slash || number(args, slash, &m->fraction) || !(m->fraction > 0 && m->fraction <= max) ||
            parse_match(slash + 1, e, m))
            return bad(s, len, m->kind == DELAY ? D : T);
    } else if (IS("clock")) {
        const char *c2 = memchr(args, ':', (size_t)(e - args));
        F.clock_drift = 0;
        if (number(args, c2 ? c2 : e, &F.clock_offset) || (c2 && number(c2 + 1, e, &F.clock_drift)))
            return bad(s, len, C);
        return NULL;
    } else if (IS("row-delay")) {
        if (number(args, e, &F.row_delay) || !(F.row_delay >= 0 && F.row_delay <= 3600)) return bad(s, len, R);
        return NULL;
    } else if (IS("load")) {
        if (number(args, e, &F.load) || !(F.load >= 0 && F.load <= 1)) return bad(s, len, L);
        F.load_set = 1;
        return NULL;
    } else {
        return bad(s, len, K);
    }
#undef IS
    snprintf(F.m[F.n].text, sizeof F.m[F.n].text, "%.*s", (int)len, s);
    F.n++;
    return NULL;
}

const char *mb_fault_parse(const char *spec)
{
    memset(&F, 0, sizeof F);
    if (!spec || !*spec) return NULL;
    for (const char *s = spec;;) {
        const char *e = s + strcspn(s, ";,");
        const char *err = parse_item(s, e);
        if (err) {
            memset(&F, 0, sizeof F);
            return err;
        }
        if (!*e) return NULL;
        s = e + 1;
    }
}

static int matches(const struct match *m, enum kind kind, const struct mb_row *row)
{
    return m->kind == kind && !strcmp(m->test, row->test) && (!m->method[0] || !strcmp(m->method, row->method)) &&
           (!m->comm[0] || !strcmp(m->comm, row->comm));
}

int mb_fault_here(const struct mb_run *run, const struct mb_row *row)
{
    int here = 0;
    for (int i = 0; i < F.n; i++)
        if (matches(&F.m[i], VERIFY, row)) {
            F.m[i].matched = 1;
            here |= F.m[i].rank < 0 || F.m[i].rank == run->rank;
        }
    return here;
}

/* the first matching fault of this kind's number (every match counts as matched), or 0 */
static double first(enum kind kind, const struct mb_row *row)
{
    double f = 0;
    for (int i = F.n - 1; i >= 0; i--)
        if (matches(&F.m[i], kind, row)) {
            F.m[i].matched = 1;
            f = F.m[i].fraction;
        }
    return f;
}

double mb_fault_delay(const struct mb_row *row) { return first(DELAY, row); }

double mb_fault_drift(const struct mb_row *row) { return first(DRIFT, row); }

double mb_fault_drift_step(double seconds) { return seconds > 0 ? seconds * (double)++F.drifted : 0; }

void mb_fault_clock(double *offset, double *drift)
{
    *offset = F.clock_offset;
    *drift = F.clock_drift;
}

double mb_fault_row_delay(void) { return F.row_delay; }
double mb_fault_load(double measured) { return F.load_set ? F.load : measured; }

const char *mb_fault_unmatched(void)
{
    for (int i = 0; i < F.n; i++)
        if (!F.m[i].matched) return F.m[i].text;
    return NULL;
}
