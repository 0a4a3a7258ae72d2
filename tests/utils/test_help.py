"""Every command's ``--help``: each flag lists its choices and says its default once.

The pages are walked from ``python -m skdc``'s parser, sub-commands of sub-commands included,
so a command added later is checked too.
"""

import argparse
import re

import pytest

from skdc.__main__ import build_parser
from tests._help_pages import option_helps


def _commands(parser, words=()):
    """``(words, parser)`` of every sub-command, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*words, name), sub
                yield from _commands(sub, (*words, name))


COMMANDS = dict(_commands(build_parser()))


def _actions(parser):
    """The flags ``--help`` shows (a deprecated spelling is hidden)."""
    return [a for a in parser._actions
            if a.option_strings and a.dest != "help" and a.help is not argparse.SUPPRESS]


def test_every_command_is_walked():
    names = {" ".join(words) for words in COMMANDS}
    assert {"demo", "reproduce", "sweep", "bound", "audit", "anchor make",
            "participant upload", "participant predict", "analyst fit"} <= names


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_each_flag_says_its_default_once_and_lists_its_choices(words):
    parser = COMMANDS[words]
    page = " ".join(parser.format_help().split("\n"))
    helps = option_helps(parser.format_help())
    assert "(default: None)" not in page and "default: None" not in page
    for action in _actions(parser):
        flag = action.option_strings[-1]
        text = helps[flag]
        body = " ".join(text.split())
        # one default, in one form (no "(default 5) (default: None)")
        assert len(re.findall(r"\bdefault\b(?!s)", body.lower())) <= 1, body
        assert "default" in body.lower() or "required" in body, body
        if action.nargs == 0:  # a switch never claims the value it stores as its default
            assert "(default: True)" not in body and "(default: False)" not in body, body
        for choice in action.choices or ():
            assert re.search(rf"(?<![\w-]){re.escape(str(choice))}(?![\w-])", body), (
                f"{' '.join(words)} {flag} does not list its choice {choice!r}: {body}")


def test_audit_lists_the_choices_its_errors_name():
    from skdc.audit._deployments import _DEPLOYMENTS

    helps = {" ".join(option_helps(COMMANDS[("audit",)].format_help())[f].split()): f
             for f in ("--attack", "--mechanism", "--model", "--aligner")}
    text = " ".join(helps)
    for _, attacks in _DEPLOYMENTS.values():
        for attack in attacks:
            assert attack in text
    for mechanism, aligner in _DEPLOYMENTS:
        assert mechanism in text and aligner in text
    assert "(default 5)" not in COMMANDS[("audit",)].format_help()


def test_bound_no_progress_is_a_switch_off_by_default():
    helps = option_helps(COMMANDS[("bound",)].format_help())
    body = " ".join(helps["--no-progress"].split())
    assert body.endswith("(default: off)"), body


def test_choices_are_enforced_where_they_are_listed(capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser("audit").parse_args(["audit", "--mechanism", "gdp"])
    assert exc.value.code == 2
    assert "invalid choice: 'gdp'" in capsys.readouterr().err


def test_formatter_keeps_description_columns():
    page = COMMANDS[("reproduce",)].format_help()
    lines = page.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("  mnist-equivalence"))
    column = lines[at].index("C-GDP")
    # the wrapped rest of the entry starts under its text, not at the margin
    assert lines[at + 1].startswith(" " * column) and lines[at + 1].strip()


def test_a_warning_is_one_line_in_the_command_lines_words(capsys):
    from skdc.utils._help import print_warning

    print_warning("audit", UserWarning("raise\n   bounds= or lower\ttarget_error="),
                  flags={"bounds=": "--range", "target_error=": "--target-error"})
    print_warning("analyst", "x " * 600)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 2, err
    assert lines[0] == "skdc audit: warning: raise --range or lower --target-error"
    assert lines[1].startswith("skdc analyst: warning: x x ") and lines[1].endswith("...")
    assert len(lines[1]) == len("skdc analyst: warning: ") + 1000


def _renamed_parser():
    from skdc.utils._help import ArgumentParser, add_renamed_flag

    parser = ArgumentParser(prog="skdc audit")
    add_renamed_flag(parser, "--n-participants", "--participants", type=int, default=5,
                     help="parties the rows are split into")
    return parser


def test_a_renamed_flag_keeps_its_old_spelling_with_one_warning_line(capsys):
    parser = _renamed_parser()
    new = parser.parse_args(["--n-participants", "3"])
    assert capsys.readouterr().err == ""
    old = parser.parse_args(["--participants", "3"])
    assert vars(old) == vars(new) == {"n_participants": 3}
    assert capsys.readouterr().err == (
        "skdc audit: warning: --participants is deprecated and will be removed in skdc 0.3; "
        "use --n-participants instead.\n")
    assert parser.parse_args([]).n_participants == 5  # the new flag's default
    page = parser.format_help()
    assert "--n-participants" in page and "--participants" not in page


@pytest.mark.parametrize("argv", [["--participants", "3", "--n-participants", "4"],
                                  ["--n-participants", "4", "--participants", "3"]])
def test_a_renamed_flag_and_its_old_spelling_together_are_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        _renamed_parser().parse_args(argv)
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_every_renamed_flag_warns_in_the_words_of_warn_renamed():
    """One sentence for a deprecated spelling, in Python and on the command line."""
    import warnings

    from skdc.utils._deprecation import renamed_message, warn_renamed

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_renamed("--participants", "--n-participants")
    assert str(caught[0].message) == renamed_message("--participants", "--n-participants")
