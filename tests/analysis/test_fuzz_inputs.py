"""Malformed input to the commands that read files a user hands over (issue 44): `timeline` (a trace),
`validate` (results) and `tune --check` (scripts/coll-tune-check's launches), each fed JSON and CSV that are
truncated, nested where a value belongs, of the wrong type, huge numbers, not UTF-8, empty or binary.  Every
case ends with exit 0 (the damage left a valid file) or with one line on stderr and exit 1 or 2 — never a
traceback (cli() runs mpimb-report in this process: any exception fails the test).  A fixed seed and a
bounded number of cases: the same cases on every run."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT, Result, cli

SEED = 44
CASES = 24  # per command
CHECK = ROOT / "bench" / "coll-tune" / "openmpi-check"
RESULTS = FIXTURES / "equal" / "halocompare-equal-np4.csv"

# values put where another belongs: nested, of another type, huge, empty
ODD: list[Any] = [{"a": [1, {"b": None}]}, [[[]]], "text", "", -1, 0, 10 ** 400, 1e308, -1e308, 2 ** 63, True,
                  None, float("nan"), float("inf"), "9" * 400, "\u202e\u0000"]
ODD_CELLS = ["", "-1", "1e400", "-1e400", "nan", "inf", "9" * 400, "{\"a\": 1}", "[1, 2]", "\"", "a,b", "\u00e9",
             "0x10", "1_000", " 1", "true", "\u0000"]


def trace() -> dict[str, Any]:
    """A small valid trace: two ranks, sends and receives, their messages, one stretch."""
    ev: list[dict[str, Any]] = []
    for i in range(6):
        ev.append({"ph": "X", "name": "MPI_Send", "cat": "p2p", "pid": 0, "tid": 0, "ts": 10.0 * i, "dur": 2.0})
        ev.append({"ph": "X", "name": "MPI_Recv", "cat": "p2p", "pid": 1, "tid": 0, "ts": 10.0 * i + 1, "dur": 2.0})
        ev.append({"ph": "s", "name": "message", "cat": "message", "id": i, "pid": 0, "tid": 0, "ts": 10.0 * i + 0.5})
        ev.append({"ph": "f", "bp": "e", "name": "message", "cat": "message", "id": i, "pid": 1, "tid": 0,
                   "ts": 10.0 * i + 2.5})
    ev.append({"ph": "e", "name": "send request", "cat": "request", "id": 99, "pid": 0, "tid": 0, "ts": 7.0})
    return {"traceEvents": ev, "otherData": {
        "format": "mpimb-trace", "ranks": 2, "dropped_events": 0, "simulated": False,
        "clock": {"aligned_to": "rank 0", "residual_error_s": 1e-7},
        "stretches": [{"begin_us": 0.0, "test": {"program": "halocompare", "key": "halo/irecv-send/world/4-nbr",
                                                 "method": "irecv-send", "bytes": 8, "iters": 1}}]}}


def paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (keys and indices from the top)."""
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:8]):  # (a few of a long list's items: enough places)
            out += paths(v, (*at, i))
    return out


def replaced(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    doc = doc.copy()
    doc[at[0]] = replaced(doc[at[0]], at[1:], value)
    return doc


def damage_bytes(rng: random.Random, data: bytes) -> bytes:
    """Damage any file may suffer: cut, bytes that are not UTF-8, NULs, empty, binary, a line doubled."""
    kind = rng.choice(["truncated", "not utf-8", "nul", "empty", "binary", "line doubled", "crlf"])
    at = rng.randrange(1, max(2, len(data)))
    if kind == "truncated":
        return data[:at]
    if kind == "not utf-8":
        return data[:at] + b"\xff\xfe\xc3" + data[at:]
    if kind == "nul":
        return data[:at] + b"\x00" * 3 + data[at:]
    if kind == "empty":
        return b""
    if kind == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600)))
    if kind == "line doubled":
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        return b"\n".join(lines[:i] + [lines[i] * 2] + lines[i + 1:])
    return data.replace(b"\n", b"\r\n")


def damage_json(rng: random.Random, text: str) -> bytes:
    """A JSON document with one value replaced by an odd one, nested very deep, or damaged as bytes."""
    doc = json.loads(text)
    r = rng.random()
    if r < 0.6:
        at = rng.choice(paths(doc))
        return json.dumps(replaced(doc, at, rng.choice(ODD))).encode()
    if r < 0.65:
        return b"[" * 50_000 + b"]" * 50_000
    return damage_bytes(rng, text.encode())


def damage_csv(rng: random.Random, text: str) -> bytes:
    """A result CSV with a cell replaced by an odd one, a column gone or added, or damaged as bytes."""
    lines = text.splitlines()
    r = rng.random()
    if r < 0.6:
        i = rng.randrange(len(lines))
        cells = lines[i].split(",")
        cells[rng.randrange(len(cells))] = rng.choice(ODD_CELLS)
        lines[i] = ",".join(cells)
    elif r < 0.7:
        c = rng.randrange(len(lines[0].split(",")))
        lines = [",".join(x for j, x in enumerate(ln.split(",")) if j != c) for ln in lines]
    elif r < 0.75:
        lines = [ln + (",extra" if i == 0 else ",1e999") for i, ln in enumerate(lines)]
    else:
        return damage_bytes(rng, text.encode())
    return ("\n".join(lines) + "\n").encode()


def check(r: Result, what: str) -> None:
    assert "Traceback" not in r.err, what
    if r.rc == 0:
        return
    errs = [ln for ln in r.err.splitlines() if not ln.startswith("mpimb-report: warning:")]
    assert r.rc in (1, 2) and len(errs) == 1, f"{what}: exit {r.rc}, stderr {r.err[:2000]!r}"


def run_cases(tmp_path: Path, make: Callable[[random.Random, Path], tuple[list[str], str]],
              capsys: pytest.CaptureFixture[str]) -> int:
    """CASES cases of make(rng, directory) -> (mpimb-report's arguments, what was damaged); the failures."""
    rng = random.Random(SEED)
    failed = 0
    for i in range(CASES):
        d = tmp_path / f"case{i}"
        d.mkdir()
        args, what = make(rng, d)
        r = cli(*args, capsys=capsys)
        check(r, f"case {i} ({what})")
        failed += r.rc != 0
    return failed


def test_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps(trace())

    def make(rng: random.Random, d: Path) -> tuple[list[str], str]:
        p = d / "t.json"
        p.write_bytes(damage_json(rng, text))
        return ["timeline", str(p), "-o", str(d / "fig")], "trace"

    assert run_cases(tmp_path, make, capsys) >= CASES // 2  # (most damage leaves no trace to draw)


def test_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv, meta = RESULTS.read_text(), RESULTS.with_suffix(".json").read_text()

    def make(rng: random.Random, d: Path) -> tuple[list[str], str]:
        c, j = d / RESULTS.name, d / RESULTS.with_suffix(".json").name
        which = rng.choice(["csv", "json"])
        c.write_bytes(damage_csv(rng, csv) if which == "csv" else csv.encode())
        j.write_bytes(damage_json(rng, meta) if which == "json" else meta.encode())
        return ["validate", str(d)], which

    assert run_cases(tmp_path, make, capsys) >= CASES // 2


def test_tune_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One launch pair of scripts/coll-tune-check (bench/coll-tune), one of its four files damaged."""
    names = ["default-1.csv", "default-1.json", "tuned-1.csv", "tuned-1.json"]
    texts = {n: (CHECK / n).read_text() for n in names}

    def make(rng: random.Random, d: Path) -> tuple[list[str], str]:
        hit = rng.choice(names)
        for n in names:
            (d / n).write_bytes(texts[n].encode() if n != hit else
                                damage_csv(rng, texts[n]) if n.endswith(".csv") else damage_json(rng, texts[n]))
        shutil.copy(CHECK / "coll-tune-check.json", d / "coll-tune-check.json")
        return ["tune", "--check", str(d)], hit

    assert run_cases(tmp_path, make, capsys) >= CASES // 2


def test_rounds_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A grouped run's rounds file damaged (test_rounds_and_copies builds the run): validate says so in one
    line on stderr, and the findings are made all the same (unpaired, with a warning)."""
    from test_rounds_and_copies import grouped_run

    base = grouped_run(tmp_path / "base")
    files = {f.name: f.read_bytes() for f in base.parent.iterdir()}

    def make(rng: random.Random, d: Path) -> tuple[list[str], str]:
        for name, data in files.items():
            (d / name).write_bytes(damage_csv(rng, data.decode()) if name.endswith("-rounds.csv") else data)
        return ["validate", str(d / base.name)], "rounds"

    assert run_cases(tmp_path, make, capsys) >= CASES // 2
    for d in sorted(tmp_path.glob("case*"))[:6]:  # (a few: each findings run costs a tenth of a second or more)
        r = cli("findings", str(d / base.name), capsys=capsys)
        assert r.rc == 0 and "Traceback" not in r.err, r.err
