"""compare against the published reference set (reference/gropp-lusk, issue 24): the BG/L, XT3 and XT4
figures are drawn and tabulated beside the user's machine at the talk's size (never on a size axis),
the page renders in headless Chromium (a screenshot is written: MPIMB_SHOT_DIR keeps a copy to look at),
and every significant ratio cell is coloured, § or ‡ after it or not."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import CHROMIUM_FLAGS, ROOT, browser_check, chromium, cli, launch_set
from make_fixtures import LIBS, Writer
from mpimb import crosssystem

REF = ROOT / "reference" / "gropp-lusk"
PUBLISHED = ["BGL-co-processor", "BGL-virtual-node", "Cray-XT3", "Cray-XT4", "Cray-XT4-SN"]
SIZES = (4000, 16000, 64000)  # the machine's sweep: 16000 B is its size nearest the talk's


def halo_set(d: Path, label: str = "mybox", seed: int = 5, sizes: tuple[int, ...] = SIZES, scale: float = 1.0,
             params: str = "") -> Path:
    """A small halocompare result (8 ranks on 2 nodes): irecv-send / irecv-isend / phased on world, evenodd
    and cart, 4 neighbours, both meshes, at each size, and the one-sender rows."""
    lib, env, alpha, beta, _ = LIBS["clusterA"]
    w = Writer(label, "halocompare", 8, 2, seed)
    for b in sizes:
        for per in (0, 1):
            for comm, cf in (("world", 1.0), ("evenodd", 1.5), ("cart", 0.95)):
                for mi, m in enumerate(("irecv-send", "irecv-isend", "phased")):
                    t = 4 * (alpha + beta * b) * cf * (1 + 0.1 * mi) * scale
                    w.row("halo", t, m, comm, 4, per, b, sent=4 * b, params=params)
            w.row("one-sender", 4 * (alpha + beta * b) * 0.5 * scale, "isend", "world", 4, per, b, sent=4 * b,
                  params=params)
    w.extra = {"halocompare": {"dims": [4, 2], "count": sizes[0] // 8}}
    w.write(d, lib, env)
    return d


def figures(page: str) -> list[tuple[str, str]]:
    """(alt text, caption) of every figure of the page."""
    return [(html.unescape(a), html.unescape(c)) for a, c in
            re.findall(r'<figure><img alt="([^"]*)"[^>]*><figcaption>([^<]*)</figcaption></figure>', page)]


def table_rows(page: str, caption: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the HTML table whose caption starts with caption."""
    m = re.search(r"<caption>" + re.escape(html.escape(caption)) + r".*?</table>", page, re.DOTALL)
    assert m, f"no table '{caption}'"
    t = m.group(0)
    head = [html.unescape(h) for h in re.findall(r"<th>([^<]*)</th>", t.split("</thead>")[0])]
    rows = [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", r)]
            for r in t.split("<tbody>")[1].split("</tr>") if "<t" in r]
    return head, rows


def test_talk_size_is_the_nearest_per_machine_and_layout(tmp_path: Path) -> None:
    a = pd.DataFrame({"set": ["me"] * 3 + ["me"] + ["BGL", "XT"], "program": "halocompare",
                      "bytes": [4000.0, 16000.0, 64000.0, 60000.0, 16384.0, 16000.0],
                      "nprocs": [8.0, 8.0, 8.0, 64.0, 64.0, 1024.0], "nnodes": [2.0, 2.0, 2.0, 8.0, 64.0, -1.0],
                      "ppn": [4.0, 4.0, 4.0, 8.0, 1.0, -1.0],
                      "source": ["measured"] * 4 + ["published"] * 2})
    t = crosssystem.at_talk_size(a)
    assert sorted(zip(t["set"], t["nprocs"], t["bytes"])) == [("BGL", 64.0, 16384.0), ("XT", 1024.0, 16000.0),
                                                              ("me", 8.0, 16000.0), ("me", 64.0, 60000.0)]
    assert crosssystem.talk_sizes(t) == "16000 B: me, XT; 60000 B: me; 16384 B: BGL"
    assert crosssystem.at_talk_size(a[a["source"] == "measured"]).empty  # no published set: no talk's size


def test_compare_draws_and_tabulates_the_published_machines(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    mine = halo_set(tmp_path / "results")
    out = tmp_path / "vs.html"
    r = cli("compare", str(mine), str(REF), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    page = out.read_text()
    md = out.with_suffix(".md").read_text()

    # the plots: halo and one-sender bars of every machine at the talk's size, both sizes in the caption;
    # the machine's own sweep is a plot of its own, without the published machines
    figs = figures(page)
    talk = [(alt, cap) for alt, cap in figs if "at the talk's size" in alt]
    assert {alt.split(" at ")[0] for alt, _ in talk} == {"halocompare halo", "halocompare one-sender"}
    for alt, cap in talk:
        for name in ["mybox", *PUBLISHED]:
            assert name in alt and name in cap, (name, cap)
        assert "16000 B: mybox, Cray-XT3, Cray-XT4, Cray-XT4-SN" in cap and "16384 B: BGL-co-processor, " \
            "BGL-virtual-node" in cap
        assert "4000 B" not in cap and "64000 B" not in cap
    sweeps = [alt for alt, _ in figs if "at the talk's size" not in alt]
    assert sweeps and all("mybox" in a and not any(p in a for p in PUBLISHED) for a in sweeps)
    assert "](vs-plots/compare-halocompare-halo.png)" in md and "(world, 4 neighbours, non-periodic; 16000 B" in md

    # the table: each published machine's figure beside mybox's in the same row
    head, rows = table_rows(page, "halocompare at the talk's size")
    assert head[:2] == ["test", "configuration"]
    assert [h.split(" [")[0] for h in head[2:]] == ["mybox", *PUBLISHED] and all("[MB/s]" in h for h in head[2:])
    assert "16000 B · np8" in page and "16384 B · np64 · published" in page
    byconf = {row[1]: row[2:] for row in rows}
    xt4 = byconf["irecv-isend world 4-nbr non-periodic"]
    assert xt4[PUBLISHED.index("Cray-XT4") + 1] == "153.0" and xt4[PUBLISHED.index("BGL-co-processor") + 1] == \
        "199.0 †"
    assert all(re.fullmatch(r"[\d.]+", v) for v in (xt4[0], xt4[3], xt4[4], xt4[5]))
    mb = pd.read_csv(mine / "halocompare-mybox-np8.csv")
    want = mb[(mb["test"] == "halo") & (mb["method"] == "irecv-isend") & (mb["comm"] == "world") &
              (mb["periodic"] == 0) & (mb["bytes"] == 16000)]["mbps"]
    assert float(xt4[0]) == pytest.approx(float(want.iloc[0]), rel=2e-3)  # mybox at 16000 B, not 4000 or 64000
    one = byconf["isend world 4-nbr non-periodic"]
    assert one[PUBLISHED.index("Cray-XT4") + 1] == "1634" and one[0] not in ("", "—")
    # the summary says where they meet, and that nothing against a published figure is judged
    assert "Cray-XT4 vs mybox: no configuration in common; set beside each other at the talk's size" in md
    assert "not judged (no confidence interval)" in md

    # the page in headless Chromium: every image decodes, a screenshot of non-trivial size
    n_img = page.count("<img ")
    ok, bad, std, inked = browser_check(out, tmp_path, height=3200)
    assert (ok, bad) == (n_img, 0) and n_img >= 3
    shot = tmp_path / f"{out.stem}-shot.png"
    assert shot.stat().st_size > 50_000 and std > 0.05 and inked > 0.05
    keep = os.environ.get("MPIMB_SHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "compare-reference.png")
        for p in (tmp_path / "vs-plots").glob("*.png"):
            shutil.copy(p, Path(keep) / p.name)


def test_plot_titles_fit_and_slow_bars_stay_visible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A narrow window: the figures scale down with the page (no clipped title), and the bars of the
    talk's-size plot span a decade or more (a log axis, checked through the plot's own code path)."""
    from matplotlib import image as mpimg
    from mpimb import plots

    mine = halo_set(tmp_path / "results", sizes=(16000,))
    out = tmp_path / "vs.html"
    assert cli("compare", str(mine), str(REF), "-o", str(out), capsys=capsys).rc == 0
    png = tmp_path / "vs-plots" / "compare-halocompare-halo.png"
    px = np.asarray(mpimg.imread(str(png)))[..., :3]
    # the title's ink stays off the figure's left and right edges (a clipped title runs into them)
    top = px[: px.shape[0] // 8]
    assert (top[:, :3] > 0.9).all() and (top[:, -3:] > 0.9).all()
    seen: list[str] = []
    orig = plots.log_y
    try:
        plots.log_y = lambda ax: (seen.append("log"), orig(ax))[1]  # type: ignore[assignment,func-returns-value]
        pf = pd.DataFrame({"set": ["me", "XT"], "program": "halocompare", "test": "halo", "method": "irecv-send",
                           "comm": "world", "neighbors": 4.0, "periodic": 0.0, "bytes": [16000.0, 16000.0],
                           "nprocs": [8.0, 1024.0], "nnodes": [2.0, -1.0], "ppn": [4.0, -1.0], "params": "",
                           "value": [5000.0, 130.0], "source": ["measured", "published"]})
        assert plots.talk_bars(pf, "halocompare", "halo", ["me", "XT"], "median", True) is not None
        assert seen == ["log"]
        assert plots.talk_bars(pf.assign(value=[500.0, 130.0]), "halocompare", "halo", ["me", "XT"], "median",
                               True) is not None
        assert seen == ["log"]  # within a decade: linear
    finally:
        plots.log_y = orig
    exe = chromium()
    shot = tmp_path / "narrow.png"
    s = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chr'}", "--window-size=700,2400",
                        f"--screenshot={shot}", out.resolve().as_uri()], capture_output=True, text=True,
                       timeout=240, check=False)
    assert s.returncode == 0 and shot.stat().st_size > 20_000


def test_every_significant_cell_is_coloured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two machines whose repetitions started differently (sync=window against sync=barrier: the ratios
    carry §), one clearly faster: every ratio cell with a significance mark is green or red."""
    a = launch_set(halo_set(tmp_path / "a1", "boxA", 5, (16000,), 1.0, "sync=window"), tmp_path / "a", 3,
                   shift=0.01, seed=1)  # three launches a side: a verdict rests on launches
    b = launch_set(halo_set(tmp_path / "b1", "boxB", 6, (16000,), 0.6, "sync=barrier"), tmp_path / "b", 3,
                   shift=0.01, seed=2)
    out = tmp_path / "ab.html"
    assert cli("compare", str(a), str(b), "-o", str(out), capsys=capsys).rc == 0
    page = out.read_text()
    cells = re.findall(r"<td([^>]*)>([^<]*)</td>", page)
    marked = [(attr, html.unescape(c)) for attr, c in cells if html.unescape(c).rstrip("§‡").endswith("*")]
    assert any(c.endswith("§") for _, c in marked), "no § on a significant ratio"
    for attr, c in marked:
        assert ('class="win"' if c.startswith("↓") else 'class="loss"') in attr, (attr, c)
