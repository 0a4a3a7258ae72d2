"""The hostile-input counter every fuzz test adds to, reported at the end of the run.

A fuzz test counts each hostile case it tried under the reader it attacked
(``CASES["config (sweep)"] += 1``); the root ``conftest.py`` prints the counts by kind in the
test summary (``skdc fuzz: N hostile cases tried (...)``), summed over pytest-xdist workers.
"""

import collections
import contextlib
import signal

CASES = collections.Counter()


@contextlib.contextmanager
def deadline(seconds=20):
    """Fail instead of hanging: a reader blocked on a pipe is interrupted after ``seconds``."""
    def boom(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: it hangs")

    old = signal.signal(signal.SIGALRM, boom)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def npy_declaring(shape, payload=b"", descr="<f8"):
    """The bytes of a ``.npy`` file whose header declares ``shape`` but holds ``payload``."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue() + payload
