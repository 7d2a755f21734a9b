"""What mpimb-report writes cannot hurt (issue 44, items 1 and 15): an output name that holds a device, a FIFO
or a link is refused before any work (one line, exit 2) and left as it was; a file inside an output directory
that is not a regular file is refused, never replaced; a full disk leaves the earlier file as it was and no
file aside (render.write_file, the one writer)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import small_disk
from helpers import FIXTURES, cli

EQUAL = str(FIXTURES / "equal")
# every command that writes a file, with the option naming it
WRITERS = [["report", EQUAL, "-o"], ["compare", EQUAL, EQUAL, "-o"], ["compare", EQUAL, EQUAL, "-o", "{tmp}/c.html",
                                                                        "--csv"],
           ["tune", EQUAL, "-o"], ["recommend", EQUAL, "-o"]]


def nodes(d: Path) -> dict[str, Path]:
    """A FIFO, a symbolic link to a victim file and (as root) a character device, made in d."""
    d.mkdir()
    victim = d / "victim"
    victim.write_text("keep me\n")
    out = {"fifo": d / "fifo", "link": d / "link"}
    os.mkfifo(out["fifo"])
    out["link"].symlink_to(victim)
    try:
        os.mknod(d / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers, in the test's own dir
        out["dev"] = d / "dev"
    except PermissionError:
        pass
    return out


@pytest.mark.parametrize("cmd", WRITERS, ids=[" ".join(c[:1] + c[-1:]) for c in WRITERS])
def test_a_name_that_is_no_regular_file_is_refused(cmd: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cmd = [c.replace("{tmp}", str(tmp_path)) for c in cmd]
    for kind, path in nodes(tmp_path / "n").items():
        before = sorted(os.listdir(path.parent))
        r = cli(*cmd, str(path), capsys=capsys)
        if "unrecognized arguments" in r.err:
            pytest.skip(f"{cmd[0]} has no {cmd[-1]}")
        assert r.rc == 2 and r.err.count("\n") == 1 and "not a regular file" in r.err, (kind, r.err)
        assert sorted(os.listdir(path.parent)) == before, kind
        assert (path.is_symlink() if kind == "link" else not path.is_file()), kind
    assert (tmp_path / "n" / "victim").read_text() == "keep me\n"


def test_a_file_in_an_output_directory_that_is_a_link_is_not_replaced(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """plot -o DIR: a name it would write, already a link to a victim: refused (one line, exit 1), the victim
    and the link as they were."""
    out = tmp_path / "p"
    assert cli("plot", EQUAL, "-o", str(out), capsys=capsys).rc == 0
    first = min(out.glob("*.png"))
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    first.unlink()
    first.symlink_to(victim)
    r = cli("plot", EQUAL, "-o", str(out), capsys=capsys)
    assert r.rc == 1 and r.err.count("\n") == 1 and "not a regular file" in r.err, r.err
    assert first.is_symlink() and victim.read_text() == "keep me\n"
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_full_disk_leaves_the_earlier_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """report -o onto a full file system: one line, exit 1, the earlier report as it was, nothing aside."""
    with small_disk(tmp_path / "disk", "64k") as disk:
        page = disk / "r.html"
        page.write_text("the earlier report\n")
        (disk / "fill").write_bytes(b"x" * (64 * 1024 - 8192))  # what is left: less than a report
        r = cli("report", EQUAL, "-o", str(page), capsys=capsys)
        assert r.rc == 1 and r.err.count("\n") == 1, r.err
        assert page.read_text() == "the earlier report\n"
        assert sorted(p.name for p in disk.iterdir()) == ["fill", "r.html"]
