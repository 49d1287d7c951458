"""Shared by the ported examples' golden scripts: `tests/golden/common.py` from here."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import Golden, f16, rmsnorm_rows, softmax_rows  # noqa: E402,F401


def check_exact(g, name, reference):
    """An integer tensor, equal element for element."""
    ours = g[name]
    ok = ours.shape == np.shape(reference) and bool(np.array_equal(ours, reference))
    print(f"{name}: {'equal' if ok else 'DIFFERENT'} ({ours.dtype})")
    g.failed |= not ok
