# Core module
from pto_wsp import (
    # Axis types
    Dense, DenseDyn, Ragged, Sparse,

    # Workload definition
    workload,  # @workload decorator
    P,         # Loop constructors namespace (P, P.seq, P.sel, P.pipe, P.when)

    # Workload primitives
    combine, sequential,

    # Kernel definition (NEW in v9 - R7)
    kernel,                     # @kernel decorator (builder-style)
    jit_kernel,                 # @jit_kernel decorator (Triton-style)
    pto,                        # PTO tile language primitives (pto.load, pto.store, etc.)
    In, Out, InOut, Constexpr,  # Type annotations for kernel signatures
    Tile, Scalar,               # Typed kernel parameters

    # CSP primitives
    Channel, process, send, consume, connect, replicate,

    # Schedule policies
    DispatchPolicy, TimingPolicy,  # IssuePolicy removed (unused)

    # Task graph configuration (Experimental)
    Deps, ReadyPolicy, StartPolicy, TracePolicy, Pools,

    # Tensor layout (R10)
    TensorLayout, TensorShard, TensorReplicate, MemLayout,
    relayout, allreduce, allgather, reduce_scatter,

    # Spatial layout (use TensorShard/TensorReplicate instead)
    # Shard, Replicate,  # Deprecated

    # Execution
    Program,

    # Legacy (deprecated - do not use)
    # register_kernel, ExternalKernel, npu, NPUFunction, kernel_legacy
)
