"""slurm/sweep and slurm/collect against a real single-host Slurm: slurmctld
plus 4 slurmd emulating nodes n1..n4 on 127.0.0.1 (tests/slurm_cluster.py),
a sweep over 1, 2 and 4 nodes with srun --mpi=pmi2 (MPICH) and with mpiexec
(Open MPI), --wait, collect and the report, --resume, a failed and a
never-run configuration, a job array; then every daemon is stopped by PID.
Input checking, --dry-run and shellcheck need no cluster."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import COLUMNS, ROOT, bindir, report
from slurm_cluster import SlurmCluster, missing_tools

SWEEP = ROOT / "slurm" / "sweep"
COLLECT = ROOT / "slurm" / "collect"
MPIEXEC_OMPI = "mpiexec.openmpi --oversubscribe" + (" --allow-run-as-root" if os.geteuid() == 0 else "")
# Tiny jobs: halocompare with one method, communicator and stencil, one repetition (MPICH busy-polls;
# what is checked is the job's record, not a measurement).
TINY = ["--args", "halocompare=--methods sendrecv --comms world --neighbors 4 --periodic no", "--", "--quick",
        "--reps", "1", "--max-reps", "1", "--warmup", "0"]


def run(cmd: list[str | Path], env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], check=False, capture_output=True, text=True, env=env, timeout=timeout
    )


def files_under(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*")) if d.exists() else []


# ---------------------------------------------------------------- no cluster needed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-N", "0"], "--nodes must be positive integers, got '0'"),
        (["-N", "1,0,4"], "--nodes must be positive integers, got '0'"),
        (["-N", "1,,2"], "--nodes needs a comma-separated list"),
        (["--ppn", "two"], "--ppn must be positive integers, got 'two'"),
        (["-p", "halocompare,nosuch"], "unknown program 'nosuch'"),
        (["--label", "a/b"], "--label may hold only"),
        (["--label", "a b"], "--label may hold only"),
        (["--label", ""], "--label must not be empty"),
        (["--launcher", "aprun"], "--launcher must be srun or mpiexec, got 'aprun'"),
        (["--mpi", "pmi9"], "--mpi must be pmi2"),
        (["--launcher", "mpiexec", "--mpi", "pmi2"], "--mpi is for --launcher srun"),
        (["--time", "soon"], "--time must be a Slurm time"),
        (["--threads", "2"], "--threads applies to the threads program"),
        (["--bindir", "/nonexistent"], "--bindir '/nonexistent' is not a directory"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
        (["--", "--quick", "-o", "x.csv"], "program option '-o' is set by the sweep"),
        (["--results", "TMP/a b"], "contains white space"),
        (["--modules", "ok bad;rm"], "--modules: bad module name 'bad;rm'"),
        (["--args", "rma=-x"], "--args names 'rma', which --programs does not list"),
        (["--args", "halocompare=--label x"], "program option '--label' is set by the sweep"),
        (["--launches", "0"], "--launches must be an integer from 1 to 10000, got '0'"),
        (["--launches", "x"], "--launches must be an integer from 1 to 10000, got 'x'"),
        (["--launches", "99999999999999999999"], "--launches must be an integer from 1 to 10000"),
    ],
)
def test_sweep_refuses_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    res = tmp_path / "results"
    args = [a.replace("TMP", str(tmp_path)) for a in args]
    p = run([SWEEP, "--results", res, "--bindir", bindir("openmpi"), *args], timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sweep: "), p.stderr
    assert message in lines[0]
    assert files_under(tmp_path) == [], "a refused sweep must leave no files"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "which sweep?"),
        (["no-such-label"], "no sweep results in"),
        (["TMP/"], "holds no sweep"),
        (["a b"], "a sweep label may hold only"),
        (["x", "y"], "one sweep at a time"),
        (["--bogus", "x"], "unknown option '--bogus'"),
    ],
)
def test_collect_refuses_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    p = run([COLLECT, "--results", tmp_path, *(a.replace("TMP", str(tmp_path)) for a in args)], timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("collect: ") and message in lines[0], p.stderr
    assert files_under(tmp_path) == []


def dry_run(tmp_path: Path, *args: str) -> list[str]:
    """The scripts --dry-run prints, one string each; nothing may be written."""
    res = tmp_path / "results"
    p = run([SWEEP, "--dry-run", "--results", res, "--bindir", bindir("mpich"), "--label", "lab", *args], timeout=60)
    assert p.returncode == 0, p.stderr
    assert not res.exists(), "--dry-run must write nothing"
    parts = p.stdout.split("# ===== sbatch script ")[1:]
    return ["\n".join(part.splitlines()[1:]) + "\n" for part in parts]


def test_dry_run_prints_plain_sbatch_scripts(tmp_path: Path) -> None:
    scripts = dry_run(
        tmp_path, "-N", "1,2,4", "--ppn", "2", "--mpi", "pmi2", "--partition", "debug", "--account", "proj7",
        "--time", "00:20:00", "--modules", "mpich/4 hwloc", "--sbatch-arg", "--exclusive",
        "--", "--quick", "--methods", "irecv-isend", "--comms", "a b",
    )  # fmt: skip
    assert len(scripts) == 3
    res = tmp_path / "results" / "lab"
    for nodes, s in zip((1, 2, 4), scripts, strict=True):
        lines = s.splitlines()
        assert lines[0] == "#!/bin/bash"
        for want in (
            f"#SBATCH --job-name=mpimb-lab-halocompare-N{nodes}-ppn2",
            f"#SBATCH --nodes={nodes}",
            "#SBATCH --ntasks-per-node=2",
            "#SBATCH --time=00:20:00",
            "#SBATCH --partition=debug",
            "#SBATCH --account=proj7",
            "#SBATCH --exclusive",
            f"#SBATCH --output={res}/slurm-%j.out",
            "module load mpich/4",
            "module load hwloc",
            f'out="{res}/$SLURM_JOB_ID"',
            'scontrol show job "$SLURM_JOB_ID" > "$out/slurm-job.txt"',
            (
                f'srun --mpi=pmi2 --cpu-bind=cores {bindir("mpich")}/halocompare -o "$out" --label lab --quick '
                "--methods irecv-isend --comms 'a b' > \"$out/halocompare.txt\""
            ),
        ):
            assert want in lines, f"missing line {want!r} in\n{s}"
        # every #SBATCH line comes before the first command, as sbatch requires
        first_cmd = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
        assert all(not line.startswith("#SBATCH") for line in lines[first_cmd:])


def test_dry_run_launches(tmp_path: Path) -> None:
    """--launches N: the job runs the program N times through scripts/launches (one srun each, into
    launches/PROGRAM/launch-I.csv, the sweep's label kept); without it, one srun as before."""
    (one,) = dry_run(tmp_path, "--", "--quick")
    (three,) = dry_run(tmp_path, "--launches", "03", "--", "--quick")
    exe = shlex.quote(str(bindir("mpich") / "halocompare"))
    assert f'\nsrun --cpu-bind=cores {exe} -o "$out" --label lab --quick > "$out/halocompare.txt"\n' in one
    assert "scripts/launches" not in one and "launches" not in one.split("#SBATCH --output")[0]
    assert (f'\n"$mpimb/scripts/launches" --launches 3 -o "$out/launches" --keep-labels --quiet -- halocompare: '
            f"srun --cpu-bind=cores {exe} --label lab --quick\nrc=$?\n") in three
    assert "1 rank per node, 3 launches." in three


def test_dry_run_array_and_mpiexec(tmp_path: Path) -> None:
    (s,) = dry_run(tmp_path, "--array", "-N", "2", "-p", "halocompare,threads", "-t", "2,4", "--launcher", "mpiexec",
                   "--mpiexec", "mpiexec.openmpi --bind-to core")  # fmt: skip
    assert "#SBATCH --array=0-2" in s and "#SBATCH --cpus-per-task=4" in s
    assert "slurm-%A_%a.out" in s and "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" in s
    assert "mpiexec.openmpi --bind-to core -n 2 " in s
    assert "--threads 4" in s and "threads-N2-ppn1-t2" in s


def test_job_never_reuses_another_jobs_directory(tmp_path: Path) -> None:
    """A job whose directory exists (job ids restarted, or a copied script)
    stops before writing anything."""
    (s,) = dry_run(tmp_path, "-N", "1")
    script = tmp_path / "job.sh"
    script.write_text(s)
    taken = tmp_path / "results" / "lab" / "7"
    taken.mkdir(parents=True)
    (taken / "halocompare-lab-np1-x.csv").write_text("earlier job\n")
    p = run(["bash", script], env=dict(os.environ, SLURM_JOB_ID="7"), timeout=60)
    assert p.returncode == 1
    assert [f.name for f in taken.iterdir()] == ["halocompare-lab-np1-x.csv"]
    assert (taken / "halocompare-lab-np1-x.csv").read_text() == "earlier job\n"


@pytest.mark.skipif(not shutil.which("shellcheck"), reason="shellcheck not installed (scripts/install-deps --test)")
def test_job_scripts_are_shellcheck_clean(tmp_path: Path) -> None:
    """The job scripts slurm/sweep writes (the scripts themselves: tests/test_scripts.py's one test)."""
    scripts = dry_run(tmp_path, "-N", "1,2", "--modules", "m/1", "--", "--quick", "--comms", "a b")
    scripts += dry_run(tmp_path, "--array", "-p", "halocompare,threads", "-t", "2", "--launcher", "mpiexec")
    scripts += dry_run(tmp_path, "--launches", "3", "-p", "halocompare,threads", "-t", "2", "--", "--comms", "a b")
    scripts += dry_run(tmp_path, "--launches", "2", "--array", "-p", "halocompare,threads", "-t", "2")
    for i, s in enumerate(scripts):
        f = tmp_path / f"job{i}.sh"
        f.write_text(s)
        p = run(["shellcheck", f], timeout=120)
        assert p.returncode == 0, f"{p.stdout}\n{s}"


# ---------------------------------------------------------------- the real cluster


@pytest.fixture(scope="module")
def cluster(slurm_cluster: SlurmCluster) -> SlurmCluster:
    """The session's cluster (conftest.slurm_cluster); these sweeps use its default partition, 1 CPU per
    node: jobs that share a node queue instead of oversubscribing 2 cores."""
    for lib in ("mpich", "openmpi"):
        if not (bindir(lib) / "halocompare").exists():
            pytest.skip(f"{bindir(lib)}/halocompare not built (make test-builds)")
    return slurm_cluster


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("results")


def sweep(c: SlurmCluster, results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(c.env, MPIMB_SWEEP_POLL="1")
    return run([SWEEP, "--results", results, "--partition", c.partition, "--time", "5", *args], env=env, timeout=400)


def collect(c: SlurmCluster, results: Path, label: str, *args: str) -> dict[str, dict[str, str]]:
    p = run([COLLECT, "--results", results, label, *args], env=c.env, timeout=400)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(results / label / "collect.tsv", newline="") as f:
        return {r["config"]: r for r in csv.DictReader(f, delimiter="\t")}


def manifest(results: Path, label: str) -> list[dict[str, str]]:
    with open(results / label / "sweep.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def check_job_dir(d: Path, config: str, program: str, nodes: int, label: str) -> None:
    """Everything one job leaves: CSV + JSON (complete, with the Slurm record),
    job.json, scontrol show job, the SLURM_* environment, the stdout table."""
    job_id = d.name
    job = json.loads((d / "job.json").read_text())
    assert job["config"] == config and job["status"] == "completed" and job["exit_code"] == 0, job
    assert job["nodes"] == nodes and job["job_id"] == job_id and job["label"] == label
    record = (d / "slurm-job.txt").read_text()
    assert f"NumNodes={nodes} " in record and f"JobName=mpimb-{label}-" in record
    env = dict(line.split("=", 1) for line in (d / "slurm-env.txt").read_text().splitlines() if "=" in line)
    assert env["SLURM_NNODES"] == str(nodes)
    assert env.get("SLURM_ARRAY_JOB_ID", env["SLURM_JOB_ID"]) == job_id.split("_")[0]
    (csv_path,) = (c for c in d.glob(f"{program}-{label}-np*.csv") if not c.name.endswith("-rounds.csv"))
    meta = json.loads(csv_path.with_suffix(".json").read_text())
    assert meta["complete"] is True and meta["label"] == label and meta["nprocs"] == nodes
    assert meta["slurm"]["job_id"] == job_id and meta["slurm"]["job_file"] == "slurm-job.txt"
    assert meta["slurm"]["scontrol_show_job"]["NumNodes"] == str(nodes)
    assert meta["environment"]["SLURM_NNODES"] == str(nodes)
    with open(csv_path, newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == COLUMNS
        rows = list(reader)
    assert rows and all(r[COLUMNS.index("label")] == label for r in rows)
    stdout = (d / f"{program}.txt").read_text()
    assert stdout.strip(), "the stdout table is kept"
    # the environment's MPIMB_REPORT (none unless the tester set one: conftest.py) reached the job as set
    assert ("\nFindings" in stdout) == (os.environ.get("MPIMB_REPORT") != "none")


SWEEPS = {
    # label: (bindir, launcher options)
    "mpich-srun": ("mpich", ["--mpi", "pmi2"]),
    "ompi-mpiexec": ("openmpi", ["--launcher", "mpiexec", "--mpiexec", MPIEXEC_OMPI]),
}


@pytest.mark.parametrize("label", SWEEPS)
def test_sweep_on_real_slurm(cluster: SlurmCluster, results: Path, label: str) -> None:
    lib, launch = SWEEPS[label]
    common = ["--label", label, "--bindir", str(bindir(lib)), "--wait", *launch]
    p = sweep(cluster, results, *common, "-N", "1,2,4", *TINY)
    assert p.returncode == 0, p.stdout + p.stderr + cluster.logs()
    assert "3 of 3 job(s) completed, 0 failed" in p.stdout
    expected = 3
    if (bindir(lib) / "pingpong").exists():  # needs 2 ranks: on 2 nodes only, into the same sweep
        p = sweep(cluster, results, *common, "-p", "pingpong", "-N", "2",
                  "--args", "pingpong=--tests latency,bw -m 8:1K", "--", "--quick")  # fmt: skip
        assert p.returncode == 0, p.stdout + p.stderr
        expected += 1
    jobs = manifest(results, label)
    assert len(jobs) == expected
    sweepdir = results / label
    for j in jobs:
        prog, nodes = j["config"].split("-N")[0], int(j["config"].split("-N")[1].split("-")[0])
        check_job_dir(sweepdir / j["job_id"], j["config"], prog, nodes, label)
        assert (sweepdir / j["script"]).read_text().startswith("#!/bin/bash\n#SBATCH")
        assert (sweepdir / f"slurm-{j['job_id']}.out").exists()
    assert len({j["job_id"] for j in jobs}) == len(jobs)

    # the sweep's report and plots once (they are mpimb-report's, the same for either launcher): the other
    # label is collected with --no-report, which writes neither
    reported = label == "mpich-srun"
    listing = collect(cluster, results, label, *(() if reported else ("--no-report",)))
    assert {c: r["status"] for c, r in listing.items()} == {j["config"]: "complete" for j in jobs}
    for c in listing:
        assert list((sweepdir / "collected" / c).glob("*.csv")), f"{c} not gathered"
    if reported:
        html = (sweepdir / "report.html").read_text()
        assert "<html" in html.lower() and len(html) > 500
        assert list((sweepdir / "plots").glob("*.png")), "no plots"
    else:
        assert not (sweepdir / "report.html").exists() and not (sweepdir / "plots").exists()


def test_resume_skips_complete_configurations(cluster: SlurmCluster, results: Path) -> None:
    label = "ompi-mpiexec"
    lib, launch = SWEEPS[label]
    args = ["--label", label, "--bindir", str(bindir(lib)), "-N", "1,2,4", "--resume", "--wait", *launch, *TINY]
    before = manifest(results, label)
    if not before:
        pytest.skip("needs test_sweep_on_real_slurm's results")
    p = sweep(cluster, results, *args)
    assert p.returncode == 0, p.stderr
    assert "nothing to submit" in p.stdout and p.stdout.count("complete results in") == 3
    assert manifest(results, label) == before
    # a configuration whose result is gone (or incomplete) is run again, alone
    n2 = next(j for j in before if "-N2-" in j["config"])
    shutil.rmtree(results / label / n2["job_id"])
    p = sweep(cluster, results, *args)
    assert p.returncode == 0, p.stdout + p.stderr
    after = manifest(results, label)
    assert [j["config"] for j in after[len(before):]] == [n2["config"]]
    assert "1 of 1 job(s) completed" in p.stdout
    # the report of these results is test_sweep_on_real_slurm's: here only what collect lists
    assert collect(cluster, results, label, "--no-report")[n2["config"]]["status"] == "complete"


def test_launches_in_a_job(cluster: SlurmCluster, results: Path) -> None:
    """--launches 2: each node count's job runs the program twice (one launcher call each) into one
    result set, every launch's JSON complete with the sweep's label and the Slurm record; --resume
    takes such a job as complete; collect gathers the set (a series stopped early: incomplete)."""
    label = "launches"
    args = ["--label", label, "--bindir", str(bindir("openmpi")), "--launcher", "mpiexec", "--mpiexec", MPIEXEC_OMPI,
            "-N", "1,2", "--launches", "2", "--wait"]
    p = sweep(cluster, results, *args, *TINY)
    assert p.returncode == 0, p.stdout + p.stderr + cluster.logs()
    jobs = manifest(results, label)
    assert len(jobs) == 2
    for j in jobs:
        d = results / label / j["job_id"]
        nodes = int(j["config"].split("-N")[1].split("-")[0])
        job = json.loads((d / "job.json").read_text())
        assert job["status"] == "completed" and job["config"] == j["config"], job
        series = json.loads((d / "launches" / "launches.json").read_text())
        assert series["status"] == "complete" and series["orders"] == [["halocompare"], ["halocompare"]]
        assert series["configurations"][0]["command"][:3] == MPIEXEC_OMPI.split()[:3]
        got = sorted(x.name for x in (d / "launches" / "halocompare").iterdir() if not x.name.endswith("-rounds.csv"))
        assert got == [f"launch-{i}.{e}" for i in (1, 2) for e in ("csv", "json", "txt")]
        for i in (1, 2):
            meta = json.loads((d / "launches" / "halocompare" / f"launch-{i}.json").read_text())
            assert meta["complete"] is True and meta["label"] == label and meta["nprocs"] == nodes
            assert meta["slurm"]["job_id"] == j["job_id"] and meta["slurm"]["config"] == j["config"]
        assert (d / "slurm-job.txt").exists() and not list(d.glob("halocompare-*.csv"))
    p = sweep(cluster, results, *args, "--resume", *TINY)
    assert p.returncode == 0 and "nothing to submit" in p.stdout and p.stdout.count("complete results in") == 2, \
        p.stdout + p.stderr

    # collect gathers each job's set whole: every launch's CSV + JSON, listed with the rows of all of them
    listing = collect(cluster, results, label, "--no-report")
    for j in jobs:
        d = results / label / j["job_id"] / "launches" / "halocompare"
        row = listing[j["config"]]
        assert row["status"] == "complete" and row["csv"] == f"{j['job_id']}/launches/halocompare/", row
        assert int(row["rows"]) == sum(len((d / f"launch-{i}.csv").read_text().splitlines()) - 1 for i in (1, 2))
        got = results / label / "collected" / j["config"]
        # (and each launch's per-round samples, where halocompare wrote them)
        runs = sorted(x.name for x in d.iterdir() if not x.name.endswith(".txt"))
        assert [f"launch-{i}.{e}" for i in (1, 2) for e in ("csv", "json")] == [x for x in runs if not x.endswith("-rounds.csv")]
        assert sorted(x.name for x in got.iterdir()) == runs
        assert all((got / x).read_bytes() == (d / x).read_bytes() for x in runs)
    # a series that stopped after its first launch: incomplete, and only the launch it finished is gathered
    d = results / label / jobs[0]["job_id"] / "launches"
    series = d / "launches.json"
    series.write_text(series.read_text().replace('"status": "complete"', '"status": "failed: launch 2 (exit 1)"'))
    for x in (d / "halocompare").glob("launch-2*"):
        x.unlink()
    listing = collect(cluster, results, label, "--no-report")
    assert listing[jobs[0]["config"]]["status"] == "incomplete" and listing[jobs[1]["config"]]["status"] == "complete"
    got = results / label / "collected" / jobs[0]["config"]
    assert sorted(x.name for x in got.iterdir()) == sorted(x.name for x in (d / "halocompare").glob("launch-1*")
                                                           if not x.name.endswith(".txt"))
    assert (got / "launch-1.json").exists() and not list(got.glob("launch-2*"))


def test_failed_and_missing_configurations_are_listed(cluster: SlurmCluster, results: Path) -> None:
    label = "broken"
    common = ["--label", label, "--bindir", str(bindir("openmpi")), "--launcher", "mpiexec", "--mpiexec", MPIEXEC_OMPI]
    # a program that exits 2 (bad option) makes the job fail; --wait says which
    p = sweep(cluster, results, *common, "-N", "2", "--wait", "--", "--quick", "--count", "-5")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED halocompare-N2-ppn1" in p.stderr and "0 of 1 job(s) completed, 1 failed" in p.stdout
    # a job that never runs (held, then cancelled) is missing
    p = sweep(cluster, results, *common, "-N", "1", "--sbatch-arg=--hold", *TINY)
    assert p.returncode == 0, p.stderr
    held = manifest(results, label)[-1]["job_id"]
    cluster.run("scancel", held)
    deadline = time.monotonic() + 30
    while held in cluster.run("squeue", "-h", "-o", "%i", check=False).stdout.split():
        assert time.monotonic() < deadline, f"job {held} still queued after scancel"
        time.sleep(0.5)
    listing = collect(cluster, results, label, "--no-report")
    assert listing["halocompare-N2-ppn1"]["status"] == "failed"
    assert listing["halocompare-N1-ppn1"]["status"] == "missing"
    strict = run([COLLECT, "--results", results, label, "--strict", "--no-report"], env=cluster.env, timeout=120)
    assert strict.returncode == 1


def test_job_array(cluster: SlurmCluster, results: Path) -> None:
    label = "array"
    p = sweep(cluster, results, "--label", label, "--bindir", str(bindir("openmpi")), "--launcher", "mpiexec",
              "--mpiexec", MPIEXEC_OMPI, "--array", "-N", "1,2", "--wait", *TINY)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("submitted array job") == 2
    for j in manifest(results, label):
        assert j["job_id"].endswith("_0")
        nodes = int(j["config"].split("-N")[1].split("-")[0])
        check_job_dir(results / label / j["job_id"], j["config"], "halocompare", nodes, label)
    assert {r["status"] for r in collect(cluster, results, label, "--no-report").values()} == {"complete"}


def test_daemons_are_gone_after_stop(tmp_path: Path) -> None:
    """A cluster of its own (the session's is stopped, and checked the same way, at the end), stopped
    while a job runs: the daemons and the job's processes are gone."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"Slurm is not installed here (no {', '.join(missing)})")
    cluster = SlurmCluster(tmp_path / "slurm", nodes=1, cpus=1)
    try:
        cluster.start()
        job = cluster.run("sbatch", "--parsable", "-o", str(tmp_path / "job.out"), "--wrap", "sleep 300").stdout.strip()
        deadline = time.monotonic() + 30
        while cluster.run("squeue", "-h", "-j", job, "-o", "%T", check=False).stdout.strip() != "RUNNING":
            assert time.monotonic() < deadline, f"job {job} not running after 30 s"
            time.sleep(0.2)
        assert cluster.alive(), "the cluster should be running before stop"
    finally:
        cluster.stop()
    assert cluster.alive() == []


def test_layouts_stay_apart_and_failed_checks_are_results(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """4 nodes × 1 rank and 1 node × 4 ranks in one sweep stay two configurations in compare; the 1 × 4
    job runs with MPIMB_FAULT, exits 1, and collect gathers it as failed-check: its row is FAILED in the
    report and in compare, and the sweep's report is still written (exit 0).  The session cluster's
    partition "wide", 4 CPUs per node, so a node can hold 4 ranks."""
    if not (bindir("openmpi") / "halocompare").exists():
        pytest.skip("build/openmpi/bin/halocompare not built")
    results, c = tmp_path / "results", slurm_cluster
    args = ["--results", results, "--partition", "wide", "--time", "5", "--label", "layouts", "--bindir",
            bindir("openmpi"), "--launcher", "mpiexec", "--mpiexec", MPIEXEC_OMPI, "--wait"]
    env = dict(c.env, MPIMB_SWEEP_POLL="1")
    p = run([SWEEP, *args, "-N", "4", "--ppn", "1", *TINY, "--verify"], env=env, timeout=400)
    assert p.returncode == 0, p.stdout + p.stderr + c.logs()
    p = run([SWEEP, *args, "-N", "1", "--ppn", "4", *TINY, "--verify"],
            env=dict(env, MPIMB_FAULT="halo/sendrecv@0"), timeout=400)
    assert p.returncode == 1 and "FAILED halocompare-N1-ppn4" in p.stderr, p.stdout + p.stderr
    col = run([COLLECT, "--results", results, "layouts"], env=c.env, timeout=400)
    assert col.returncode == 0, col.stdout + col.stderr
    with open(results / "layouts" / "collect.tsv", newline="") as f:
        states = {r["config"]: r["status"] for r in csv.DictReader(f, delimiter="\t")}
    assert states == {"halocompare-N4-ppn1": "complete", "halocompare-N1-ppn4": "failed-check"}
    assert "FAILED verification in 1 configuration(s): halocompare-N1-ppn4" in col.stdout
    sys.path.insert(0, str(ROOT / "tests" / "analysis"))
    from helpers import rendered

    page = rendered(results / "layouts" / "report.html", tmp_path)  # as headless Chromium shows it
    assert "FAILED VERIFICATION: 1 result(s)" in page and '<td class="failed"' in page
    ratios = tmp_path / "r.csv"
    out = report("compare", results / "layouts" / "collected", ROOT / "reference" / "gropp-lusk", "-o",
                 tmp_path / "c.html", "--csv", ratios, "--method", "sendrecv")
    with open(ratios, newline="") as f:
        halo = [r for r in csv.DictReader(f) if r["test"] == "halo" and r["method"] == "sendrecv"]
    assert sorted((r["nnodes"], r["ppn"]) for r in halo if r["t@layouts"]) == [("1.0", "4.0"), ("4.0", "1.0")]
    table = out[out.index("Cross-system: halo sendrecv"):].splitlines()
    mine = [ln for ln in table if ln.startswith("layouts")]
    assert len(mine) == 2 and any("(4×1)" in ln for ln in mine) and any("(1×4)" in ln and "FAILED" in ln for ln in mine)
