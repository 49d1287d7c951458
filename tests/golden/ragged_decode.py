"""examples/ragged_decode.wsp: per request, the sum over its ragged chunks of exp(kv / 2), each
row divided by its sum, plus twice the bias."""
import numpy as np

from common import Golden

LENGTHS = [3, 1, 4, 2]
g = Golden()
kv, bias = g["KV"], g["Bias"]
acc = np.stack([np.exp(kv[r, :n] * 0.5).sum(axis=0) for r, n in enumerate(LENGTHS)])
g.check("Acc", acc)
g.check("Scaled", bias * 2.0)
g.check("Y", acc / acc.sum(axis=-1, keepdims=True) + bias * 2.0)
g.done()
