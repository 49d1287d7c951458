"""examples/softmax.wsp: row-wise softmax."""
from common import Golden, softmax_rows

g = Golden()
g.check("Y", softmax_rows(g["X"]))
g.done()
