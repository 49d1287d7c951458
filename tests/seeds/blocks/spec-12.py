@workload
def attention(batch, heads):
    for b, h in P(batch, heads):           # Type: Independent
        attn[b, h](Q[b,h], K[b], V[b], O[b,h])
