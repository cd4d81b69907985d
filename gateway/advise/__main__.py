"""``python -m gateway.advise``: the command line of ``gateway.advise.cli``."""

import sys

from gateway.advise.cli import main

sys.exit(main())
