"""examples/ported/llama.wsp: the original's golden (llama_block_ref) per sequence tile."""
import numpy as np

from ported_common import Golden, rmsnorm_rows, softmax_rows

g = Golden()
x, w1, w2 = g["x_base"], g["W1"], g["W2"]
T = 16
d = x.shape[-1]
x = x.reshape(-1, T, d)
attn = softmax_rows(x @ x.transpose(0, 2, 1) / np.sqrt(d)) @ x
res1 = x + attn
xn = rmsnorm_rows(res1, eps=1e-6)
g.check("out_base", (res1 + np.maximum(xn @ w1, 0.0) @ w2).reshape(-1, d))
g.done()
