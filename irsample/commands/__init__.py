"""Subcommands of the ``irsample`` command line, one room each (``eval``, ``measures``, ...).

Each module defines ``add_parser(subparsers)``, registering one or more subcommands whose
parsers carry ``set_defaults(run=handler)``; ``handler(args)`` returns the text to print
(``irsample.cli`` writes it, atomically with ``-o``). Modules stay thin: they parse arguments
and call the library layers (design, experiments, ...).
"""
