"""examples/ported/attention.wsp: the original's golden, softmax(q k^T / sqrt(d)) v per query
tile over its own key tile, on the [B, H, S, D] tensors the views read."""
import numpy as np

from ported_common import Golden, softmax_rows

g = Golden()
q, k, v = g["q_base"], g["k_base"], g["v_base"]
B, H, S, D = q.shape
T = 16
tiles = lambda x: x.reshape(B, H, S // T, T, D)
s = tiles(q) @ tiles(k).swapaxes(-1, -2) / np.sqrt(D)
g.check("out_base", (softmax_rows(s) @ tiles(v)).reshape(B, H, S, D))
g.done()
