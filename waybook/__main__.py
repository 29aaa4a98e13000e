"""`python -m waybook`: the same command line as the `waybook` console script."""

import sys

from waybook.cli import main

sys.exit(main())
