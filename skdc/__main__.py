"""Command line: ``python -m skdc COMMAND`` (also installed as the ``skdc`` script).

Every room that offers commands opens one public door, ``register_commands(subparsers)``
(``from skdc.audit import register_commands``; the demo, a module of its own:
``skdc._demo.register_commands``), which adds its sub-commands, each with
``set_defaults(func=...)``. ``COMMAND_ROOMS`` below lists the rooms in the order ``--help``
shows them, each with the sub-commands its door adds. Errors a user can fix are printed as one
line, not a traceback.

Only the rooms needed are imported: the room packages are lazy (``skdc.utils._lazy``), so
naming ``audit`` here loads nothing; ``skdc demo ...`` then opens the demo's door alone, and
``skdc --help`` every door. A command module imports scikit-learn, pandas or torch inside its
command functions, so ``--help`` answers without loading them (``benchmarks/bench_cli.py``
times it).
"""

# Licence: BSD 3 clause

import argparse
import sys

from . import audit, experiments, privacy, protocol  # lazy: no command module loads here
from .utils._help import ArgumentParser
from .utils._input_tracking import track_inputs


def _demo_commands(subparsers):
    from ._demo import register_commands  # a module, not a lazy package: imported on use

    register_commands(subparsers)


#: The rooms that offer commands, in the order ``--help`` lists them: the sub-commands each
#: adds, and its door. Reading ``audit.register_commands`` imports ``skdc.audit._cli`` only.
COMMAND_ROOMS = (
    (("demo",), _demo_commands),
    (("reproduce", "sweep"), lambda subparsers: experiments.register_commands(subparsers)),
    (("bound",), lambda subparsers: privacy.register_commands(subparsers)),
    (("anchor", "participant", "analyst"),
     lambda subparsers: protocol.register_commands(subparsers)),
    (("audit",), lambda subparsers: audit.register_commands(subparsers)),
)


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
        Register only the room that offers this sub-command (its door alone is imported);
        ``None``, or a name no room offers, registers every room's sub-commands.

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
    chosen = [door for names, door in COMMAND_ROOMS if command in names]
    for door in chosen or [door for _, door in COMMAND_ROOMS]:
        door(sub)
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
