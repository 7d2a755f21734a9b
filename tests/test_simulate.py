"""Virtual clusters (issue 11): the suite on SimGrid SMPI platforms.

- scripts/simulate: usage errors, the smpirun command it builds (shellcheck: tests/test_scripts.py);
- platforms/: every file parses, cites its figures, has the hosts it claims;
- a 1024-rank simulated halocompare run (torus-bgl), collectives and pingpong
  at 1024 simulated ranks (fat-tree);
- the deterministic check of the harness: on the two-node platform with
  SMPI's correction factors set to 1 (--exact), the reported times equal the
  platform's latency and bandwidth within 1 % for every size.

Simulated time is exact, so these are correctness checks, never timed tests.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import COLUMNS, ROOT, Run, check_schema
from mpimb import judge, load

SIMULATE = ROOT / "scripts" / "simulate"
PLATFORMS = ROOT / "platforms"

# two-node.xml: one full-duplex link, exactly these figures
LAT = 10e-6  # seconds
BW = 1e9  # bytes per second
# SMPI charges this much simulated time per message on top of latency + size /
# bandwidth, whatever the size (measured with SimGrid 3.32; 0.16 % of LAT).
SMPI_PER_MESSAGE = 16e-9

# One repetition, where simulated time (exact, deterministic) is not what a test checks: a 1024-rank
# repetition costs seconds of real time, and --quick's 3 repetitions would only repeat the same figure.
ONE_REP = ("--reps", "1", "--max-reps", "1")

needs_smpi = pytest.mark.skipif(
    not (shutil.which("smpirun") and shutil.which("smpicc")),
    reason="SimGrid SMPI not installed (apt-get install libsimgrid-dev)",
)


def simulate(
    *args: str, cwd: Path, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIMULATE), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def sim_run(
    program: str, n: int, platform: str, *prog_args: str, out: Path, exact: bool = False,
    sim_opts: tuple[str, ...] = (),
) -> Run:
    """Runs program on n simulated ranks (scripts/simulate's own options sim_opts); the CSV goes to out."""
    if not (ROOT / "src" / program).is_dir():
        pytest.skip(f"src/{program} does not exist yet")
    opts = ["--exact", *sim_opts] if exact else list(sim_opts)
    p = simulate(
        program,
        "-n",
        str(n),
        "--platform",
        platform,
        *opts,
        "--",
        "-o",
        str(out),
        *prog_args,
        cwd=out.parent,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return Run(p.returncode, p.stdout, p.stderr, out)


def check_simulated_meta(run: Run, platform: str) -> dict:
    meta = run.meta()
    assert meta["simulated"] is True
    pfile = PLATFORMS / f"{platform}.xml"
    assert meta["platform"]["name"] == platform
    assert meta["platform"]["sha256"] == hashlib.sha256(pfile.read_bytes()).hexdigest()
    assert Path(meta["platform"]["file"]).resolve() == pfile.resolve()
    assert "smpi/host-speed" in meta["platform"]["smpi_config"]
    assert meta["label"] == f"sim-{platform}"
    assert all(r["label"] == f"sim-{platform}" for r in run.rows())
    return meta


# ------------------------------------------------------------ the script


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "missing PROGRAM"),
        (["nosuch", "-n", "2", "--platform", "two-node"], "unknown program 'nosuch'"),
        (["halocompare", "--platform", "two-node"], "missing -n"),
        (
            ["halocompare", "-n", "0", "--platform", "two-node"],
            "-n must be a positive integer, got '0'",
        ),
        (
            ["halocompare", "-n", "x", "--platform", "two-node"],
            "-n must be a positive integer, got 'x'",
        ),
        (["halocompare", "-n", "2"], "missing --platform"),
        (
            ["halocompare", "-n", "2", "--platform", "nosuch"],
            "unknown platform 'nosuch'",
        ),
        (
            ["halocompare", "-n", "3", "--platform", "two-node"],
            "platform 'two-node' has 2 hosts: -n 3 needs --ppn 2",
        ),
        (
            ["halocompare", "-n", "2", "--platform", "two-node", "--ppn", "0"],
            "--ppn must be a positive integer",
        ),
        (
            ["halocompare", "-n", "2", "--platform", "two-node", "--cfg", "nocolon"],
            "--cfg must be KEY:VALUE",
        ),
        (
            ["halocompare", "-n", "2", "--platform", "two-node", "--cfg", "network/optim:Lazy", "--cfg",
             "network/maxmin-selective-update:no"],
            "--cfg network/optim:Lazy needs network/maxmin-selective-update:yes",
        ),
        (
            [
                "halocompare",
                "-n",
                "2",
                "--platform",
                "two-node",
                "--host-speed",
                "fast",
            ],
            "--host-speed must be",
        ),
        (["--bogus"], "unknown option '--bogus'"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    p = simulate(*args, cwd=tmp_path, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("simulate: ") and message in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []


def test_help() -> None:
    p = simulate("--help", cwd=ROOT, timeout=60)
    assert p.returncode == 0
    for word in (
        "--platform",
        "--exact",
        "--ppn",
        "--host-speed",
        "torus-bgl",
        "two-node",
    ):
        assert word in p.stdout


def test_dry_run_command(tmp_path: Path) -> None:
    """The smpirun line: platform, np, host speed from the platform, label; --exact factors."""
    halo4 = ("halocompare", "-n", "4", "--platform", "torus-bgl", "--dry-run")
    p = simulate(*halo4, "--", "--quick", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    cmd = p.stdout.split()
    assert cmd[0] == "smpirun"
    assert cmd[cmd.index("-np") + 1] == "4"
    assert cmd[cmd.index("-platform") + 1] == str(PLATFORMS / "torus-bgl.xml")
    assert "--cfg=smpi/host-speed:2.8Gf" in cmd
    assert (
        "--cfg=smpi/lat-factor:0:1" not in cmd
    )  # the platform file's own <config> applies
    # no warm-up in simulated time unless the user asks for one (a later option wins)
    assert cmd[-5:] == ["--label", "sim-torus-bgl", "--warmup", "0", "--quick"]
    p = simulate(*halo4, "--compute", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "--warmup" not in p.stdout.split()  # simulated computation may warm up
    p = simulate(
        "pingpong",
        "-n",
        "2",
        "--platform",
        "two-node",
        "--exact",
        "--dry-run",
        "--",
        "--label",
        "x",
        cwd=tmp_path,
    )
    cmd = p.stdout.split()
    for cfg in (
        "smpi/lat-factor:0:1",
        "smpi/bw-factor:0:1",
        "smpi/os:0:0:0",
        "smpi/or:0:0:0",
        "smpi/simulate-computation:no",
        "smpi/wtime:0",
    ):
        assert f"--cfg={cfg}" in cmd
    assert cmd.count("--label") == 1 and cmd[-1] == "x"  # the user's label wins
    assert list(tmp_path.iterdir()) == []


def test_solver_the_user_picks(tmp_path: Path) -> None:
    """The full solver by default; --cfg network/optim:Lazy replaces it, and with it the non-selective update
    (SimGrid aborts with a backtrace on lazy without selective update)."""
    def solver(*cfg: str) -> list[str]:
        p = simulate("halocompare", "-n", "2", "--platform", "two-node", *cfg, "--dry-run", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        return [c for c in p.stdout.split() if c.startswith(("--cfg=network/optim", "--cfg=network/maxmin"))]

    assert solver() == ["--cfg=network/optim:Full", "--cfg=network/maxmin-selective-update:no"]
    assert solver("--cfg", "network/optim:Lazy") == ["--cfg=network/optim:Lazy"]


# ------------------------------------------------------------ platforms

EXPECTED_HOSTS = {
    "two-node": 2,
    "torus-bgl": 1024,
    "torus-bgl-64": 64,
    "xt-torus": 1024,
    "fat-tree": 1024,
}


def host_count(path: Path) -> int:
    n = 0
    for el in ET.parse(path).iter():
        if el.tag == "host":
            n += 1
        elif el.tag == "cluster":
            for part in el.get("radical", "").split(","):
                lo, _, hi = part.partition("-")
                n += int(hi or lo) - int(lo) + 1
    return n


@pytest.mark.parametrize("name", sorted(EXPECTED_HOSTS))
def test_platform_file(name: str) -> None:
    path = PLATFORMS / f"{name}.xml"
    text = path.read_text()
    assert host_count(path) == EXPECTED_HOSTS[name]
    assert "latency" in text.lower() and (
        "source" in text.lower() or name == "two-node"
    )
    if name != "two-node":  # published figures: the comment names where they come from
        assert "Sources:" in text or "sources:" in text


def test_torus_shapes() -> None:
    for name in ("torus-bgl", "xt-torus"):
        cluster = next(ET.parse(PLATFORMS / f"{name}.xml").iter("cluster"))
        assert cluster.get("topology") == "TORUS"
        assert cluster.get("topo_parameters") == "8,8,16"


# ------------------------------------------------------------ exactness (2 nodes)


def half_round(s: int) -> float:
    return LAT + s / BW + SMPI_PER_MESSAGE


@needs_smpi
def test_exact_halocompare_two_nodes(tmp_path: Path) -> None:
    """irecv-send on 2 ranks, non-periodic: each rank exchanges one message
    with its one neighbour at the same time, so an exchange takes L + s/B."""
    for count in (1, 1000, 100000):
        out = tmp_path / f"h{count}.csv"
        run = sim_run(
            "halocompare",
            2,
            "two-node",
            "--tests",
            "halo",
            "--methods",
            "irecv-send",
            "--comms",
            "world",
            "--neighbors",
            "4",
            "--periodic",
            "no",
            "--count",
            str(count),
            "--quick",
            "--verify",
            "--min-rep-time",
            "0.005",
            *ONE_REP,
            out=out,
            exact=True,
        )
        rows = check_schema(run, "halocompare", 2)
        check_simulated_meta(run, "two-node")
        (r,) = rows
        s = count * 8
        t = float(r["time_median_s"])
        assert t == pytest.approx(half_round(s), rel=0.01), (s, t)
        assert float(r["mbps"]) == pytest.approx(s / half_round(s) / 1e6, rel=0.01)
        assert r["verified"] == "yes"


@needs_smpi
@pytest.mark.parametrize(("fault", "want"), [("", "noise"), ("delay:0.05/halo/irecv-isend/dup", "called")])
def test_exact_paired_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, want: str) -> None:
    """The paired verdict end to end where the truth is known: on the exact two-node platform world and
    dup are one 2x1 map, so the same exchange is "within the noise"; a 5 % delay injected into dup's
    timed repetitions (MPIMB_FAULT delay, a simulated sleep) is called, from the rounds file."""
    monkeypatch.setenv("MPIMB_FAULT", fault)  # empty: no fault
    out = tmp_path / "h.csv"
    sim_run("halocompare", 2, "two-node", "--tests", "halo", "--methods", "irecv-isend", "--comms", "world,dup",
            "--neighbors", "4", "--periodic", "no", "--reps", "6", "--max-reps", "6", out=out, exact=True)
    assert out.with_name("h-rounds.csv").is_file()
    df = load.frame(load.load([str(out)])[0])
    dup, world = (df[(df["test"] == "halo") & (df["comm"] == c)].iloc[0] for c in ("dup", "world"))
    p = judge.paired(dup, world)
    assert p is not None and p.n == 6 and p.judged
    assert p.ratio == pytest.approx(1.05 if fault else 1.0, rel=1e-3)
    assert judge.verdict(dup, world) == want


@needs_smpi
def test_exact_pingpong_two_nodes(tmp_path: Path) -> None:
    """Latency = L + s/B and bandwidth = the window model of L and B, within 1 % for every size,
    at the harness's default repetition length (measured: equal to 1e-13)."""
    out = tmp_path / "pp.csv"
    run = sim_run(
        "pingpong",
        2,
        "two-node",
        "--tests",
        "latency,pingping,bw,bibw",
        "-m",
        "0:1M",
        *ONE_REP,  # of the default length: the figure checked; --warmup 1: the model holds after a warm-up too
        "--warmup",
        "1",
        out=out,
        exact=True,
    )
    rows = check_schema(run, "pingpong", 2)
    check_simulated_meta(run, "two-node")
    window = 64
    d = SMPI_PER_MESSAGE
    model = {
        # half a round trip, and IMB's ping-ping (both send at once on a full-duplex link)
        "latency": lambda s: LAT + s / BW + d,
        "pingping": lambda s: LAT + s / BW + d,
        # osu_bw: W messages back to back, then a 4-byte acknowledgement
        "bw": lambda s: (LAT + window * (s / BW + d) + LAT + 4 / BW + d) / window,
        # osu_bibw: W messages each way at once
        "bibw": lambda s: (LAT + window * (s / BW + d)) / window,
    }
    sizes = [0] + [1 << k for k in range(21)]
    seen: dict[str, list[int]] = {t: [] for t in model}
    for r in rows:
        s, test = int(r["bytes"]), r["test"]
        assert r["stop_reason"] in ("ci", "max-reps"), r
        t = float(r["time_median_s"])
        assert t == pytest.approx(model[test](s), rel=0.01), (
            test,
            s,
            t,
            model[test](s),
        )
        seen[test].append(s)
    assert all(sorted(v) == sizes for v in seen.values()), seen
    by = {(r["test"], int(r["bytes"])): r for r in rows}
    # the platform's own figures: latency at 0 bytes, bandwidth at 1 MiB
    assert float(by["latency", 0]["time_median_s"]) == pytest.approx(LAT, rel=0.01)
    assert float(by["bw", 1 << 20]["mbps"]) == pytest.approx(BW / 1e6, rel=0.01)
    assert float(by["latency", 1 << 20]["mbps"]) == pytest.approx(
        (1 << 20) / (LAT + (1 << 20) / BW) / 1e6, rel=0.01
    )


@needs_smpi
def test_halocompare_rma_16(tmp_path: Path) -> None:
    """What SMPI can do runs and verifies (PSCW and fence, both orderings,
    4 and 8 neighbours, both boundaries); what it cannot (passive-target
    polling from 16 ranks on) is n/a with the reason, not an endless run."""
    run = sim_run(
        "halocompare",
        16,
        "torus-bgl-64",
        "--quick",
        "--verify",
        "--tests",
        "halo",
        "--comms",
        "world,random",
        "--methods",
        "rma-fence-put,rma-pscw-put,rma-pscw-get,rma-lock-put,rma-lockall-flush",
        *ONE_REP,
        out=tmp_path / "rma.csv",
    )
    rows = check_schema(run, "halocompare", 16)
    assert len(rows) == 5 * 2 * 2 * 2
    for r in rows:
        if r["method"].startswith(("rma-pscw", "rma-fence")):
            assert r["verified"] == "yes" and float(r["mbps"]) > 0, r
        else:
            assert r["stop_reason"].startswith("n/a: passive-target polling"), r
            assert r["time_median_s"] == ""


# ------------------------------------------------------------ 1024 simulated ranks


@needs_smpi
def test_halocompare_1024_torus(tmp_path: Path) -> None:
    """1024 ranks on the BG/L-like torus: verified exchanges, simulated metadata,
    and n/a (not an abort) for what SMPI lacks."""
    listing = subprocess.run(
        [
            str(SIMULATE),
            "halocompare",
            "-n",
            "1",
            "--platform",
            "two-node",
            "--",
            "--list",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert listing.returncode == 0, listing.stderr
    methods = ["irecv-isend"] + [
        m for m in ("neighbor-alltoall",) if m in listing.stdout
    ]
    out = tmp_path / "halo.csv"
    run = sim_run(
        "halocompare",
        1024,
        "torus-bgl",
        "--quick",
        "--verify",
        "--comms",
        "world,evenodd",
        "--methods",
        ",".join(methods),
        "--neighbors",
        "4",
        "--periodic",
        "yes",
        "--warmup",  # no warm-up exchange per row: what a run writes is checked here, not its statistics
        "0",
        *ONE_REP,
        out=out,
    )
    rows = check_schema(run, "halocompare", 1024)
    meta = check_simulated_meta(run, "torus-bgl")
    assert meta["nnodes"] == 1024 and meta["ppn"] == 1
    assert meta["options"]["warmup"] == 0  # scripts/simulate's default
    assert meta["hosts"][:2] == ["bgl-0", "bgl-1"]
    assert meta["sync"]["clocks_synchronised"] is True and meta["sync"]["window_rows"] > 0  # at 1024 ranks
    halo = [r for r in rows if r["test"] == "halo" and r["method"] == "irecv-isend"]
    assert {r["comm"] for r in halo} == {"world", "evenodd"}
    for r in halo + [r for r in rows if r["test"] == "one-sender"]:
        assert r["verified"] == "yes" and float(r["mbps"]) > 0
    for r in rows:
        if r["method"] == "neighbor-alltoall":
            assert r["stop_reason"].startswith("n/a: ") and r["time_median_s"] == ""
    assert "Periodic mesh" in run.stdout and "evenodd" in run.stdout


@needs_smpi
def test_collectives_1024_fat_tree(tmp_path: Path) -> None:
    out = tmp_path / "coll.csv"
    run = sim_run(
        "collectives",
        1024,
        "fat-tree",
        "--quick",
        "--verify",
        # the library's barrier and allreduce, allreduce's two-level forms, a user-level bcast: each row costs
        # 5-8 s of CPU at 1024 simulated ranks (the harness's own collectives), so the library bcast and its
        # two-level forms (the same code paths as allreduce's) are left to the smaller runs
        "--tests",
        "barrier,bcast-binomial,allreduce",
        "-m",
        "8:8",
        "--sync",  # the window clock synchronisation at 1024 ranks is test_halocompare_1024_torus's
        "barrier",
        "--warmup",  # no warm-up call (a barrier and the collective per row): a run's rows are checked here
        "0",
        *ONE_REP,
        out=out,
    )
    rows = check_schema(run, "collectives", 1024)
    check_simulated_meta(run, "fat-tree")
    measured = {(r["test"], r["method"]) for r in rows if r["time_median_s"]}
    assert measured == {("barrier", "library"), ("bcast", "binomial"), ("allreduce", "library"),
                        ("allreduce", "2level"), ("allreduce", "2level-shm")}
    assert all(r["verified"] == ("" if r["test"] == "barrier" else "yes") for r in rows)  # a barrier carries no data
    assert all(r["comm"] in ("world", "") for r in rows)


@needs_smpi
def test_pingpong_1024_fat_tree(tmp_path: Path) -> None:
    out = tmp_path / "pp.csv"
    run = sim_run(
        "pingpong",
        1024,
        "fat-tree",
        "--quick",
        "--verify",
        "--tests",
        "latency,msgrate",
        "--window",
        "8",
        "-m",
        "8:8",
        *ONE_REP,
        out=out,
    )
    rows = check_schema(run, "pingpong", 1024)
    check_simulated_meta(run, "fat-tree")
    lat = [r for r in rows if r["test"] == "latency" and r["time_median_s"]]
    assert lat and all(r["comm"] == "inter" for r in lat)  # one rank per simulated node
    # fat-tree.xml: 90 ns per link, 2 links leaf-local, 0.2 + 0.2 us overheads: about 0.6 us
    assert 0.3e-6 < float(lat[0]["time_median_s"]) < 5e-6
    assert any(r["test"] == "msgrate" and r["time_median_s"] for r in rows)


def test_columns_unchanged() -> None:
    """Simulated runs use the one CSV schema: nothing simulation-specific in the columns."""
    assert "simulated" not in COLUMNS and "platform" not in COLUMNS


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-j", "0"], "-j needs a positive integer, got '0'"),
        (["-p"], "-p needs a value"),
        (["-n", "x"], "-n must be a positive integer, got 'x'"),
        (["-p", "nosuch"], "unknown platform 'nosuch'"),
        (["-n", "3", "-p", "two-node"], "platform 'two-node' has 2 hosts"),
        (["--bogus"], "unknown option '--bogus'"),
    ],
)
def test_full_table_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    """One line, exit 2, and no piece started (nothing written)."""
    out = tmp_path / "out"
    p = subprocess.run(
        [str(ROOT / "bench" / "simulated" / "full-table.sh"), str(out), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("full-table.sh: ") and message in lines[0], lines[0]
    assert not out.exists()


@needs_smpi
def test_full_table_pieces_equal_single_run(tmp_path: Path) -> None:
    """bench/simulated/full-table.sh (the table cut into parallel pieces) gives
    the single command's rows, figure for figure, and renders them."""
    single = sim_run(
        "halocompare",
        4,
        "torus-bgl-64",
        "--quick",
        "--verify",
        "--group",
        "none",  # test by test: a group's members share the simulated network, so pieces would differ
        *ONE_REP,
        out=tmp_path / "one.csv",
    )
    p = subprocess.run(
        [
            str(ROOT / "bench" / "simulated" / "full-table.sh"),
            "-j",
            "2",
            "-n",
            "4",
            "-p",
            "torus-bgl-64",
            str(tmp_path / "pieces"),
            "--",
            "--group",
            "none",
            *ONE_REP,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    key = ("test", "method", "comm", "neighbors", "periodic")
    want = {tuple(r[k] for k in key): r for r in check_schema(single, "halocompare", 4)}
    got = {}
    for f in sorted(f for f in (tmp_path / "pieces").glob("halocompare-*.csv") if not f.name.endswith("-rounds.csv")):
        piece = Run(0, "", "", f)
        got.update(
            {tuple(r[k] for k in key): r for r in check_schema(piece, "halocompare", 4)}
        )
    assert got.keys() == want.keys()
    for k, r in want.items():
        assert got[k]["time_median_s"] == r["time_median_s"], k
        assert got[k]["stop_reason"] == r["stop_reason"], k
    assert "Periodic mesh" in p.stdout and "One sender" in p.stdout
