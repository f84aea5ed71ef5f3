"""``python -m irsample``: the command line (:func:`irsample.cli.run`)."""

from .cli import run

run()
