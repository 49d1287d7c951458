from pto_wsp import TensorLayout, TensorShard, TensorReplicate, MemLayout

# TensorLayout = (distribution per dim) × (optional MemLayout)
#
# - Distribution facet: per-dimension elements of {R, S(mesh_axis)}
# - Memory facet: optional MemLayout (strides/order/swizzle)

# All-replicated by default
layout0 = TensorLayout.default(rank=4)

# Shard only dim=0 onto mesh axis 0 (others replicated)
layout1 = TensorLayout.sharded(dim=0, rank=4, mesh_axis=0)

# Full control (explicit dist tuple + optional memory layout)
layout2 = TensorLayout(
    (TensorShard(0), TensorReplicate(), TensorReplicate(), TensorReplicate()),
    mem=MemLayout.row_major((B, H, S, D)),
)
