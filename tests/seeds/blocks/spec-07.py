def tensor_layout_join(a: TensorLayout, b: TensorLayout) -> TensorLayout:
    """Join layouts for elementwise operations."""
    # R ⊔ S(i) = S(i)
    # S(i) ⊔ S(j) = error if i != j
    ...

# Explicit redistribution required when incompatible
y = relayout(x, to=TensorLayout.sharded(dim=0, rank=2))  # Explicit!
z = allreduce(partial_sum)                                # Explicit collective
