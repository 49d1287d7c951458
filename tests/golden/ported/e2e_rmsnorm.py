"""examples/ported/e2e_rmsnorm.wsp: the original's golden, x / sqrt(mean(x^2)) per row."""
from ported_common import Golden, rmsnorm_rows

g = Golden()
g.check("y_base", rmsnorm_rows(g["x_base"], eps=0.0))
g.done()
