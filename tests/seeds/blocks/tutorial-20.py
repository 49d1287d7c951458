from pto_wsp import Tensor, TensorLayout, TensorShard, relayout

# Create sharded tensor
A = Tensor(
    shape=(4096, 4096),
    dtype=DType.F16,
    layout=TensorLayout.sharded(dim=0, rank=2, mesh_axis=0)
)

# Layout transitions
B = relayout(A, TensorLayout.replicated(rank=2))  # Shard â†’ Replicate
