"""python -m mpimb: same as the mpimb-report command."""

import sys

from .cli import main

sys.exit(main())
