"""Report how many hostile inputs the fuzz suite tried; a guard against hanging readers."""

import contextlib
import signal


@contextlib.contextmanager
def deadline(seconds=20):
    """Fail instead of hanging: a reader or writer blocked on a pipe is interrupted."""
    def boom(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: it hangs")

    old = signal.signal(signal.SIGALRM, boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def pytest_terminal_summary(terminalreporter):
    from . import test_fuzz

    counts = test_fuzz.CASES
    if sum(counts.values()):
        total = sum(counts.values())
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(f"skdc protocol fuzz: {total} hostile cases tried ({parts})")
