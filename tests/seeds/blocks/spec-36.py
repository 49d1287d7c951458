class KernelRef:
    """Reference to a registered kernel."""

    # Identity
    symbol: str                    # Internal name for linking
    module: Optional[Module]       # Parent module (if specified)
    signature: KernelSignature     # Inferred from type annotations

    # Methods
    def at(self, **axes: AxisVar) -> BoundKernel:
        """Bind iteration axes (TileLang-style)."""
        ...

    def __getitem__(self, axes: tuple[AxisVar, ...]) -> BoundKernel:
        """Bind iteration axes (Triton-style subscript)."""
        ...

    def __call__(self, **bindings: Tensor) -> None:
        """Emit task to current workload builder (requires axis binding first)."""
        ...

    def lower(self, target: str = "cpu_sim") -> NPUFunction:
        """Lower to NPU function IR."""
        ...
