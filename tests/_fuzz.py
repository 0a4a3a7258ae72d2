"""The hostile-input counter every fuzz test adds to, reported at the end of the run.

A fuzz test counts each hostile case it tried under the reader it attacked
(``CASES["config (sweep)"] += 1``); the root ``conftest.py`` prints the counts by kind in the
test summary (``skdc fuzz: N hostile cases tried (...)``), summed over pytest-xdist workers.
"""

import collections

CASES = collections.Counter()
