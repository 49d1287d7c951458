//! The builtin table: every name `pto_wsp` exports (what `from pto_wsp import ...` may import,
//! and what every file sees without importing anything) and the Python builtins the subset
//! allows. One row per name, with its parameters, its members and its doc; binding, completion,
//! signature help and hover all read the row. The methods of schedules and programs, which
//! are values rather than names, have rows of the same shape (`SCHEDULE_METHODS`,
//! `PROGRAM_MEMBERS`). The `pto.*` ops have their own table (`wsp_ir::ops`).

use wsp_ir::DType;
use wsp_ir::schedule::WindowMode;

/// What a parameter takes, as a signature shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Int,
    /// An int or a float.
    Number,
    Str,
    /// A tuple of ints: `(4, 128)`.
    Shape,
    DType,
    /// `zeros()`, `randn(seed=1)`, `load_npy("x.npy")`, ...
    Init,
    Layout,
    Axis,
    Tensor,
    /// A tensor region inside a workload: `X[b, 0:128]`.
    View,
    Channel,
    /// A task call inside a workload: `k[i](...)`.
    Task,
    /// `lambda t: ...` over a task's fields.
    Key,
    /// `lambda t: ...` whose body is process work: a task, `send`, `for_each`, `consume`.
    Body,
    Policy,
    Window,
    /// A predicate over loop variables and slots: `SeqLens[b] <= 128`.
    Predicate,
    /// A member of an enumeration (`WindowMode.STALL`, `DepsMode.explicit`, `TraceLevel.FULL`).
    Member,
    /// A workload call or composition.
    Workload,
    /// Any value.
    Value,
}

impl ParamKind {
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Int => "int",
            ParamKind::Number => "float",
            ParamKind::Str => "str",
            ParamKind::Shape => "tuple[int, ...]",
            ParamKind::DType => "DType",
            ParamKind::Init => "Init",
            ParamKind::Layout => "TensorLayout",
            ParamKind::Axis => "axis",
            ParamKind::Tensor => "Tensor",
            ParamKind::View => "view",
            ParamKind::Channel => "Channel",
            ParamKind::Task => "task",
            ParamKind::Key => "lambda t: int",
            ParamKind::Body => "lambda t: work",
            ParamKind::Policy => "policy",
            ParamKind::Window => "TaskWindow",
            ParamKind::Predicate => "predicate",
            ParamKind::Member => "member",
            ParamKind::Workload => "workload",
            ParamKind::Value => "value",
        }
    }
}

/// One parameter of a builtin, a member or a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    /// The default as Python source, when the parameter may be left out.
    pub default: Option<&'static str>,
    pub kind: ParamKind,
    /// `*name`: any number of positional arguments.
    pub variadic: bool,
    /// Another keyword the seed documents give it (`capacity=` for a channel's `depth`).
    pub alias: Option<&'static str>,
}

impl Param {
    /// What a signature shows for the parameter: `shape`, `depth=...`, `*axes`.
    pub fn label(&self) -> String {
        match (self.variadic, self.default) {
            (true, _) => format!("*{}", self.name),
            (false, Some(_)) => format!("{}=...", self.name),
            (false, None) => self.name.to_string(),
        }
    }

    /// The parameter in full, for its documentation: `depth: int = 1`.
    pub fn detail(&self) -> String {
        let star = if self.variadic { "*" } else { "" };
        let also = self
            .alias
            .map_or(String::new(), |a| format!(" (also `{a}=`)"));
        match self.default {
            Some(d) => format!("{star}{}: {} = {d}{also}", self.name, self.kind.name()),
            None => format!("{star}{}: {}{also}", self.name, self.kind.name()),
        }
    }

    /// The parameter as `Eval::bind` reads it: the name, with `?` when it may be left out.
    /// Its name for binding: `name`, `name|alias`, then `?` when it may be left out.
    pub fn bind_name(&self) -> String {
        let mut s = self.name.to_string();
        if let Some(a) = self.alias {
            s = format!("{s}|{a}");
        }
        if self.default.is_some() {
            s.push('?');
        }
        s
    }
}

const fn req(name: &'static str, kind: ParamKind) -> Param {
    Param {
        name,
        default: None,
        kind,
        variadic: false,
        alias: None,
    }
}

const fn opt(name: &'static str, default: &'static str, kind: ParamKind) -> Param {
    Param {
        name,
        default: Some(default),
        kind,
        variadic: false,
        alias: None,
    }
}

const fn many(name: &'static str, kind: ParamKind) -> Param {
    Param {
        name,
        default: None,
        kind,
        variadic: true,
        alias: None,
    }
}

/// `p`, also taken as `alias=`.
const fn aka(mut p: Param, alias: &'static str) -> Param {
    p.alias = Some(alias);
    p
}

/// A member of a namespace builtin (`DispatchPolicy.round_robin`), or a method of a schedule or
/// program: called with `params`, or a plain value when `params` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub name: &'static str,
    pub params: Option<&'static [Param]>,
    pub doc: &'static str,
}

impl Member {
    /// `round_robin(num_aicpus)`, or the bare name of a value member.
    pub fn signature(&self) -> String {
        call_signature(self.name, self.params)
    }
}

fn call_signature(name: &str, params: Option<&[Param]>) -> String {
    match params {
        Some(ps) => {
            let labels: Vec<String> = ps.iter().map(Param::label).collect();
            format!("{name}({})", labels.join(", "))
        }
        None => name.to_string(),
    }
}

/// A member called with parameters (a macro, so that the parameter list is a constant).
macro_rules! call {
    ($name:literal, [$($param:expr),* $(,)?], $doc:literal $(,)?) => {
        Member {
            name: $name,
            params: Some(&[$($param),*]),
            doc: $doc,
        }
    };
}

const fn value(name: &'static str, doc: &'static str) -> Member {
    Member {
        name,
        params: None,
        doc,
    }
}

use ParamKind as K;

macro_rules! vocabulary {
    ($($variant:ident = $name:literal $(($($param:expr),* $(,)?))? $([$($member:expr),* $(,)?])?: $doc:literal;)*) => {
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

            /// What the name is, without its call form (`doc` adds it).
            pub fn description(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $doc,)*
                }
            }

            /// The parameters of a call of the name; `None` when it is not called.
            pub fn params(self) -> Option<&'static [Param]> {
                match self {
                    $(Builtin::$variant => vocabulary!(@params $(($($param),*))?),)*
                }
            }

            /// The members written `Name.member`, in the order completion lists them. `DType`'s
            /// and `WindowMode`'s come from their own tables (`wsp_ir`).
            pub fn members(self) -> &'static [Member] {
                match self {
                    $(Builtin::$variant => vocabulary!(@members $([$($member),*])?),)*
                }
            }
        }
    };
    (@params) => { None };
    (@params ($($param:expr),*)) => { Some(const { &[$($param),*] }) };
    (@members) => { &[] };
    (@members [$($member:expr),*]) => { const { &[$($member),*] } };
}

vocabulary! {
    // Kernels
    Kernel = "kernel"(opt("cpp_src", "None", K::Str), opt("cpp_includes", "[]", K::Value)): "Decorator: a tile kernel over `pto.*` ops, or with `cpp_src` a custom C++ body.";
    JitKernel = "jit_kernel"(opt("cpp_src", "None", K::Str), opt("cpp_includes", "[]", K::Value)): "Decorator: the same as `kernel`.";
    Pto = "pto": "The tile ops (`pto.add`, `pto.matmul`, ...).";
    Tl = "tl": "Deprecated spelling of `pto`.";
    In = "In": "Annotation: a tile the kernel reads.";
    Out = "Out": "Annotation: a tile the kernel writes.";
    InOut = "InOut": "Annotation: a tile the kernel reads and writes.";
    Tile = "Tile": "`Tile[M, N, dtype]`: a 2-D tile type.";
    Scalar = "Scalar": "`Scalar[dtype]`: a scalar kernel parameter.";
    Constexpr = "Constexpr": "`Constexpr[int]`: a compile-time integer parameter.";
    DType = "DType": "Element types:";
    // Axes and tensors
    Dense = "Dense"(req("size", K::Int)): "a static axis of `size` iterations, also written `Dense[size]`.";
    DenseDyn = "DenseDyn"(req("size", K::Int)): "an axis whose size is bound at run time (`size` by default).";
    Ragged = "Ragged"(aka(req("rows", K::Int), "outer_size"), req("lengths", K::Tensor)): "`rows` rows of run-time lengths (`outer_size=` is the original's `rows`).";
    Sparse = "Sparse"(aka(req("rows", K::Int), "outer_size"), req("indptr", K::Tensor), req("indices", K::Tensor)): "CSR routing; `P.sel` enumerates a row's entries (`P.sel(routing[b])`) or every row's (`P.sel(routing)`). `outer_size=` is the original's `rows`.";
    Tensor = "Tensor"(req("shape", K::Shape), req("dtype", K::DType), opt("init", "zeros()", K::Init), opt("layout", "TensorLayout.default(len(shape))", K::Layout)): "a global tensor.";
    Zeros = "zeros"(): "Tensor init: all zeros (the default).";
    Ones = "ones"(): "Tensor init: all ones.";
    Full = "full"(req("value", K::Number)): "Tensor init: every element `value`.";
    Arange = "arange"(): "Tensor init: the row-major element index.";
    Randn = "randn"(opt("seed", "0", K::Int), opt("std", "1.0", K::Number)): "Tensor init: normal with mean 0.";
    LoadNpy = "load_npy"(req("path", K::Str)): "Tensor init: an `.npy` file, relative to the file's folder.";
    SaveNpy = "save_npy"(req("tensor", K::Tensor), req("path", K::Str)): "writes a tensor after the program ran.";
    // Workloads
    Workload = "workload": "Decorator: a workload over axes.";
    P = "P"(many("axes", K::Axis)) [
        call!("seq", [many("axes", K::Axis)], "A sequential loop: each iteration after the one before."),
        call!("sel", [req("row", K::Axis)], "A loop over the entries a Sparse axis selects for a row: `P.sel(routing[b])`."),
        call!("when", [req("predicate", K::Predicate)], "`with P.when(pred):` runs its body where the predicate holds."),
        call!("otherwise", [], "`with P.otherwise():` runs where no `when` before it held."),
        call!("pipe", [], "`with P.pipe():` a pipeline whose stages talk over channels."),
    ]: "a parallel loop over axes (inside a workload).";
    Channel = "Channel"(opt("name", "the variable's name", K::Str), aka(opt("depth", "1", K::Int), "capacity")): "a CSP channel of task completions (`capacity=` is the tutorial's `depth=`).";
    Event = "Event"(opt("name", "the variable's name", K::Str)): "a rendezvous channel (depth 0).";
    Send = "send"(req("channel", K::Channel), req("task", K::Task)): "sends a task's completion on a channel.";
    Consume = "consume"(req("channel", K::Channel), opt("body", "None", K::Body)): "`with consume(ch) as t:` runs its body once per task received; in a process, `consume(ch, lambda t: ...)`.";
    Process = "process"(req("name", K::Str)): "a CSP process: `process(\"loader\").produces(ch).body(...)`; `connect` runs processes as a pipeline.";
    ForEach = "for_each"(req("axis", K::Axis), req("body", K::Body)): "a process body's sequential loop: `for_each(axis, lambda t: ...)`, each iteration after the one before.";
    Task = "task"(req("kernel", K::Value), req("params", K::Value), req("resources", K::Value)): "a task in a process body: `task(kernel, [i], {\"param\": X[i], ...})`, the same as `kernel[i](param=X[i], ...)`.";
    WorkloadNode = "Workload"(req("kind", K::Str), opt("kernel", "None", K::Value), opt("params", "None", K::Value), opt("resources", "None", K::Value)): "the original's workload constructor; `Workload(\"task\", kernel=k, params=[i], resources={...})` is `task(k, [i], {...})`.";
    Connect = "connect"(req("processes", K::Value), req("channels", K::Value)): "processes run concurrently as one pipeline workload, linked by channels (`with P.pipe()` in builder form).";
    Replicate = "replicate"(req("process", K::Value), req("count", K::Int)): "`count` workers sharing the channels a consuming process takes tasks from.";
    Combine = "combine"(many("workloads", K::Workload)): "workloads whose order the schedule decides.";
    Sequential = "sequential"(many("workloads", K::Workload)): "workloads run in order.";
    SlotLoadU64 = "slot_load_u64"(req("slot", K::Int), req("view", K::View), opt("row", "0", K::Int), opt("col", "0", K::Int)): "loads a tensor element into a slot (a statement of a workload, or at module level a workload of its own to compose).";
    Cond = "cond"(req("predicate", K::Predicate), req("then", K::Workload), req("otherwise", K::Workload)): "the original's conditional workload: `then` when the predicate holds when it runs, else `otherwise` (a task, a slot load, a `cond` or a workload call each); composed with `sequential(...)`.";
    SlotU64 = "slot_u64"(req("slot", K::Int)): "a slot's value in a predicate or key.";
    SlotI64 = "slot_i64"(req("slot", K::Int)): "a slot's value in a predicate or key (`slot_u64`: the original's signed reading of the same slot).";
    Symbol = "Symbol"(req("name", K::Str)): "a named run-time symbol as a task's `Scalar` argument (`s=Symbol(\"scale\")`), read when the task runs: a float parameter takes the symbol's f32 bits (`program.set_symbol_f32`), an integer one its value.";
    SymbolU64 = "symbol_u64"(req("name", K::Str)): "a named run-time symbol in a predicate or key, bound without a rebuild (`program.set_symbol_u64(name, v)`, `execute(name=v)`, `--bind`); 0 until bound.";
    AxisVar = "axis"(req("name", K::Str)): "the loop variable `name` in a predicate (`axis(\"b\") < 2`), or the task field `name` in a key.";
    // Schedules
    DispatchPolicy = "DispatchPolicy" [
        call!("round_robin", [req("num_aicpus", K::Int)], "Tasks go to the AICPUs in turn."),
        call!("affinity", [req("key_fn", K::Key), opt("num_aicpus", "0", K::Int)], "Tasks with the same key go to the same AICPU (`key mod num_aicpus`; 0: every AICPU)."),
        call!("hash", [req("key_fn", K::Key), opt("num_aicpus", "0", K::Int)], "Tasks go to the AICPU the key hashes to, among the first `num_aicpus` (0: every AICPU)."),
        call!("dispatch_by", [req("fn", K::Key), opt("num_aicpus", "0", K::Int)], "Tasks go to the AICPU the key names (`key mod num_aicpus`; 0: every AICPU)."),
        call!("work_steal", [], "Idle AICPUs take tasks from busy ones."),
    ]: "";
    TimingPolicy = "TimingPolicy" [
        value("immediate", "Each task is issued when it is ready."),
        call!("batched", [aka(req("n", K::Int), "batch_size")], "Tasks are issued `n` at a time (`batch_size=` is the tutorial's `n`)."),
        call!("interleaved", [req("n", K::Int)], "Streams take turns, `n` tasks each."),
        call!("rate_limit", [req("tasks_per_ms", K::Number)], "At most this many tasks are issued per millisecond."),
    ]: "";
    TaskWindow = "TaskWindow"(req("size", K::Int), opt("unit", "\"tasks\"", K::Str), opt("mode", "WindowMode.STALL", K::Member)): "bounds the tasks in flight.";
    WindowMode = "WindowMode": "";
    Deps = "Deps"(opt("mode", "DepsMode.tensor_map_exact", K::Member)): "how task dependencies are found.";
    DepsMode = "DepsMode" [
        value("tensor_map_exact", "Dependencies from the exact regions tasks read and write."),
        value("tensor_map_coarse", "Dependencies from whole tensors."),
        value("explicit", "Only the dependencies the workload states."),
    ]: "";
    ReadyPolicy = "ReadyPolicy" [
        call!("fifo", [], "Ready tasks run in the order they became ready."),
        call!("work_steal", [], "Idle workers take ready tasks from busy ones."),
        call!("priority", [], "Ready tasks run by priority."),
    ]: "";
    Pools = "Pools" [
        call!("single", [], "One pool of workers for every task."),
        call!("by_exec_unit", [], "One pool per execution unit (cube, vector)."),
    ]: "";
    StartPolicy = "StartPolicy" [
        call!("after_orchestration", [], "Tasks start once every task is submitted (the original's default)."),
        call!("threshold", [req("n", K::Int)], "Tasks start once `n` are ready, while the rest are still being built."),
    ]: "";
    TracePolicy = "TracePolicy" [
        call!("none", [], "No cycle-level simulation (the original's default)."),
        call!("cycles", [opt("cost_fn", "None", K::Key)], "Cycle-level simulation; `cost_fn` gives each task's cycles."),
    ]: "";
    Program = "Program": "the type of a compiled program: `.compile()` makes one.";
    SearchSpace = "SearchSpace"(): "the configurations an `AutoScheduler` explores: `add_streams`, `add_dispatch`, `add_timing` (the original's), `add_stream_by`, `add_window`, `add_bindings`; each replaces its dimension's options and returns the space.";
    AutoScheduler = "AutoScheduler"(req("workload", K::Workload)): "explores schedules of a workload: `best_config, summary = AutoScheduler(w).explore(space)`, ranked by the simulated clock's cycles.";
    ScheduleConfig = "ScheduleConfig"(opt("streams", "1", K::Int), opt("dispatch", "\"round_robin\"", K::Str), opt("dispatch_param", "4", K::Int), opt("timing", "\"immediate\"", K::Str), opt("timing_param", "None", K::Int)): "one schedule configuration, as an exploration reports it; `w.with_config(config)` applies one.";
    ExplorationSummary = "ExplorationSummary": "the type of what `explore` returns second: `print_summary()`, `top_configs(n)`, `best_config`, `speedup`, `results`, ...";
    ExplorationResult = "ExplorationResult": "the type of one entry of `summary.results`.";
    AutoSchedule = "auto_schedule"(req("workload", K::Workload), opt("verbose", "False", K::Value)): "the workload with the best configuration of `AutoScheduler(workload).find_best()` applied: `auto_schedule(w).compile()`.";
    TraceLevel = "TraceLevel" [
        value("NONE", "No trace."),
        value("SUMMARY", "Counts only."),
        value("TIMING", "Each task's start and end on the simulated clock."),
        value("FULL", "Timing and each task's arguments."),
    ]: "`program.enable_tracing(level)` records the simulated timeline (shown in a notebook; `wsp run --trace` writes it).";
    // Layouts
    TensorLayout = "TensorLayout"(req("dims", K::Layout), opt("mem", "None", K::Value)) [
        call!("default", [req("rank", K::Int)], "Every dimension replicated."),
        call!("replicated", [req("rank", K::Int)], "Every dimension replicated: the tutorial's `default`."),
        call!("sharded", [req("dim", K::Int), req("rank", K::Int), opt("mesh_axis", "0", K::Int)], "Dimension `dim` sharded over a mesh axis, the others replicated."),
    ]: "a tensor's layout: one TensorShard or TensorReplicate per dimension.";
    TensorShard = "TensorShard"(req("mesh_axis", K::Int)): "a dimension split over a mesh axis.";
    TensorReplicate = "TensorReplicate"(): "a dimension held whole everywhere.";
    MemLayout = "MemLayout"(req("strides", K::Shape)) [
        call!("row_major", [req("shape", K::Shape)], "C order: the last dimension contiguous (every tensor's, when none is given)."),
        call!("col_major", [req("shape", K::Shape)], "Fortran order: the first dimension contiguous."),
    ]: "a tensor's memory order, as element strides (`TensorLayout(dims, mem=...)`): a dense order of its dimensions.";
    Relayout = "relayout"(req("tensor", K::Tensor), aka(req("layout", K::Layout), "to")): "the tensor with another layout (`to=` is the spec's `layout=`).";
    Allreduce = "allreduce"(req("tensor", K::Tensor), opt("op", "\"sum\"", K::Str), opt("mesh_axis", "the one mesh axis the tensor is sharded on", K::Int)): "sums over the sharded dimension.";
    Allgather = "allgather"(req("tensor", K::Tensor), opt("mesh_axis", "the one mesh axis the tensor is sharded on", K::Int)): "replicates a sharded tensor.";
    ReduceScatter = "reduce_scatter"(req("tensor", K::Tensor), opt("op", "\"sum\"", K::Str), opt("mesh_axis", "the one mesh axis the tensor is sharded on", K::Int)): "sums and shards dimension 0.";
    // Python builtins the subset allows
    Print = "print"(many("values", K::Value)): "Prints values when the file runs (`print(program.stats)`).";
    Len = "len"(req("obj", K::Value)): "The length of a list, tuple or string known when the file is checked, or of a list of `program.trace` events (counted when the statement runs).";
    Open = "open"(req("file", K::Str), req("mode", K::Str)): "Only as `with open(PATH, \"w\") as f:` around `json.dump(value, f)`: the file is written atomically, relative to the `.wsp` file's folder.";
    Min = "min"(many("values", K::Int)): "The smaller of integers (in predicates and keys).";
    Max = "max"(many("values", K::Int)): "The larger of integers (in predicates and keys).";
    Float = "float"(req("x", K::Value)): "Python's `float`: a number, or a string such as `\"inf\"`, `\"-inf\"`, `\"nan\"` or `\"1e-6\"`.";
    Int = "int"(req("x", K::Number)): "Python's `int`: an int, or a float truncated toward zero.";
    Math = "math" [
        value("pi", "π, 3.141592653589793."),
        value("e", "e, 2.718281828459045."),
        value("tau", "τ = 2π."),
        value("inf", "Positive infinity (`-math.inf` is negative infinity)."),
        value("nan", "Not a number."),
        call!("sqrt", [req("x", K::Number)], "The square root of x."),
        call!("exp", [req("x", K::Number)], "e raised to x."),
        call!("log", [req("x", K::Number), opt("base", "math.e", K::Number)], "The logarithm of x to `base`."),
        call!("log2", [req("x", K::Number)], "The base-2 logarithm of x."),
        call!("log10", [req("x", K::Number)], "The base-10 logarithm of x."),
        call!("sin", [req("x", K::Number)], "The sine of x radians."),
        call!("cos", [req("x", K::Number)], "The cosine of x radians."),
        call!("tan", [req("x", K::Number)], "The tangent of x radians."),
        call!("tanh", [req("x", K::Number)], "The hyperbolic tangent of x."),
        call!("fabs", [req("x", K::Number)], "The absolute value of x, as a float."),
        call!("pow", [req("x", K::Number), req("y", K::Number)], "x raised to y, as a float."),
        call!("floor", [req("x", K::Number)], "The largest int <= x."),
        call!("ceil", [req("x", K::Number)], "The smallest int >= x."),
        call!("isqrt", [req("n", K::Int)], "The integer square root of a non-negative int."),
    ]: "Python's `math` module (after `import math`), on numbers known when the file is checked.";
    Json = "json" [
        call!("dump", [req("obj", K::Value), req("fp", K::Value), opt("indent", "None", K::Int)], "Writes `obj` as JSON, inside `with open(PATH, \"w\") as f:`."),
    ]: "Python's `json` module (after `import json`): `json.dump(value, f)` inside `with open(PATH, \"w\") as f:`, for constants and `program.trace` values.";
}

impl Builtin {
    /// The original's submodules a file may import from (`from pto_wsp.csp import send`), each
    /// with the names it has here; they are `pto_wsp`'s own names.
    pub const SUBMODULES: [(&'static str, &'static [Builtin]); 5] = [
        (
            "pto_wsp.scalar_expr",
            &[
                Builtin::AxisVar,
                Builtin::SymbolU64,
                Builtin::SlotU64,
                Builtin::SlotI64,
            ],
        ),
        (
            "pto_wsp.primitives",
            &[
                Builtin::ForEach,
                Builtin::Cond,
                Builtin::Task,
                Builtin::Combine,
                Builtin::Sequential,
                Builtin::SlotLoadU64,
            ],
        ),
        (
            "pto_wsp.csp",
            &[
                Builtin::Channel,
                Builtin::Event,
                Builtin::Process,
                Builtin::Send,
                Builtin::Consume,
                Builtin::Connect,
                Builtin::Replicate,
            ],
        ),
        ("pto_wsp.workload", &[Builtin::WorkloadNode]),
        (
            "pto_wsp.auto_schedule",
            &[
                Builtin::AutoScheduler,
                Builtin::SearchSpace,
                Builtin::ScheduleConfig,
                Builtin::ExplorationResult,
                Builtin::ExplorationSummary,
                Builtin::AutoSchedule,
            ],
        ),
    ];

    pub fn lookup(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Builtins are not exported by `pto_wsp` (they are Python's own).
    pub fn is_python_builtin(self) -> bool {
        matches!(
            self,
            Builtin::Print
                | Builtin::Min
                | Builtin::Max
                | Builtin::Float
                | Builtin::Int
                | Builtin::Math
                | Builtin::Json
                | Builtin::Len
                | Builtin::Open
        )
    }

    /// A module of Python's own, visible only after `import NAME`.
    pub fn is_module(self) -> bool {
        matches!(self, Builtin::Math | Builtin::Json)
    }

    /// `Tensor(shape, dtype, init=..., layout=...)`, or the bare name when it is not called.
    pub fn signature(self) -> String {
        call_signature(self.name(), self.params())
    }

    /// The member called `name`, from the row (or `DType`'s and `WindowMode`'s tables).
    pub fn member(self, name: &str) -> Option<Member> {
        if let Some(m) = self.members().iter().find(|m| m.name == name) {
            return Some(*m);
        }
        let name = self.member_names().into_iter().find(|&m| m == name)?;
        Some(value(name, ""))
    }

    /// The names of the members, in order.
    pub fn member_names(self) -> Vec<&'static str> {
        match self {
            Builtin::DType => DType::ALL.iter().map(|d| d.name()).collect(),
            Builtin::WindowMode => WindowMode::MEMBERS.iter().map(|(n, _)| *n).collect(),
            b => b.members().iter().map(|m| m.name).collect(),
        }
    }

    /// The documentation: the call form and what the name is, then the members.
    pub fn doc(self) -> String {
        let description = self.description();
        let members = self.members();
        let called = members.iter().any(|m| m.params.is_some());
        let list = if called {
            let list: Vec<String> = members.iter().map(Member::signature).collect();
            list.join(", ")
        } else {
            let sep = if self == Builtin::DType { " " } else { ", " };
            self.member_names().join(sep)
        };
        match (self.params(), list.is_empty()) {
            (Some(_), true) => format!("`{}`: {description}", self.signature()),
            (Some(_), false) => format!("`{}`: {description} Members: {list}.", self.signature()),
            (None, true) => description.to_string(),
            (None, false) if description.is_empty() => format!("{list}."),
            // "Element types: F16 BF16 ...".
            (None, false) if description.ends_with(':') => format!("{description} {list}."),
            (None, false) => format!("{list}: {description}"),
        }
    }
}

/// The methods of a workload call or composition: the schedule's directives and `compile`.
pub const SCHEDULE_METHODS: &[Member] = &[
    call!(
        "dispatch",
        [req("policy", K::Policy)],
        "How tasks are assigned to AICPUs."
    ),
    call!(
        "streams",
        [req("n", K::Int)],
        "The number of streams tasks are issued on."
    ),
    call!(
        "stream_by",
        [req("key", K::Key)],
        "The stream each task goes to."
    ),
    call!(
        "timing",
        [req("policy", K::Policy)],
        "When tasks are issued."
    ),
    call!(
        "task_graph",
        [
            opt("window", "None", K::Window),
            opt("deps", "Deps()", K::Policy),
            opt("ready", "ReadyPolicy.fifo()", K::Policy),
            opt("pools", "Pools.single()", K::Policy),
            opt("start", "StartPolicy.after_orchestration()", K::Policy),
            opt("trace", "TracePolicy.none()", K::Policy),
        ],
        "Task-graph execution: window, dependency mode, ready policy, pools.",
    ),
    call!(
        "spatial_map",
        [req("grid", K::Shape)],
        "The spatial grid sharded tensors map onto."
    ),
    call!(
        "compile",
        [opt("target", "\"cpu_sim\"", K::Str)],
        "A program for a target."
    ),
    call!(
        "with_config",
        [req("config", K::Value)],
        "The workload with a configuration applied: an exploration's `best_config` (chosen when the file runs) or a `ScheduleConfig(...)`; its dispatch, streams, stream key, timing and window replace the workload's."
    ),
    call!(
        "named",
        [req("name", K::Str)],
        "The original names its generated artifact; here a program is named after the variable it is bound to, so this changes nothing."
    ),
    call!(
        "start",
        [],
        "A `connect(...)` pipeline only: runs it on `cpu_sim` where the statement stands (the spec's `pipeline.start()`)."
    ),
    call!(
        "join",
        [],
        "A `connect(...)` pipeline only: waits for it; `start()` returns when its tasks are done, so this does nothing more."
    ),
];

/// The builder methods of `process(name)`: channels it takes from and sends on, then its body.
pub const PROCESS_METHODS: &[Member] = &[
    call!(
        "consumes",
        [many("channels", K::Channel)],
        "The channels the process takes tasks from."
    ),
    call!(
        "produces",
        [many("channels", K::Channel)],
        "The channels the process sends tasks on."
    ),
    call!(
        "body",
        [req("computation", K::Body)],
        "What the process does: `for_each(axis, lambda t: ...)`, `consume(ch, lambda t: ...)`, a task or `send`."
    ),
];

/// The members of a compiled program.
pub const PROGRAM_MEMBERS: &[Member] = &[
    call!(
        "execute",
        [],
        "Runs the program; binds run-time symbols by name: `program.execute(seq=16)`."
    ),
    call!("synchronize", [], "Waits for the program to finish."),
    call!(
        "set_symbol_u64",
        [req("name", K::Str), req("value", K::Int)],
        "Binds a run-time symbol for this and later `execute()`s: `program.set_symbol_u64(\"seq\", 16)` is `execute(seq=16)`."
    ),
    call!(
        "set_symbol_f32",
        [req("name", K::Str), req("value", K::Number)],
        "Binds a run-time symbol to a float's f32 bits (the original's), for a kernel `Scalar` argument `Symbol(name)`: `program.set_symbol_f32(\"scale\", 2.0)`."
    ),
    call!(
        "set_axis_sizes",
        [req("axis_sizes", K::Value)],
        "Binds DenseDyn axis sizes by name for later `execute()`s: `program.set_axis_sizes({\"seq\": 16})`."
    ),
    call!(
        "enable_tracing",
        [opt("level", "TraceLevel.TIMING", K::Member)],
        "Records later runs in `program.trace` at this level."
    ),
    call!(
        "disable_tracing",
        [],
        "Stops recording runs in `program.trace` (`TraceLevel.NONE`)."
    ),
    call!(
        "clear_trace",
        [],
        "Forgets the runs `program.trace` has recorded."
    ),
    call!(
        "is_complete",
        [],
        "True once the program has run: `execute()` returns when its tasks are done."
    ),
    value("stats", "The run's statistics."),
    value(
        "using_cpp_backend",
        "`True`: every program is generated C++ (a `cpu_sim` library, an `ascend_npu` source tree), as the original's codegen-first programs are.",
    ),
    value(
        "trace",
        "The runs recorded since tracing was enabled, on the simulated clock: `print_summary()`, `summary()`, `get_task_events()`, `get_kernel_events(name)`, `to_chrome_trace()`.",
    ),
    value(
        "codegen_artifact_dir",
        "`None` for a `cpu_sim` program, as in the original (it builds and runs in place); an `ascend_npu` tree is written by `wsp emit FILE -o DIR`.",
    ),
];

/// The methods of `program.trace` (the original's `ExecutionTrace`). Its times are simulated
/// time at the target's clock.
pub const TRACE_METHODS: &[Member] = &[
    call!(
        "print_summary",
        [],
        "Prints the summary: events, tasks, kernel runs, times, and each kernel's totals."
    ),
    call!(
        "summary",
        [],
        "A dict: `total_events`, `task_count`, `kernel_invocations`, `total_time_ms`, `kernel_time_ms`, `avg_task_time_us`, `unique_kernels`, `kernels` (per kernel: `count`, `cycles`, `time_ms`), `total_cycles`, `critical_path_cycles`, `core_utilization`, `clock_ghz`, `trace_level`."
    ),
    call!(
        "get_task_events",
        [],
        "One event per task (at `TraceLevel.TIMING` and above), from its dispatch to when its AICPU saw it end."
    ),
    call!(
        "get_kernel_events",
        [opt("kernel_name", "None", K::Str)],
        "One event per kernel run on a core (at `TraceLevel.TIMING` and above), of one kernel or all."
    ),
    call!(
        "to_chrome_trace",
        [],
        "The Chrome/Perfetto trace of the recorded runs: the document `wsp run --trace` writes."
    ),
    call!(
        "total_time_ms",
        [],
        "Simulated time from the first recorded event to the last."
    ),
    call!(
        "kernel_time_ms",
        [],
        "Simulated time summed over kernel runs."
    ),
];

/// The methods of `SearchSpace()`: each replaces its dimension's options and returns the space.
pub const SPACE_METHODS: &[Member] = &[
    call!(
        "add_streams",
        [req("values", K::Value)],
        "Stream counts to try: `add_streams([1, 2, 4, 8])`."
    ),
    call!(
        "add_dispatch",
        [
            req("policies", K::Value),
            opt("params", "[4]", K::Value),
            opt("keys", "None", K::Value)
        ],
        "Dispatch policies (`round_robin`, `work_steal`, `affinity`, `hash`, `dispatch_by`), each with every AICPU count in `params`; a keyed policy with every key in `keys` (`affinity` without keys uses the original's `t.get(\"batch\", 0)`)."
    ),
    call!(
        "add_timing",
        [req("policies", K::Value), opt("params", "[None]", K::Value)],
        "Timing policies (`immediate`, `batched`, `interleaved`), each with every size in `params` (`immediate` takes none)."
    ),
    call!(
        "add_stream_by",
        [req("keys", K::Value)],
        "Keys that choose each task's stream (`lambda t: t.e`), or `None` for streams in turn."
    ),
    call!(
        "add_window",
        [
            req("sizes", K::Value),
            opt("modes", "[WindowMode.STALL]", K::Value)
        ],
        "Task-window sizes (in tasks) and modes to try; `None` keeps the workload's window."
    ),
    call!(
        "add_bindings",
        [],
        "Run-time symbols' values, by name (`add_bindings(requests=[1, 4, 16])`): every configuration is scored over every combination, its cycles summed."
    ),
];

/// The methods of `AutoScheduler(workload)`.
pub const SCHEDULER_METHODS: &[Member] = &[
    call!(
        "explore",
        [
            req("space", K::Value),
            opt("trials", "3", K::Int),
            opt("warmup", "1", K::Int),
            opt("verbose", "False", K::Value),
            opt("metric", "\"cycles\"", K::Str),
            opt("target", "\"cpu_sim\"", K::Str)
        ],
        "Scores every configuration of the space: `(best_config, summary)`. With `metric=\"cycles\"` the tasks run once and each configuration is timed by the simulated clock (deterministic: `trials` does not matter); `metric=\"wall\"` runs each `trials` times and takes the mean wall-clock time, as the original does."
    ),
    call!(
        "find_best",
        [opt("max_streams", "8", K::Int), opt("trials", "3", K::Int)],
        "The best configuration of the original's default space: 1, 2, 4 and `max_streams` streams (at most 8), `round_robin(4)` or `work_steal`, `immediate`."
    ),
    call!(
        "register_kernel",
        [req("name", K::Str), req("impl", K::Value)],
        "The original's Python kernel implementations; kernels here are compiled, so this is refused."
    ),
];

/// The members of an exploration's summary (the original's `ExplorationSummary`).
pub const SUMMARY_MEMBERS: &[Member] = &[
    call!(
        "print_summary",
        [],
        "Prints what was tested, the baseline and best times, the speedup and the best configuration."
    ),
    call!(
        "top_configs",
        [opt("n", "5", K::Int)],
        "The `n` best `(config, time_ms)` pairs, ties in the space's order."
    ),
    value(
        "best_config",
        "The configuration with the least score; the first of equals.",
    ),
    value(
        "best_time_ms",
        "Its time: simulated ms at the target's clock (or wall-clock ms with `metric=\"wall\"`).",
    ),
    value(
        "baseline_time_ms",
        "The time of the program as written, its own schedule.",
    ),
    value("speedup", "Baseline time over best time."),
    value("best_cycles", "The best configuration's simulated cycles."),
    value(
        "baseline_cycles",
        "The simulated cycles of the program as written.",
    ),
    value(
        "results",
        "Every configuration's `ExplorationResult`, in the space's order.",
    ),
];

/// The row of a method or member of a schedule or program.
pub fn method(list: &'static [Member], name: &str) -> Option<&'static Member> {
    list.iter().find(|m| m.name == name)
}
