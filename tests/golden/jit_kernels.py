"""examples/jit_kernels.wsp: y = gelu(x + bias) per row, one JIT-style kernel bound to two tile shapes."""
from common import Golden, gelu

g = Golden()
g.check("WideOut", gelu(g["Wide"] + g["WideBias"]))
g.check("TallOut", gelu(g["Tall"] + g["TallBias"]))
g.done()
