"""Helpers shared by the aligner tests (test_dc.py, test_kti.py, test_lti.py)."""

import numpy as np

from skdc import Uploads


def _uploads(anchors, data=None, anchor_y=None):
    """Uploads whose rows are ``data[k]`` (default: the anchor uploads) of each participant.

    Participant ``k`` uploads ``anchors[k]`` as its anchor upload; narrower participants' rows
    are zero-padded to the widest, as a stacked ``Uploads`` holds them.
    """
    data = anchors if data is None else data
    width = max(b.shape[1] for b in anchors)
    rows = [np.pad(x, ((0, 0), (0, width - x.shape[1]))) for x in data]
    part = np.concatenate([np.full(x.shape[0], k) for k, x in enumerate(data)])
    return Uploads(np.vstack(rows), participant=part, anchors=anchors, anchor_y=anchor_y)
