"""`python -m conformance` runs the command-line interface."""

import sys

from conformance.cli import main

sys.exit(main())
