"""Command line: ``python -m skdc COMMAND`` (also installed as the ``skdc`` script).

Each room that offers commands has a module with a ``register(subparsers)`` function; it adds
its sub-commands, each with ``set_defaults(func=...)``. Errors a user can fix are printed as one
line, not a traceback.
"""

# Licence: BSD 3 clause

import argparse
import importlib
import sys

# modules whose ``register(subparsers)`` adds sub-commands, in the order shown by --help
_COMMAND_MODULES = [
    "skdc._demo", "skdc.experiments._cli", "skdc.privacy._cli", "skdc.protocol._cli",
    "skdc.experiments._audit_cli",
]


def build_parser():
    """The ``skdc`` argument parser with every room's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="skdc",
        description="Privacy-preserving data collaboration: mechanisms, alignment, attacks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
