"""examples/ported/bgemm.wsp: the original's golden, C = A @ B per batch (f16 inputs, f32
accumulation), on the tiles reshaped back to matrices."""
from ported_common import Golden

g = Golden()
a, b = g["A"], g["B"]  # [B, M/16, K/16, 16, 16], [B, N/16, K/16, 16, 16]
bs, tm, tk, _, _ = a.shape
tn = b.shape[1]
a_full = a.transpose(0, 1, 3, 2, 4).reshape(bs, tm * 16, tk * 16)
b_full = b.transpose(0, 2, 3, 1, 4).reshape(bs, tk * 16, tn * 16)
c = a_full @ b_full
g.check("C", c.reshape(bs, tm, 16, tn, 16).transpose(0, 1, 3, 2, 4))
g.done()
