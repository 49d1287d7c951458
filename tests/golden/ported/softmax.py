"""examples/ported/softmax.wsp: the original's golden (a row softmax of [B, S, V]), on the
tiles reshaped back to [B, S, V]."""
from ported_common import Golden, softmax_rows

g = Golden()
x = g["logits"]  # [B, S/8, V/64, 8, 64]
B, ST, VT, TR, TC = x.shape
rows = x.transpose(0, 1, 3, 2, 4).reshape(B, ST * TR, VT * TC)
want = softmax_rows(rows).reshape(B, ST, TR, VT, TC).transpose(0, 1, 3, 2, 4)
g.check("probs", want)
g.done()
