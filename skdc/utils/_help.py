"""The words every ``python -m skdc`` command shares: its ``--help`` page and its warnings.

Every command's parser is a :class:`ArgumentParser` (sub-commands inherit the class), whose
:class:`HelpFormatter` writes each flag's help the same way:

* the default once, as ``(default: VALUE)``, unless the help already says it in its own words
  (a flag whose default is ``None`` must say what happens without it; a default of ``None`` is
  never printed), and ``(required)`` for a required flag;
* a switch (a flag taking no value) as ``(default: off)``, never as the value it stores
  (``--no-progress`` stores ``False``: "default: True" would mislead);
* the choices of a flag, in its invocation (``--model {logistic,ridge}``) or, when a metavar
  hides them, at the end of its help.

Descriptions keep their line breaks; each line is wrapped to the terminal's width.

A warning is printed by :func:`print_warning`, as one line ``skdc COMMAND: warning: ...`` that
speaks the command line's flags. A renamed flag keeps its old spelling for one release
(:func:`add_renamed_flag`): hidden from ``--help``, it works as the new one after one such
warning line, in the words of :func:`skdc.utils._deprecation.warn_renamed`.
"""

# Licence: BSD 3 clause

import argparse
import re
import sys
import textwrap

from ._deprecation import renamed_message
from ._files import one_line

__all__ = ["ArgumentParser", "HelpFormatter", "add_renamed_flag", "print_warning"]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help with one default and the choices of every flag (see the module docstring).

    Examples
    --------
    >>> from skdc.utils._help import ArgumentParser
    >>> p = ArgumentParser(prog="demo")
    >>> _ = p.add_argument("--draws", type=int, default=3, help="draws per level")
    >>> _ = p.add_argument("--quiet", action="store_true", help="no progress bar")
    >>> _ = p.add_argument("--model", choices=["logistic", "ridge"], default="logistic",
    ...                    metavar="NAME", help="the model")
    >>> page = " ".join(p.format_help().split())
    >>> "draws per level (default: 3)" in page, "no progress bar (default: off)" in page
    (True, True)
    >>> "the model (one of: logistic, ridge) (default: logistic)" in page
    True
    """

    def _fill_text(self, text, width, indent):
        out = []
        for line in text.splitlines():
            lead = line[: len(line) - len(line.lstrip())]
            # an indented "  name   text" line continues under its text column
            column = re.match(r"\s+\S+\s{2,}", line)
            hanging = len(column.group(0)) if column else len(lead)
            out.append(textwrap.fill(line.strip(), width, initial_indent=indent + lead,
                                     subsequent_indent=indent + " " * hanging)
                       if line.strip() else "")
        return "\n".join(out)

    def _get_help_string(self, action):
        text = action.help or ""
        if action.choices is not None and action.metavar is not None:
            names = [str(c) for c in action.choices]
            if not all(name in text for name in names):
                text += " (one of: " + ", ".join(n.replace("%", "%%") for n in names) + ")"
        if action.required and action.option_strings and "required" not in text:
            text += " (required)"
        if "default" in text.lower() or "required" in text or not action.option_strings:
            return text
        if action.default is argparse.SUPPRESS:
            return text
        if action.nargs == 0:  # a switch: the value it stores is no default a user sets
            return text + " (default: off)"
        if action.default is None:  # the help says what happens without the flag
            return text
        return text + " (default: %(default)s)"


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with :class:`HelpFormatter`; its sub-parsers are alike.

    A command-line error is one line naming the flag (``skdc audit: error: argument
    --criterion: invalid choice: ...``), without the usage block argparse prints before it:
    ``--help`` shows the usage.
    """

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def print_warning(command, message, *, flags=None):
    """Print a warning on stderr as one line: ``skdc COMMAND: warning: MESSAGE``.

    Parameters
    ----------
    command : str
        The command that warns (``"audit"``, ``"participant"``).
    message : str or Warning
        The warning; its white space is folded into one line of at most 1,000 characters.
    flags : dict of {str: str}, default=None
        Words of the Python API replaced by the flags a command-line user changes
        (``{"bounds=": "--range"}``).

    Examples
    --------
    >>> import contextlib, sys
    >>> from skdc.utils._help import print_warning
    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     print_warning("audit", "raise\\n  bounds= to pass", flags={"bounds=": "--range"})
    skdc audit: warning: raise --range to pass
    """
    text = " ".join(str(message).split())
    for word, flag in (flags or {}).items():
        text = text.replace(word, flag)
    print(f"skdc {command}: warning: {one_line(text, limit=1000)}", file=sys.stderr)


class _RenamedFlag(argparse.Action):
    """The deprecated spelling of a flag: one warning line, then the new flag's value."""

    def __init__(self, option_strings, dest, new, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        command = parser.prog.split(" ", 1)[-1]  # "skdc audit" warns as "audit"
        print_warning(command, renamed_message(option_string, self.new))
        setattr(namespace, self.dest, values)


def add_renamed_flag(parser, new, old, **kwargs):
    """Add the flag ``new`` and its deprecated spelling ``old``.

    ``old`` takes a value as ``new`` does, into the same destination, after one warning line
    on stderr (``skdc audit: warning: --participants is deprecated and will be removed in skdc
    0.3; use --n-participants instead.``); it is hidden from ``--help``, and giving both is
    a usage error.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    new, old : str
        The flag and its old spelling (``"--n-participants"``, ``"--participants"``).
    **kwargs : dict
        The arguments of ``parser.add_argument(new, ...)``: a flag that takes one value.

    Returns
    -------
    action : argparse.Action
        The action of ``new``.

    Examples
    --------
    >>> import contextlib, io
    >>> from skdc.utils._help import ArgumentParser, add_renamed_flag
    >>> p = ArgumentParser(prog="skdc demo")
    >>> _ = add_renamed_flag(p, "--n-participants", "--participants", type=int, default=10,
    ...                      help="number of participants")
    >>> p.parse_args(["--n-participants", "4"]).n_participants
    4
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     p.parse_args(["--participants", "4"]).n_participants
    4
    >>> print(err.getvalue().replace("; ", ";\\n"), end="")
    skdc demo: warning: --participants is deprecated and will be removed in skdc 0.3;
    use --n-participants instead.
    """
    group = parser.add_mutually_exclusive_group()
    action = group.add_argument(new, **kwargs)
    group.add_argument(old, dest=action.dest, type=action.type, metavar=action.metavar,
                       choices=action.choices, action=_RenamedFlag, new=new,
                       default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return action
