"""Command line entry point (placeholder until the analysis issue lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("mpimb-report: not implemented yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
