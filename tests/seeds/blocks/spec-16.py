@kernel
def attn(Q: In[Tensor], K: In[Tensor], V: In[Tensor], O: Out[Tensor]): ...

@workload
def attention(batch, heads):
    for b, h in P(batch, heads):
        attn[b, h](Q=Q[b,h], K=K[b], V=V[b], O=O[b,h])  # Direct kernel call
