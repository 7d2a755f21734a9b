/* --layout array (docs/halo-array.md): the halo exchange as applications
 * write it.  Each process owns a local 2-D or 3-D array of doubles, row-major
 * with grid dimension 0 slowest, of interior extents n[] and one layer of
 * ghost cells, and exchanges the faces (and, for the full stencil, edges and
 * corners) of its interior into its neighbours' ghost cells.
 *
 * The region of direction d (offset o = off[d]) is, per dimension i: the
 * whole interior [1, n_i] where o_i = 0; where o_i = -1 the first interior
 * plane (send, index 1) or the low ghost plane (receive, index 0); where
 * o_i = +1 the last interior plane (send, n_i) or the high ghost plane
 * (receive, n_i + 1).  Every region is one MPI_Type_create_subarray, and the
 * neighbour in direction d sends its region opp[d] into my ghost region d.
 *
 * How a region becomes a message (the packing): datatype — the subarray type
 * sent in place; pack — copy loops into a contiguous buffer of doubles and
 * back, inside the timed exchange; mpi-pack — MPI_Pack / MPI_Unpack into a
 * buffer sent as MPI_PACKED.  The methods see only (sbuf[d], scount[d],
 * stype[d]) and (rbuf[d], rcount[d], rtype[d]) (halo.h).
 *
 * Internally the array is 3-D: a 2-D array has a leading extent of 1. */
#include "halo.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *const halo_packing_names[NPACK] = {"datatype", "pack", "mpi-pack"};

struct region {
    int sub[3], s[3], r[3]; /* extents; start of the send and the ghost region */
};

struct halo_array {
    int nd, nnbr, n[3], full[3]; /* padded to 3-D */
    int off[MAXDIR][3], opp[MAXDIR], dir_of[27];
    struct region reg[MAXDIR];
    int pair[MAXDIR];     /* the region one pass packs with d (copy_pair), else -1 */
    long elems[MAXDIR];   /* doubles in region d */
    int packed[MAXDIR];   /* bytes MPI_Pack writes for it */
    MPI_Datatype send[MAXDIR], recv[MAXDIR];
    double *a;            /* the array (with ghosts) */
    double *sb[MAXDIR], *rb[MAXDIR]; /* pack buffers */
    void *sraw[MAXDIR], *rraw[MAXDIR]; /* their allocations (see HALF_PAGE) */
    long filled; /* the iteration the interior was last filled for */
};

enum { MAXEXTENT = 1 << 24 };
/* The pack buffers start half a page into their allocation: page-aligned buffers beside the page-aligned
 * array made the copy loops of a 2-D column face 1.75x slower on an AMD EPYC (bench/README.md, "pack
 * against memcpy"), a placement an application's malloc'd buffers rarely have. */
enum { HALF_PAGE = 2048 };

size_t halo_array_doubles(int ndims, const int n[MAXDIM])
{
    size_t t = 1;
    for (int i = 0; i < ndims; i++) t *= (size_t)n[i] + 2;
    return t;
}

size_t halo_face_of(int ndims, const int n[MAXDIM])
{
    size_t face = 0;
    for (int i = 0; i < ndims; i++) {
        size_t f = 1;
        for (int k = 0; k < ndims; k++) f *= k == i ? 1 : (size_t)n[k];
        face = f > face ? f : face;
    }
    return face;
}

/* The largest array: 2^27 doubles (1 GiB) with its ghosts. */
#define MAXDOUBLES ((size_t)1 << 27)

const char *halo_array_extents(int ndims, long count, const long *given, int out[MAXDIM])
{
    static char why[160];
    if (ndims < 2) return "--layout array needs --dims 2 or 3 (a 1-D array's faces are one double each)";
    for (int i = 0; i < MAXDIM; i++) out[i] = 1;
    if (given) {
        for (int i = 0; i < ndims; i++) out[i] = (int)given[i];
    } else {
        long e = ndims == 2 ? count : (long)floor(sqrt((double)count));
        while (ndims == 3 && (e + 1) * (e + 1) <= count) e++; /* sqrt rounding */
        for (int i = 0; i < ndims; i++) out[i] = (int)(e < 1 ? 1 : e);
    }
    if (halo_array_doubles(ndims, out) > MAXDOUBLES || halo_face_of(ndims, out) > MAXEXTENT) {
        snprintf(why, sizeof why,
                 "--layout array: the local array does not fit: at most 2^27 doubles with ghosts and 2^24 per face");
        return why;
    }
    return NULL;
}

double *halo_array_mem(const struct halo_array *a) { return a->a; }

size_t halo_array_size(const struct halo_array *a)
{
    return (size_t)a->full[0] * (size_t)a->full[1] * (size_t)a->full[2];
}

long halo_array_face(const struct halo_array *a)
{
    long most = 0;
    for (int d = 0; d < a->nnbr; d++) most = a->elems[d] > most ? a->elems[d] : most;
    return most;
}

long halo_array_elems(const struct halo_array *a, int d) { return a->elems[d]; }

long halo_array_sent(const struct halo *h)
{
    long s = 0;
    for (int i = 0; i < h->ndirs; i++) s += h->arr->elems[h->dirs[i]];
    return s;
}

static int code(const int o[3]) { return (o[0] + 1) * 9 + (o[1] + 1) * 3 + (o[2] + 1); }

struct halo_array *halo_array_new(const struct halo *h, const int n[MAXDIM], double *mem)
{
    struct halo_array *a = calloc(1, sizeof *a);
    int pad = 3 - h->ndims;
    a->nd = h->ndims;
    a->nnbr = h->nnbr;
    a->a = mem;
    for (int i = 0; i < 3; i++) {
        a->n[i] = i < pad ? 1 : n[i - pad];
        a->full[i] = i < pad ? 1 : a->n[i] + 2;
    }
    for (int c = 0; c < 27; c++) a->dir_of[c] = -1;
    for (int d = 0; d < h->nnbr; d++) {
        struct region *g = &a->reg[d];
        a->elems[d] = 1;
        for (int i = 0; i < 3; i++) {
            int o = a->off[d][i] = i < pad ? 0 : h->off[d][i - pad];
            if (i < pad) {
                g->sub[i] = 1;
                g->s[i] = g->r[i] = 0;
            } else {
                g->sub[i] = o ? 1 : a->n[i];
                g->s[i] = o < 0 ? 1 : o > 0 ? a->n[i] : 1;
                g->r[i] = o < 0 ? 0 : o > 0 ? a->n[i] + 1 : 1;
            }
            a->elems[d] *= g->sub[i];
        }
        a->opp[d] = h->opp[d];
        a->dir_of[code(a->off[d])] = d;
        MPI_Type_create_subarray(3, a->full, g->sub, g->s, MPI_ORDER_C, MPI_DOUBLE, &a->send[d]);
        MPI_Type_create_subarray(3, a->full, g->sub, g->r, MPI_ORDER_C, MPI_DOUBLE, &a->recv[d]);
        MPI_Type_commit(&a->send[d]);
        MPI_Type_commit(&a->recv[d]);
        int room, pos = 0;
        MPI_Pack_size(1, a->send[d], MPI_COMM_WORLD, &room);
        a->sraw[d] = mb_alloc((size_t)room + HALF_PAGE);
        a->rraw[d] = mb_alloc((size_t)room + HALF_PAGE);
        a->sb[d] = (double *)((char *)a->sraw[d] + HALF_PAGE);
        a->rb[d] = (double *)((char *)a->rraw[d] + HALF_PAGE);
        MPI_Pack(a->a, 1, a->send[d], a->sb[d], room, &pos, MPI_COMM_WORLD); /* the bytes a message holds */
        a->packed[d] = pos;
    }
    /* pairs of regions of one double per row in the same rows (copy_pair), each region in one pair at most */
    for (int d = 0; d < a->nnbr; d++) a->pair[d] = -1;
    for (int d = 0; d < a->nnbr; d++) {
        const struct region *g = &a->reg[d];
        for (int e = d + 1; e < a->nnbr && g->sub[2] == 1 && a->pair[d] < 0; e++) {
            const struct region *o = &a->reg[e];
            if (a->pair[e] < 0 && !memcmp(o->sub, g->sub, sizeof g->sub) && o->s[0] == g->s[0] &&
                o->s[1] == g->s[1] && o->r[0] == g->r[0] && o->r[1] == g->r[1])
                a->pair[d] = e, a->pair[e] = d;
        }
    }
    return a;
}

void halo_array_free(struct halo_array *a)
{
    if (!a) return;
    for (int d = 0; d < a->nnbr; d++) {
        MPI_Type_free(&a->send[d]);
        MPI_Type_free(&a->recv[d]);
        free(a->sraw[d]);
        free(a->rraw[d]);
    }
    free(a);
}

void halo_buffers_bind(struct halo *h)
{
    for (int d = 0; d < MAXDIR; d++) {
        h->scount[d] = h->rcount[d] = h->count;
        h->stype[d] = h->rtype[d] = MPI_DOUBLE;
    }
}

void halo_array_bind(struct halo *h, int packing)
{
    struct halo_array *a = h->arr;
    h->packing = packing;
    for (int d = 0; d < MAXDIR; d++) {
        h->scount[d] = h->rcount[d] = 0;
        h->stype[d] = h->rtype[d] = MPI_DOUBLE;
        h->sbuf[d] = h->rbuf[d] = NULL;
    }
    for (int d = 0; d < a->nnbr; d++) {
        switch (packing) {
        case PACK_DATATYPE:
            h->sbuf[d] = h->rbuf[d] = a->a;
            h->scount[d] = h->rcount[d] = 1;
            h->stype[d] = a->send[d];
            h->rtype[d] = a->recv[d];
            break;
        case PACK_HAND:
            h->sbuf[d] = a->sb[d];
            h->rbuf[d] = a->rb[d];
            h->scount[d] = h->rcount[d] = (int)a->elems[d];
            break;
        default:
            h->sbuf[d] = a->sb[d];
            h->rbuf[d] = a->rb[d];
            h->scount[d] = h->rcount[d] = a->packed[d];
            h->stype[d] = h->rtype[d] = MPI_PACKED;
        }
    }
    h->count = (int)halo_array_face(a); /* the largest message: RMA slots are this size */
}

/* ------------------------------------------------------------ pack loops */

/* Runs of sub[2] doubles: memcpy each; a run of one (a face across the
 * last dimension) is a strided loop down the rows. */
static void copy_region(const struct halo_array *a, const int st[3], const int sub[3], double *buf, int in)
{
    const size_t f1 = (size_t)a->full[1], f2 = (size_t)a->full[2], run = (size_t)sub[2];
    for (int z = 0; z < sub[0]; z++) {
        double *p = a->a + ((size_t)(st[0] + z) * f1 + (size_t)st[1]) * f2 + (size_t)st[2];
        if (run == 1) {
            if (in)
                for (int y = 0; y < sub[1]; y++) p[(size_t)y * f2] = buf[y];
            else
                for (int y = 0; y < sub[1]; y++) buf[y] = p[(size_t)y * f2];
            buf += sub[1];
            continue;
        }
        for (int y = 0; y < sub[1]; y++, p += f2, buf += run) {
            if (in)
                memcpy(p, buf, run * sizeof *buf);
            else
                memcpy(buf, p, run * sizeof *buf);
        }
    }
}

/* Two regions of one double per row in the same rows (a pair across the last dimension: east and west,
 * and their edges and corners): one pass down the rows copies both.  Each double is a cache line of its
 * own; one pass is one stream for the prefetcher instead of two (bench/README.md: 0.64 -> 0.42 ns per
 * double here). */
static void copy_pair(const struct halo_array *a, const int st[3], int last_b, const int sub[3], double *ba,
                      double *bb, int in)
{
    const size_t f1 = (size_t)a->full[1], f2 = (size_t)a->full[2];
    const ptrdiff_t gap = (ptrdiff_t)last_b - st[2];
    for (int z = 0; z < sub[0]; z++) {
        double *p = a->a + ((size_t)(st[0] + z) * f1 + (size_t)st[1]) * f2 + (size_t)st[2];
        if (in)
            for (int y = 0; y < sub[1]; y++, p += f2) p[0] = *ba++, p[gap] = *bb++;
        else
            for (int y = 0; y < sub[1]; y++, p += f2) *ba++ = p[0], *bb++ = p[gap];
    }
}

/* The regions of dirs packed into bufs (in = 0: the send regions) or unpacked from them (in = 1: the
 * ghost regions) by the copy loops, a pair whose both regions are in dirs in one pass. */
static void copy_regions(const struct halo_array *a, const int *dirs, int ndirs, double *const *bufs, int in)
{
    unsigned long on = 0;
    for (int i = 0; i < ndirs; i++) on |= 1UL << dirs[i];
    for (int i = 0; i < ndirs; i++) {
        int d = dirs[i], e = a->pair[d];
        const struct region *g = &a->reg[d];
        const int *st = in ? g->r : g->s;
        if (e < 0 || !(on >> e & 1))
            copy_region(a, st, g->sub, bufs[d], in);
        else if (d < e)
            copy_pair(a, st, (in ? a->reg[e].r : a->reg[e].s)[2], g->sub, bufs[d], bufs[e], in);
    }
}

void halo_array_run(struct halo *h, const struct halo_method *m, long iters)
{
    struct halo_array *a = h->arr;
    if (h->packing == PACK_DATATYPE) {
        m->run(h, iters);
        return;
    }
    for (long it = 0; it < iters; it++) {
        if (h->packing == PACK_HAND)
            copy_regions(a, h->dirs, h->ndirs, h->sbuf, 0);
        else
            for (int i = 0; i < h->ndirs; i++) {
                int d = h->dirs[i], pos = 0;
                MPI_Pack(a->a, 1, a->send[d], h->sbuf[d], a->packed[d], &pos, h->comm);
            }
        halo_phase(h, PH_SEND); /* packing: part of "pack and post sends" */
        if (!h->mock) m->run(h, 1); /* --mock: no communication, the ghost cells get what the buffers hold */
        if (h->packing == PACK_HAND)
            copy_regions(a, h->dirs, h->ndirs, h->rbuf, 1);
        else
            for (int i = 0; i < h->ndirs; i++) {
                int d = h->dirs[i], pos = 0;
                MPI_Unpack(h->rbuf[d], a->packed[d], &pos, a->a, 1, a->recv[d], h->comm);
            }
        halo_phase(h, PH_UNPACK);
    }
}

/* --------------------------------------------------------- verification */

/* Interior cells hold the pattern of (rank, iteration, index in the array),
 * ghost cells -1 (never a pattern value). */
void halo_array_fill(struct halo *h, long it)
{
    struct halo_array *a = h->arr;
    size_t i = 0;
    a->filled = it;
    for (int z = 0; z < a->full[0]; z++)
        for (int y = 0; y < a->full[1]; y++)
            for (int x = 0; x < a->full[2]; x++, i++) {
                int c[3] = {z, y, x}, ghost = 0;
                for (int k = 3 - a->nd; k < 3; k++) ghost |= c[k] == 0 || c[k] == a->n[k] + 1;
                a->a[i] = ghost ? -1.0 : mb_pattern_double((uint32_t)h->rank, 0, (uint32_t)it, i);
            }
}

/* Every cell: an interior one must be as filled (the iteration fill was
 * given, which a verify fault makes another: then only the neighbours'
 * ghost cells are wrong); a ghost cell of a direction
 * with a neighbour holds that neighbour's interior cell at c - o n; any other
 * ghost cell (no neighbour there, or an edge or corner of the faces-only
 * stencil) is still -1. */
int halo_array_check(struct halo *h, long it, char *msg, size_t len)
{
    const struct halo_array *a = h->arr;
    size_t i = 0;
    const int pad = 3 - a->nd;
    for (int z = 0; z < a->full[0]; z++)
        for (int y = 0; y < a->full[1]; y++)
            for (int x = 0; x < a->full[2]; x++, i++) {
                int c[3] = {z, y, x}, o[3] = {0, 0, 0}, ghost = 0;
                for (int k = pad; k < 3; k++) {
                    o[k] = c[k] == 0 ? -1 : c[k] == a->n[k] + 1 ? 1 : 0;
                    ghost |= o[k] != 0;
                }
                int d = ghost ? a->dir_of[code(o)] : -1, from = h->rank;
                double want = -1.0;
                size_t src = i;
                if (!ghost) {
                    want = mb_pattern_double((uint32_t)h->rank, 0, (uint32_t)a->filled, i);
                } else if (d >= 0 && h->partner[d] != MPI_PROC_NULL) {
                    from = h->partner[d];
                    src = 0;
                    for (int k = 0; k < 3; k++) src = src * (size_t)a->full[k] + (size_t)(c[k] - o[k] * a->n[k]);
                    want = mb_pattern_double((uint32_t)from, 0, (uint32_t)it, src);
                }
                if (a->a[i] == want) continue;
                char at[48];
                int n = 0;
                for (int k = pad; k < 3; k++)
                    n += snprintf(at + n, sizeof at - (size_t)n, "%s%d", k > pad ? "," : "", c[k]);
                if (!ghost)
                    snprintf(msg, len, "interior cell (%s) overwritten: got %.17g, expected %.17g", at, a->a[i], want);
                else if (want == -1.0)
                    snprintf(msg, len, "ghost cell (%s), which no neighbour sends to, written: got %.17g", at,
                             a->a[i]);
                else
                    snprintf(msg, len, "ghost cell (%s) from neighbour %d (%s): got %.17g, expected %.17g", at,
                             from, h->dir_name[d], a->a[i], want);
                return 1;
            }
    return 0;
}

/* --tests pack: every region of the stencil packed into its buffer and
 * unpacked into the ghost cells once (copy loops, all packed before any is
 * unpacked, as in an exchange; or MPI_Pack/MPI_Unpack), or (memcpy) the same
 * bytes copied contiguously into the buffer and back. */
void halo_array_pack_only(struct halo_array *a, int how, MPI_Comm comm)
{
    if (how == PACK_HAND) {
        int all[MAXDIR];
        for (int d = 0; d < a->nnbr; d++) all[d] = d;
        copy_regions(a, all, a->nnbr, a->sb, 0);
        copy_regions(a, all, a->nnbr, a->sb, 1);
        return;
    }
    for (int d = 0; d < a->nnbr; d++) {
        int pos = 0;
        size_t bytes = (size_t)a->elems[d] * sizeof(double);
        if (how == PACK_MPI) {
            MPI_Pack(a->a, 1, a->send[d], a->sb[d], a->packed[d], &pos, comm);
            pos = 0;
            MPI_Unpack(a->sb[d], a->packed[d], &pos, a->a, 1, a->recv[d], comm);
        } else {
            memcpy(a->sb[d], a->rb[d], bytes);
            memcpy(a->rb[d], a->sb[d], bytes);
        }
    }
}

long halo_array_all(const struct halo_array *a)
{
    long s = 0;
    for (int d = 0; d < a->nnbr; d++) s += a->elems[d];
    return s;
}
