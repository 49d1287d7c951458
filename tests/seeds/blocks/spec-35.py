from pto_wsp import workload, P, DenseDyn, Dense

# Define axes
batch = DenseDyn(batch_size)
heads = Dense[8]

# Use kernel directly in workload
@workload
def attention(batch, heads):
    for b, h in P(batch, heads):
        flash_attn[b, h](Q=Q[b,h], K=K[b], V=V[b], O=O[b,h])
