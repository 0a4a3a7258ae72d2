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


def pytest_sessionfinish(session):
    # hand the counts to the root conftest, which reports them (and, under pytest-xdist, to
    # the controller process, which never collects this folder)
    from . import test_fuzz

    session.config.skdc_fuzz_cases.update(test_fuzz.CASES)
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["skdc_fuzz_cases"] = dict(test_fuzz.CASES)
