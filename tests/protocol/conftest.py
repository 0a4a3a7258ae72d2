"""A guard against hanging readers."""

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
