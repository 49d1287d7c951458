"""examples/ported/validated_matmul.wsp: the original's golden, C = A @ B per batch."""
from ported_common import Golden

g = Golden()
g.check("c_base", g["a_base"] @ g["b_base"])
g.done()
