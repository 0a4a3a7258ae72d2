"""Command line: ``python -m skdc COMMAND`` (also installed as the ``skdc`` script).

Each room that offers commands has a module with a ``register(subparsers)`` function; it adds
its sub-commands, each with ``set_defaults(func=...)``. Errors a user can fix are printed as one
line, not a traceback.

Only the modules needed are imported: ``skdc demo ...`` imports the command modules in order up
to the one that registers ``demo``, and a command module imports scikit-learn, pandas or torch
inside its command functions, so ``--help`` answers without loading them
(``benchmarks/bench_cli.py`` times it).
"""

# Licence: BSD 3 clause

import argparse
import importlib
import sys

from .utils._help import ArgumentParser
from .utils._input_tracking import track_inputs

# modules whose ``register(subparsers)`` adds sub-commands, in the order shown by --help
_COMMAND_MODULES = [
    "skdc._demo", "skdc.experiments._cli", "skdc.privacy._cli", "skdc.protocol._cli",
    "skdc.audit._cli",
]


def _command_word(argv):
    """The sub-command named in ``argv`` (its first word that is not an option), or None."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word == "--":
            return None
    return None


def build_parser(command=None):
    """The ``skdc`` argument parser.

    Parameters
    ----------
    command : str, default=None
        Stop importing command modules once one has registered this sub-command; ``None``
        (or a name no module registers) registers every module's sub-commands.

    Returns
    -------
    parser : argparse.ArgumentParser
        The parser, with one sub-parser per registered sub-command.

    Examples
    --------
    >>> from skdc.__main__ import build_parser
    >>> args = build_parser("demo").parse_args(["demo", "--draws", "3"])
    >>> args.command, args.draws
    ('demo', 3)
    """
    # every sub-command's parser is of this class: one default and the choices of every flag
    parser = ArgumentParser(
        prog="skdc",
        description="Privacy-preserving data collaboration: mechanisms, alignment, attacks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def _innermost(parser, args):
    """The parser of the sub-command (and its action) that ``args`` chose: its errors name
    it (``skdc participant predict: error: ...``), not the bare ``skdc``."""
    while True:
        chosen = next((a for a in parser._actions
                       if isinstance(a, argparse._SubParsersAction)
                       and getattr(args, a.dest, None) in a.choices), None)
        if chosen is None:
            return parser
        parser = chosen.choices[getattr(args, chosen.dest)]


def main(argv=None):
    """Run the command line; return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_word(argv))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # said by the sub-command's parser: ``skdc audit: error: ...``
            _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # a usage error (its one line is printed): the exit status
        if exc.code != 2:      # --help, --version: exit as argparse does
            raise
        return 2
    try:
        # every file the command reads is one of its inputs: no output may replace it
        with track_inputs():
            status = args.func(args)
    except (ValueError, TypeError, FileNotFoundError, PermissionError, ImportError) as exc:
        print(f"skdc {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"skdc {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0 if status is None else int(status)


if __name__ == "__main__":
    sys.exit(main())
