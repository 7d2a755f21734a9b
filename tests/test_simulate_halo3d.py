"""halocompare in 3-D on a simulated torus (issue 19): the issue's 1024-rank
command (scripts/simulate halocompare -n 1024 --platform torus-bgl -- --dims 3
--comms world,cart --methods irecv-isend --quick) at 64 ranks, the size of
torus-bgl-64, where it costs under a minute: 4x4x4, faces and the full
stencil, both boundaries, verified; PSCW runs, what SMPI lacks is n/a (cart too:
SMPI ignores reorder)."""

from __future__ import annotations

from pathlib import Path

from conftest import check_schema
from mpimb.schema import parse_params
from test_simulate import ONE_REP, check_simulated_meta, needs_smpi, sim_run


@needs_smpi
def test_halocompare_3d_64_torus(tmp_path: Path) -> None:
    run = sim_run("halocompare", 64, "torus-bgl-64", "--dims", "3", "--comms", "world,cart", "--methods",
                  "irecv-isend,rma-pscw-put,neighbor-alltoall", "--quick", "--verify", *ONE_REP, out=tmp_path / "h.csv")
    rows = check_schema(run, "halocompare", 64)
    check_simulated_meta(run, "torus-bgl-64")
    assert run.meta()["halocompare"]["dims"] == [4, 4, 4]
    halo = [r for r in rows if r["test"] == "halo"]
    assert {(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo} == {
        (c, m, nb, p) for c in ("world", "cart") for m in ("irecv-isend", "rma-pscw-put", "neighbor-alltoall")
        for nb in ("6", "26") for p in ("0", "1")}
    for r in halo + [r for r in rows if r["test"] == "one-sender"]:
        assert parse_params(r["params"]).get("dims") == "3"
        if r["comm"] == "cart":  # SMPI ignores reorder: cart would be world renamed
            assert r["stop_reason"].startswith("n/a: SimGrid SMPI's MPI_Cart_create ignores reorder")
            assert r["time_median_s"] == ""
        elif r["method"] == "neighbor-alltoall":
            assert r["stop_reason"] == "n/a: not supported by SimGrid SMPI" and r["time_median_s"] == ""
        else:
            assert r["verified"] == "yes" and float(r["mbps"]) > 0, r
    assert "grid 4x4x4" in run.stdout and "26 neighbours" in run.stdout
