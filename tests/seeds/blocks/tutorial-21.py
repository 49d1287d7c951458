from pto_wsp import allreduce, allgather, reduce_scatter

# All-reduce across mesh
result = allreduce(tensor, op="sum", mesh_axis=0)

# All-gather sharded tensor
gathered = allgather(sharded_tensor, mesh_axis=0)

# Reduce-scatter
scattered = reduce_scatter(tensor, op="sum", mesh_axis=0)
