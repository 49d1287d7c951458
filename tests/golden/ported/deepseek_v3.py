"""examples/ported/deepseek_v3.wsp: the original's golden, g * (x @ w0) + (1 - g) * (x @ w1)."""
from ported_common import Golden

g = Golden()
x, gate, w0, w1 = g["X"], g["G"], g["W0"], g["W1"]
g.check("Y", gate * (x @ w0) + (1 - gate) * (x @ w1))
g.done()
