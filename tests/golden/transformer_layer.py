"""examples/transformer_layer.wsp: a pre-norm layer composed with sequential():
h = x + Attention(RMSNorm(x)); y = h + W2 · silu(W1 · RMSNorm(h))."""
import numpy as np

from common import Golden, f16, rmsnorm_rows, silu, softmax_rows

g = Golden()
X, G1, G2 = g["X"], g["G1"], g["G2"]
Wq, Wk, Wv, Wo, W1, W2 = (g[n] for n in ["Wq", "Wk", "Wv", "Wo", "W1", "W2"])

xn = f16(rmsnorm_rows(X) * G1)
q = f16(np.einsum("bsd,hde->bhse", xn, Wq))
k = f16(np.einsum("bsd,hde->bhse", xn, Wk))
v = f16(np.einsum("bsd,hde->bhse", xn, Wv))
w = softmax_rows(q @ np.swapaxes(k, -1, -2) * 0.17677669)
o = f16(f16(w) @ v)
h = X + np.einsum("bhse,hed->bsd", o, Wo)
hn = f16(rmsnorm_rows(h) * G2)
y = h + f16(silu(hn @ W1)) @ W2

g.check("Xn", xn)
g.check("Oh", o)
g.check("H", h, via="float16")
g.check("Y", y, via="float16")
g.done()
