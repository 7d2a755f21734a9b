/* mb_place_pus: where a communication thread goes relative to its compute
 * thread, on hwloc synthetic topologies (so machines with SMT, with several
 * packages and with too few cores are all checked here, whatever this
 * machine is).  Synthetic PUs are numbered in order: with core:2 pu:2, core
 * 0 holds PUs 0 and 1, core 1 holds PUs 2 and 3. */
#include "check.h"
#include "team.h"

#include <hwloc.h>
#include <string.h>

static hwloc_topology_t load(const char *desc)
{
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    if (hwloc_topology_set_synthetic(t, desc) != 0 || hwloc_topology_load(t) != 0) {
        fprintf(stderr, "cannot load synthetic topology '%s'\n", desc);
        return NULL;
    }
    return t;
}

static void expect(hwloc_topology_t t, int slot, int nslots, enum mb_place place, int c, int m, const char *reason)
{
    int pu[2] = {99, 99};
    char why[200] = "";
    int rc = mb_place_pus(t, slot, nslots, place, pu, why, sizeof why);
    if (c == -2) {
        CHECK(rc == -1 && pu[0] == -1 && pu[1] == -1 && strstr(why, reason));
        if (!strstr(why, reason)) fprintf(stderr, "  %s: reason '%s', expected '%s'\n", mb_place_names[place], why, reason);
    } else {
        CHECK(rc == 0 && pu[0] == c && pu[1] == m);
        if (pu[0] != c || pu[1] != m)
            fprintf(stderr, "  %s slot %d/%d: got %d/%d, expected %d/%d\n", mb_place_names[place], slot, nslots, pu[0],
                    pu[1], c, m);
    }
}

/* Compute thread slot of nslots, placement place, on topology desc: expect PUs c (compute) and m (partner), or
 * failure (c = -2) with a reason containing reason. */
static const struct {
    const char *desc;
    int slot, nslots;
    enum mb_place place;
    int c, m;
    const char *reason;
} cases[] = {
    /* one package, two cores with two hardware threads each: the SMT study's machine */
    {"pack:1 core:2 pu:2", 0, 1, MB_PLACE_SAME_PU, 0, 0, NULL},
    {"pack:1 core:2 pu:2", 0, 1, MB_PLACE_SMT_SIBLING, 0, 1, NULL},
    {"pack:1 core:2 pu:2", 0, 1, MB_PLACE_OTHER_CORE, 0, 2, NULL},
    {"pack:1 core:2 pu:2", 0, 1, MB_PLACE_UNBOUND, -1, -1, NULL},
    /* both sides of the pair on this node: the second compute thread takes core 1 */
    {"pack:1 core:2 pu:2", 1, 2, MB_PLACE_SAME_PU, 2, 2, NULL},
    {"pack:1 core:2 pu:2", 1, 2, MB_PLACE_SMT_SIBLING, 2, 3, NULL},
    {"pack:1 core:2 pu:2", 1, 2, MB_PLACE_OTHER_CORE, -2, 0,
     "other-core needs 4 cores (2 per compute thread, 2 compute threads"},
    /* two packages of two SMT cores: other-core of compute thread 1 of 2 is core 3 */
    {"pack:2 core:2 pu:2", 0, 2, MB_PLACE_OTHER_CORE, 0, 4, NULL},
    {"pack:2 core:2 pu:2", 1, 2, MB_PLACE_OTHER_CORE, 2, 6, NULL},
    {"pack:2 core:2 pu:2", 1, 2, MB_PLACE_SMT_SIBLING, 2, 3, NULL},
    /* this machine's shape: two cores, no SMT */
    {"pack:1 core:2 pu:1", 0, 1, MB_PLACE_SMT_SIBLING, -2, 0, "no SMT: core 0 has one PU (P#0)"},
    {"pack:1 core:2 pu:1", 1, 2, MB_PLACE_SMT_SIBLING, -2, 0, "no SMT: core 1 has one PU (P#1)"},
    {"pack:1 core:2 pu:1", 0, 1, MB_PLACE_OTHER_CORE, 0, 1, NULL},
    {"pack:1 core:2 pu:1", 1, 2, MB_PLACE_SAME_PU, 1, 1, NULL},
    {"pack:1 core:2 pu:1", 0, 2, MB_PLACE_OTHER_CORE, -2, 0, "the node has 2"},
    /* one core: nothing but same-pu and unbound */
    {"core:1 pu:1", 0, 1, MB_PLACE_SAME_PU, 0, 0, NULL},
    {"core:1 pu:1", 0, 1, MB_PLACE_OTHER_CORE, -2, 0,
     "other-core needs 2 cores (2 per compute thread, 1 compute thread on"},
    {"core:1 pu:1", 0, 2, MB_PLACE_SAME_PU, -2, 0, "same-pu needs 2 cores"},
    /* four hardware threads per core: the sibling is the core's second PU */
    {"core:2 pu:4", 1, 2, MB_PLACE_SMT_SIBLING, 4, 5, NULL},
};

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hwloc_topology_t t = load(cases[i].desc);
        CHECK(t != NULL);
        if (!t) continue;
        expect(t, cases[i].slot, cases[i].nslots, cases[i].place, cases[i].c, cases[i].m, cases[i].reason);
        hwloc_topology_destroy(t);
    }
    return CHECK_DONE();
}
