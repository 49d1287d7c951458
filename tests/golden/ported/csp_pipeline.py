"""examples/ported/csp_pipeline.wsp: the original's golden, the square of every tile, after a
load and before a store stage."""
from ported_common import Golden

g = Golden()
x = g["X"]
g.check("T0", x)
g.check("T1", x * x)
g.check("Y", x * x)
g.done()
