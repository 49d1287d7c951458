from pto_wsp import workload, P

# P() - Parallel grid (concise alias for P.grid())
@workload
def attention(batch, heads):
    for b, h in P(batch, heads):       # All B×H iterations run in parallel
        attn[b, h](Q[b,h], K[b], V[b], O[b,h])

# P.seq() - Sequential iteration
@workload
def scan(seq_len):
    for i in P.seq(seq_len):           # Must run in order
        scan_step[i](input[i], output[i])

# P.sel() - Sparse iteration (MoE routing)
@workload
def moe(batch, routing):
    for b in P(batch):
        for e in P.sel(routing[b]):    # Only selected experts
            expert[b, e](tokens[b], weights[e])

# Nested with mixed semantics
@workload
def staged_compute(stages, tiles):
    for s in P.seq(stages):            # Sequential across stages
        for t in P(tiles):             # Parallel within stage
            compute[s, t](...)
