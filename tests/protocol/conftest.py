"""Report how many hostile inputs the fuzz suite tried (issue 7, part 5)."""


def pytest_terminal_summary(terminalreporter):
    from . import test_fuzz

    counts = test_fuzz.CASES
    if sum(counts.values()):
        total = sum(counts.values())
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(f"skdc protocol fuzz: {total} hostile cases tried ({parts})")
