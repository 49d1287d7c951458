"""examples/ported/tensor_data.wsp: the original's goldens, a + b and x * x."""
from ported_common import Golden

g = Golden()
g.check("C", g["A"] + g["B"])
g.check("Y", g["X"] * g["X"])
g.done()
