"""examples/ported/moe_top2.wsp: each tile's two experts' FFN outputs, weighted by their gates
and summed."""
import numpy as np

from ported_common import Golden

g = Golden()
x, w_up, w_down, gate = g["X"], g["W_up"], g["W_down"], g["Gate"]
indptr, indices = g["Indptr"], g["Indices"]
want = np.zeros_like(x)
for b in range(x.shape[0]):
    for e in indices[indptr[b]:indptr[b + 1]]:
        h = x[b] @ w_up[e]
        h = h / (1 + np.exp(-h))
        want[b] += (h @ w_down[e]) * gate[b, e]
g.check("Y", want)
g.done()
