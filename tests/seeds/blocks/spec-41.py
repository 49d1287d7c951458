from pto_wsp import workload, P, kernel, In, Out, Tensor, DenseDyn, Dense
from pto_wsp import DispatchPolicy, TimingPolicy

# Data
batch_size = 4
num_heads = 8
seq_lens = [512, 2048, 8192, 32768]

# Axes
batch = DenseDyn(batch_size)
heads = Dense[8]

# Define kernel
@kernel
def attn_kernel(Q: In[Tensor], K: In[Tensor], V: In[Tensor], O: Out[Tensor]):
    ...

# Define workload (@workload + P namespace)
@workload
def attention(batch, heads):
    for b, h in P(batch, heads):
        attn_kernel[b, h](Q=Q[b,h], K=K[b], V=V[b], O=O[b,h])

# Schedule (combinator style)
program = (attention(batch, heads)
    .dispatch(DispatchPolicy.affinity(lambda t: t.get("batch")))
    .streams(2)
    .stream_by(lambda t: t.get("head") % 2)
    .timing(TimingPolicy.immediate)
    .compile())

# Execute
program.execute()
program.synchronize()
