"""`python -m conformance.child CASE [PARAM] --out FILE`: run one probe (see `conformance.child.main`)."""

import sys

from conformance.child.main import main

sys.exit(main())
