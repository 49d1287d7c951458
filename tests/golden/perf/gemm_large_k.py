"""examples/perf/gemm_large_k.wsp: C = A @ B, f16 inputs accumulated in f32."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import Golden  # noqa: E402

g = Golden()
g.check("C", g["A"] @ g["B"])
g.done()
