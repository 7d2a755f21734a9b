#!/usr/bin/env python3
"""Draws docs/figures/halo-phases.svg (docs/halo-phases.md): one halo exchange of two ranks in its four
phases, the clock reads that end them, the messages, and the same exchange under --mock.  Plain SVG, no
dependencies, deterministic: run it again after changing it (python3 docs/figures/halo-phases.py)."""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).with_suffix(".svg")
COLOURS = {"post": "#1f5aa6", "send": "#d1495b", "wait": "#2e933c", "unpack": "#edae49"}  # the report's bars
LABELS = {"post": "post receives", "send": "pack + post sends", "wait": "wait", "unpack": "unpack"}
X0, SCALE, H = 150, 9.0, 26  # left margin, pixels per time unit, lane height

# (phase, start, end) in time units per lane; rank 1 posts a little later, so rank 0 waits longer
LANES = [
    ("rank 0", [("post", 0, 6), ("send", 6, 26), ("wait", 26, 52), ("unpack", 52, 62)]),
    ("rank 1", [("post", 0, 10), ("send", 10, 36), ("wait", 36, 50), ("unpack", 50, 60)]),
    ("rank 0, --mock", [("send", 0, 16), ("unpack", 16, 24)]),
]
MESSAGES = [(0, 24, 1, 46), (1, 34, 0, 50)]  # (from lane, leaves at, to lane, arrives at)


def x(t: float) -> float:
    return X0 + SCALE * t


def lane_y(i: int) -> float:
    return 40 + i * 70


def main() -> None:
    parts = [('<svg xmlns="http://www.w3.org/2000/svg" width="760" height="300" font-family="sans-serif" '
              'font-size="12">'), '<rect width="760" height="300" fill="white"/>',
             ('<defs><marker id="a" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
              '<path d="M0,0 L8,4 L0,8 z" fill="#444"/></marker></defs>')]
    for i, (name, segs) in enumerate(LANES):
        y = lane_y(i)
        parts.append(f'<text x="10" y="{y + H / 2 + 4}">{name}</text>')
        for phase, a, b in segs:
            parts.append(f'<rect x="{x(a)}" y="{y}" width="{SCALE * (b - a)}" height="{H}" '
                         f'fill="{COLOURS[phase]}" stroke="white"/>')
        for t in sorted({a for _, a, _ in segs} | {b for _, _, b in segs}):  # a clock read ends each phase
            parts.append(f'<line x1="{x(t)}" y1="{y - 6}" x2="{x(t)}" y2="{y + H + 6}" stroke="black"/>')
    for src, t0, dst, t1 in MESSAGES:
        y0, y1 = lane_y(src) + (H if dst > src else 0), lane_y(dst) + (0 if dst > src else H)
        parts.append(f'<line x1="{x(t0)}" y1="{y0}" x2="{x(t1)}" y2="{y1}" stroke="#444" '
                     'stroke-dasharray="4,3" marker-end="url(#a)"/>')
    parts.append(f'<text x="{x(40)}" y="{lane_y(1) - 14}" fill="#444">messages (no such thing under --mock)</text>')
    ly = 262
    for k, (phase, label) in enumerate(LABELS.items()):
        lx = X0 + k * 150
        parts.append(f'<rect x="{lx}" y="{ly}" width="14" height="14" fill="{COLOURS[phase]}"/>')
        parts.append(f'<text x="{lx + 20}" y="{ly + 12}">{label}</text>')
    parts.append(f'<text x="{X0}" y="{ly + 32}">| a clock read (halo_phase): it ends one phase and starts the '
                 'next; time runs left to right</text>')
    parts.append("</svg>")
    OUT.write_text("\n".join(parts) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
