"""mpimb-report: tables, plots, comparison reports, models and validation of mpimb results."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__, schema
from .guidelines import NAMES as GUIDELINE_NAMES
from .guidelines import unknown as unknown_guideline
from .keys import failed_banner, prepared
from .load import InputError, frame, load, rel
from .render import NOT_REGULAR, md_text, regular_or_none, write_file

PROG = "mpimb-report"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """One line on stderr, exit 2 (no usage dump)."""
        sys.stderr.write(f"{PROG}: {message} (see '{PROG} --help')\n")
        sys.exit(2)


def _unwritable(opt: str, path: str, directory: bool = False) -> str | None:
    """Why an output path given with opt cannot be written (one line), or None: checked before any
    file is read, so a usage error costs nothing and writes nothing."""
    if not path.strip():
        return f"{opt}: an empty path"
    p = Path(path)
    if directory:
        if p.exists() and not p.is_dir():
            return f"{opt} {path}: not a directory"
    elif p.is_dir() or path.endswith(("/", os.sep)):
        return f"{opt} {path}: is a directory (give a file name)"
    elif not regular_or_none(p):
        return f"{opt} {path}: {NOT_REGULAR}"
    base = p if directory else p.parent
    while not base.exists():  # the directories the writer creates
        base = base.parent
    if not base.is_dir():
        return f"{opt} {path}: {base} is not a directory"
    if not os.access(base, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        return f"{opt} {path}: cannot be written (permission denied)"
    return None


def _outputs(a: argparse.Namespace) -> list[tuple[str, str, bool]]:
    """(option, path, is a directory) of every file or directory the command writes."""
    out = getattr(a, "output", None)
    if out is None:
        return []
    if a.cmd in ("plot", "timeline"):
        return [("-o", out, True)]
    got = [("-o", out, False)]
    if a.cmd == "compare" and Path(out).name:
        got.append(("the Markdown twin of -o (its .md)", str(Path(out).with_suffix(".md")), False))
        if a.csv is not None:
            got.append(("--csv", a.csv, False))
    return got


def _usage_problem(a: argparse.Namespace) -> str | None:
    """The first usage error the parser cannot see: a value out of its vocabulary, an output that
    cannot be written or that would overwrite an input or another output."""
    if a.cmd == "guidelines" and (bad := unknown_guideline(a.only)) is not None:
        return f"--only {bad or '(an empty name)'}: not a guideline (one of {', '.join(GUIDELINE_NAMES)})"
    if a.cmd == "compare":
        if len(a.sets) < 2:
            return "compare needs at least two result sets (A B [C...])"
        if a.max_rows < 1 or a.max_plots < 0:
            return "--max-rows must be >= 1 and --max-plots >= 0"
        known = list(schema.method_families("halocompare"))
        if a.method not in known:
            return f"--method {a.method}: not a halocompare method (one of {', '.join(known)})"
    outs = _outputs(a)
    for opt, path, directory in outs:
        why = _unwritable(opt, path, directory)
        if why:
            return why
    inputs = [Path(x) for x in getattr(a, "paths", None) or getattr(a, "sets", None) or []]
    seen: dict[Path, str] = {x.resolve(): f"the input {x}" for x in inputs if x.is_file()}
    seen.update({x.with_suffix(".json").resolve(): f"the input {x.with_suffix('.json')}" for x in inputs
                 if x.is_file() and x.suffix == ".csv"})
    for opt, path, _ in outs:
        real = Path(path).resolve()
        if real in seen:
            return f"{seen[real]} and {opt} name the same file {path}: one would overwrite the other"
        seen[real] = opt
    return None


def _warn(lines: list[str]) -> None:
    for w in lines:
        sys.stderr.write(f"{PROG}: warning: {w}\n")


def cmd_validate(a: argparse.Namespace) -> int:
    runs, probs, warns = load(a.paths, strict=False)
    _warn(warns)
    for p in probs:
        print(p)
    if probs:
        sys.stderr.write(f"{PROG}: {len(probs)} problem(s) found\n")
        return 1
    if not runs:
        sys.stderr.write(f"{PROG}: {', '.join(a.paths)}: no usable results\n")
        return 1
    nrows = sum(r.nrows for r in runs)  # (r.rows would cut each run's own frame)
    print(f"ok: {len(runs)} run(s), {nrows} row(s)")
    banner = failed_banner(frame(runs), limit=20)
    if banner:  # a failed check is a valid result: reported, not a format problem
        print(banner)
    return 0


# Text for people stops after this many blocks (a sweep of hundreds of machines printed tens of
# thousands of lines and took minutes); csv and latex, for programs, always hold every block.
TABLE_BLOCKS = 100


def cmd_table(a: argparse.Namespace) -> int:
    from .findings import findings
    from .judge import text
    from .tables import blocks, build

    runs, _, warns = load(a.paths)
    df, dup = prepared(runs)
    _warn(warns + dup)
    limit = TABLE_BLOCKS if a.format in ("text", "markdown", "html") else None
    tables = build(df, a.stat, limit)
    sep = "\n"
    body = sep.join(t.render(a.format) for t in tables)
    if limit is not None and (n := blocks(df)) > limit:
        more = (f"{n - limit} more of the {n} runs (machine, program, processes) are not shown, nor the "
                f"findings past the first {limit} machines: give fewer files, or --format csv for all the tables")
        print(f"mpimb-report table: {more}", file=sys.stderr)
        body += sep + (f"<p><strong>{more}</strong></p>" if a.format == "html" else f"{more}\n")
    banner = failed_banner(df)
    # a limit cuts the tables at runs, the findings at machines (fewer); csv and latex carry no findings
    found = findings(df, limit, runs) if a.format in ("text", "markdown", "html") else []
    if a.format == "html":
        from .page import banners, findings_html, html_page

        text_out = html_page("mpimb tables", "<main>" + banners(runs, [], df) + findings_html(found) + body +
                             "</main>")
    elif a.format in ("text", "markdown"):
        head = (f"**{md_text(banner)}**\n\n" if a.format == "markdown" else f"{banner}\n\n") if banner else ""
        ftext = text(found)
        if a.format == "markdown" and ftext:
            ftext = md_text(ftext.replace("\n- ", "\n\n- ").replace("\n  ", " "))
        text_out = head + (ftext + sep if ftext else "") + body
    else:  # latex and csv stay machine-readable: the FAILED cells say it
        text_out = body
    sys.stdout.write(text_out)
    return 0


def cmd_findings(a: argparse.Namespace) -> int:
    """The findings block alone, plain text (docs/report.md, "findings"): what table and report compute."""
    from .findings import findings, none_why
    from .judge import plain

    try:
        runs, _, warns = load(a.paths)
    except InputError as e:  # one line, also for many problems
        probs = e.problems
        more = f" (and {len(probs) - 1} more problem(s): mpimb-report validate)" if len(probs) > 1 else ""
        sys.stderr.write(f"{PROG}: {probs[0]}{more}\n")
        return 1
    df, dup = prepared(runs)
    _warn(warns + dup)
    sys.stdout.write(plain(findings(df, runs=runs), none_why(df)))
    return 0


def cmd_guidelines(a: argparse.Namespace) -> int:
    """The self-consistent performance guidelines checked on the sets (mpimb.guidelines; docs/report.md)."""
    from .findings import usable
    from .guidelines import check, render

    only = [x.strip() for x in a.only.split(",")] if a.only is not None else None
    runs, _, warns = load(a.sets)
    df, dup = prepared(runs)
    _warn(warns + dup)
    sys.stdout.write(render(check(usable(df) if len(df) else df, runs, only), a.verbose))
    return 0


def cmd_plot(a: argparse.Namespace) -> int:
    from .plots import all_plots

    runs, _, warns = load(a.paths)
    df, dup = prepared(runs)
    _warn(warns + dup)
    out = Path(a.output)
    out.mkdir(parents=True, exist_ok=True)
    figs = all_plots(df, a.stat)
    for f in figs:
        for ext in ("png", "svg"):
            p = out / f"{f.name}.{ext}"
            write_file(p, f.png if ext == "png" else f.svg)
    print(f"{len(figs)} plot(s) (PNG + SVG) in {out}")
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    from .report import write_report

    runs, _, warns = load(a.paths)
    df, dup = prepared(runs)
    _warn(warns + dup)
    write_report(runs, df, Path(a.output), a.stat, warns + dup)
    print(f"report: {a.output}")
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    from .compare import load_sets, plotter, warm, write_compare
    from .crosssystem import Choice

    with plotter() as pool:  # before loading: the figures' process starts small
        loaded = load_sets(a.sets)
        warm(pool)
        sets = [(p, runs) for p, (runs, _) in zip(a.sets, loaded)]
        allwarn = [w for _, warns in loaded for w in warns]
        _warn(allwarn)
        out = Path(a.output)
        csv_path = Path(a.csv) if a.csv else None
        choice = Choice(a.method, a.neighbors, 1 if a.periodic == "yes" else 0)
        md, text, dup = write_compare(sets, out, a.stat, allwarn, max_rows=a.max_rows, max_plots=a.max_plots,
                                      csv_path=csv_path, choice=choice, pool=pool)
    _warn(dup)
    sys.stdout.write(text + ("\n" if text else ""))
    print(f"report: {out} (+ {md}{', ' + str(csv_path) if csv_path else ''})")
    return 0


def cmd_model(a: argparse.Namespace) -> int:
    from .model import run_model

    if (a.alpha is None) != (a.bandwidth is None):
        sys.stderr.write(f"{PROG}: --alpha and --bandwidth go together\n")
        return 2
    for name in ("alpha", "bandwidth"):
        v = getattr(a, name)
        if v is not None and not (v > 0 and v < float("inf")):
            sys.stderr.write(f"{PROG}: --{name} must be a positive number, got '{v}'\n")
            return 2
    if not a.paths and not a.trace:
        sys.stderr.write(f"{PROG}: model needs result files (PATH ...) or --trace TRACE\n")
        return 2
    from .timeline import read as read_trace

    traces = [read_trace(Path(t)) for t in a.trace or []]
    runs, _, warns = load(a.paths) if a.paths else ([], [], [])
    df, dup = prepared(runs)
    _warn(warns + dup)
    sys.stdout.write(run_model(df, a.stat, a.format, a.alpha, a.bandwidth, traces))
    return 0


def cmd_profile(a: argparse.Namespace) -> int:
    from .profile import render, write_html

    runs, _, warns = load(a.paths)
    _warn(warns)
    text, more = render(runs, a.format)
    _warn(more)
    sys.stdout.write(text)
    if a.output:
        write_html(runs, Path(a.output), warns + more)
        print(f"report: {a.output}")
    return 0


def cmd_timeline(a: argparse.Namespace) -> int:
    from .timeline import check_ranks, notes, parse_ranks, parse_span, read, write

    try:
        ranks, span = parse_ranks(a.ranks), parse_span(a.time)
    except ValueError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    path = Path(a.trace)
    if not path.is_file():
        raise InputError(f"{path}: no such trace file")
    t = read(path)
    try:  # a window of ranks the trace does not have: a usage error, known once the trace is read
        check_ranks(t, ranks)
    except ValueError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    _warn(notes(t, ranks))
    for p in write(t, Path(a.output) if a.output else path.parent, ranks, span):
        print(p)
    return 0


def cmd_tune(a: argparse.Namespace) -> int:
    """The library's tuning file from `collectives --algorithms` results (mpimb.tune): one line and
    exit 1 for input that cannot give one, and then no file."""
    from .tune import TuneError, check, tune

    if (a.output is None) == (not a.check):
        sys.stderr.write(f"{PROG}: tune needs -o FILE (write the tuning file) or --check (default against tuned), "
                         "one of them\n")
        return 2
    try:
        runs, _, warns = load(a.paths)
        if a.check:
            _warn(warns)
            sys.stdout.write(check(runs))
            return 0
        df, dup = prepared(runs)
        _warn(warns + dup)
        text, files = tune(runs, df, Path(a.output))
    except InputError as e:
        probs = e.problems
        more = f" (and {len(probs) - 1} more problem(s): mpimb-report validate)" if len(probs) > 1 else ""
        sys.stderr.write(f"{PROG}: {probs[0]}{more}\n")
        return 1
    except TuneError as e:
        sys.stderr.write(f"{PROG}: tune: {e}\n")
        return 1
    sys.stdout.write(text)
    print("wrote " + ", ".join(str(f) for f in files))
    return 0


def cmd_recommend(a: argparse.Namespace) -> int:
    """The halo recommendation (mpimb.recommend): its table on stdout and, with -o, its JSON; exit 1 where the
    results hold no halocompare halo row to recommend from."""
    from .recommend import ranges, table, write

    runs, _, warns = load(a.paths)
    df, dup = prepared(runs)
    _warn(warns + dup)
    rs = ranges(df)
    if not rs:
        sys.stderr.write(f"{PROG}: {', '.join(a.paths)}: no measured halocompare halo results: nothing to "
                         "recommend from\n")
        return 1
    t = table(rs)
    sys.stdout.write(t.text() if t else "")
    if a.output:
        write(rs, [rel(r.csv_path) for r in runs if r.program == "halocompare"], Path(a.output))
        print(f"recommendation: {a.output}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Tables, plots and comparison reports from mpimb results "
                "(CSV + JSON files or directories of them).")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    stat = {"choices": ["median", "min"], "default": "median",
            "help": "statistic shown: median (default) or min (mpptest/halocompare style)"}

    v = sub.add_parser("validate", help="schema and consistency check; file:line per problem, exit 1 if any")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.set_defaults(fn=cmd_validate)

    t = sub.add_parser("table", help="the natural tables of each program")
    t.add_argument("paths", nargs="+", metavar="PATH")
    t.add_argument("--format", choices=["text", "markdown", "latex", "html", "csv"], default="text")
    t.add_argument("--stat", **stat)  # type: ignore[arg-type]
    t.set_defaults(fn=cmd_table)

    f = sub.add_parser("findings", help="the findings alone, as plain text: the header line, then one line per "
                       "finding ('  * machine: sentence'); fast, no plots (the C programs call it)")
    f.add_argument("paths", nargs="+", metavar="PATH")
    f.set_defaults(fn=cmd_findings)

    gl = sub.add_parser("guidelines", help="the self-consistent MPI performance guidelines (Träff, Gropp, Thakur) "
                        "checked on the sets' results: counts per guideline, each violation, what could not be checked")
    gl.add_argument("sets", nargs="+", metavar="SET", help="result files or directories")
    gl.add_argument("--only", metavar="NAME,...", help="these guidelines only: " + ", ".join(GUIDELINE_NAMES))
    gl.add_argument("-v", "--verbose", action="store_true", help="every check, not only the violations")
    gl.set_defaults(fn=cmd_guidelines)

    pl = sub.add_parser("plot", help="PNG and SVG plots into a directory")
    pl.add_argument("paths", nargs="+", metavar="PATH")
    pl.add_argument("-o", "--output", required=True, metavar="DIR")
    pl.add_argument("--stat", **stat)  # type: ignore[arg-type]
    pl.set_defaults(fn=cmd_plot)

    r = sub.add_parser("report", help="self-contained HTML report of one result set")
    r.add_argument("paths", nargs="+", metavar="PATH")
    r.add_argument("-o", "--output", required=True, metavar="FILE.html")
    r.add_argument("--stat", **stat)  # type: ignore[arg-type]
    r.set_defaults(fn=cmd_report)

    rc = sub.add_parser("recommend", help="the halo exchange to use on this machine, per stencil and size range "
                        "(methods, packing, communicator; ties within the noise; the margin to the next best), from "
                        "halocompare results: a table, and JSON with -o (docs/report.md, \"Recommendation\")")
    rc.add_argument("paths", nargs="+", metavar="SET")
    rc.add_argument("-o", "--output", metavar="FILE.json", help="also write the recommendation as JSON "
                    "(schema/recommendation.schema.json)")
    rc.set_defaults(fn=cmd_recommend)

    c = sub.add_parser("compare", help="compare result sets (B/A ratios) in HTML + Markdown")
    c.add_argument("sets", nargs="+", metavar="SET", help="a file or directory per result set; the first is A")
    c.add_argument("-o", "--output", required=True, metavar="FILE.html")
    c.add_argument("--stat", **stat)  # type: ignore[arg-type]
    c.add_argument("--max-rows", type=int, default=40, metavar="N",
                   help="ratio rows shown per test in the HTML/Markdown (--csv has them all); default 40")
    c.add_argument("--max-plots", type=int, default=12, metavar="N", help="overlaid plots at most; default 12")
    c.add_argument("--csv", metavar="FILE", help="also write every ratio (with its CI) to this CSV file")
    c.add_argument("--method", default="irecv-isend", metavar="M",
                   help="halo method of the machines × orderings table (irecv-isend; one of halocompare's "
                   "methods: " + ", ".join(schema.method_families("halocompare")) + ")")
    c.add_argument("--neighbors", type=int, choices=[4, 8], default=4, help="its stencil: 4 or 8 neighbours (4)")
    c.add_argument("--periodic", choices=["no", "yes"], default="no", help="its mesh: periodic or not (no)")
    c.set_defaults(fn=cmd_compare)

    m = sub.add_parser("model", help="fit Hockney alpha/beta from pingpong; measured/predicted halo and collectives")
    m.add_argument("paths", nargs="*", metavar="PATH")
    m.add_argument("--format", choices=["text", "markdown", "latex", "html", "csv"], default="text")
    m.add_argument("--stat", **stat)  # type: ignore[arg-type]
    m.add_argument("--alpha", type=float, metavar="US", help="latency α in µs (with --bandwidth: use these "
                   "instead of, or besides, a pingpong fit)")
    m.add_argument("--bandwidth", type=float, metavar="MB/S", help="bandwidth 1/β in 10^6 B/s")
    m.add_argument("--trace", action="append", metavar="TRACE", help="a trace of halocompare exchanges "
                   "(halocompare --trace): their steps, predicted and measured (repeatable)")
    m.set_defaults(fn=cmd_model)

    pr = sub.add_parser("profile", help="an application's MPI profile (libmpimb-prof.so) and, with pingpong/"
                        "collectives results of the same machine, achieved / achievable per call and size")
    pr.add_argument("paths", nargs="+", metavar="PATH", help="the profile's results and the benchmark results")
    pr.add_argument("--format", choices=["text", "markdown", "latex", "csv"], default="text")
    pr.add_argument("-o", "--output", metavar="FILE.html", help="also write a self-contained HTML page")
    pr.set_defaults(fn=cmd_profile)

    tl = sub.add_parser("timeline", help="a trace's timeline (ranks against time, calls, messages) and the "
                        "distribution of send completion times, as PNG and SVG (docs/profile.md, trace mode)")
    tl.add_argument("trace", metavar="TRACE", help="a trace JSON (--trace, or MPIMB_PROF_TRACE)")
    tl.add_argument("-o", "--output", metavar="DIR", help="directory of the figures (default: the trace's)")
    tl.add_argument("--ranks", metavar="FIRST:LAST", help="the ranks drawn (default: the first 64)")
    tl.add_argument("--time", metavar="FROM:TO", help="the time window drawn, µs since the first call (default: all)")
    tl.set_defaults(fn=cmd_timeline)
    tu = sub.add_parser("tune", help="the MPI library's tuning file (Open MPI coll_tuned rules + mca-params.conf "
                        "lines, or MPICH's selection JSON) from `collectives --algorithms` results")
    tu.add_argument("paths", nargs="+", metavar="PATH")
    tu.add_argument("-o", "--output", metavar="FILE", help="the tuning file to write")
    tu.add_argument("--check", action="store_true", help="instead: the library's own choice without and with the "
                    "file, from the launches of scripts/coll-tune-check (table and findings)")
    tu.set_defaults(fn=cmd_tune)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    problem = _usage_problem(a)
    if problem:
        sys.stderr.write(f"{PROG}: {problem} (see '{PROG} {a.cmd} --help')\n")
        return 2
    try:
        return int(a.fn(a))
    except InputError as e:
        for line in e.problems:
            sys.stderr.write(f"{PROG}: {line}\n")
        return 1
    except BrokenPipeError:
        return 0
    except (OSError, ValueError) as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
