"""examples/rmsnorm.wsp: each row of X divided by its root mean square."""
from common import Golden, rmsnorm_rows

g = Golden()
g.check("Y", rmsnorm_rows(g["X"]))
g.done()
