"""examples/hello_add.wsp: C = A + B."""
from common import Golden

g = Golden()
g.check("C", g["A"] + g["B"])
g.done()
