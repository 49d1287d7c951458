"""examples/perf/fa_small.wsp: O = softmax(Q K^T / sqrt(HEAD)) V, in float64; P goes to the cube in f16."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import Golden, softmax_rows  # noqa: E402

g = Golden()
q, k, v = g["Q"], g["K"], g["V"]
scale = q.shape[-1] ** -0.5
g.check("O", softmax_rows(q @ k.T * scale) @ v, via="float16")
g.done()
