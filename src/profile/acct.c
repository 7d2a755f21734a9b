/* The pre steps of point-to-point and one-sided calls: message size, size
 * bin, and the partner's world rank for the communication matrix; the
 * persistent-request table that lets MPI_Start count what it starts. */
#include "prof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Under MPI_THREAD_MULTIPLE the few slow-path structures here (the rank
 * maps, the request table) are guarded by this lock; counters use atomics. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void guard(int on)
{
    if (mbp.mt) on ? pthread_mutex_lock(&lock) : pthread_mutex_unlock(&lock);
}

uint64_t mbp_type_bytes(long count, MPI_Datatype dt)
{
    int size = 0;
    if (count <= 0 || dt == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size(dt, &size);
    return (uint64_t)count * (uint64_t)(size > 0 ? size : 0);
}

void mbp_size(struct mbp_acct *a, int count, MPI_Datatype dt)
{
    a->bytes = mbp_type_bytes(count, dt);
    a->bin = mbp_bin(a->bytes);
}

/* ------------------------------------------------ ranks -> world ranks */

/* Each communicator and window other than MPI_COMM_WORLD gets, on first
 * use, an attribute holding the world rank of each of its ranks (of the
 * remote group for an intercommunicator); MPI frees it with the object. */
static int comm_key = MPI_KEYVAL_INVALID, win_key = MPI_KEYVAL_INVALID;
static MPI_Group world_group = MPI_GROUP_NULL;

/* map[0] is the group's size, map[1 + r] the world rank of rank r
 * (MPI_UNDEFINED for a process outside MPI_COMM_WORLD: spawned), map[1 + n]
 * a hash of those (the communicator's name in a trace: mbp_comm_id). */
static int *map_group(MPI_Group g)
{
    int n = 0;
    PMPI_Group_size(g, &n);
    int *map = malloc((2 * (size_t)n + 2) * sizeof *map), *in = map + 2 + n;
    for (int i = 0; i < n; i++) in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, world_group, map + 1);
    map[0] = n;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i <= n; i++) h = (h ^ (uint32_t)map[i]) * 16777619u;
    map[1 + n] = (int)(h | 1); /* never 0, which is MPI_COMM_WORLD's */
    return map;
}

static int lookup(const int *map, int rank)
{
    int w = rank < map[0] ? map[1 + rank] : -1;
    return w >= 0 && w < mbp.size ? w : -1;
}

static int free_map(void *obj, int key, void *val, void *extra)
{
    (void)obj, (void)key, (void)extra;
    free(val);
    return MPI_SUCCESS;
}
/* Freeing any communicator's map moves the generation on, which empties
 * every thread's one-entry cache (comm_map): a handle may be reused. */
static unsigned long map_generation = 1;
static int free_comm_map(MPI_Comm c, int k, void *v, void *x)
{
    __atomic_fetch_add(&map_generation, 1, __ATOMIC_RELEASE);
    return free_map(&c, k, v, x);
}
static int free_win_map(MPI_Win w, int k, void *v, void *x) { return free_map(&w, k, v, x); }

void mbp_translate_init(void)
{
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_comm_map, &comm_key, NULL);
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, free_win_map, &win_key, NULL);
}

/* The last communicator a thread sent on, so that a loop of sends on one
 * communicator skips the attribute lookup (and its lock in the library). */
static _Thread_local struct {
    MPI_Comm comm;
    const int *map;
    unsigned long generation;
} last;

static const int *comm_map(MPI_Comm comm)
{
    unsigned long gen = __atomic_load_n(&map_generation, __ATOMIC_ACQUIRE);
    if (last.map && last.comm == comm && last.generation == gen) return last.map;
    int *map = NULL, found = 0;
    guard(1);
    PMPI_Comm_get_attr(comm, comm_key, &map, &found);
    if (!found) {
        int inter = 0;
        MPI_Group g;
        PMPI_Comm_test_inter(comm, &inter);
        inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g);
        map = map_group(g);
        PMPI_Group_free(&g);
        PMPI_Comm_set_attr(comm, comm_key, map);
    }
    guard(0);
    last.comm = comm, last.map = map, last.generation = gen;
    return map;
}

static const int *win_map(MPI_Win win)
{
    int *map = NULL, found = 0;
    guard(1);
    PMPI_Win_get_attr(win, win_key, &map, &found);
    if (!found) {
        MPI_Group g;
        PMPI_Win_get_group(win, &g);
        map = map_group(g);
        PMPI_Group_free(&g);
        PMPI_Win_set_attr(win, win_key, map);
    }
    guard(0);
    return map;
}

static int valid_peer(int rank) { return rank >= 0 && rank != MPI_PROC_NULL; }

int mbp_world_rank(MPI_Comm comm, int rank)
{
    if (!valid_peer(rank) || comm == MPI_COMM_NULL) return -1;
    if (comm == MPI_COMM_WORLD) return rank < mbp.size ? rank : -1;
    return lookup(comm_map(comm), rank);
}

uint32_t mbp_comm_id(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_NULL) return 0;
    const int *map = comm_map(comm);
    return (uint32_t)map[1 + map[0]];
}

int mbp_comm_rank(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static void peer_add(int kind, int world, uint64_t bytes)
{
    if (world < 0) return;
    mbp_add(&mbp.msgs[kind][world], 1);
    mbp_add(&mbp.bytes[kind][world], bytes);
}

void mbp_send(struct mbp_acct *a, int count, MPI_Datatype dt, int dest, MPI_Comm comm)
{
    mbp_size(a, count, dt);
    a->peer = mbp_world_rank(comm, dest);
    a->peer_kind = MBP_MAT_P2P;
}

void mbp_rma(struct mbp_acct *a, uint64_t bytes, int target, MPI_Win win)
{
    a->bytes = bytes;
    a->bin = mbp_bin(bytes);
    if (valid_peer(target) && win != MPI_WIN_NULL) a->peer = lookup(win_map(win), target), a->peer_kind = MBP_MAT_RMA;
}

void mbp_peer_add(const struct mbp_acct *a) { peer_add(a->peer_kind, a->peer, a->bytes); }

int mbp_is_in_place(const void *buf)
{
#ifdef OPEN_MPI
    extern int mpi_fortran_in_place_ __attribute__((weak)); /* Open MPI's Fortran MPI_IN_PLACE */
    if (&mpi_fortran_in_place_ && buf == (const void *)&mpi_fortran_in_place_) return 1;
#endif
    return buf == MPI_IN_PLACE;
}

/* ------------------------------------------------ persistent requests */

/* Open addressing on the request handle's bits; grown at MPI_*_init (never
 * on MPI_Start's path).  A slot is empty (key 0), in use, or deleted. */
struct slot {
    uintptr_t key;
    uint64_t bytes;
    int peer; /* world rank of a send's destination; -1 for a receive */
    int state; /* 0 empty, 1 used, 2 deleted */
};
static struct slot *table;
static size_t cap, used; /* used counts deleted slots too: they lengthen probes */

uint64_t mbp_req_key(const void *req, int fortran, int i)
{
    MPI_Request r;
    if (fortran)
        r = PMPI_Request_f2c(((const MPI_Fint *)req)[i]);
    else
        r = ((const MPI_Request *)req)[i];
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static size_t hash(uintptr_t k) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17); }

static struct slot *find(uintptr_t k)
{
    if (!cap) return NULL;
    for (size_t i = hash(k) & (cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (table[i].state == 0) return NULL;
        if (table[i].state == 1 && table[i].key == k) return &table[i];
    }
    return NULL;
}

static void insert(uintptr_t k, uint64_t bytes, int peer)
{
    if (2 * (used + 1) > cap) { /* keep the load under one half: rebuild without deleted slots */
        size_t ncap = cap ? cap : 64;
        while (2 * (used + 1) > ncap) ncap *= 2;
        struct slot *old = table, *nt = calloc(ncap, sizeof *nt);
        if (!nt) {
            mbp.untracked++;
            return;
        }
        size_t ocap = cap;
        table = nt, cap = ncap, used = 0;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].state == 1) insert(old[i].key, old[i].bytes, old[i].peer);
        free(old);
    }
    size_t i = hash(k) & (cap - 1);
    while (table[i].state == 1) i = (i + 1) & (cap - 1);
    if (table[i].state == 0) used++;
    table[i] = (struct slot){k, bytes, peer, 1};
}

void mbp_persist_add(const void *req, int fortran, uint64_t bytes, int world_peer)
{
    guard(1);
    uintptr_t k = mbp_req_key(req, fortran, 0);
    struct slot *s = find(k);
    if (s) /* a handle the library reused without MPI_Request_free: replace */
        *s = (struct slot){k, bytes, world_peer, 1};
    else
        insert(k, bytes, world_peer);
    guard(0);
}

void mbp_persist_forget(const void *req, int fortran)
{
    guard(1);
    struct slot *s = find(mbp_req_key(req, fortran, 0));
    if (s) s->state = 2;
    guard(0);
}

/* MPI_Start(all): the call's bytes are those of every operation it starts
 * (sends, and the buffers of receives); each send counts in the matrix. */
void mbp_start(struct mbp_acct *a, const void *reqs, int fortran, int n)
{
    uint64_t bytes = 0;
    guard(1);
    for (int i = 0; i < n; i++) {
        const struct slot *s = find(mbp_req_key(reqs, fortran, i));
        if (!s) continue; /* not a persistent point-to-point request (e.g. a persistent collective) */
        bytes += s->bytes;
        peer_add(MBP_MAT_P2P, s->peer, s->bytes);
    }
    guard(0);
    a->bytes = bytes;
    a->bin = mbp_bin(bytes);
}
