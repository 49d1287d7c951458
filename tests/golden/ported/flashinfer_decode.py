"""examples/ported/flashinfer_decode.wsp: the original's golden, softmax(q K^T / sqrt(d)) V."""
import numpy as np

from ported_common import Golden, softmax_rows

g = Golden()
q, k_t, v = g["Q"], g["K_t"], g["V"]
g.check("O", softmax_rows(q @ k_t / np.sqrt(q.shape[-1])) @ v)
g.done()
