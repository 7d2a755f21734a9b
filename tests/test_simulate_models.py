"""The machine models of issue 46 (platforms/bgl-*.xml, xt*-1024.xml):

- each platform file states its machine's facts (shape, link rates, injection
  limit, rank-to-node mapping, ranks per node) and scripts/simulate places the
  ranks as it says (XYZT: every node's first process, then every node's second);
- the XT models are graphs scripts/make-torus-platform writes (not kept in
  git: scripts/simulate writes them into build/platforms/ on first use, the
  very files bench/simulated's committed runs rest on): SimGrid's shortest route between two nodes is the
  dimension-order torus route, with the node's injection link at its two ends
  only (SimGrid's TORUS cluster charges every node's limiter on the way);
  their torus links carry the bandwidth fitted on their machine's even/odd
  (XT3 0.5 GB/s, both XT4 models 0.8); their NIC model (platforms/models/nic.cpp: the injection link's busy
  bandwidth, one fitted per SeaStar generation) is preloaded and in effect,
  and slows the halo and each phase of the phased method, not one sender;
  XT4's two processes a node are a host each, their messages to each other
  through the node's NIC, the result naming the nodes;
- the XT evidence graphs on part of a larger machine (--machine-dims): the
  whole machine's routers and links, hosts only for the job's nodes (the
  first free ones in node order, the host file's order), mesh dimensions
  without wrap-around links, the placement stated, and each the very file
  the committed evidence run rests on; the placement's halo bounds (--stats);
- a simulated `cart` is either placed by the platform's model of its
  machine's mapping (mpimb/cart: BG/L's fold, the XT's identity; labelled in the row's params and the
  metadata) or n/a with the reason (SMPI's MPI_Cart_create ignores reorder),
  never world under another name;
- the talk's central lesson on the BG/L model at 64 ranks: even/odd is slower
  than world (simulated time is deterministic: a correctness check of the
  model, not a timing threshold);
- the BG/L model's Irecv/Send is its links' alone (SMPI charges no overhead on
  a rendezvous Send), which compare.py's two Irecv/Send rules rest on, and
  tables.md names even/odd's miss and cart's apart;
- a simulated run ends with its findings, under a line naming the platform model;
- bench/simulated's committed BG/L run beside the published set in
  `mpimb-report compare`: both shown, each marked.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import importlib.util
import json
import os
import re
import subprocess
import types
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPORT, ROOT, Run, report
from mpimb.schema import parse_params
from test_simulate import (
    PLATFORMS,
    SIMULATE,
    check_simulated_meta,
    needs_smpi,
    sim_run,
    simulate,
)

# name: (torus, partition, kind, ppn, mapping, link bandwidth, limiter)
FACTS = {
    "bgl-cop-64": ("16,8,4", "8,4,2", "mesh", 1, "XYZT", "175MBps", None),
    "bgl-cop-64-cube": ("8,8,8", "4,4,4", "mesh", 1, "XYZT", "175MBps", None),
    "bgl-vn-128": ("16,8,4", "8,4,2", "mesh", 2, "XYZT", "175MBps", None),
    "bgl-cop-1024": ("8,8,16", "8,8,16", "torus", 1, "XYZT", "175MBps", None),
    # the XT torus links: what a link carries for the job, fitted per machine on its even/odd (the rated
    # 3.8 GB/s in the comment)
    "xt3-1024": ("16,8,8", "16,8,8", "torus", 1, "TXYZ", "0.5GBps", "1.1GBps"),
    "xt4-1024": ("8,8,8", "8,8,8", "torus", 2, "TXYZ", "0.8GBps", "2GBps"),
    "xt4-sn-1024": ("16,8,8", "16,8,8", "torus", 1, "TXYZ", "0.8GBps", "2GBps"),
}
BGL_ARGS = ("--count", "2048", "--reps", "1", "--max-reps", "1", "--min-rep-time", "0")


@functools.cache
def platform_file(name: str) -> Path:
    """The file scripts/simulate runs NAME on: platforms/NAME.xml, or the one it writes with
    scripts/make-torus-platform (its --dry-run command names it)."""
    if (PLATFORMS / f"{name}.xml").exists():
        return PLATFORMS / f"{name}.xml"
    p = subprocess.run([str(SIMULATE), "halocompare", "-n", "2", "--platform", name, "--dry-run"],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    words = p.stdout.split()
    return Path(words[words.index("-platform") + 1])


@functools.cache
def element(name: str, tag: str) -> tuple[ET.Element, dict[str, str], dict[str, str]]:
    """A platform file's first <tag> (its cluster, or the zone of a graph platform), that element's own
    properties and the file's <config> settings."""
    root = ET.parse(platform_file(name)).getroot()
    e = next(root.iter(tag))
    props = {p.get("id", ""): p.get("value", "") for p in e.findall("prop")}
    config = {p.get("id", ""): p.get("value", "") for p in root.iter("config") for p in p.iter("prop")}
    return e, props, config


def cluster(name: str) -> tuple[ET.Element, dict[str, str], dict[str, str]]:
    return element(name, "cluster")


@pytest.mark.parametrize("name", sorted(n for n in FACTS if n.startswith("bgl")))
def test_platform_states_its_machine(name: str) -> None:
    torus, part, kind, ppn, mapping, bw, limiter = FACTS[name]
    c, props, config = cluster(name)
    text = (PLATFORMS / f"{name}.xml").read_text()
    assert c.get("topology") == "TORUS" and c.get("topo_parameters") == torus
    assert c.get("bw") == bw and c.get("sharing_policy") == "SPLITDUPLEX"  # per direction
    assert c.get("limiter_link") == limiter
    assert props["mpimb/partition"] == part and props["mpimb/partition_kind"] == kind
    assert props["mpimb/mapping"] == mapping and props["mpimb/ppn"] == str(ppn)
    assert props.get("mpimb/cart") == ("fold" if name.startswith("bgl") else None)  # a model of BG/L's mapping
    dims = [int(v) for v in torus.split(",")]
    block = [int(v) for v in part.split(",")]
    nodes = 1
    for b in block:
        nodes *= b
    if kind == "mesh":  # no route inside the block may take a wrap-around link: SimGrid goes the short way
        assert all(d >= 2 * b for d, b in zip(dims, block))
    else:
        assert block == dims
    if ppn > 1:  # two processes of a node must have a path between them
        assert c.get("loopback_bw")
    assert config["smpi/lat-factor"] == "0:1" and config["smpi/bw-factor"] == "0:1"
    assert config["smpi/send-is-detached-thresh"] == "1000"  # BGLMPI_EAGER
    assert c.get("lat") == "100ns" and "Adiga" in text and "FITTED" in text
    assert nodes == (1024 if "1024" in name else 64)
    assert "sources:" in text and "Not modelled" in text


XT = sorted(n for n in FACTS if n.startswith("xt"))
MAKE_TORUS = ROOT / "scripts" / "make-torus-platform"
STAGE = {"x": 0, "y": 1, "z": 2}


def zone(name: str) -> tuple[ET.Element, dict[str, str], dict[str, str]]:
    return element(name, "zone")


@pytest.mark.parametrize("name", XT)
def test_xt_graph_states_its_machine(name: str) -> None:
    """The XT models: a shortest-path zone of hosts, routers and links carrying
    the published facts (50 ns per hop, the node's HyperTransport limit shared by its sends and receives,
    TXYZ; the rated 3.8 GB/s per direction stated beside the bandwidth its links carry, fitted on its
    machine's even/odd: the XT3's 0.5 GB/s, both XT4 models' 0.8)."""
    torus, part, kind, ppn, mapping, bw, limiter = FACTS[name]
    z, props, config = zone(name)
    text = platform_file(name).read_text()
    assert z.get("routing") == "DijkstraCache" and not list(z.iter("cluster"))
    assert props["mpimb/partition"] == part == torus and props["mpimb/partition_kind"] == kind
    assert props["mpimb/mapping"] == mapping and props["mpimb/ppn"] == str(ppn)
    assert props["mpimb/cart"] == "identity"  # Cray's MPICH2-based MPI ignores reorder
    # the SeaStar under many messages (scripts/simulate preloads the plugin): the fitted busy bandwidth, one per
    # SeaStar generation, while more than 2 messages arrive at once
    assert (props["mpimb/nic_busy_bw"], props["mpimb/nic_above"]) == (
        {"xt3-1024": "235MBps", "xt4-sn-1024": "600MBps", "xt4-1024": "600MBps"}[name], "2")
    assert "mpimb/network_model" not in props and "smpi/IB-penalty-factors" not in config
    dims = [int(v) for v in torus.split(",")]
    nodes = dims[0] * dims[1] * dims[2]
    assert nodes * ppn == 1024
    hosts = list(z.iter("host"))
    if ppn == 1:  # a host a node, x fastest
        assert [h.get("id") for h in hosts] == [f"xt-{n}" for n in range(nodes)] and "mpimb/hosts" not in props
    else:  # XT4 VN: a host a process, a node's together, its node named (the NIC model counts per node)
        assert props["mpimb/hosts"] == "process"
        assert [h.get("id") for h in hosts] == [f"xt-{n}-p{k}" for n in range(nodes) for k in range(ppn)]
        assert [h.find("prop").attrib for h in hosts[:ppn + 1]] == \
            [{"id": "mpimb/node", "value": "xt-0"}] * ppn + [{"id": "mpimb/node", "value": "xt-1"}]
    links = {lk.get("id", ""): lk for lk in z.iter("link")}
    for n in (0, nodes - 1):
        inj = links[f"xt-{n}-inj"]
        assert inj.get("bandwidth") == limiter and inj.get("sharing_policy") is None  # SHARED: in and out
        assert inj.get("latency") == "1ns"  # not 0: SimGrid's solver takes no route of latency 0 (weight-S 0)
        for s in "xyz":
            t = links[f"xt-{n}-{s}"]
            assert (t.get("bandwidth"), t.get("latency"), t.get("sharing_policy")) == (bw, "50ns", "SPLITDUPLEX")
    assert len(links) == nodes * 4  # no loopback: a node's processes talk through its injection link
    # correction factors 1 (the bandwidth one the NIC model's plugin sets: SimGrid takes no smpi/bw-factor
    # beside its callback); max-min sharing without RTT weighting
    assert config["smpi/lat-factor"] == "0:1" and "smpi/bw-factor" not in config
    assert config["network/weight-S"] == "0"
    assert config["maxmin/precision"] == "1e-4"  # SimGrid 3.32's solver crashes on XT4's graph at 1e-5
    assert config["smpi/os"] == config["smpi/or"] == ("0:2.5e-6:0" if name == "xt3-1024" else "0:2.25e-6:0")
    assert "Brightwell" in text and "3.8 GB/s in each\n       direction" in text and "sources:" in text
    gbs = bw.replace("GBps", " GB/s")
    assert f"{gbs} each way,\n       fitted" in text and f"is fitted (with the links' {gbs})" in text
    fit = "XT3, Irecv/Isend" if name == "xt3-1024" else "XT4 SN mode, Irecv/Isend"  # each on its machine
    assert f"or sustained), on\n       {fit}, 4 neighbours, non-periodic: even/odd" in text
    assert "Not modelled" in text


@pytest.mark.parametrize("name", XT)
def test_xt_files_are_the_generators_output(name: str) -> None:
    """scripts/simulate runs the XT models on the generator's output, in build/platforms/ (2 MB files stay out of
    git), and that output is the very file bench/simulated's committed runs rest on (their SHA-256: the
    4-neighbour run and the 8-neighbour one where it is committed: compare.py names those that are not)."""
    p = subprocess.run([str(MAKE_TORUS), name], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    f = platform_file(name)
    assert f == ROOT / "build" / "platforms" / f"{name}.xml" and not (PLATFORMS / f"{name}.xml").exists()
    assert p.stdout == f.read_text()
    runs = [ROOT / "bench" / "simulated" / f"halocompare-{n}-np1024.json" for n in (name, f"{name}-nbrs8")]
    assert runs[0].exists()
    for path in (p for p in runs if p.exists()):  # the 4- and the 8-neighbour runs
        run = json.loads(path.read_text())
        assert run["platform"]["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("args", "message"),
    [(["xt3-1024", "--dims", "8,8"], "--dims must be three positive integers X,Y,Z, got '8,8'"),
     (["xt3-1024", "--dims", "4,x,4"], "--dims must be three positive integers"),
     (["bgl-cop-64"], "argument machine: invalid choice: 'bgl-cop-64'"),
     ([], "missing MACHINE (see --list)"),
     (["xt3-1024", "--free", "0.5"], "--free needs --machine-dims"),
     (["xt3-1024", "--mesh", "xx"], "--mesh must name dimensions among x, y, z, got 'xx'"),
     (["xt3-1024", "--machine-dims", "11,12,16"], "--machine-dims needs --free F (the fraction of the machine"),
     (["xt3-1024", "--machine-dims", "11,12,16", "--free", "1.5"], "--free must be a fraction, 0 < F <= 1, got '1.5'"),
     (["xt3-1024", "--machine-dims", "11,12,16", "--free", "0.4"],
      "xt3-1024 needs 1024 nodes: --free 0.4 of 11x12x16 leaves 845"),
     (["xt3-1024", "--machine-dims", "11,12,16", "--free", "1", "--mesh", "w"], "--mesh must name dimensions"),
     (["xt3-1024", "--machine-dims", "11,12", "--free", "1"], "--machine-dims must be three positive integers"),
     (["xt3-1024", "--machine-dims", "11,12,16", "--free", "1", "--dims", "8,8,16"], "exclude each other"),
     (["xt3-1024", "--link-bw", "fast"], "--link-bw must be a bandwidth such as 0.5GBps or 235MBps, got 'fast'"),
     (["xt3-1024", "--busy-bw", "235"], "--busy-bw must be a bandwidth such as 0.5GBps or 235MBps, got '235'"),
     (["xt3-1024", "--machine-dims", "11,12,16", "--free", "0.5", "--busy-bw", "235MBps"],
      "--busy-bw: a graph of part of a machine has no NIC model")],
)
def test_make_torus_platform_bad_input(args: list[str], message: str) -> None:
    p = subprocess.run([str(MAKE_TORUS), *args], capture_output=True, text=True, check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("make-torus-platform: ") and message in p.stderr


def generate(*args: str) -> str:
    p = subprocess.run([str(MAKE_TORUS), *args], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout


def generated_runs() -> dict[str, list[str]]:
    """bench/simulated/run.sh's runs on graphs it writes itself: name -> the generator's arguments."""
    text = (ROOT / "bench" / "simulated" / "run.sh").read_text()
    found = re.findall(r"^ *([a-z0-9-]+)\) gen=\"([^\"]+)\"", text, re.MULTILINE)
    return {name: args.split() for name, args in found}


def scattered_runs() -> dict[str, list[str]]:
    """run.sh's evidence runs on part of a machine."""
    return {name: args for name, args in generated_runs().items() if "--machine-dims" in args}


@pytest.mark.parametrize(("name", "want"), [("xt3-256", ["xt3-1024", "--dims", "8,8,4"]),
                                            ("xt4-256", ["xt4-1024", "--dims", "8,4,4"])])
def test_xt_prediction_rests_on_the_generators_output(name: str, want: list[str]) -> None:
    """The XT3 and XT4 models on blocks the talk did not run (run.sh's xt3-256: 8x8x4, and xt4-256: 8x4x4 of
    two processes a node, 256 ranks each), the predictions in tables.md, rest on the generator's output for
    run.sh's arguments."""
    args = generated_runs()[name]
    assert args == want
    run = json.loads((ROOT / "bench" / "simulated" / f"halocompare-{name}-np256.json").read_text())
    assert run["platform"]["name"] == name and run["nprocs"] == 256
    assert run["platform"]["sha256"] == hashlib.sha256(generate(*args).encode()).hexdigest()


def hops(*gen: str) -> dict[str, float]:
    """--stats' mean torus hops of the talk's halo routes, per ordering, on the generator's graph for `gen`."""
    lines = generate(*gen, "--stats").splitlines()[1:]
    return {line.split(":")[0]: float(re.search(r"mean ([\d.]+) torus hops", line)[1]) for line in lines}


def test_xt_other_orientation_rests_on_the_generators_output() -> None:
    """run.sh's xt3-1024-8x8x16, the evidence that the model's even/odd / world hangs on the block's
    orientation (docs/simulate.md, "Even/odd's cost"): the generator's output for run.sh's arguments, the
    same links and NIC model on the same 1024 nodes, and on it even/odd's routes the shorter ones where on
    the model's 16x8x8 world's are (--stats' mean torus hops)."""
    args = generated_runs()["xt3-1024-8x8x16"]
    assert args == ["xt3-1024", "--dims", "8,8,16"]
    run = json.loads((ROOT / "bench" / "simulated" / "halocompare-xt3-1024-8x8x16-np1024.json").read_text())
    assert run["platform"]["sha256"] == hashlib.sha256(generate(*args).encode()).hexdigest()
    config = run["platform"]["smpi_config"].split()
    assert {"mpimb/partition:8,8,16", "mpimb/nic_busy_bw:235MBps", "mpimb/nic_above:2"} <= set(config)
    block, other = hops("xt3-1024"), hops(*args)
    assert block["world"] < block["evenodd"] and other["evenodd"] < other["world"], (block, other)


def test_stats_on_a_smaller_block() -> None:
    """--stats lays the halo on halocompare's grid for the block's ranks (MPI_Dims_create's: 8x4 for 32), not
    on the 32x32 of 1024 ranks (which ran off the end of the node list): 2 x (8 x 3 + 7 x 4) = 104 messages
    between nodes, each ordering."""
    lines = generate("xt3-1024", "--dims", "4,4,2", "--stats").splitlines()
    assert lines[0] == "32 nodes of 32, nodes 0 to 31" and len(lines) == 3
    assert all(line.split(":")[1].startswith(" 104 flows between nodes") for line in lines[1:])


def test_xt_rated_links_rest_on_the_generators_output() -> None:
    """run.sh's xt3-1024-links3800, the evidence that even/odd's cost comes from links that bind
    (docs/simulate.md, "Even/odd's cost"): the model with every torus link at the SeaStar's rated 3.8 GB/s,
    said to be evidence in the file; nothing else differs from the model."""
    args = generated_runs()["xt3-1024-links3800"]
    assert args == ["xt3-1024", "--link-bw", "3.8GBps"]
    text = generate(*args)
    run = json.loads((ROOT / "bench" / "simulated" / "halocompare-xt3-1024-links3800-np1024.json").read_text())
    assert run["platform"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert "torus links 3.8GBps (evidence, not the fitted 0.5GBps)" in text
    z = next(ET.fromstring(text).iter("zone"))
    torus = [lk for lk in z.iter("link") if not lk.get("id", "").endswith("-inj")]
    assert len(torus) == 3 * 1024 and {lk.get("bandwidth") for lk in torus} == {"3.8GBps"}
    strip = re.compile(r"<!--.*?-->", re.DOTALL)
    assert (strip.sub("", text).replace('bandwidth="3.8GBps" latency="50ns"', 'bandwidth="0.5GBps" latency="50ns"')
            == strip.sub("", generate("xt3-1024")))


@pytest.mark.parametrize(("name", "dims", "bw"), [("xt3-1024-mesh", (16, 8, 8), "0.5GBps"),
                                                  ("xt4-1024-mesh", (8, 8, 8), "0.8GBps")])
def test_xt_block_without_wraparound_rests_on_the_generators_output(name: str, dims: tuple[int, int, int],
                                                                     bw: str) -> None:
    """run.sh's xt*-1024-mesh, the evidence on the periodic halo's cost (docs/simulate.md): the model's block
    with no wrap-around link of its own (--mesh xyz without --machine-dims), its fitted links and NIC model
    kept, said to be evidence in the file; a route from one end of x to the other crosses the whole block."""
    machine = name.removesuffix("-mesh")
    args = generated_runs()[name]
    assert args == [machine, "--mesh", "xyz"]
    text = generate(*args)
    run = json.loads((ROOT / "bench" / "simulated" / f"halocompare-{name}-np1024.json").read_text())
    assert run["platform"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert "mesh xyz (evidence: the block without wrap-around links)" in text
    assert {"mpimb/mesh:xyz", "mpimb/partition_kind:torus"} <= set(run["platform"]["smpi_config"].split())
    assert any(c.startswith("mpimb/nic_busy_bw:") for c in run["platform"]["smpi_config"].split())
    z = next(ET.fromstring(text).iter("zone"))
    torus = [lk for lk in z.iter("link") if not lk.get("id", "").endswith("-inj")]
    x, y, zz = dims
    assert len(torus) == (x - 1) * y * zz + x * (y - 1) * zz + x * y * (zz - 1)  # a mesh: no wrap-around links
    assert {lk.get("bandwidth") for lk in torus} == {bw}
    host = "xt-0" if machine == "xt3-1024" else "xt-0-p0"
    far = f"xt-{x - 1}" if machine == "xt3-1024" else f"xt-{x - 1}-p0"
    assert len(shortest_routes(z, host)[far]) - 2 == x - 1  # across the block, not one hop round
    assert len(shortest_routes(next(ET.fromstring(generate(machine)).iter("zone")), host)[far]) - 2 == 1


def test_xt_back_to_back_rests_on_the_model() -> None:
    """run.sh's xt3-1024-back-to-back, the evidence on the periodic halo's cost as the talk timed it: the XT3
    model itself (the generator's output for xt3-1024), world's Irecv/Isend halo periodic and not, every
    repetition several exchanges back to back, verified; tables.md sets it beside the published figures."""
    case = re.search(r"^ *xt3-1024-back-to-back\) (.*?) ;;", (ROOT / "bench" / "simulated" / "run.sh").read_text(),
                     re.MULTILINE | re.DOTALL)
    assert case and "platform=xt3-1024 " in case.group(1) and "minrep=0.003" in case.group(1)
    base = ROOT / "bench" / "simulated" / "halocompare-xt3-1024-back-to-back-np1024"
    run = json.loads(base.with_suffix(".json").read_text())
    assert run["platform"]["sha256"] == hashlib.sha256(generate("xt3-1024").encode()).hexdigest()
    rows = pd.read_csv(base.with_suffix(".csv"), dtype={"periodic": str})
    assert sorted(rows["periodic"]) == ["0", "1"] and set(rows["comm"]) == {"world"}
    assert (rows["iters"] > 1).all() and (rows["verified"] == "yes").all()
    table = (ROOT / "bench" / "simulated" / "tables.md").read_text()  # compare.py's output: checked below
    assert "## Evidence: xt3-1024-back-to-back (xt3-1024's world halo, `iters` exchanges back to back)" in table


def test_xt_scattered_graph_states_its_placement() -> None:
    """xt3-1024 on PSC BigBen's 11x12x16 torus, half of it free: the graph holds the whole machine (2112
    nodes' routers and torus links), hosts and injection links only for the job's 1024 nodes, listed in
    node order (the job's node list), spread over the machine; the placement is stated."""
    text = generate("xt3-1024", "--machine-dims", "11,12,16", "--free", "0.5")
    z = next(ET.fromstring(text).iter("zone"))
    props = {p.get("id", ""): p.get("value", "") for p in z.findall("prop")}
    assert props == {"mpimb/machine": "11,12,16", "mpimb/mesh": "none", "mpimb/partition_kind": "scattered",
                     "mpimb/placement": "free=0.5,seed=1,order=node", "mpimb/mapping": "TXYZ", "mpimb/ppn": "1",
                     "mpimb/routing": "graph", "mpimb/cart": "identity"}  # no NIC model: the links alone
    job = [int(h.get("id", "").removeprefix("xt-")) for h in z.iter("host")]
    assert len(job) == 1024 and job == sorted(set(job)) and job[-1] < 2112
    assert job[-1] - job[0] > 1500  # scattered: not the first 1024 nodes
    assert len(list(z.iter("router"))) == 3 * 2112
    links = {lk.get("id", ""): lk for lk in z.iter("link")}
    assert {n for n in links if n.endswith("-inj")} == {f"xt-{n}-inj" for n in job}
    assert len(links) == 1024 + 3 * 2112 + 2  # a torus: every node's three + links; xt-reach-1, -2
    job_set = set(job)
    reach = [r for r in z.iter("route") if "xt-reach-1" in {c.get("id") for c in r.iter("link_ctn")}]
    assert len(reach) == 2 * (2112 - 1024)  # into the x and y stage of every node without a host
    assert all(int(r.get("src", "").split("-")[1]) not in job_set and r.get("src", "").endswith("-rz") for r in reach)
    assert all(lk.get("bandwidth") == "1.1GBps" for n, lk in links.items() if n.endswith("-inj"))
    assert all((lk.get("bandwidth"), lk.get("latency"), lk.get("sharing_policy")) == ("3.8GBps", "50ns", "SPLITDUPLEX")
               for n, lk in links.items() if not n.endswith("-inj") and "reach" not in n)
    assert "placement: 0.5 of the machine free" in text and "options machine-dims 11,12,16, free 0.5, seed 1:" in text
    other = generate("xt3-1024", "--machine-dims", "11,12,16", "--free", "0.5", "--seed", "2")
    assert other != text  # the seed decides which nodes are free


def test_xt_scattered_mesh_routes() -> None:
    """A mesh dimension (Jaguar's x) has no wrap-around link, and the shortest route goes the long way
    along it rather than round: from a node at x = 0 to every job node, injection, then |dx| x hops
    and the torus distance in y and z, in dimension order, then the destination's injection."""
    text = generate("xt3-1024", "--machine-dims", "16,8,16", "--mesh", "x", "--free", "0.5")
    z = next(ET.fromstring(text).iter("zone"))
    links = {lk.get("id", "") for lk in z.iter("link")}
    assert not {f"xt-{n}-x" for n in range(15, 2048, 16)} & links  # x = 15: no + link in x
    assert {f"xt-{n}-x" for n in range(14, 2048, 16)} <= links

    def at(n: int) -> tuple[int, int, int]:
        return n % 16, n // 16 % 8, n // 128

    src = next(int(h.get("id", "")[3:]) for h in z.iter("host") if int(h.get("id", "")[3:]) % 16 == 0)
    routes = shortest_routes(z, f"xt-{src}")
    assert len(routes) == 1023
    for dst, path in routes.items():
        d = int(dst.removeprefix("xt-"))
        assert path[0] == f"xt-{src}-inj" and path[-1] == f"xt-{d}-inj"
        (ax, ay, az), (bx, by, bz) = at(src), at(d)
        want = abs(ax - bx) + min(abs(ay - by), 8 - abs(ay - by)) + min(abs(az - bz), 16 - abs(az - bz))
        assert len(path) - 2 == want
        stages = [STAGE[link[-1]] for link in path[1:-1]]
        assert stages == sorted(stages)


@pytest.mark.parametrize("name", sorted(scattered_runs()))
def test_xt_scattered_runs_rest_on_the_generators_output(name: str) -> None:
    """Each committed evidence run on part of a machine rests on the generator's output for run.sh's
    arguments (the JSON's SHA-256), a graph stating that placement."""
    args = scattered_runs()[name]
    text = generate(*args)
    run = json.loads((ROOT / "bench" / "simulated" / f"halocompare-{name}-np1024.json").read_text())
    assert run["platform"]["name"] == name
    assert run["platform"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    config = run["platform"]["smpi_config"].split()
    free = args[args.index("--free") + 1]
    assert "mpimb/partition_kind:scattered" in config and f"mpimb/placement:free={free},seed=1,order=node" in config
    # the links and the injection alone (do the routes bind?): no NIC model, SimGrid's plain SMPI model
    assert not any(c.startswith(("mpimb/nic", "network/model:")) for c in config)
    assert f"mpimb/machine:{args[args.index('--machine-dims') + 1]}" in config


def test_xt_stats_bounds() -> None:
    """--stats on the contiguous xt3-1024 block (16x8x8): 3968 flows between nodes (32x32 grid, 4 neighbours,
    non-periodic), 8 messages of 16000 B through each inner node's 1.1 GB/s injection link: 116.4 us per
    exchange, so at most 550 MB/s per process, the bound for world; even/odd's longer routes put 9 flows on
    one torus link, 288 us at the fitted 0.5 GB/s: the links bind it first, at 222 MB/s."""
    out = generate("xt3-1024", "--stats").splitlines()
    assert out[0] == "1024 nodes of 1024, nodes 0 to 1023"
    for line, comm in zip(out[1:], ("world", "evenodd")):
        assert line.startswith(f"{comm}: 3968 flows between nodes, mean ")
        assert "busiest injection link 8 messages: 116.4 us at 1.1GBps" in line
    assert out[1].endswith("busiest link 3 flows: 96.0 us per exchange at 0.5GBps; busiest injection link 8 messages: "
                           "116.4 us at 1.1GBps; bound 550 MB/s per process")
    assert "busiest link 9 flows: 288.0 us per exchange at 0.5GBps" in out[2] and out[2].endswith("bound 222 MB/s per process")
    scattered = generate("xt3-1024", "--machine-dims", "11,12,16", "--free", "0.5", "--stats")
    assert scattered.startswith("1024 nodes of 2112, nodes 0 to ")


def shortest_routes(z: ET.Element, src: str) -> dict[str, list[str]]:
    """SimGrid's DijkstraZone: the route from src with the fewest links, as the list of its links (a
    route never passes through a host; graphs on part of a machine have two-link edges, xt-reach-*)."""
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for r in z.iter("route"):
        if r.get("src") != r.get("dst"):
            out.setdefault(r.get("src", ""), []).append((r.get("dst", ""), [c.get("id", "") for c in r.iter("link_ctn")]))
    path: dict[str, list[str]] = {src: []}
    queue = [(0, src)]
    while queue:
        cost, v = heapq.heappop(queue)
        if cost > len(path[v]) or not (v == src or "-r" in v):
            continue
        for w, links in out.get(v, []):
            if w not in path or len(path[v]) + len(links) < len(path[w]):
                path[w] = [*path[v], *links]
                heapq.heappush(queue, (len(path[w]), w))
    return {h: p for h, p in path.items() if "-r" not in h and h != src}


@pytest.mark.parametrize("src", [0, 77, 1023])
def test_xt_routes_minimal_with_injection_at_the_ends(src: int) -> None:
    """From three nodes of xt3-1024's 16x8x8 graph to every other: the route is
    the node's injection link, the torus links of a minimal dimension-order
    route (x, then y, then z), and the destination's injection link: no other
    node's HyperTransport on the way."""
    z, _, _ = zone("xt3-1024")
    dims = (16, 8, 8)

    def at(n: int) -> tuple[int, int, int]:
        return n % 16, n // 16 % 8, n // 128

    routes = shortest_routes(z, f"xt-{src}")
    assert len(routes) == 1023
    for dst, links in routes.items():
        d = int(dst.removeprefix("xt-"))
        assert links[0] == f"xt-{src}-inj" and links[-1] == f"xt-{d}-inj"
        torus = links[1:-1]
        assert not any(link.endswith(("-inj", "-loopback")) for link in torus)
        want = sum(min(abs(a - b), k - abs(a - b)) for a, b, k in zip(at(src), at(d), dims))
        assert len(torus) == want  # minimal
        stages = [STAGE[link[-1]] for link in torus]
        assert stages == sorted(stages)  # dimension order


XT_444_ARGS = ("--methods", "irecv-isend", "--neighbors", "4", "--periodic", "no", "--count", "2000", "--verify",
               "--reps", "1", "--max-reps", "1", "--min-rep-time", "0")


def xt3_444(tmp: Path, *extra: str) -> Path:
    """xt3-1024's graph on a 4x4x4 block (with the generator's options `extra`), written into tmp."""
    plat = tmp / f"xt3-444{''.join(extra).replace('.', '')}.xml"
    plat.write_text(generate("xt3-1024", "--dims", "4,4,4", *extra))
    return plat


# the torus links at the SeaStar's rated rate, not the fitted ones: a check of the injection link or of the
# NIC model alone, with links that do not bind
RATED = ("--link-bw", "3.8GBps")


def links_alone(tmp: Path, plat: Path) -> Path:
    """plat without its NIC model (no mpimb/nic_ properties: scripts/simulate preloads no plugin)."""
    out = tmp / f"{plat.stem}-links.xml"
    out.write_text("".join(x for x in plat.read_text().splitlines(keepends=True) if "mpimb/nic_" not in x))
    return out


@needs_smpi
def test_xt_graph_charges_injection_at_the_ends(tmp_path: Path) -> None:
    """xt3-1024's graph on a 4x4x4 block (64 ranks, TXYZ: rank r on xt-r) without its NIC model:
    scripts/simulate reads the zone's model properties, and the halo exchange
    runs at the node's injection limit, the one bottleneck when a route pays
    it at its ends only: 4 sends and 4 receives of 16000 B share 1.1 GB/s, so
    at most 64000 B / (128000 B / 1.1 GB/s) = 550 MB/s per process; with
    latencies 512 (SimGrid's TORUS cluster with the same facts, which charges
    every node's limiter on the way: 318).  One sender: 4 sends alone, 1.1 GB/s.  (The torus links at their
    rated 3.8 GB/s, which never bind here.)"""
    plat = links_alone(tmp_path, xt3_444(tmp_path, *RATED))
    run = sim_run("halocompare", 64, str(plat), "--comms", "world", "--tests", "halo,one-sender",
                  *XT_444_ARGS, out=tmp_path / "x.csv", sim_opts=("--cfg", "smpi/bw-factor:0:1"))
    meta = run.meta()
    assert meta["simulated"] is True and meta["platform"]["name"] == "xt3-444--link-bw38GBps-links"
    assert [r["host"] for r in sorted(meta["ranks"], key=lambda r: r["rank"])] == [f"xt-{n}" for n in range(64)]
    config = meta["platform"]["smpi_config"].split()
    assert "mpimb/partition:4,4,4" in config and "mpimb/routing:graph" in config and "placement:TXYZ,ppn=1" in config
    assert not any(c.startswith("mpimb/nic_") for c in config)
    rows = {r["test"]: r for r in run.rows()}
    assert all(r["verified"] == "yes" for r in rows.values())
    assert 0.9 * 550 < float(rows["halo"]["mbps"]) < 550
    assert 0.9 * 1100 < float(rows["one-sender"]["mbps"]) < 1100


@needs_smpi
def test_xt_nic_models_orderings_come_from_hop_counts(tmp_path: Path) -> None:
    """The NIC model tells world and even/odd apart only through the order in which hop counts end a node's
    messages (docs/simulate.md, "Even/odd's cost"): on the 4x4x4 block, 7 repetitions each, world and even/odd
    differ with the model's 50 ns a hop; with the torus links free (1000 GB/s) and 0 ns a hop every route is as
    long as every other, and their medians are one figure, periodic or not.  Simulated time: exact, no threshold."""
    plat = xt3_444(tmp_path)
    level = tmp_path / "xt3-444-level.xml"
    text, torus = plat.read_text(), 'bandwidth="0.5GBps" latency="50ns"'
    assert text.count(torus) == 3 * 64
    level.write_text(text.replace(torus, 'bandwidth="1000GBps" latency="0ns"'))
    args = ("--methods", "irecv-isend", "--neighbors", "4", "--periodic", "both", "--count", "2000", "--verify",
            "--reps", "7", "--max-reps", "7", "--min-rep-time", "0", "--group", "none")

    def medians(platform: Path) -> dict[tuple[str, str], float]:
        run = sim_run("halocompare", 64, str(platform), "--comms", "world,evenodd", "--tests", "halo", *args,
                      out=tmp_path / f"{platform.stem}.csv")
        rows = run.rows()
        assert len(rows) == 4 and all(r["verified"] == "yes" for r in rows)
        return {(r["comm"], r["periodic"]): float(r["time_median_s"]) for r in rows}

    model, flat = medians(plat), medians(level)
    assert all(model["world", b] != model["evenodd", b] for b in ("0", "1")), model
    assert len(set(flat.values())) == 1, flat


@needs_smpi
def test_xt_nic_model_slows_a_node_receiving_many_and_maps_cart_identically(tmp_path: Path) -> None:
    """The same block with its NIC model (scripts/simulate preloads platforms/models/nic.cpp): while a node
    receives more than 2 messages at once its injection link, one capacity for its sends and its receives,
    runs at its busy bandwidth B (235 MB/s; the torus links at their rated rate, which do not bind).  An inner
    node receiving 4 and sending 4 then moves 128000 B at B: at least B / 2 per process, and less than the 550
    of the links alone (the ends of an exchange, fewer than 3 under way, run at 1.1 GB/s).  The phased method's senders receive nothing while they send: phased is
    faster than Irecv/Isend (on the published XT3 1.16 times).  One sender's receivers each receive one
    message: 1.1 GB/s as without the model.  cart is the identity model of Cray's MPI (MPICH2's
    MPI_Cart_create ignores reorder): measured on a communicator in rank order, labelled."""
    args = [a for a in XT_444_ARGS if a != "irecv-isend"]
    args[args.index("--methods") + 1:args.index("--methods") + 1] = ["irecv-isend,phased"]
    run = sim_run("halocompare", 64, str(xt3_444(tmp_path, *RATED)), "--comms", "world,cart",
                  "--tests", "halo,one-sender", *args, out=tmp_path / "nic.csv")
    meta = run.meta()
    config = meta["platform"]["smpi_config"].split()
    assert "mpimb/nic_busy_bw:235MBps" in config and "mpimb/nic_above:2" in config
    assert "mpimb NIC model" not in run.stderr  # every message it counted at its start uncounted at its end
    rows = {(r["test"], r["method"], r["comm"]): r for r in run.rows()}
    assert all(r["verified"] == "yes" for r in rows.values())
    halo = float(rows["halo", "irecv-isend", "world"]["mbps"])
    assert 235 / 2 < halo < 0.5 * 550
    assert float(rows["halo", "phased", "world"]["mbps"]) > halo
    cart = rows["halo", "irecv-isend", "cart"]
    assert parse_params(cart["params"]).get("cart_model") == "identity" and 235 / 2 < float(cart["mbps"]) < 0.5 * 550
    note = "0 of 64 ranks (simulated: the platform's model of its MPI's mapping, identity)"
    assert meta["halocompare"]["cart_reordered"]["non_periodic"] == note
    assert 0.9 * 1100 < float(rows["one-sender", "isend", "world"]["mbps"]) < 1100


def test_seastar2_models_share_one_fitted_figure() -> None:
    """One fitted parameter per SeaStar generation: both XT4 models carry the same busy bandwidth (the NIC
    model counts a node's messages, whatever hosts the node has)."""
    sn, vn = (element(n, "zone")[1] for n in ("xt4-sn-1024", "xt4-1024"))
    assert sn["mpimb/nic_busy_bw"] == vn["mpimb/nic_busy_bw"] and sn["mpimb/nic_above"] == vn["mpimb/nic_above"]


@needs_smpi
def test_xt4_vn_counts_a_nodes_messages_to_itself(tmp_path: Path) -> None:
    """xt4-1024's graph on a 4x4x2 block: 64 ranks, two a node (TXYZ: ranks 2n and 2n+1 on node xt-n, one
    SimGrid host each).  The harness reports the nodes, not the hosts (the hosts' mpimb/node).  An inner
    node's processes send 8 messages, one of them to each other (out through the node's injection link and
    back), and receive 8: 16 crossings of 16000 B through the link.  Without the NIC model that is at
    most 2 GB/s / 4 = 500 MB/s per process; with it, the node receiving more than 2 at once, the link runs
    at its busy bandwidth B (600 MB/s): about B / 4 = 150 (within 15 %: the MPI overheads and SMPI's cross-traffic slow it, the
    ends of the exchange, fewer than 3 messages under way, speed it), under half the links' figure (the SN
    model, a process a node, has 8 crossings: twice as fast).  The torus links at their rated rate: the
    injection link alone binds."""
    plat = tmp_path / "xt4-442.xml"
    plat.write_text(generate("xt4-1024", "--dims", "4,4,2", *RATED))
    rates = {}
    for name, f, opts in (("nic", plat, ()), ("links", links_alone(tmp_path, plat), ("--cfg", "smpi/bw-factor:0:1"))):
        run = sim_run("halocompare", 64, str(f), "--comms", "world", "--tests", "halo", *XT_444_ARGS,
                      out=tmp_path / f"vn-{name}.csv", sim_opts=opts)
        meta = run.meta()
        assert (meta["nnodes"], meta["ppn"]) == (32, 2)
        assert [r["host"] for r in sorted(meta["ranks"], key=lambda r: r["rank"])] == \
            [f"xt-{r // 2}" for r in range(64)]
        assert {"mpimb/hosts:process", "placement:TXYZ,ppn=2"} <= set(meta["platform"]["smpi_config"].split())
        (row,) = run.rows()
        assert row["verified"] == "yes" and "mpimb NIC model" not in run.stderr
        rates[name] = float(row["mbps"])
    assert 0.9 * 500 < rates["links"] < 500
    busy = float(re.search(r'id="mpimb/nic_busy_bw" value="(\d+)MBps"', plat.read_text()).group(1))
    assert abs(rates["nic"] / (busy / 4) - 1) < 0.15 and rates["nic"] < 0.5 * rates["links"]


def test_bgl_models_share_one_fitted_figure() -> None:
    """One fitted parameter (the cores' FIFO cost per byte), the same in every BG/L model."""
    costs = {cluster(n)[2]["smpi/ois"] for n in FACTS if n.startswith("bgl")}
    assert len(costs) == 1
    (cost,) = costs
    assert all(cluster(n)[2][k] == cost for n in FACTS if n.startswith("bgl") for k in ("smpi/os", "smpi/or"))


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        ('<prop id="mpimb/partition" value="8,8,17"/>', "is not a block of a TORUS cluster"),
        ('<prop id="mpimb/partition" value="x"/>', "is not a block of a TORUS cluster"),
        ('<prop id="mpimb/mapping" value="ZYXT"/>', "mpimb/mapping must be TXYZ or XYZT"),
        ('<prop id="mpimb/ppn" value="0"/>', "mpimb/ppn must be a positive integer"),
        ('<prop id="mpimb/network_model" value="IB;x"/>', "mpimb/network_model must be a SimGrid network model name"),
        ('<prop id="mpimb/hosts" value="core"/>', "mpimb/hosts must be node or process"),
        ('<prop id="mpimb/mapping" value="XYZT"/><prop id="mpimb/hosts" value="process"/>',
         "mpimb/hosts process lists a node's hosts together: it needs mpimb/mapping TXYZ"),
        ('<prop id="mpimb/nic_busy_bw" value="fast"/>',
         "mpimb/nic_busy_bw must be a bandwidth such as 206MBps, got 'fast'"),
        ('<prop id="mpimb/nic_busy_bw" value="206MBps"/><prop id="mpimb/nic_above" value="x"/>',
         "mpimb/nic_above must be a count of messages, got 'x'"),
        ('<prop id="mpimb/nic_busy_bw" value="206MBps"/>',  # the file's <config> sets smpi/bw-factor
         "the NIC model (mpimb/nic_busy_bw) sets the bandwidth factor itself: drop smpi/bw-factor"),
    ],
)
def test_bad_model_properties(tmp_path: Path, prop: str, message: str) -> None:
    text = (PLATFORMS / "bgl-cop-1024.xml").read_text()
    start = text.index('    <prop id="mpimb/partition"')
    end = text.index("  </cluster>")
    bad = tmp_path / "bad.xml"
    bad.write_text(text[:start] + "    " + prop + "\n" + text[end:])
    p = simulate("halocompare", "-n", "4", "--platform", str(bad), "--dry-run", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and message in p.stderr, p.stderr


@pytest.mark.parametrize("cfg", ["smpi/bw-factor:0:1", "network/bandwidth-factor:1"])
def test_nic_platform_refuses_a_bandwidth_factor(tmp_path: Path, cfg: str) -> None:
    """SimGrid takes no bandwidth-factor callback beside a configured factor: on a platform with a NIC model a
    --cfg bandwidth factor is one line and exit 2, before anything runs (not SimGrid's stack dump)."""
    plat = tmp_path / "xt3-222.xml"
    plat.write_text(generate("xt3-1024", "--dims", "2,2,2"))
    p = simulate("halocompare", "-n", "8", "--platform", str(plat), "--cfg", cfg, "--dry-run", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "sets the bandwidth factor itself" in p.stderr, p.stderr


@needs_smpi
def test_bgl_64_cart_modelled_and_evenodd_slower(tmp_path: Path) -> None:
    """The co-processor model at the talk's 64 processes: cart is placed by the
    platform's model of BG/L's mapping (the 8x8 grid folded onto 8x4x2: rows 4-7
    run back through y, 32 ranks moved), labelled so; even/odd is slower than
    world (the talk's lesson); all verified; the settings the figures rest on
    are in the JSON."""
    run = sim_run("halocompare", 64, "bgl-cop-64", "--comms", "world,evenodd,cart", "--methods", "irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", "--verify", *BGL_ARGS,
                  out=tmp_path / "h.csv")
    meta = check_simulated_meta(run, "bgl-cop-64")
    rows = {r["comm"]: r for r in run.rows()}
    assert parse_params(rows["cart"]["params"]).get("cart_model") == "fold"
    assert all(r["verified"] == "yes" and float(r["mbps"]) > 0 for r in rows.values())
    assert float(rows["evenodd"]["mbps"]) < float(rows["world"]["mbps"])
    note = "32 of 64 ranks (simulated: the platform's model of its MPI's mapping, fold)"
    assert meta["halocompare"]["cart_reordered"]["non_periodic"] == note
    assert f"moved {note}" in run.stdout
    config = meta["platform"]["smpi_config"].split()
    for setting in ("smpi/send-is-detached-thresh:1000", "mpimb/partition:8,4,2", "mpimb/mapping:XYZT",
                    "placement:XYZT,ppn=1"):
        assert setting in config


@needs_smpi
def test_bgl_irecv_send_is_the_links_alone(tmp_path: Path) -> None:
    """compare.py's send-cost and send-routes rest on this: SMPI charges no overhead on a rendezvous Send,
    so with every FIFO cost and overhead 0 the co-processor model's Irecv/Send (16 KB messages, over the
    eager limit) is the committed run's figure, even/odd's and cart's alike, while its Irecv/Isend, which
    pays smpi/ois, is faster."""
    run = sim_run("halocompare", 64, "bgl-cop-64", "--comms", "evenodd,cart", "--methods", "irecv-send,irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", "--verify", *BGL_ARGS,
                  out=tmp_path / "h.csv",
                  sim_opts=("--cfg", "smpi/os:0:0:0", "--cfg", "smpi/ois:0:0:0", "--cfg", "smpi/or:0:0:0"))
    committed = pd.read_csv(ROOT / "bench" / "simulated" / "halocompare-bgl-cop-64-np64.csv")
    committed = committed[(committed["test"] == "halo") & (committed["neighbors"] == 4) & (committed["periodic"] == 0)]
    calibrated = committed.set_index(["method", "comm"])["mbps"]
    rows = run.rows()
    assert len(rows) == 4 and all(r["verified"] == "yes" for r in rows)
    for r in rows:
        mbps, cal = float(r["mbps"]), calibrated[(r["method"], r["comm"])]
        if r["method"] == "irecv-send":
            assert mbps == pytest.approx(cal, rel=1e-3), r["comm"]
        else:
            assert mbps > 1.2 * cal, r["comm"]


@needs_smpi
def test_cart_na_where_the_model_does_not_apply(tmp_path: Path) -> None:
    """On the 4x4x4 block the 8x8 grid's rows are not the partition's x: the fold
    model does not apply, and cart is n/a with both reasons, not world."""
    run = sim_run("halocompare", 64, "bgl-cop-64-cube", "--comms", "world,cart", "--methods", "irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", *BGL_ARGS, out=tmp_path / "q.csv")
    rows = {r["comm"]: r for r in run.rows()}
    why = rows["cart"]["stop_reason"]
    assert why.startswith("n/a: SimGrid SMPI's MPI_Cart_create ignores reorder (cart would be world), and the "
                          "platform's model of its machine's mapping (fold) covers"), why
    assert rows["cart"]["mbps"] == "" and "cart_model" not in rows["cart"]["params"]
    assert float(rows["world"]["mbps"]) > 0


@needs_smpi
def test_bgl_virtual_node_placement(tmp_path: Path) -> None:
    """Virtual-node mode, XYZT: rank r on node r mod 64, the 64 nodes being the
    8x4x2 block of the 16x8x4 torus, x fastest; the lesson holds there too."""
    run = sim_run("halocompare", 128, "bgl-vn-128", "--comms", "world,evenodd,cart", "--methods", "irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", *BGL_ARGS, out=tmp_path / "v.csv")
    meta = check_simulated_meta(run, "bgl-vn-128")
    assert meta["nnodes"] == 64 and meta["ppn"] == 2
    host = {r["rank"]: r["host"] for r in meta["ranks"]}

    def node(x: int, y: int, z: int) -> str:
        return f"bgl-{x + 16 * (y + 8 * z)}"

    block = [node(x, y, z) for z in range(2) for y in range(4) for x in range(8)]
    assert [host[r] for r in range(128)] == block + block
    rows = {r["comm"]: r for r in run.rows()}
    assert float(rows["evenodd"]["mbps"]) < float(rows["world"]["mbps"])
    # the fold: grid row i on the node's core i % 2, row pair i // 2 through y, z: 112 ranks move
    assert meta["halocompare"]["cart_reordered"]["non_periodic"].startswith("112 of 128 ranks")


@needs_smpi
def test_simulated_run_ends_with_findings_naming_the_model(tmp_path: Path) -> None:
    """scripts/simulate names the analysis package (the program is SimGrid's
    smpimain, beside which nothing lies) and the findings say which model."""
    env = {k: v for k, v in os.environ.items() if k != "MPIMB_REPORT"}
    out = tmp_path / "f.csv"
    p = subprocess.run([str(SIMULATE), "halocompare", "-n", "64", "--platform", "bgl-cop-64", "--", "--comms", "world",
                        "--methods", "irecv-isend", "--neighbors", "4", "--periodic", "no", *BGL_ARGS, "-o", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env, check=False)
    assert p.returncode == 0, p.stderr[-2000:]
    run = Run(p.returncode, p.stdout, p.stderr, out)
    assert run.rows()
    line = f"these findings rest on the platform model bgl-cop-64 ({PLATFORMS / 'bgl-cop-64.xml'})"
    assert line in p.stdout
    if REPORT.exists():
        after = p.stdout[p.stdout.index(line):]
        assert "\nFindings (medians" in after and "not installed" not in p.stdout
        assert "warning: no findings" not in p.stderr


def test_compare_sets_simulated_beside_published(tmp_path: Path) -> None:
    """The committed bgl-cop-64 and xt3-1024 runs and the talk's tables: one table, simulated and
    published figures each marked; a simulated machine on one row, its cart the platform's model
    (named beside the figure); no pandas warning reaches the user."""
    sims = [ROOT / "bench" / "simulated" / f"halocompare-{p}.csv" for p in ("bgl-cop-64-np64", "xt3-1024-np1024")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        out = report("compare", *sims, ROOT / "reference" / "gropp-lusk", "-o", tmp_path / "c.html")
    lines = out.split("\n\n")[0].splitlines()  # the cross-system table
    for machine, model in (("sim-bgl-cop-64", "fold"), ("sim-xt3-1024", "identity")):
        rows = [x for x in lines if x.startswith(f"{machine} [SIMULATED]")]
        assert len(rows) == 1 and f"({model})" in rows[0], lines
    assert any(x.startswith("BGL-co-processor [PUBLISHED]") for x in lines)
    assert "cart (fold), (identity): the platform's model of its MPI's" in " ".join(out.split())


def test_compare_names_calibration_and_ties() -> None:
    """bench/simulated/compare.py on the committed runs: the five calibration figures named (one per fitted
    parameter: three worlds and the XT3's and XT4 SN's even/odd, on which each machine's links are fitted,
    with those ratios marked too), every XT cart figure simulated under the identity model (none n/a), and orderings the model
    puts within 1 % of each other written `=` and counted as ties, not as kept."""
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "bench" / "simulated" / "compare.py")],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (ROOT / "bench" / "simulated" / "tables.md").read_text(), "tables.md is not compare.py's output"
    rows = [line.split(" | ") for line in p.stdout.splitlines() if line.startswith("| calibration")]
    figures, ratios = [r for r in rows if r[3] == "halo"], [r for r in rows if r[3] != "halo"]
    assert sorted((r[1], r[5]) for r in figures) == [("BGL-co-processor", "world"), ("Cray-XT3", "evenodd"),
                                                     ("Cray-XT3", "world"), ("Cray-XT4-SN", "evenodd"),
                                                     ("Cray-XT4-SN", "world")]
    assert all(r[3:5] == ["halo", "irecv-isend"] and r[6:8] == ["4", "0"] for r in figures)
    assert sorted(r[1:7] for r in ratios) == [[m, "evenodd / world", "irecv-isend", "", "4", "0"]
                                              for m in ("Cray-XT3", "Cray-XT4-SN")]
    xt_cart = [line for line in p.stdout.splitlines()
               if re.match(r"\| validation \| Cray-XT\S* \| xt\S+ \| halo \| [a-z-]+ \| cart \|", line)]
    assert len(xt_cart) == 30 and not any("n/a" in line for line in xt_cart)
    # a published figure without a simulated one only where the head names its run as not yet made
    unmade = re.search(r"\(not simulated on the present models yet: ([^:]+):", p.stdout)
    absent = [x.split(" | ") for x in p.stdout.splitlines() if "| not simulated (" in x]
    assert {f"{r[2]}-nbrs8" for r in absent} == (set(unmade[1].split(", ")) if unmade else set())
    assert all(r[6] == "8" for r in absent)
    order = "| Cray-XT3 | irecv-isend | 4 | 0 | world > cart > evenodd | "
    (line,) = [x for x in p.stdout.splitlines() if x.startswith(order)]
    assert " = " in line and "| tie | the published cart ran apart from world" in line  # cart is world's grid
    tables = int(re.search(r"Kept: \d+ of (\d+) published tables .*; \d+ where the model ties", p.stdout)[1])
    assert tables == 38 - 4 * len(unmade[1].split(", ") if unmade else [])  # 4 tables (method, boundary) a run
    # the XT cart rows, judged a second time as the other boundary's (test_xt_cart_rows_read_as_the_other_boundary)
    assert "under 1 in 15 of 15 non-periodic tables and over 1 in 15 of 15 periodic ones" in p.stdout
    xt_tables = 30 - 4 * len(unmade[1].split(", ") if unmade else [])
    assert re.search(rf"Cart / world within \+-25 %: \d+ of {xt_tables} simulated ratios\.  Orders kept: \d+ of "
                     rf"{xt_tables} published XT tables, \d+ ties\.", p.stdout)
    # every miss names the model feature it needs (compare.py's FEATURES), every row within names none
    judged, head = [], None
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None or set(cells[0]) <= {"-"}:
            head = None if cells is None else head
        elif head is None:
            head = cells
        elif "missing model feature" in head:
            row = dict(zip(head, cells))
            judged.append((row.get("within", row.get("kept")), row["missing model feature"]))
    assert len(judged) == 134 + 188 + tables
    for verdict, feature in judged:
        assert (feature != "") == (verdict not in ("yes", "")) and "not diagnosed" not in feature, (verdict, feature)
    # BG/L's Irecv/Send misses named apart (test_bgl_irecv_send_is_the_links_alone): even/odd's on its routes,
    # cart's on the blocking Send's core time
    named = {"evenodd": "Irecv/Send's routes shared", "cart": "a blocking rendezvous Send's core"}
    for comm, feature in named.items():
        (line,) = [x for x in p.stdout.splitlines()
                   if x.startswith(f"| validation | BGL-co-processor | bgl-cop-64 | halo | irecv-send | {comm} | 4 | 0 |")]
        assert "| NO |" in line and [f for f in named.values() if f in line] == [feature], line


@pytest.mark.parametrize("name", [*XT, *(f"{n}-nbrs8" for n in XT
                                          if (ROOT / "bench" / "simulated" / f"halocompare-{n}-nbrs8-np1024.csv").exists())])
def test_committed_xt_cart_is_worlds_figure(name: str) -> None:
    """Under the XT models' identity mapping cart sends world's messages in world's order, so no committed
    cart figure may be told apart from world's: their medians' 95 % CIs overlap.  bench/simulated/run.sh
    measures each test alone, every rank starting at one simulated instant, 7 times (the NIC model's
    repetitions differ); measured together, once, a test started with the skew the barrier carried over
    from the test before it, and the same messages gave 251 (world) and 298 MB/s (cart)."""
    here = ROOT / "bench" / "simulated"
    rows = pd.concat([pd.read_csv(p) for p in [here / f"halocompare-{name}-np1024.csv",
                                               *sorted(here.glob(f"halocompare-{name}-rest*-np1024.csv"))]])
    halo = rows[rows["test"] == "halo"].assign(lo=lambda d: d["time_ci_lo_s"], hi=lambda d: d["time_ci_hi_s"])
    assert halo["params"].str.contains("sync=window").all() and halo["reps"].eq(7).all()
    wide = halo.pivot_table(index=["method", "neighbors", "periodic"], columns="comm", values=["lo", "hi"])
    assert len(wide) == (4 if name.endswith("nbrs8") else 6) and wide[("lo", "cart")].notna().all()
    apart = (wide[("lo", "cart")] > wide[("hi", "world")]) | (wide[("hi", "cart")] < wide[("lo", "world")])
    assert not apart.any(), wide[apart].to_string()


def compare_module() -> types.ModuleType:
    """bench/simulated/compare.py, imported (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("compare", ROOT / "bench" / "simulated" / "compare.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_orders_only_what_the_intervals_tell_apart() -> None:
    """compare.py's order of the orderings: two simulated figures 5 % apart are an order only where their
    medians' 95 % CIs are clear of each other (the NIC model's repetitions differ); overlapping, a tie;
    clear of each other the wrong way, NO."""
    compare = compare_module()

    def table(world: tuple[float, float, float], evenodd: tuple[float, float, float]) -> pd.Series:
        rows = [("world", 128, *world), ("evenodd", 114, *evenodd)]
        fig = pd.DataFrame([{"machine": "Cray-XT3", "test": "halo", "method": "irecv-isend", "neighbors": 4,
                             "periodic": "0", "comm": c, "published": p, "simulated": s, "sim_lo": lo, "sim_hi": hi}
                            for c, p, s, lo, hi in rows])
        return compare.order_kept(fig).iloc[0]

    apart = table((120, 118, 122), (114, 112, 116))
    assert (apart["simulated"], apart["kept"]) == ("world > evenodd", "yes")
    overlap = table((120, 110, 126), (114, 108, 121))
    assert (overlap["simulated"], overlap["kept"]) == ("world = evenodd", "tie")
    wrong = table((114, 112, 116), (120, 118, 122))
    assert (wrong["simulated"], wrong["kept"]) == ("evenodd > world", "NO")


def test_xt_cart_rows_read_as_the_other_boundary() -> None:
    """The published XT cart rows lie under world in every non-periodic table and over it in every periodic
    one, and within 7 % of world of the other boundary (reference/gropp-lusk, as published).  compare.py's
    reading moves each cart figure, and only cart's, to the other boundary's table, and there counts a published
    order only beyond the spread the reading shows: closer, the published order says `=` and is not judged."""
    compare = compare_module()
    ref = compare.published()
    ev = compare.boundary_evidence(ref)
    periodic = ev["periodic"].eq("1")
    assert len(ev) == 30 and periodic.sum() == 15
    assert (ev.loc[~periodic, "cart / world"] < 1).all() and (ev.loc[periodic, "cart / world"] > 1).all()
    assert (ev["cart / world (other boundary)"] - 1).abs().max() < 0.07

    key = ["machine", "method", "neighbors", "periodic", "comm"]
    moved = compare.other_boundary(ref).merge(ref, on=[*key, "test"], suffixes=("", " as published"))
    cart = moved["comm"].eq("cart")
    assert len(moved) == 90 and moved.loc[~cart, "published"].eq(moved.loc[~cart, "published as published"]).all()
    flipped = moved[cart].assign(periodic=moved.loc[cart, "periodic"].map({"0": "1", "1": "0"}))
    assert flipped.merge(ref, on=[*key, "published"]).shape[0] == 30  # each the other boundary's cart figure

    rows = [("world", 128, 125, 124, 126), ("cart", 123, 125, 124, 126), ("evenodd", 110, 112, 111, 113)]
    fig = pd.DataFrame([{"machine": "Cray-XT3", "test": "halo", "method": "irecv-isend", "neighbors": 4,
                         "periodic": "0", "comm": c, "published": p, "simulated": s, "sim_lo": lo, "sim_hi": hi}
                        for c, p, s, lo, hi in rows])
    strict, spread = compare.order_kept(fig).iloc[0], compare.order_kept(fig, apart=0.067).iloc[0]
    assert (strict["published"], strict["kept"]) == ("world > cart > evenodd", "tie")
    assert (spread["published"], spread["kept"]) == ("world = cart > evenodd", "yes")
