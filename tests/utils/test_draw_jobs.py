"""The draws of a sweep as joblib jobs (skdc.utils._draw_jobs), shared by the sweeps and the
audit; the draws themselves run through tests/experiments/test_sweep.py and
tests/audit/test_calibrate.py."""

import numpy as np

from skdc.utils import _draw_jobs


def test_sweep_context_cache():
    ctx = _draw_jobs._SweepContext(None, (np.arange(3.0),), {}, {}, 1)
    token, blob = ctx.pack()
    first = _draw_jobs._context(token, blob)
    assert first is not ctx and _draw_jobs._context(token, blob) is first  # unpickled once
    np.testing.assert_array_equal(first.data[0], np.arange(3.0))
    for _ in range(_draw_jobs._CONTEXTS_KEPT):
        _draw_jobs._context(*_draw_jobs._SweepContext(None, (), {}, {}, 1).pack())
    assert token not in _draw_jobs._CONTEXTS  # only the most recent sweeps are kept
