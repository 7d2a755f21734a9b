"""The package's version is the suite's: the first line of the top-level
VERSION file (the one definition; make dist writes it into the tarball), or,
when this package is built from its own source distribution, its PKG-INFO."""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def version() -> str:
    top = HERE.parent / "VERSION"
    if top.exists():
        return top.read_text().split("\n", 1)[0].strip()
    info = (HERE / "PKG-INFO").read_text()
    return next(line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("Version:"))


setup(version=version())
