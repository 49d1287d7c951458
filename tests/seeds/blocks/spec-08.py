from pto_wsp import Task, KernelRef

class Task:
    """Single kernel invocation."""
    kernel: KernelRef        # Kernel reference (not string! - R7)
    params: list[Any]        # Parameters (axis values)
    resources: list[Tensor]  # Input/output tensors (with Layout types)
    id: int                  # Unique ID (assigned at enumeration)

    def get(self, axis: str) -> int:
        """Get axis value for dispatch/stream policies."""
        ...
