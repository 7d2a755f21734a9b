"""A real, single-host Slurm cluster for tests: one slurmctld and N slurmd
emulating nodes n1..nN on 127.0.0.1, everything (config, state, spool, logs)
in one temporary directory.  Started and stopped by PID; see docs/architecture.md,
"Facts", for why each setting is there.

    with SlurmCluster(tmp_path, nodes=4) as c:
        subprocess.run(["sbatch", ...], env=c.env)

More than one partition, each with nodes of its own size (one cluster for
every test that needs one, tests/conftest.py's slurm_cluster):

    SlurmCluster(tmp_path, partitions={"test": (4, 1), "wide": (4, 4)})
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Self

DAEMONS = ("slurmctld", "slurmd", "sbatch", "salloc", "srun", "scontrol", "squeue", "scancel", "sinfo")


def missing_tools() -> list[str]:
    """Slurm commands this machine lacks (empty when a test cluster can start)."""
    return [d for d in DAEMONS if not shutil.which(d)]


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class SlurmCluster:
    def __init__(self, root: Path, nodes: int = 4, cpus: int = 2, partition: str = "test",
                 partitions: dict[str, tuple[int, int]] | None = None) -> None:
        """nodes of cpus CPUs each in one partition; or partitions: name -> (nodes, CPUs per node), the
        first one the default (self.partition), node names numbered across all (n1, n2, ...)."""
        self.root = Path(root)
        parts = partitions or {partition: (nodes, cpus)}
        self.partition = next(iter(parts))
        self.part_nodes: dict[str, list[str]] = {}
        self.node_cpus: dict[str, int] = {}
        for name, (count, ncpu) in parts.items():
            first = len(self.node_cpus)
            self.part_nodes[name] = [f"n{first + i + 1}" for i in range(count)]
            self.node_cpus.update({n: ncpu for n in self.part_nodes[name]})
        self.nodes = list(self.node_cpus)
        self.cpus = parts[self.partition][1]
        self.conf = self.root / "slurm.conf"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        for k in list(self.env):  # a job's variables must not leak into ours
            if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and k != "SLURM_CONF":
                del self.env[k]
        self.env["SLURM_CONF"] = str(self.conf)

    # ------------------------------------------------------------ set-up
    def _write_conf(self) -> None:
        r = self.root
        for d in ("state", "spool", "tmpfs", "log"):
            (r / d).mkdir(parents=True, exist_ok=True)
        for n in self.nodes:
            (r / "spool" / n).mkdir(exist_ok=True)
            (r / "tmpfs" / n).mkdir(exist_ok=True)
        ports = _free_ports(1 + len(self.nodes))
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=mpimbtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            "AuthType=auth/none",
            "CredType=cred/none",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool/%n",
            f"TmpFS={r}/tmpfs/%n",
            f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd-%n.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd-%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "SlurmdParameters=config_overrides",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            # batch jobs scheduled at submission, not up to 3 s later (the default delay, made for
            # high-throughput sites): a sweep's tiny jobs otherwise wait longer than they run
            "SchedulerParameters=batch_sched_delay=0",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "MailProg=/bin/true",
            "KillWait=5",
            "MinJobAge=600",
            "InactiveLimit=0",
        ]
        for n, port in zip(self.nodes, ports[1:], strict=True):
            lines.append(
                f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={self.node_cpus[n]}"
                " State=UNKNOWN"
            )
        for name, nodes in self.part_nodes.items():
            default = "YES" if name == self.partition else "NO"
            lines.append(f"PartitionName={name} Nodes={','.join(nodes)} Default={default} MaxTime=60 State=UP")
        self.conf.write_text("\n".join(lines) + "\n")

    def _spawn(self, *cmd: str) -> None:
        with open(self.root / "log" / f"{Path(cmd[0]).name}-{len(self.procs)}.stderr", "wb") as log:
            self.procs.append(
                subprocess.Popen(list(cmd), env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
            )

    def start(self, timeout: float = 60) -> None:
        self._write_conf()
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        for n in self.nodes:
            self._spawn("slurmd", "-D", "-N", n, "-f", str(self.conf))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args!r} exited with {p.returncode}; see {self.root}/log\n" + self.logs())
            out = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout
            states = dict(line.split()[:2] for line in out.splitlines() if len(line.split()) >= 2)
            if len(states) == len(self.nodes) and all(s == "idle" for s in states.values()):
                return
            time.sleep(0.5)
        raise RuntimeError(f"Slurm nodes not idle after {timeout} s\n" + self.logs())

    def run(self, *cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, check=check, timeout=timeout)

    def logs(self) -> str:
        parts = []
        for f in sorted((self.root / "log").glob("*")):
            text = f.read_text(errors="replace").splitlines()
            parts.append(f"--- {f.name}\n" + "\n".join(text[-15:]))
        return "\n".join(parts)

    # ------------------------------------------------------------ tear-down
    def _cluster_pids(self) -> list[int]:
        """Processes our daemons left behind (slurmstepd, job steps): found by
        the SLURM_CONF of this cluster in their environment, never by name."""
        key = f"SLURM_CONF={self.conf}".encode()
        pids = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == os.getpid():
                continue
            try:
                if key in (d / "environ").read_bytes().split(b"\0"):
                    pids.append(int(d.name))
            except OSError:
                continue
        return pids

    def stop(self) -> None:
        """scancel, TERM our daemons, wait, KILL survivors (and what they left)."""
        if self.conf.exists() and self.procs and self.procs[0].poll() is None:
            try:
                for part in self.part_nodes:
                    self.run("scancel", "--partition", part, check=False, timeout=20)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    if not self.run("squeue", "-h", "-o", "%i", check=False, timeout=20).stdout.strip():
                        break
                    time.sleep(0.5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        for pid in self._cluster_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def alive(self) -> list[int]:
        """PIDs of anything this cluster started that still runs."""
        return [p.pid for p in self.procs if p.poll() is None] + self._cluster_pids()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
