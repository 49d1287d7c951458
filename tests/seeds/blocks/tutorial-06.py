from pto_wsp import workload, P, Dense, DenseDyn

# Static axis (size known at definition)
heads = Dense[8]()

# Dynamic axis (size known at runtime)
batch = DenseDyn(4)

@workload
def attention():
    for b in P(batch):
        for h in P(heads):
            attention_kernel[b, h](Q=Q[b][h], K=K[b], V=V[b], O=O[b][h])
