"""examples/moe.wsp: each tile of tokens through the two experts its CSR routing picked; the
expert slots it did not pick stay zero."""
import numpy as np

from common import Golden, f16, silu

indptr = [0, 2, 4, 6, 8]
indices = [1, 3, 0, 2, 5, 7, 2, 6]

g = Golden()
X, Wu, Wd = g["X"], g["W_up"], g["W_down"]
out = np.zeros_like(g["ExpertOut"])
for b in range(4):
    for e in indices[indptr[b]:indptr[b + 1]]:
        out[b, e] = f16(silu(X[b] @ Wu[e])) @ Wd[e]
g.check("ExpertOut", out, via="float16")
g.done()
