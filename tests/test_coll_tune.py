"""collectives --algorithms (the library's own algorithms, forced in turn through MPI_T) and
mpimb-report tune (the library's tuning file), on both libraries at -n 4 (docs/collectives.md).

One launch per library (module-scoped) measures every algorithm the library lists; tune writes the
file from it.  That the library really reads a written file is shown by a deterministic signal, not
a timing: tests/coll_tune_probe.c reduces with a user-defined sum and reports how often the library
called it and on how many elements, which differs between allreduce algorithms.  A file written by
tune's writers that selects another algorithm at one size must change that size's signature to the
forced algorithm's, and no other size's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import (
    ONCE_BARRIER,
    REPORT,
    ROOT,
    bindir,
    check_bad_input,
    cli_proc,
    launcher,
    run_mpi,
)
from mpimb import tune as T
from mpimb.schema import parse_params

COLLS = ("bcast", "reduce", "allreduce", "allgather", "alltoall", "barrier")
# per library: sizes of the measuring run (MPICH busy-polls: past 2 ranks one size only), the
# algorithm the deliberately-different file selects, and how it is forced through the environment
SIZES = {"openmpi": "8:64", "mpich": "8:8"}
OTHER = {"openmpi": "ring", "mpich": "smp"}
PROBE_SIZES = ("64", "1024", "65536")
CHANGED = "1024"


def compiler(lib: str) -> str:
    return {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}[lib]


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def measured(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    lib = request.param
    d = tmp_path_factory.mktemp(f"algs-{lib}")
    r = run_mpi(lib, 4, "collectives", "--algorithms", "library", "--quick", "--warmup", "0", "-m", SIZES[lib],
                "--verify", out=d / "a.csv", env={"MPIMB_REPORT": "none"})
    assert r.returncode == 0, r.stderr
    return lib, r


def test_every_listed_algorithm_is_measured_and_verified(measured: tuple[str, object]) -> None:
    lib, r = measured
    meta = r.meta()  # type: ignore[attr-defined]
    la = meta["library_algorithms"]
    assert la["library"] == {"openmpi": "Open MPI", "mpich": "MPICH"}[lib]
    rows = pd.DataFrame(r.rows())  # type: ignore[attr-defined]
    rows["algorithm"] = rows["params"].str.extract(r"(?:^|;)algorithm=([^;]+)")[0]
    for coll in COLLS:
        names = list(la["collectives"][coll]["algorithms"])
        assert len(names) >= 3, f"{coll}: the library listed {names}"
        got = rows[rows["test"] == coll]
        assert set(got["algorithm"]) == set(names), f"{coll}: rows {set(got['algorithm'])} vs listed {names}"
        na = got["stop_reason"].str.startswith("n/a")
        # measured rows are verified (a barrier has no data); an algorithm the library refuses says why
        assert (got.loc[~na, "verified"] == ("" if coll == "barrier" else "yes")).all(), got[~na]
        assert (got.loc[na, "stop_reason"].str.len() > len("n/a: ")).all()
        assert (~na).sum() >= 3
    # the stdout table names every algorithm of a collective as its columns
    assert "bcast (" in r.stdout and la["collectives"]["bcast"]["default"] in r.stdout  # type: ignore[attr-defined]


def test_tune_writes_the_library_file(measured: tuple[str, object], tmp_path: Path) -> None:
    lib, r = measured
    out = tmp_path / ("rules.conf" if lib == "openmpi" else "selection.json")
    p = cli_proc("tune", r.csv_path, "-o", out)  # type: ignore[attr-defined]
    assert p.rc == 0, p.err
    assert "chosen" in p.out
    if lib == "openmpi":
        text = out.read_text()
        assert str(r.csv_path) in text  # type: ignore[attr-defined]  # says which results it came from
        nums = [int(x.split("#")[0]) for x in text.splitlines() if x.split("#")[0].strip() and " " not in
                x.split("#")[0].strip()]
        rules = [ln.split() for ln in text.splitlines() if len(ln.split("#")[0].split()) == 4]
        assert nums[0] == len(COLLS)
        assert sum(1 for rr in rules if rr[0] == "0") == len(COLLS)  # a 0-byte rule per communicator size
        conf = Path(str(out) + ".mca-params.conf").read_text()
        assert "coll_tuned_use_dynamic_rules = 1" in conf and f"coll_tuned_dynamic_rules_filename = {out}" in conf
    else:
        sel = json.loads(out.read_text())
        base = r.meta()["library_algorithms"]["default_selection"]  # type: ignore[attr-defined]
        assert list(sel) == list(base)  # every collective MPICH selects stays in the file
        assert str(r.csv_path) in Path(str(out) + ".sources").read_text()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("probe")
    out = {}
    for lib in ("openmpi", "mpich"):
        exe = d / f"probe-{lib}"
        subprocess.run([compiler(lib), "-O1", "-o", str(exe), str(ROOT / "tests" / "coll_tune_probe.c")],
                       check=True)
        out[lib] = exe
    return out


def signatures(lib: str, exe: Path, env: dict[str, str]) -> dict[str, str]:
    """Per size: each rank's calls/elements of the user-defined sum."""

    p = subprocess.run([*launcher(lib, 4), str(exe), *PROBE_SIZES], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **env}, check=False)
    assert p.returncode == 0, p.stderr
    return {ln.split()[0]: " ".join(ln.split()[1:]) for ln in p.stdout.splitlines() if ln.strip()}


def file_env(lib: str, path: Path) -> dict[str, str]:
    if lib == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(path)}
    return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(path)}


def forced_env(lib: str, name: str, value: int) -> dict[str, str]:
    if lib == "openmpi":
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": str(value)}
    return {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": name}


def test_the_library_reads_the_written_file(measured: tuple[str, object], probes: dict[str, Path],
                                            tmp_path: Path) -> None:
    """A file from tune's writers that picks another allreduce algorithm for 1024 B only: the library's
    selection changes at 1024 B to exactly the forced algorithm's, and nowhere else."""
    lib, r = measured
    la = r.meta()["library_algorithms"]  # type: ignore[attr-defined]
    colls = la["collectives"]
    dflt, other = colls["allreduce"]["default"], OTHER[lib]
    cs = [T.Choice("allreduce", 4, float(b), pd.Series({"algorithm": dflt, "time_median_s": 1.0}),
                   pd.Series({"algorithm": other, "time_median_s": 0.5}), b == CHANGED) for b in PROBE_SIZES]
    path = tmp_path / "slow"
    if lib == "openmpi":
        path.write_text(T.ompi_rules(cs, colls, ["tests/test_coll_tune.py"]))
    else:
        path.write_text(json.dumps(T.mpich_selection(cs, colls, la["default_selection"])))
    exe = probes[lib]
    base = signatures(lib, exe, {})
    forced = signatures(lib, exe, forced_env(lib, other, colls["allreduce"]["algorithms"][other]))
    tuned = signatures(lib, exe, file_env(lib, path))
    assert forced[CHANGED] != base[CHANGED], "the probe cannot tell the two algorithms apart"
    assert tuned[CHANGED] == forced[CHANGED]
    assert {s: tuned[s] for s in PROBE_SIZES if s != CHANGED} == {s: base[s] for s in PROBE_SIZES if s != CHANGED}
    if lib == "openmpi":  # 4.1 says nothing of a file it cannot parse: it ignores it, which the probe sees
        cut = tmp_path / "cut"
        cut.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
        assert signatures(lib, exe, file_env(lib, cut)) == base


def test_tune_bad_input(measured: tuple[str, object], tmp_path: Path) -> None:
    lib, r = measured
    if lib != "openmpi":
        pytest.skip("the input checks are the library's own only once")
    fixtures = ROOT / "tests" / "analysis" / "fixtures" / "equal"
    truncated = tmp_path / "cut.csv"
    src = Path(r.csv_path)  # type: ignore[attr-defined]
    truncated.write_text(src.read_text()[: len(src.read_text()) // 2])
    Path(str(truncated)[:-4] + ".json").write_text(src.with_suffix(".json").read_text())
    for inp, words in ((fixtures, "no results of `collectives --algorithms`"), (truncated, "")):
        out = tmp_path / "o" / "f.rules"
        p = cli_proc("tune", inp, "-o", out)
        assert p.rc == 1, p.err
        assert len(p.err.splitlines()) == 1 and words in p.err, p.err
        assert not out.parent.exists() or not list(out.parent.iterdir())


def test_algorithms_option_bad_input(tmp_path: Path) -> None:
    check_bad_input("collectives", ["--algorithms", "library", "--timing", "subtract"],
                    "--algorithms measures with --timing osu", tmp_path)
    for lib in ("openmpi", "mpich"):
        if not (bindir(lib) / "collectives").exists():
            continue
        check_bad_input("collectives", ["--algorithms", "no_such_algorithm", "--tests", "bcast"],
                        "has no algorithm 'no_such_algorithm'", tmp_path, ranks=1, libs=(lib,))


def test_tuning_option_bad_input(tmp_path: Path) -> None:
    """A file for the other library, a truncated one: one line, exit 2, before MPI starts."""
    d = tmp_path / "files"
    d.mkdir()
    (d / "sel.json").write_text('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}\n')
    (d / "cut.json").write_text('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bc')
    (d / "rules.conf").write_text("1\n7\n1\n4\n1\n0 6 0 0\n")
    (d / "cut.conf").write_text("1\n7\n1\n4\n2\n0 6 0 0\n")
    # checked against the library's own lists and the files' structure (issue 44): no abort, assertion or hang
    (d / "alg99.conf").write_text("1\n7\n1\n4\n1\n0 99 0 0\n")
    (d / "id5.conf").write_text("1\n5\n1\n4\n1\n0 1 0 0\n")
    (d / "twice.conf").write_text("1\n7\n1\n4\n2\n0 6 0 0\n0 1 0 0\n")
    (d / "empty.json").write_text("{}\n")
    (d / "a1.json").write_text('{"a": 1}\n')
    (d / "foo.json").write_text('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_foo": {}}}}')
    (d / "leaf.json").write_text('{"collective=bcast": {"comm_type=intra": {}}}')
    os.mkfifo(d / "fifo")
    run = tmp_path / "run"
    run.mkdir()
    for f, words, lib in (("sel.json", "not Open MPI's coll_tuned rules", "openmpi"),
                          ("cut.conf", "truncated or malformed", "openmpi"),
                          ("rules.conf", "not MPICH's selection format", "mpich"),
                          ("cut.json", "truncated or malformed", "mpich"),
                          ("alg99.conf", "alg99.conf: bcast algorithm 99 is none of this Open MPI's", "openmpi"),
                          ("id5.conf", "collective ID 5 is none that coll_tuned chooses an algorithm for", "openmpi"),
                          ("twice.conf", "bcast: message sizes must be rising from 0, got 0 after 0", "openmpi"),
                          ("empty.json", "not MPICH's selection format: no collective in it", "mpich"),
                          ("a1.json", "not MPICH's selection format: 'a' is not collective=NAME", "mpich"),
                          ("foo.json", "'algorithm=MPIR_Bcast_intra_foo' is no algorithm of this MPICH", "mpich"),
                          ("leaf.json", "'comm_type=intra' leads to no algorithm", "mpich"),
                          ("sel.json", "it lacks collective=allreduce, which MPICH then asserts on", "mpich"),
                          ("fifo", "fifo is a FIFO, not a regular file", "openmpi"),
                          ("fifo", "fifo is a FIFO, not a regular file", "mpich")):
        check_bad_input("collectives", ["--tuning", str(d / f)], words, run, libs=(lib,))


@pytest.mark.parametrize("name,shown", [("a\nb.conf", "a_b.conf"), (b"r\xc3.conf", "r_.conf"),
                                        ("x;y=z,\"q\".conf", "x_y_z__q_.conf"), ("é.conf", "é.conf")])
def test_a_tuning_files_name_in_the_rows(tmp_path: Path, name: str | bytes, shown: str) -> None:
    """The file's name reaches params as tuning=NAME with a newline, a UTF-8 sequence cut short and the
    separators replaced: the CSV stays one line per row, valid UTF-8."""
    exe = bindir("openmpi") / "collectives"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    path = os.path.join(os.fsencode(tmp_path), name if isinstance(name, bytes) else os.fsencode(name))
    with open(path, "w") as f:
        f.write("1\n7\n1\n4\n1\n0 6 0 0\n")
    out = tmp_path / "t.csv"
    p = subprocess.run([str(exe), "--tuning", path, "--quick", "--tests", "bcast", "-m", "8:8", "-o", str(out)],
                       capture_output=True, timeout=120, cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    lines = out.read_bytes().decode("utf-8").splitlines()  # valid UTF-8, one line per row
    tuned = [ln for ln in lines[1:] if f"tuning={shown}," in ln or f"tuning={shown};" in ln]
    assert len(lines) > 1 and all(len(ln.split(",")) == len(lines[0].split(",")) for ln in lines), lines
    assert tuned == lines[1:], lines


def test_the_loop_closed(measured: tuple[str, object], tmp_path: Path) -> None:
    """scripts/coll-tune-check: launches without and with the written file (two configurations of one
    scripts/launches series), and tune --check's table and findings over them (one round: not judged,
    which the sentence says)."""
    lib, r = measured
    if lib != "openmpi":
        pytest.skip("MPICH busy-polls: one library is enough for the script")
    rules = tmp_path / "rules.conf"
    assert cli_proc("tune", r.csv_path, "-o", rules).rc == 0  # type: ignore[attr-defined]
    out = tmp_path / "loop"
    check = [str(ROOT / "scripts/coll-tune-check"), "--tuning", str(rules), "--rounds", "1", "-o", str(out), "--",
             "--tests", "allreduce", "--quick", "-m", "8:16"]
    p = subprocess.run(check, capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    assert sorted(str(x.relative_to(out)) for x in out.rglob("*.csv")) == ["default/launch-1.csv", "tuned/launch-1.csv"]
    tuned = (out / "tuned" / "launch-1.csv").read_text()
    assert f"tuning={rules.name}" in tuned and "tuning=" not in (out / "default" / "launch-1.csv").read_text()
    series = json.loads((out / "launches.json").read_text())
    assert series["status"] == "complete" and sorted(series["orders"][0]) == ["default", "tuned"]
    assert "tuned / default [95 %]" in p.stdout and "best user-level" in p.stdout
    assert f"Tuning file {rules.name}" in p.stdout and "not judged (1 launch pairs" in p.stdout
    # the closing hint names the reading the check uses, not a compare of its two configurations
    assert f"read the set: {REPORT} tune --check {out}" in p.stderr and " compare " not in p.stderr
    # mpimb-report says the same as the script's stdout (one judgement)
    q = cli_proc("tune", "--check", out)
    assert q.rc == 0 and q.out in p.stdout, q.err
    # the directory again: refused before anything runs, the earlier launches untouched (issue 44 item 11)
    before = sorted(str(x.relative_to(out)) for x in out.rglob("*"))
    q = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert q.returncode == 2 and q.stderr.startswith("coll-tune-check: -o") and len(q.stderr.splitlines()) == 1, \
        q.stderr
    assert sorted(str(x.relative_to(out)) for x in out.rglob("*")) == before
    # results without a tuned launch: one line, exit 1
    (out / "tuned" / "launch-1.csv").unlink()
    (out / "tuned" / "launch-1.json").unlink()
    q = cli_proc("tune", "--check", out)
    assert q.rc == 1 and len(q.err.splitlines()) == 1, q.err


@pytest.mark.parametrize("args, words", [
    (["--rounds", "99999999999999999999"], "--rounds must be an integer from 1 to 10000"),
    (["--rounds", "0"], "--rounds must be"), (["--rounds", "x"], "--rounds must be"),
    (["--seed", "99999999999999999999"], "--seed must be"),
    (["--timeout", "99999999999999999999"], "--timeout must be"),
    (["-n", "99999999999999999999"], "-n must be")])
def test_loop_bad_input(args: list[str], words: str, tmp_path: Path) -> None:
    """Numbers are checked by their digits, not by bash arithmetic (which wraps past 2^63): one line, exit 2,
    nothing written."""
    rules = tmp_path / "rules.conf"
    rules.write_text("1\n")
    out = tmp_path / "loop"
    p = subprocess.run([str(ROOT / "scripts/coll-tune-check"), "--tuning", str(rules), "-o", str(out), *args],
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and words in p.stderr, p.stderr
    assert not out.exists()


def test_launch_pairs_meet_whatever_their_start() -> None:
    """The harness picks window or barrier starts per run (clock quality): a launch without the file
    that started on windows pairs with one with the file that fell back to barriers (CI once failed
    with 'no pair of launches' when the two launches chose differently)."""
    rows = [{"program": "collectives", "test": "allreduce", "bytes": 8.0, "comm": "world", "nprocs": 4,
             "method": "library", "start_utc": f"2026-01-01T00:00:0{i}Z", "time_median_s": t,
             "params": f"sync={s};timing=osu" + (";tuning=r.conf" if tuned else "")}
            for i, (s, tuned, t) in enumerate((("window", False, 2e-6), ("barrier", True, 1e-6)))]
    got = T.tuned_against_default(pd.DataFrame(rows))
    assert len(got) == 1 and got[0].file == "r.conf" and got[0].default_s == 2e-6 and got[0].tuned_s == 1e-6


def test_mpich_names_map_to_values(measured: tuple[str, object], tmp_path: Path) -> None:
    """MPICH lists its algorithms only in the variable's description: set each variable by name in the
    environment (which MPICH parses itself) and the value it reads back is the one the suite gave the name."""
    lib, r = measured
    if lib != "mpich":
        pytest.skip("Open MPI's list is an MPI_T enumeration of names and values")
    colls = r.meta()["library_algorithms"]["collectives"]  # type: ignore[attr-defined]
    env = {c["variable"]: list(c["algorithms"])[-1] for c in colls.values()}
    env2 = {c["variable"]: list(c["algorithms"])[len(c["algorithms"]) // 2] for c in colls.values()}
    for e in (env, env2):
        run = run_mpi("mpich", 1, "collectives", "--algorithms", "library", "--quick", "-m", "8:8",
                      out=tmp_path / "n1.csv", env={**e, "MPIMB_REPORT": "none"})
        assert run.returncode == 0, run.stderr
        got = run.meta()["library_algorithms"]["collectives"]
        for c in got.values():
            assert c["at_start"] == c["algorithms"][e[c["variable"]]], (c["variable"], e[c["variable"]], c)


def test_mpich_forced_algorithm_reaches_the_library_and_no_further(tmp_path: Path) -> None:
    """The program's own MPI_T path, shown by MPICH's own check rather than a timing: reduce_scatter_allgather
    cannot apply to allreduce of fewer than 2^k elements (2 ranks: 1 double, 8 B), and MPICH checks that only
    where the variable forces it.  --algorithms has MPICH refuse such a call in its probe (fallback "error",
    src/collectives/mpit.c), so that row is n/a with MPICH's reason where MPICH would silently have run its
    own choice under the name, and the 16 B row is measured and verified: the write reached the library at
    exactly the forced calls.  With the user's fallback "print", MPICH says nothing at 16 B: the harness's
    own collectives (verification and statistics reduce 1 integer) never run the forced algorithm (they did
    before the variable was put back after each repetition, and MPICH printed for them)."""
    if not (bindir("mpich") / "collectives").exists():
        pytest.skip("MPICH build missing")
    args = ("--algorithms", "reduce_scatter_allgather,recursive_doubling", "--tests", "allreduce", *ONCE_BARRIER,
            "--verify")
    r = run_mpi("mpich", 2, "collectives", *args, "-m", "8:16", out=tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    rows = pd.DataFrame(r.rows())
    rows["algorithm"] = rows["params"].map(lambda p: parse_params(p)["algorithm"])
    got = {(a, int(b)): s for a, b, s in rows[["algorithm", "bytes", "stop_reason"]].itertuples(index=False)}
    assert got.pop(("reduce_scatter_allgather", 8)) == \
        "n/a: User set collective algorithm is not usable for the provided arguments"
    every = {(a, b) for a in ("auto", "reduce_scatter_allgather", "recursive_doubling") for b in (8, 16)}
    assert set(got) == every - {("reduce_scatter_allgather", 8)}
    assert not any(s.startswith("n/a") for s in got.values()), got
    assert (rows.loc[~rows["stop_reason"].str.startswith("n/a"), "verified"] == "yes").all()
    p = run_mpi("mpich", 2, "collectives", *args, "-m", "16:16", out=tmp_path / "p.csv",
                env={"MPIR_CVAR_COLLECTIVE_FALLBACK": "print"})
    assert p.returncode == 0, p.stderr
    assert "cannot be applied" not in p.stderr, p.stderr[-2000:]
    assert not any(row["stop_reason"].startswith("n/a") for row in p.rows()), p.rows()


PERSISTENT = "barrier-persistent,bcast-persistent,reduce-persistent,allreduce-persistent,allgather-persistent," \
             "alltoall-persistent"


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_persistent_collectives(lib: str, tmp_path: Path) -> None:
    """MPI-4 persistent collectives beside the blocking and nonblocking forms (MPICH: MPI_<Coll>_init;
    Open MPI 4.1: MPIX_ of its pcollreq extension), verified; a root that rotates cannot be bound: n/a."""
    r = run_mpi(lib, 2, "collectives", "--tests", PERSISTENT, "--quick", "--verify", "-m", "8:16", "--root",
                "same", out=tmp_path / "p.csv", env={"MPIMB_REPORT": "none"})
    rows = r.rows()
    assert {x["test"] for x in rows} == set(COLLS) and {x["method"] for x in rows} == {"persistent"}
    bug = lib == "mpich" and "4.0.2" in r.meta()["mpi"]["library_version"]
    for x in rows:
        want = "" if x["test"] == "barrier" else "no" if bug and x["test"] == "allgather" else "yes"
        # MPICH 4.0.2's MPI_Allgather_init returns wrong blocks from its second start on (reproduced
        # without the suite, docs/collectives.md): the verification catches it and the run exits 1
        assert x["verified"] == want, x
    assert r.returncode == (1 if bug else 0), r.stderr
    assert "persistent" in r.stdout
    q = run_mpi(lib, 2, "collectives", "--tests", "bcast-persistent", "--quick", "-m", "8:8", "--root", "rotate",
                out=tmp_path / "q.csv", env={"MPIMB_REPORT": "none"})
    assert q.returncode == 0, q.stderr
    assert q.rows()[0]["stop_reason"] == "n/a: a persistent request binds its root: --root rotate cannot be measured"


def test_simulated_library_has_neither(tmp_path: Path) -> None:
    """SMPI has no MPI_T control variables and no persistent collectives: both are n/a rows saying so."""
    if not (ROOT / "build" / "smpi" / "bin" / "collectives").exists():
        pytest.skip("build/smpi/bin/collectives not built (make MPI=smpi)")
    for args, reason in ((["--tests", "bcast", "--algorithms", "library"], "SimGrid SMPI chooses collective algorithms"),
                         (["--tests", "bcast-persistent"], "SimGrid SMPI has no persistent collectives")):
        out = tmp_path / "s.csv"
        p = subprocess.run([str(ROOT / "scripts" / "simulate"), "collectives", "-n", "2", "--platform", "two-node",
                            "--no-build", "--", *args, "--quick", "-m", "8:8", "-o", str(out)],
                           capture_output=True, text=True, timeout=120, env={**os.environ, "MPIMB_REPORT": "none"},
                           check=False)
        assert p.returncode == 0, p.stderr
        assert reason in out.read_text()
