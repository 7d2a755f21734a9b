/* A row's params: every setting that changes what is measured and has no
 * column of its own, as canonical "key=value" pairs sorted by key and joined
 * by ';', so that two rows measuring different things always differ in
 * their key columns (docs/results-format.md). */
#include "internal.h"
#include "options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Inserts or replaces one pair, keeping the list sorted by key. */
static void put(struct mb_row *row, const char *key, const char *value)
{
    char out[sizeof row->params] = "";
    size_t klen = strlen(key), n = 0;
    int placed = 0;
    for (const char *p = row->params; *p;) {
        const char *semi = strchr(p, ';'), *eq = strchr(p, '=');
        size_t len = semi ? (size_t)(semi - p) : strlen(p), plen = (size_t)(eq - p);
        int c = strncmp(p, key, plen < klen ? plen : klen);
        if (!c) c = (plen > klen) - (plen < klen);
        if (c > 0 && !placed) {
            n += (size_t)snprintf(out + n, sizeof out - n, "%s%s=%s", n ? ";" : "", key, value);
            placed = 1;
        }
        if (c) n += (size_t)snprintf(out + n, sizeof out - n, "%s%.*s", n ? ";" : "", (int)len, p);
        if (n >= sizeof out) break;
        p = semi ? semi + 1 : p + len;
    }
    if (!placed && n < sizeof out) snprintf(out + n, sizeof out - n, "%s%s=%s", n ? ";" : "", key, value);
    memcpy(row->params, out, sizeof out);
}

void mb_param(struct mb_row *row, const char *key, const char *fmt, ...)
{
    char value[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    put(row, key, value);
}

void mb_param_opt(const struct mb_run *run, struct mb_row *row, const char *option)
{
    char value[256];
    if (mb_option_format(run->prog, option, value, sizeof value) == 0) put(row, option, value);
}

const char *mb_param_get(const char *params, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    for (const char *p = params; *p;) {
        const char *semi = strchr(p, ';');
        size_t plen = semi ? (size_t)(semi - p) : strlen(p);
        if (plen > klen && p[klen] == '=' && !strncmp(p, key, klen)) {
            if (len) *len = plen - klen - 1;
            return p + klen + 1;
        }
        p += semi ? plen + 1 : plen;
    }
    return NULL;
}

int mb_param_is(const char *params, const char *key, const char *value)
{
    size_t n;
    const char *v = mb_param_get(params, key, &n);
    return v && n == strlen(value) && !strncmp(v, value, n);
}
