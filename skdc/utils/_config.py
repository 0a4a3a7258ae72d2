"""Config files (TOML or YAML) read as plain data, with every limit a hostile file needs.

Shared by ``skdc sweep`` (:func:`skdc.experiments.load_sweep_config`) and ``skdc audit
--config``.
"""

# Licence: BSD 3 clause

import math
import os
from pathlib import Path

from ._files import one_line, read_text

# A config is a small file of plain data: a regular file of at most _CONFIG_MAX_BYTES, parsed
# into strings, numbers, booleans, lists and tables no deeper than _CONFIG_MAX_DEPTH levels and
# holding at most _CONFIG_MAX_VALUES values (YAML aliases could otherwise turn ten lines into
# 10**9 values). It names estimator classes, never functions, and gives them plain parameters.
_CONFIG_MAX_BYTES = 2**20
_CONFIG_MAX_DEPTH = 32
_CONFIG_MAX_VALUES = 100_000


def _load_config(path):
    """The TOML (or YAML) config at ``path`` as plain data; any problem is one line naming it.

    Shared by ``skdc sweep`` and ``skdc audit``. The file is read through the file boundary
    (a regular file of at most 1 MiB); YAML is read with ``yaml.safe_load`` (no Python tags).
    A document nested so deeply that its parser would recurse past Python's limit, one nested
    more than 32 levels, or one holding more than 100,000 values (YAML aliases) is refused, and
    so is anything but plain data (strings, finite numbers, booleans, lists and tables with
    string keys): no dates, binary, sets or NaN. An empty list is refused too: it would
    silently stand for a default (``attack = []`` for every attack, ``compare = []`` for a
    single audit).
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no config file {path}; `skdc sweep --example` prints one.")
    text = read_text(path, "the config", max_bytes=_CONFIG_MAX_BYTES)
    kind = "YAML" if path.suffix in (".yaml", ".yml") else "TOML"
    try:
        config = _parse_yaml(text) if kind == "YAML" else _parse_toml(text)
    except RecursionError:
        raise ValueError(f"{path}: the config is nested too deeply to parse; a config holds at "
                         f"most {_CONFIG_MAX_DEPTH} levels of tables and lists.") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid {kind}: {one_line(exc, 300)}") from None
    problem = _plain_data_problem(config)
    if problem:
        raise ValueError(f"{path}: the config {problem}.")
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold tables ([data], [pipeline], [sweep] ...); got "
                         f"{type(config).__name__}.")
    return config


def _parse_toml(text):
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError as exc:
            raise ImportError("TOML configs on Python 3.10 need tomli (pip install tomli); "
                              "or use YAML.") from exc
    return tomllib.loads(text)  # TOMLDecodeError is a ValueError


def _parse_yaml(text):
    try:
        import yaml
    except ImportError as exc:
        raise ImportError("YAML configs need PyYAML (pip install pyyaml); or use TOML.") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _plain_data_problem(value):
    """What keeps ``value`` from being a config's plain data, in words (``None``: nothing).

    Walks the value without recursion, so a self-referencing YAML list or a deep one cannot
    overflow the stack: depth and count are bounded as it goes.
    """
    stack, seen = [(value, "", 0)], 0
    while stack:
        item, at, depth = stack.pop()
        seen += 1
        where = at or "the top level"
        if seen > _CONFIG_MAX_VALUES:
            return (f"holds more than {_CONFIG_MAX_VALUES} values (YAML aliases repeated?); "
                    "configs are small")
        if depth > _CONFIG_MAX_DEPTH:
            return f"is nested more than {_CONFIG_MAX_DEPTH} levels deep at {where}"
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return f"has the key {_shown(key)} at {where}; keys are strings"
                stack.append((sub, f"{at}.{key}" if at else key, depth + 1))
        elif isinstance(item, (list, tuple)):
            if not item:  # attack = [] read as "every attack", compare = [] as "no comparison"
                return (f"gives {where} an empty list; a list in a config names at least one "
                        "value (drop the key for its default)")
            stack.extend((sub, f"{at}[{i}]", depth + 1) for i, sub in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            return f"gives {where} the value {item!r}, which is not finite; give a number"
        elif not (item is None or isinstance(item, (str, bool, int, float))):
            return (f"gives {where} a {type(item).__name__} ({_shown(item)}); configs carry "
                    "only plain data: strings, numbers, booleans, lists and tables")
    return None


def _shown(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
