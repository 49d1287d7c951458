"""examples/sharded_linear.wsp: per-shard partial products, allreduce (sum over shards), then
bias + GELU."""
from common import Golden, gelu

g = Golden()
X, W, bias = g["X"], g["W"], g["Bias"]
partial = X @ W[:, None]           # [2, 4, 64, 128]: shard s, row tile r
g.check("Xs", X)
g.check("Partial", partial)
g.check("Y", partial.sum(axis=0))
g.check("Act", gelu(partial.sum(axis=0) + bias))
g.done()
