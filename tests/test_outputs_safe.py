"""Outputs that cannot hurt (issue 44; docs/results-format.md, "Output paths"): a name that holds no
regular file (a device, FIFO, socket, directory or symbolic link) is refused before anything is written;
--trace-out is checked against the run's other files like --raw; files aside are never written through a
link; a second run given the same names is refused while the first lives; a full disk leaves whole rows
only; a trace that could not be written fails the run and its metadata says so; the profiler writes '.'
decimals whatever locale the application took, and ignores the suite's own MPI_Pcontrol levels called
without their key."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import (
    COLUMNS,
    ROOT,
    bindir,
    check_bad_input,
    launcher,
    mpich_turn,
    rank_pid,
    small_disk,
)

QUICK = ["--quick", "--reps", "1", "--max-reps", "1", "--warmup", "0", "--min-rep-time", "0"]
HALO = ["--tests", "halo", "--comms", "world", "--methods", "irecv-send", "--neighbors", "4", "--periodic", "no",
        "--group", "none"]


def exe(lib: str, program: str) -> Path:
    p = bindir(lib) / program
    if not p.exists():
        pytest.skip(f"{p} not built")
    return p


def profiler(lib: str) -> Path:
    p = bindir(lib).parent / "lib" / "libmpimb-prof.so"
    if not p.exists():
        pytest.skip(f"{p} not built")
    return p


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 120,
        lib: str = "", n: int = 1) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MPIMB_REPORT": "none", **(env or {})}
    with mpich_turn(lib, n):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=full, check=False)


def one_line(p: subprocess.CompletedProcess[str], prefix: str, message: str) -> None:
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"
    ours = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("mpimb: warning: oversubscribed")]
    assert len(ours) == 1 and ours[0].startswith(prefix) and message in ours[0], p.stderr
    assert p.stdout == ""


def listing(d: Path) -> dict[str, str]:
    """Every name in d with what it is (a device stays a device)."""
    def kind(p: Path) -> str:
        m = p.lstat().st_mode
        return ("link" if stat.S_ISLNK(m) else "chr" if stat.S_ISCHR(m) else "fifo" if stat.S_ISFIFO(m)
                else "dir" if stat.S_ISDIR(m) else "file")
    return {p.name: kind(p) for p in d.iterdir()}


# ---------------------------------------------------------------- 1. names that hold no regular file

def make(d: Path, name: str, what: str) -> None:
    p = d / name
    if what == "chr":  # a /dev/null of our own, never the system's
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    elif what == "fifo":
        os.mkfifo(p)
    elif what == "link":
        (d / "victim.csv").write_text("not yours\n")
        p.symlink_to("victim.csv")
    elif what == "dir":
        p.mkdir()


NODES = [
    ("chr", "n", ["-o", "n"], "-o 'n' is a character device, not a regular file"),
    ("fifo", "f.csv", ["-o", "f.csv"], "-o 'f.csv' is a FIFO, not a regular file"),
    ("link", "l.csv", ["-o", "l.csv"], "-o 'l.csv' is a symbolic link, not a regular file"),
    ("fifo", "a.json", ["-o", "a.csv"], "'a.json', the metadata of -o 'a.csv', is a FIFO"),
    ("chr", "a-rounds.csv", ["-o", "a.csv"], "'a-rounds.csv', the rounds file of -o 'a.csv', is a character device"),
    ("chr", "r", ["-o", "a.csv", "--raw", "r"], "--raw 'r' is a character device, not a regular file"),
    ("fifo", "t.json", ["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "t.json"],
     "--trace-out 't.json' is a FIFO, not a regular file"),
    ("dir", "t.json", ["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "t.json"],
     "--trace-out 't.json' is a directory, not a regular file"),
    ("chr", "a-trace.json", ["-o", "a.csv", "--trace", "irecv-send"],
     "'a-trace.json', the trace of -o 'a.csv', is a character device"),
]


@pytest.mark.parametrize("what,name,args,message", NODES, ids=[f"{c[0]}-{c[1]}-{c[2][-1]}" for c in NODES])
@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_name_holding_no_regular_file_is_refused(tmp_path: Path, lib: str, what: str, name: str,
                                                   args: list[str], message: str) -> None:
    """Refused before MPI_Init (the binary alone: no launcher needed to reach the check), the node left as
    it was, nothing written."""
    make(tmp_path, name, what)
    before = listing(tmp_path)
    one_line(run([str(exe(lib, "halocompare")), *args, *QUICK], tmp_path), "halocompare: ", message)
    assert listing(tmp_path) == before
    if what == "link":
        assert (tmp_path / "victim.csv").read_text() == "not yours\n"


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_device_is_refused_on_every_rank(tmp_path: Path, lib: str) -> None:
    make(tmp_path, "n", "chr")
    p = run([*launcher(lib, 2), str(exe(lib, "halocompare")), "-o", "n", *QUICK, *HALO], tmp_path, lib=lib, n=2)
    one_line(p, "halocompare: ", "-o 'n' is a character device, not a regular file")
    assert listing(tmp_path) == {"n": "chr"}


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
@pytest.mark.parametrize("var", ["MPIMB_PROF_OUT", "MPIMB_PROF_TRACE"])
def test_the_profilers_outputs_are_refused_too(tmp_path: Path, lib: str, var: str) -> None:
    """MPIMB_PROF_OUT (a .csv path) and MPIMB_PROF_TRACE naming a FIFO: one line, exit 2, the FIFO stays."""
    make(tmp_path, "p.csv", "fifo")
    env = {"MPIMB_PROF_OUT": "p.csv" if var == "MPIMB_PROF_OUT" else "none"}
    if var == "MPIMB_PROF_TRACE":
        env["MPIMB_PROF_TRACE"] = "p.csv"
    cmd = [*launcher(lib, 2), "env", f"LD_PRELOAD={profiler(lib)}", *(f"{k}={v}" for k, v in env.items()),
           str(exe(lib, "pingpong")), "--version"]
    p = run(cmd, tmp_path, lib=lib, n=2)
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("mpimb-prof: ")]
    assert lines == [f"mpimb-prof: {var}: 'p.csv' is a FIFO, not a regular file"
                     + (": outputs replace what stands at their names, so only a regular file or a new name is taken"
                        if var == "MPIMB_PROF_OUT" else ": the trace would replace it")], p.stderr
    assert listing(tmp_path) == {"p.csv": "fifo"}


@pytest.mark.parametrize("args,message", [
    (["--root", "5"], "collectives: --root 5 is outside the communicator (ranks 0 to 1)"),
    (["--algorithms", "nosuchalgorithm", "--tests", "bcast"], "collectives: --algorithms: "),
])
def test_a_usage_error_after_mpi_init_leaves_no_results_directory(tmp_path: Path, args: list[str],
                                                                 message: str) -> None:
    """Without -o the run makes results/ for its files; a check that needs the job (after MPI_Init) removes
    them and the directory it made."""
    check_bad_input("collectives", [*args, *QUICK], message, tmp_path, ranks=2, libs=("openmpi", "mpich"), out=False)


# ---------------------------------------------------------------- 2. --trace-out among the run's files

CLASHES = [
    (["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "a.csv"],
     "halocompare: --trace-out 'a.csv' is the CSV of -o 'a.csv' ('a.csv'): give each output its own file"),
    (["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "a.json"],
     "halocompare: --trace-out 'a.json' is the metadata of -o 'a.csv' ('a.json')"),
    (["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "a-rounds.csv"],
     "halocompare: --trace-out 'a-rounds.csv' is the rounds file of -o 'a.csv'"),
    (["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "r.csv", "--raw", "r.csv"],
     "halocompare: --raw 'r.csv' is the trace of --trace-out 'r.csv' ('r.csv')"),
    (["-o", "a.csv", "--trace", "irecv-send", "--raw", "a-trace.json"],
     "halocompare: --raw 'a-trace.json' is the trace of -o 'a.csv' ('a-trace.json')"),
    (["-o", "a.csv", "--trace", "irecv-send", "--trace-out", "t", "--raw", "t.tmp"],
     "halocompare: --raw 't.tmp' is the trace written aside of --trace-out 't' ('t.tmp')"),
]


@pytest.mark.parametrize("args,message", CLASHES, ids=[" ".join(c[0][2:]) for c in CLASHES])
@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_trace_out_is_a_file_of_its_own(tmp_path: Path, lib: str, args: list[str], message: str) -> None:
    one_line(run([str(exe(lib, "halocompare")), *args, *QUICK], tmp_path), message, "")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
@pytest.mark.parametrize("trace,what", [("p.csv", "the CSV"), ("p.json", "the metadata"),
                                        ("p-matrix.csv", "the communication matrix")])
def test_the_profilers_trace_is_a_file_of_its_own(tmp_path: Path, lib: str, trace: str, what: str) -> None:
    cmd = [*launcher(lib, 2), "env", f"LD_PRELOAD={profiler(lib)}", "MPIMB_PROF_OUT=p.csv",
           f"MPIMB_PROF_TRACE={trace}", str(exe(lib, "pingpong")), "--version"]
    p = run(cmd, tmp_path, lib=lib, n=2)
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("mpimb-prof: ")]
    assert lines == [(f"mpimb-prof: MPIMB_PROF_OUT: MPIMB_PROF_TRACE '{trace}' is {what} of 'p.csv' ('{trace}'): "
                      "give each output its own file")], p.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- 4. files aside are never written through

@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_link_where_the_csv_goes_aside_is_refused(tmp_path: Path, lib: str) -> None:
    (tmp_path / "victim").write_text("precious\n")
    (tmp_path / "a.csv.tmp").symlink_to("victim")
    p = run([str(exe(lib, "halocompare")), "-o", "a.csv", *QUICK, *HALO], tmp_path)
    one_line(p, "halocompare: ", "'a.csv.tmp', where the run writes aside, is a symbolic link: remove it")
    assert (tmp_path / "victim").read_text() == "precious\n"
    assert listing(tmp_path) == {"victim": "file", "a.csv.tmp": "link"}


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_link_where_the_metadata_goes_aside_is_replaced_not_followed(tmp_path: Path, lib: str) -> None:
    """The metadata is rewritten aside after every row: a link planted there is replaced by the file."""
    (tmp_path / "victim").write_text("precious\n")
    (tmp_path / "a.json.tmp").symlink_to("victim")
    (tmp_path / "a.raw.csv.tmp").symlink_to("elsewhere")  # (a link to the same victim would be a clash)
    p = run([str(exe(lib, "halocompare")), "-o", "a.csv", "--raw", "a.raw.csv", *QUICK, *HALO], tmp_path)
    assert p.returncode == 2 and "'a.raw.csv.tmp', where the run writes aside, is a symbolic link" in p.stderr
    (tmp_path / "a.raw.csv.tmp").unlink()
    p = run([str(exe(lib, "halocompare")), "-o", "a.csv", "--raw", "a.raw.csv", *QUICK, *HALO], tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "victim").read_text() == "precious\n"
    assert listing(tmp_path) == {"victim": "file", "a.csv": "file", "a.json": "file", "a.raw.csv": "file"}
    assert json.loads((tmp_path / "a.json").read_text())["complete"] is True


# ---------------------------------------------------------------- 5. two runs, one name

def wait_for(cond: object, proc: subprocess.Popen[str], what: str, limit: float = 60) -> None:
    t0 = time.monotonic()
    while not cond():  # type: ignore[operator]
        assert proc.poll() is None, f"ended before {what}: {proc.communicate()}"
        assert time.monotonic() - t0 < limit, f"no {what} in {limit} s"
        time.sleep(0.02)


def data_lines(p: Path) -> list[str]:
    return p.read_text().splitlines()[1:] if p.exists() else []


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_second_run_of_the_same_names_is_refused(tmp_path: Path, lib: str) -> None:
    """Run A holds each row open for a second (MPIMB_FAULT=row-delay); run B, given the same -o and --raw
    while A measures, is refused with one line; A's files are A's alone and agree with each other."""
    prog = exe(lib, "halocompare")
    args = [str(prog), "-o", "a.csv", "--raw", "a.raw.csv", *QUICK, *HALO, "--methods", "irecv-send,sendrecv"]
    env = {**os.environ, "MPIMB_REPORT": "none", "MPIMB_FAULT": "row-delay:1"}
    a = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(data_lines(tmp_path / "a.csv")) >= 1, a, "a first row")
        one_line(run(args, tmp_path), "halocompare: ", "'a.csv' is being written by another run now")
        # the raw file alone, too
        one_line(run([*args[:1], "-o", "b.csv", *args[3:]], tmp_path), "halocompare: ",
                 "'a.raw.csv' is being written by another run now")
        _, err = a.communicate(timeout=120)
    finally:
        if a.poll() is None:
            a.kill()
    assert a.returncode == 0, err
    meta = json.loads((tmp_path / "a.json").read_text())
    rows = data_lines(tmp_path / "a.csv")
    assert meta["complete"] is True and meta["rows"] == len(rows) == 2
    assert {r.split(",")[0] for r in rows} == {meta["run_id"]}
    assert {r.split(",")[0] for r in data_lines(tmp_path / "a.raw.csv")} == {meta["run_id"]}
    assert sorted(listing(tmp_path)) == ["a.csv", "a.json", "a.raw.csv"]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_file_aside_held_by_a_live_run_or_left_by_a_dead_one(tmp_path: Path, lib: str) -> None:
    """a.csv.tmp locked (a run writing aside, before its first test): refused, the file left; the same file
    unlocked (a run killed before it measured): taken over, the run ends as usual."""
    prog = exe(lib, "halocompare")
    args = [str(prog), "-o", "a.csv", *QUICK, *HALO]
    aside = tmp_path / "a.csv.tmp"
    aside.write_text("run_id\n")
    with open(aside) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        one_line(run(args, tmp_path), "halocompare: ", "'a.csv' is being written by another run now")
    assert aside.read_text() == "run_id\n" and sorted(listing(tmp_path)) == ["a.csv.tmp"]
    p = run(args, tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(listing(tmp_path)) == ["a.csv", "a.json"]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_trace_out_held_by_a_live_run_is_refused(tmp_path: Path, lib: str) -> None:
    """--trace-out's name is claimed for the run (its file aside locked, like the CSV's): with t.json.tmp
    locked by another run, a run given -o b.csv --trace-out t.json is refused with one line and writes
    nothing, no trace either (the profiler is told to discard it); unlocked (a killed run's), it is taken
    over and the trace lands."""
    args = [str(exe(lib, "halocompare")), "-o", "b.csv", "--trace", "irecv-send", "--trace-out", "t.json",
            *QUICK, *HALO]
    aside = tmp_path / "t.json.tmp"
    aside.write_text("")
    with open(aside) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        one_line(run(args, tmp_path), "halocompare: ", "'t.json' is being written by another run now")
    assert sorted(listing(tmp_path)) == ["t.json.tmp"]
    p = run(args, tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(listing(tmp_path)) == ["b.csv", "b.json", "t.json"]
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


# ---------------------------------------------------------------- 6. a full disk

def fill(disk: Path) -> None:
    """Takes every free block of the disk."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_full_disk_mid_run_leaves_whole_rows(tmp_path: Path, lib: str) -> None:
    """The disk fills after the first row: every line of the CSV and of the raw file is whole, the metadata on
    disk counts only rows the CSV has (complete: false), and the run exits 1 saying so."""
    prog = exe(lib, "collectives")
    with small_disk(tmp_path / "disk") as disk:
        args = [str(prog), "-o", "p.csv", "--raw", "p.raw.csv", "--tests", "bcast", "-m", "1:1M", *QUICK]
        env = {**os.environ, "MPIMB_REPORT": "none", "MPIMB_FAULT": "row-delay:0.2"}
        a = subprocess.Popen(args, cwd=disk, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: len(data_lines(disk / "p.csv")) >= 1, a, "a first row")
            fill(disk)
            _, err = a.communicate(timeout=120)
        finally:
            if a.poll() is None:
                a.kill()
        text = (disk / "p.csv").read_text()
        assert text.endswith("\n")
        rows = list(csv.reader(text.splitlines()))
        assert rows[0] == COLUMNS and all(len(r) == len(COLUMNS) for r in rows)
        assert 1 <= len(rows) - 1 < 21  # some, not all 21 sizes
        meta = json.loads((disk / "p.json").read_text())
        assert meta["complete"] is False and meta["rows"] <= len(rows) - 1
        raw = (disk / "p.raw.csv").read_text()
        assert raw.endswith("\n") and all(len(ln.split(",")) == 9 for ln in raw.splitlines())
        assert {int(ln.split(",")[1]) for ln in raw.splitlines()[1:]} <= set(range(1, len(rows)))
        assert not list(disk.glob("*.tmp"))
        assert a.returncode == 1, err
        assert "collectives: cannot write 'p.csv': No space left on device" in err


# ---------------------------------------------------------------- 7. a trace that could not be written

@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_trace_that_could_not_be_written_fails_the_run(tmp_path: Path, lib: str) -> None:
    """--trace-out on a full disk: exit 1, the metadata says complete: false and why, no trace, nothing aside."""
    profiler(lib)
    prog = exe(lib, "halocompare")
    with small_disk(tmp_path / "disk", "1m") as disk:
        fill(disk)
        p = run([*launcher(lib, 2), str(prog), "-o", str(tmp_path / "h.csv"), *QUICK, *HALO, "--trace",
                 "irecv-send", "--trace-out", str(disk / "t.json")], tmp_path, lib=lib, n=2, timeout=240)
        assert p.returncode == 1, p.stderr
        why = f"cannot write the trace '{disk / 't.json'}': No space left on device"
        assert f"mpimb-prof: {why}" in p.stderr
        meta = json.loads((tmp_path / "h.json").read_text())
        assert meta["complete"] is False and meta["ended_by"] == why
        assert meta["rows"] == len(data_lines(tmp_path / "h.csv")) == 1
        assert sorted(x.name for x in disk.iterdir()) == ["filler"]


def writing_the_trace(pid: int, d: Path) -> bool:
    """Whether process pid has a trace file of d open for writing: unnamed (O_TMPFILE, '(deleted)') or
    aside (NAME-trace.json.tmp)."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                t = os.readlink(f"/proc/{pid}/fd/{fd}")
                if t.startswith(str(d)) and ("(deleted)" in t or t.endswith("-trace.json.tmp")):
                    return True
    return False


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_kill_while_the_trace_is_written_leaves_no_file(tmp_path: Path, lib: str) -> None:
    """SIGKILL of rank 0 while it writes a 15 MB trace: no trace, no .tmp left (docs: a killed job leaves
    none)."""
    profiler(lib)
    cmd = [*launcher(lib, 2), str(exe(lib, "halocompare")), "-o", "k.csv", *QUICK, *HALO, "--trace",
           "irecv-send", "--trace-iters", "8000"]
    env = {**os.environ, "MPIMB_REPORT": "none", "MPIMB_PROF_TRACE_EVENTS": "100000"}
    with mpich_turn(lib, 2):
        a = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = None
            t0 = time.monotonic()
            while a.poll() is None and time.monotonic() - t0 < 200:
                pid = pid or rank_pid(a.pid, 0)
                if pid and writing_the_trace(pid, tmp_path):
                    os.kill(pid, 9)
                    break
                time.sleep(0.002)
            else:
                pytest.fail(f"the trace's writing was never seen: {a.communicate()}")
            a.communicate(timeout=60)
        finally:
            if a.poll() is None:
                a.kill()
    assert a.returncode != 0
    assert not [x.name for x in tmp_path.iterdir() if "trace" in x.name or x.name.endswith(".tmp")]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_the_trace_stem_is_the_csvs(tmp_path: Path, lib: str) -> None:
    """-o results/x (no .csv): the trace is results/x-trace.json (it was resul-trace.json)."""
    profiler(lib)
    (tmp_path / "results").mkdir()
    p = run([*launcher(lib, 2), str(exe(lib, "halocompare")), "-o", "results/x", *QUICK, *HALO, "--trace",
             "irecv-send"], tmp_path, lib=lib, n=2, timeout=240)
    assert p.returncode == 0, p.stderr
    assert sorted(listing(tmp_path / "results")) == ["x", "x-trace.json", "x.json"]
    assert json.loads((tmp_path / "results" / "x.json").read_text())["trace"]["path"] == "results/x-trace.json"


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_trace_buffer_that_cannot_be_had_is_said(tmp_path: Path, lib: str) -> None:
    """MPIMB_PROF_TRACE_EVENTS at its limit (2^30 events: 56 GiB a thread) on this machine: one line, exit 2,
    instead of a trace that silently lost every event."""
    cmd = [*launcher(lib, 2), "env", f"LD_PRELOAD={profiler(lib)}", "MPIMB_PROF_OUT=none", "MPIMB_PROF_TRACE=t.json",
           "MPIMB_PROF_TRACE_EVENTS=1073741824", str(exe(lib, "pingpong")), "--version"]
    p = run(cmd, tmp_path, lib=lib, n=2)
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("mpimb-prof: ")]
    assert lines == [("mpimb-prof: MPIMB_PROF_TRACE_EVENTS=1073741824: cannot allocate a thread's buffer of "
                      "1073741824 events (56 GiB): give fewer")], p.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- 3 and 8. the application under the profiler

@pytest.fixture(scope="session")
def comma_locale(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """de_DE.UTF-8 (',' decimals) generated by localedef into a directory of our own (LOCPATH)."""
    if not shutil.which("localedef") or not Path("/usr/share/i18n/locales/de_DE").exists():
        pytest.skip("no localedef or no de_DE source: the locales package (scripts/deps/test-base.apt)")
    d = tmp_path_factory.mktemp("locale")
    subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(d / "de_DE.UTF-8")], check=True,
                   capture_output=True)
    return {"LOCPATH": str(d), "LC_ALL": "de_DE.UTF-8"}


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_an_application_in_a_comma_locale(tmp_path: Path, lib: str, comma_locale: dict[str, str]) -> None:
    """tests/profile/hostile.c takes a comma-decimal locale, calls the suite's Pcontrol levels bare (2702 with
    no text, with text that is no JSON, 2703 'discard'), traces 300 stretches and sends with a tag MPI refuses
    (MPI_ERRORS_RETURN): the profile's CSV has its columns, its JSON and the trace parse with '.' numbers, the
    failed sends moved nothing, every stretch is there (none named), and the trace was not discarded."""
    lib_so = profiler(lib)
    app = tmp_path / "hostile"
    subprocess.run([f"mpicc.{lib}", "-O1", "-o", str(app), str(ROOT / "tests" / "profile" / "hostile.c")],
                   check=True)
    env = {"MPIMB_PROF_OUT": "prof", "MPIMB_PROF_TRACE": "t.json", "MPIMB_PROF_TRACE_START": "0", **comma_locale}
    cmd = [*launcher(lib, 2), "env", f"LD_PRELOAD={lib_so}", *(f"{k}={v}" for k, v in env.items()), str(app)]
    p = run(cmd, tmp_path, lib=lib, n=2, timeout=240)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "1,5"  # the locale took
    prof = next(x for x in (tmp_path / "prof").iterdir() if x.suffix == ".csv" and "matrix" not in x.name)
    meta = json.loads(prof.with_suffix(".json").read_text())
    assert meta["complete"] is True and isinstance(meta["profile"]["seconds_per_tick"], float)
    with open(prof, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS and len(rows) - 1 == meta["rows"] > 0
    for r in rows[1:]:
        assert len(r) == len(COLUMNS)
        float(dict(zip(COLUMNS, r))["time_median_s"])
    # the sends MPI refused (MPI_ERRORS_RETURN): calls, but no bytes and no message; the matrix holds the ring's
    send = next(dict(zip(COLUMNS, r)) for r in rows[1:] if r[2] == "MPI_Send" and r[COLUMNS.index("bytes")] == "")
    assert send["calls"] == "2" and send["total_bytes"] == "0", send
    matrix = prof.with_name(meta["profile"]["matrix_csv"]).read_text().splitlines()[1:]
    assert sorted(ln.split(",", 1)[1] for ln in matrix) == ["0,1,p2p,1,8", "1,0,p2p,1,8"], matrix
    trace = json.loads((tmp_path / "t.json").read_text())
    assert all(isinstance(e["ts"], float) for e in trace["traceEvents"] if "ts" in e)
    st = trace["otherData"]["stretches"]
    assert len(st) == 300 and all(s["test"] is None for s in st)
    assert "(300 stretches, 0 events dropped)" in p.stderr


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_help_names_what_the_options_take(lib: str, tmp_path: Path) -> None:
    """--help names a string option's value as the text explains it (--trace PATTERN, not TEXT), and --reps says
    that a test overrunning its budget ends with fewer repetitions (issue 44, item 16)."""
    text = run([str(exe(lib, "halocompare")), "--help"], tmp_path).stdout
    lines = {ln.split()[0] if not ln.startswith("  -o") else "--output": ln for ln in text.splitlines()
             if ln.startswith("  ") and ln.split() and ln.split()[0].startswith("-")}
    assert lines["--trace"].split()[:2] == ["--trace", "PATTERN"] and "PATTERN" in lines["--trace"].split(None, 2)[2]
    assert lines["--trace-out"].split()[:2] == ["--trace-out", "FILE"]
    assert lines["--raw"].split()[:2] == ["--raw", "FILE"]
    assert "unless the test overruns 4 x --time-budget" in lines["--reps"] and "minimum" not in lines["--reps"]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_file_system_without_locks(tmp_path: Path, lib: str) -> None:
    """flock failing as on Lustre mounted noflock (ENOSYS, by a preloaded stand-in): a run still runs,
    unguarded; a file aside found there is refused, since nothing can say whether a live run writes it."""
    shim = tmp_path / "noflock.so"
    src = tmp_path / "noflock.c"
    src.write_text("#include <errno.h>\nint flock(int fd, int op) { (void)fd; (void)op; errno = ENOSYS; return -1; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(shim), str(src)], check=True)
    d = tmp_path / "run"
    d.mkdir()
    args = [str(exe(lib, "halocompare")), "-o", "a.csv", *QUICK, *HALO]
    p = run(args, d, env={"LD_PRELOAD": str(shim)})
    assert p.returncode == 0, p.stderr
    assert sorted(listing(d)) == ["a.csv", "a.json"]
    (d / "a.csv.tmp").write_text("run_id\n")
    one_line(run(args, d, env={"LD_PRELOAD": str(shim)}), "halocompare: ",
             "'a.csv.tmp' exists, and this file system cannot say whether a run is writing it: remove it if none is")
