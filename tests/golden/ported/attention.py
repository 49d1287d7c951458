"""examples/ported/attention.wsp: the original's golden, softmax(q k^T / sqrt(d)) v per query
tile over its own key tile."""
import numpy as np

from ported_common import Golden, softmax_rows

g = Golden()
q, k_t, v = g["Q"], g["K_t"], g["V"]
s = q @ k_t / np.sqrt(q.shape[-1])
g.check("O", softmax_rows(s) @ v)
g.done()
