from pto_wsp import workload, P, kernel, In, Out, Tensor

# Define kernel using @kernel decorator (JIT-style - R7)
@kernel
def attn(Q: In[Tensor], K: In[Tensor], V: In[Tensor], O: Out[Tensor]):
    ...

# RECOMMENDED: @workload + symbolic loops
@workload
def attention(batch, heads):
    for b, h in P(batch, heads):        # P = Parallel grid
        attn[b, h](Q=Q[b,h], K=K[b], V=V[b], O=O[b,h])

# Type: Workload[DenseDyn × Dense[8], AttnTask, Independent]
