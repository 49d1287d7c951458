"""examples/ported/bgemm.wsp: the original's golden, C = A @ B per batch (f16 inputs, f32
accumulation), on the matrices the tile views read."""
import numpy as np

from ported_common import Golden

g = Golden()
a, b = g["a_base"], g["b_base"]
g.check("c_base", a.astype(np.float32) @ b.astype(np.float32))
g.done()
