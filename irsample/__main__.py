"""``python -m irsample``: the command line (:func:`irsample.cli.main`)."""

import sys

from .cli import main

sys.exit(main())
