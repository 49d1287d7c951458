@workload
def moe(batch, routing):
    for b in P(batch):
        for e in P.sel(routing[b]):        # Only selected experts
            expert[b, e](tokens[b], weights[e])
