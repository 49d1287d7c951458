//! The names `pto_wsp` exports: what `from pto_wsp import ...` may import, and what every file
//! sees without importing anything. One row per name.

macro_rules! vocabulary {
    ($($variant:ident = $name:literal: $doc:literal;)*) => {
        /// A name exported by `pto_wsp` (or a Python builtin the subset allows).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Builtin {
            $($variant,)*
        }

        impl Builtin {
            pub const ALL: &'static [Builtin] = &[$(Builtin::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $name,)*
                }
            }

            pub fn doc(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $doc,)*
                }
            }
        }
    };
}

vocabulary! {
    // Kernels
    Kernel = "kernel": "Decorator: a tile kernel over `pto.*` ops.";
    JitKernel = "jit_kernel": "Decorator: the same as `kernel`.";
    Pto = "pto": "The tile ops (`pto.add`, `pto.matmul`, ...).";
    Tl = "tl": "Deprecated spelling of `pto`.";
    In = "In": "Annotation: a tile the kernel reads.";
    Out = "Out": "Annotation: a tile the kernel writes.";
    InOut = "InOut": "Annotation: a tile the kernel reads and writes.";
    Tile = "Tile": "`Tile[M, N, dtype]`: a 2-D tile type.";
    Scalar = "Scalar": "`Scalar[dtype]`: a scalar kernel parameter.";
    Constexpr = "Constexpr": "`Constexpr[int]`: a compile-time integer parameter.";
    DType = "DType": "Element types: F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 U64.";
    // Axes and tensors
    Dense = "Dense": "`Dense[n]`: a static axis of n iterations.";
    DenseDyn = "DenseDyn": "`DenseDyn(n)`: an axis whose size is bound at run time (n by default).";
    Ragged = "Ragged": "`Ragged(n, lengths=...)`: n rows of run-time lengths.";
    Sparse = "Sparse": "`Sparse(n, indptr=..., indices=...)`: CSR routing; `P.sel` enumerates it.";
    Tensor = "Tensor": "`Tensor(shape, dtype, init=..., layout=...)`: a global tensor.";
    Zeros = "zeros": "Tensor init: all zeros (the default).";
    Ones = "ones": "Tensor init: all ones.";
    Full = "full": "Tensor init: `full(v)`, every element v.";
    Arange = "arange": "Tensor init: the row-major element index.";
    Randn = "randn": "Tensor init: `randn(seed=s, std=1.0)`, normal with mean 0.";
    LoadNpy = "load_npy": "Tensor init: `load_npy(path)`, relative to the file's folder.";
    SaveNpy = "save_npy": "`save_npy(T, path)`: writes a tensor after the program ran.";
    // Workloads
    Workload = "workload": "Decorator: a workload over axes.";
    P = "P": "Loops: `P(...)` parallel, `P.seq` sequential, `P.sel` sparse, `P.when`/`P.otherwise`, `P.pipe`.";
    Channel = "Channel": "`Channel(name, depth=n)`: a CSP channel of task completions.";
    Event = "Event": "`Event(name)`: a rendezvous channel (depth 0).";
    Send = "send": "`send(ch, task)`: sends a task's completion on a channel.";
    Consume = "consume": "`with consume(ch) as t:` runs its body once per task received.";
    Combine = "combine": "`combine(w1, w2, ...)`: workloads whose order the schedule decides.";
    Sequential = "sequential": "`sequential(w1, w2, ...)`: workloads run in order.";
    SlotLoadU64 = "slot_load_u64": "`slot_load_u64(slot, T[i], row=0, col=0)`: loads a tensor element into a slot.";
    SlotU64 = "slot_u64": "`slot_u64(slot)`: a slot's value in a predicate or key.";
    // Schedules
    DispatchPolicy = "DispatchPolicy": "round_robin(n), affinity(key), hash(key), dispatch_by(key), work_steal().";
    TimingPolicy = "TimingPolicy": "immediate, batched(n), interleaved(n), rate_limit(x).";
    TaskWindow = "TaskWindow": "`TaskWindow(size, unit, mode)`: bounds the tasks in flight.";
    WindowMode = "WindowMode": "STALL, ABORT, BENCHMARK.";
    Deps = "Deps": "`Deps(mode=DepsMode...)`: how task dependencies are found.";
    DepsMode = "DepsMode": "tensor_map_exact, tensor_map_coarse, explicit.";
    ReadyPolicy = "ReadyPolicy": "fifo(), work_steal(), priority(key).";
    Pools = "Pools": "single(), by_exec_unit().";
    TraceLevel = "TraceLevel": "NONE, SUMMARY, TIMING, FULL: `program.enable_tracing(level)` records the simulated timeline (shown in a notebook; `wsp run --trace` writes it).";
    // Layouts
    TensorLayout = "TensorLayout": "default(rank=r), sharded(dim=d, rank=r, mesh_axis=m).";
    TensorShard = "TensorShard": "`TensorShard(mesh_axis)`: a dimension split over a mesh axis.";
    TensorReplicate = "TensorReplicate": "`TensorReplicate()`: a dimension held whole everywhere.";
    MemLayout = "MemLayout": "The memory order of a tensor.";
    Relayout = "relayout": "`relayout(T, layout)`: T with another layout.";
    Allreduce = "allreduce": "`allreduce(T, op=\"sum\", mesh_axis=m)`: sums over the sharded dimension.";
    Allgather = "allgather": "`allgather(T, mesh_axis=m)`: replicates a sharded tensor.";
    ReduceScatter = "reduce_scatter": "`reduce_scatter(T, op=\"sum\", mesh_axis=m)`: sums and shards dimension 0.";
    // Python builtins the subset allows
    Print = "print": "Prints values when the file runs (`print(program.stats)`).";
    Min = "min": "The smaller of integers (in predicates and keys).";
    Max = "max": "The larger of integers (in predicates and keys).";
}

impl Builtin {
    pub fn lookup(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Builtins are not exported by `pto_wsp` (they are Python's own).
    pub fn is_python_builtin(self) -> bool {
        matches!(self, Builtin::Print | Builtin::Min | Builtin::Max)
    }
}
