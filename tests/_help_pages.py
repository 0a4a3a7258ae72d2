"""Reading a ``--help`` page back, shared by the tests of every command's help."""

import re


def option_helps(page):
    """``{flag: its lines joined}`` of the options section of an argparse ``--help`` page,
    keyed by each option's first spelling (``-h`` for ``-h, --help``)."""
    helps, flag = {}, None
    for line in page.split("options:", 1)[1].splitlines():
        match = re.match(r"  (-[-\w]+)", line)
        if match:
            flag = match.group(1)
            helps[flag] = line
        elif flag and line.strip():
            helps[flag] += " " + line.strip()
    return helps
