"""examples/ported/deepseek_v3.wsp: the original's golden, g * (x @ w0) + (1 - g) * (x @ w1)."""
from ported_common import Golden

g = Golden()
x, gate, w0, w1 = g["x_base"], g["g_base"], g["W0"], g["W1"]
g.check("y_base", gate * (x @ w0) + (1 - gate) * (x @ w1))
g.done()
