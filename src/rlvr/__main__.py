"""`python -m rlvr`: the same as the `rlvr` command."""

import sys

from rlvr.cli import main

sys.exit(main())
