from pto_wsp import workload, P, kernel, In, Out, Tensor, DenseDyn, Sparse
from pto_wsp import DispatchPolicy

# Routing (CSR format)
indptr = [0, 2, 5, 7, 10]
indices = [1, 3, 0, 2, 4, 1, 5, 0, 3, 7]
routing = Sparse(4, indptr, indices)

# Axes
batch = DenseDyn(batch_size)

# Define kernel
@kernel
def expert(tokens: In[Tensor], weights: In[Tensor], out: Out[Tensor]):
    ...

# Define workload (@workload + P.sel for sparse)
@workload
def moe(batch, routing):
    for b in P(batch):
        for e in P.sel(routing[b]):           # Only selected experts
            expert[b, e](tokens=tokens[b], weights=weights[e], out=out[b,e])

# Schedule with work stealing (combinator style)
program = (moe(batch, routing)
    .dispatch(DispatchPolicy.work_steal())
    .streams(8)
    .stream_by(lambda t: t.get("expert"))     # expert → stream
    .compile())

program.execute()
