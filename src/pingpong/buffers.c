/* Message buffers.  Warm: one page-aligned send and one receive buffer,
 * reused by every message (what OSU and IMB do, so the data sit in cache).
 * Cold: send and receive pools each larger than the last-level cache; every
 * message uses the next slot, so by the time a slot comes round again the
 * cache has been swept by the rest of the pool. */
#include "pingpong.h"

#include <stdlib.h>
#include <unistd.h>

size_t pp_llc_bytes(void)
{
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) return (size_t)l3;
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 > 0) return (size_t)l2;
#endif
    return (size_t)32 << 20;
}

static size_t pages(size_t bytes) { return bytes ? (bytes + 4095) / 4096 * 4096 : 4096; }

void pp_bufs_alloc(struct pp_bufs *b, int cold, size_t cache_bytes, size_t size_max)
{
    b->cold = cold;
    b->pool_bytes = pages(size_max);
    if (cold) {
        /* more than the cache, and at least two slots of the largest message */
        size_t pool = pages(cache_bytes) + pages(size_max);
        b->pool_bytes = pool > 2 * pages(size_max) ? pool : 2 * pages(size_max);
    }
    b->spool = mb_alloc(b->pool_bytes); /* mb_alloc zeroes: every page is touched before timing */
    b->rpool = mb_alloc(b->pool_bytes);
}

void pp_bufs_free(struct pp_bufs *b)
{
    free(b->spool);
    free(b->rpool);
    b->spool = b->rpool = NULL;
}
