"""examples/ported/llama.wsp: the original's golden (llama_block_ref) per sequence tile."""
import numpy as np

from ported_common import Golden, rmsnorm_rows, softmax_rows

g = Golden()
x, w1, w2 = g["X"], g["W1"], g["W2"]  # x: [tiles, tile_seq, d]
d = x.shape[-1]
attn = softmax_rows(x @ x.transpose(0, 2, 1) / np.sqrt(d)) @ x
res1 = x + attn
xn = rmsnorm_rows(res1, eps=1e-6)
g.check("OutT", res1 + np.maximum(xn @ w1, 0.0) @ w2)
g.done()
