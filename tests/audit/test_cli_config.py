"""``skdc audit --config`` and ``--example`` (skdc/audit/_cli_config.py): the ``[audit]`` table
gives the flags' settings (flags win), every key checked in one line naming it; a key renamed
with its flag keeps its old spelling for one release, after one warning line."""

import pytest

from skdc.__main__ import build_parser
from skdc.audit._cli_config import _DEFAULTS, _EXAMPLE, _KEYS, _config

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")


def _settings(tmp_path, table, *flags):
    """The audit's arguments from ``[audit]`` ``table`` (TOML lines) and ``flags``."""
    config = tmp_path / "audit.toml"
    config.write_text("[audit]\n" + table)
    args = build_parser("audit").parse_args(["audit", "--config", str(config), *flags])
    return _config(args)


def test_the_example_names_known_keys_only():
    example = tomllib.loads(_EXAMPLE)["audit"]
    assert set(example) <= set(_KEYS)
    assert example["n_participants"] == _DEFAULTS["n_participants"]


def test_config_fills_what_no_flag_gives_then_the_defaults(tmp_path):
    args = _settings(tmp_path, 'data = "X.npy"\nlabels = "outcome"\nn_participants = 3\n'
                               "seed = 4\n", "--seed", "7")
    assert args.data == str(tmp_path / "X.npy")  # beside the config
    assert args.labels == "outcome"  # no such file: a column of the table
    assert (args.n_participants, args.seed, args.grid) == (3, 7, _DEFAULTS["grid"])


def test_participants_is_the_deprecated_spelling_of_n_participants(tmp_path, capsys):
    new = _settings(tmp_path, "n_participants = 3\n")
    assert capsys.readouterr().err == ""
    old = _settings(tmp_path, "participants = 3\n")
    assert vars(old) == vars(new) and old.n_participants == 3
    assert capsys.readouterr().err == (
        "skdc audit: warning: [audit] participants is deprecated and will be removed in skdc "
        "0.3; use n_participants instead.\n")
    with pytest.raises(ValueError, match=r"audit.toml: \[audit\] gives n_participants and its "
                                         r"deprecated spelling participants"):
        _settings(tmp_path, "participants = 3\nn_participants = 3\n")


@pytest.mark.parametrize("table, words", [
    ("partition_count = 3\n", "unknown keys ['partition_count'] in [audit]"),
    ("n_participants = true\n", "[audit] n_participants (--n-participants) must be an "
                                "integer; got True"),
    ("range = [0.1]\n", "[audit] range (--range) must be [LOW, HIGH], two numbers"),
    ("[other]\n", "needs one [audit] table"),
])
def test_a_bad_config_is_one_line_naming_the_key(tmp_path, table, words):
    with pytest.raises(ValueError) as exc:
        _settings(tmp_path, table)
    msg = str(exc.value)
    assert "\n" not in msg and str(tmp_path / "audit.toml") in msg and words in msg, msg
