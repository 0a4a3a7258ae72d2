"""Start-up time of ``python -m skdc ... --help`` against a bare ``import sklearn``.

Target: ``python -m skdc --help`` and every sub-command's ``--help`` in at most half the time
of ``python -c "import sklearn"``. Each command runs as a fresh interpreter, the commands
interleaved round by round so that a busy machine slows them alike; the script prints each
command's median wall time, its ratio to the median ``import sklearn`` of the same run (the
baseline) and whether it meets the target, then the modules of sklearn, scipy, pandas and torch
that each ``--help`` imported. Run: ``python benchmarks/bench_cli.py [--repeats 7]``.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sklearn", "scipy", "pandas", "torch", "matplotlib")


def _subcommands():
    sys.path.insert(0, str(ROOT))
    from skdc.__main__ import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = list(sub.choices)
    # heavy modules are already imported here: the timings run in fresh interpreters
    return names


def _time(argv, env):
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def _heavy_imports(argv, env):
    out = subprocess.run([*argv[:1], "-X", "importtime", *argv[1:]], cwd=ROOT, env=env,
                         capture_output=True, text=True).stderr
    mods = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in out.splitlines()
            if line.startswith("import time:")}
    return sorted(mods & set(HEAVY))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds (medians are printed)")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    py = sys.executable
    commands = {"import sklearn (baseline)": [py, "-c", "import sklearn"],
                "skdc --help": [py, "-m", "skdc", "--help"]}
    for name in _subcommands():
        commands[f"skdc {name} --help"] = [py, "-m", "skdc", name, "--help"]
    times = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, argv in commands.items():
            times[name].append(_time(argv, env))
    base = statistics.median(times["import sklearn (baseline)"])
    print(f"cpu cores visible: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, "
          f"{args.repeats} rounds; target: ratio <= 0.50")
    print(f"{'command':<32} {'median s':>9} {'ratio':>6} {'target':>7}  heavy imports")
    for name, argv in commands.items():
        med = statistics.median(times[name])
        if name.startswith("import sklearn"):
            print(f"{name:<32} {med:>9.3f} {1:>6.2f} {'':>7}")
            continue
        heavy = _heavy_imports(argv, env)
        ok = "met" if med <= 0.5 * base else "MISSED"
        print(f"{name:<32} {med:>9.3f} {med / base:>6.2f} {ok:>7}  {', '.join(heavy) or '-'}")


if __name__ == "__main__":
    main()
