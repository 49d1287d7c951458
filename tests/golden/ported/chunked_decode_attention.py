"""examples/ported/chunked_decode_attention.wsp: softmax(Q K^T / sqrt(D)) V per head."""
import numpy as np

from ported_common import Golden, softmax_rows

g = Golden()
q, k, v = g["Q"], g["K"], g["V"]
s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
g.check("O", softmax_rows(s) @ v)
g.done()
