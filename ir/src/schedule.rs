//! Targets, schedule directive kinds, and the applicability table: one row per directive and
//! target, read by the analyzer (warnings) and by codegen and the runtime (what they obey).

use serde::{Deserialize, Serialize};

use crate::scalar::ScalarExpr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Target {
    CpuSim,
    AscendNpu,
}

impl Target {
    pub const ALL: &'static [Target] = &[Target::CpuSim, Target::AscendNpu];

    pub fn name(self) -> &'static str {
        match self {
            Target::CpuSim => "cpu_sim",
            Target::AscendNpu => "ascend_npu",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// "`cpu_sim` or `ascend_npu`"
    pub fn names() -> String {
        let names: Vec<String> = Target::ALL
            .iter()
            .map(|t| format!("`{}`", t.name()))
            .collect();
        names.join(" or ")
    }
}

/// A schedule directive, as far as applicability distinguishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DirectiveKind {
    RoundRobin,
    Affinity,
    HashKey,
    DispatchBy,
    WorkSteal,
    Streams,
    StreamBy,
    Immediate,
    Batched,
    Interleaved,
    RateLimit,
    WindowStall,
    WindowAbort,
    WindowBenchmark,
    Deps,
    Ready,
    Pools,
    Start,
    Trace,
    SpatialMap,
}

impl DirectiveKind {
    /// How the user wrote it.
    pub fn spelling(self) -> &'static str {
        match self {
            DirectiveKind::RoundRobin => "DispatchPolicy.round_robin",
            DirectiveKind::Affinity => "DispatchPolicy.affinity",
            DirectiveKind::HashKey => "DispatchPolicy.hash",
            DirectiveKind::DispatchBy => "DispatchPolicy.dispatch_by",
            DirectiveKind::WorkSteal => "DispatchPolicy.work_steal",
            DirectiveKind::Streams => "streams",
            DirectiveKind::StreamBy => "stream_by",
            DirectiveKind::Immediate => "TimingPolicy.immediate",
            DirectiveKind::Batched => "TimingPolicy.batched",
            DirectiveKind::Interleaved => "TimingPolicy.interleaved",
            DirectiveKind::RateLimit => "TimingPolicy.rate_limit",
            DirectiveKind::WindowStall => "TaskWindow(..., WindowMode.STALL)",
            DirectiveKind::WindowAbort => "TaskWindow(..., WindowMode.ABORT)",
            DirectiveKind::WindowBenchmark => "TaskWindow(..., WindowMode.BENCHMARK)",
            DirectiveKind::Deps => "task_graph(deps=...)",
            DirectiveKind::Ready => "task_graph(ready=...)",
            DirectiveKind::Pools => "task_graph(pools=...)",
            DirectiveKind::Start => "task_graph(start=...)",
            DirectiveKind::Trace => "task_graph(trace=...)",
            DirectiveKind::SpatialMap => "spatial_map",
        }
    }
}

/// What a target does with a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Applicability {
    /// Obeyed exactly.
    Enforced,
    /// Obeyed in part; the note says what happens instead.
    Partial(&'static str),
    /// Written into the emitted sources, not executed here; the note says by what.
    EmitOnly(&'static str),
    /// Not accepted; the note says why.
    Rejected(&'static str),
}

impl Applicability {
    pub fn name(self) -> &'static str {
        match self {
            Applicability::Enforced => "enforced",
            Applicability::Partial(_) => "partial",
            Applicability::EmitOnly(_) => "emit-only",
            Applicability::Rejected(_) => "rejected",
        }
    }
}

use Applicability::{EmitOnly, Enforced, Partial, Rejected};
use DirectiveKind as D;

// What `wsp emit`'s tree does with each directive (codegen/src/npu): its AICPU expander assigns
// queues, streams and dependencies exactly as the CPU runtime does (the tree's ctest checks its
// task stream against `wsp run`'s) and stalls at the task window; the ACL runner launches the
// tasks it issues on one device stream, in issue order.
const NPU_QUEUES: &str = "the emitted expander gives each task the AICPU queue cpu_sim gives it, but the ACL runner launches every task on one device stream in issue order";
const NPU_STEAL: &str = "the emitted expander queues every task on AICPU 0, as cpu_sim does, and nothing steals: the ACL runner launches every task on one device stream in issue order";
const NPU_STREAMS: &str = "the emitted expander gives each task the stream cpu_sim gives it, but the ACL runner launches every task on one device stream in issue order";
const NPU_TIMING: &str =
    "it is recorded in the emitted plan; the expander issues each task as soon as it is expanded";

/// The applicability table.
pub const APPLICABILITY: &[(DirectiveKind, Applicability, Applicability)] = &[
    // (directive, cpu_sim, ascend_npu)
    (D::RoundRobin, Enforced, Partial(NPU_QUEUES)),
    (D::Affinity, Enforced, Partial(NPU_QUEUES)),
    (D::HashKey, Enforced, Partial(NPU_QUEUES)),
    (D::DispatchBy, Enforced, Partial(NPU_QUEUES)),
    (D::WorkSteal, Enforced, Partial(NPU_STEAL)),
    (D::Streams, Enforced, Partial(NPU_STREAMS)),
    (D::StreamBy, Enforced, Partial(NPU_STREAMS)),
    (D::Immediate, Enforced, Enforced),
    (D::Batched, Enforced, EmitOnly(NPU_TIMING)),
    (D::Interleaved, Enforced, EmitOnly(NPU_TIMING)),
    (
        D::RateLimit,
        Enforced,
        Rejected("the AICPU expander has no clock to limit issue against"),
    ),
    (D::WindowStall, Enforced, Enforced),
    (
        D::WindowAbort,
        Partial("the window stalls instead of aborting: a task that would overflow it waits"),
        Rejected("the AICPU expander can only stall when the window is full"),
    ),
    (
        D::WindowBenchmark,
        Partial("the window stalls, as STALL does; no benchmark statistics are kept"),
        Rejected("the AICPU expander can only stall when the window is full"),
    ),
    (
        D::Deps,
        Partial("dependencies are always tracked exactly, by the tensor regions each task touches"),
        Partial(
            "the emitted expander always tracks dependencies exactly, by the tensor regions each task touches",
        ),
    ),
    (
        D::Ready,
        Partial("ready tasks are issued in dispatch order; the ready policy is ignored"),
        Partial(
            "the emitted expander issues tasks in enumeration order; the ready policy is ignored",
        ),
    ),
    (
        D::Pools,
        Partial("one pool per core kind (cube, vector) is always used"),
        Partial(
            "each kernel runs on the core kind its ops need (cube with a matmul, else vector); the pools are ignored",
        ),
    ),
    (
        D::Start,
        Partial(
            "each task starts once it is dispatched and its dependencies are done, while later tasks are still being built; the start policy is ignored",
        ),
        Partial(
            "the emitted expander issues each task as soon as it is expanded; the start policy is ignored",
        ),
    ),
    (
        D::Trace,
        Partial(
            "the simulated clock always runs, with the target's cost model (a `cost_fn` is not used); `program.enable_tracing(...)` chooses what is recorded",
        ),
        Partial("the tree runs on the device, which keeps no cycle trace; the policy is ignored"),
    ),
    (
        D::SpatialMap,
        Enforced,
        Partial(
            "the tree runs on one device: sharded tensors are whole, and collectives are computed whole on the host",
        ),
    ),
];

pub fn applicability(target: Target, kind: DirectiveKind) -> Applicability {
    APPLICABILITY
        .iter()
        .find(|(k, ..)| *k == kind)
        .map(|(_, cpu, npu)| match target {
            Target::CpuSim => *cpu,
            Target::AscendNpu => *npu,
        })
        .unwrap_or(Enforced)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WindowMode {
    Stall,
    Abort,
    Benchmark,
}

impl WindowMode {
    pub const MEMBERS: &'static [(&'static str, WindowMode)] = &[
        ("STALL", WindowMode::Stall),
        ("ABORT", WindowMode::Abort),
        ("BENCHMARK", WindowMode::Benchmark),
    ];

    /// `STALL`, `ABORT` or `BENCHMARK`.
    pub fn name(self) -> &'static str {
        Self::MEMBERS
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("STALL", |(n, _)| n)
    }

    /// The window's row in the applicability table.
    pub fn kind(self) -> DirectiveKind {
        match self {
            WindowMode::Stall => DirectiveKind::WindowStall,
            WindowMode::Abort => DirectiveKind::WindowAbort,
            WindowMode::Benchmark => DirectiveKind::WindowBenchmark,
        }
    }
}

/// A schedule directive with its arguments, as lowered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Directive {
    /// `.dispatch(DispatchPolicy.x(...))`
    Dispatch(Dispatch),
    /// `.streams(n)`
    Streams(u32),
    /// `.stream_by(lambda t: ...)`
    StreamBy(ScalarExpr),
    /// `.timing(TimingPolicy.x)`
    Timing(Timing),
    /// `.task_graph(window=TaskWindow(size, unit, mode))`
    Window {
        size: u64,
        unit: String,
        mode: WindowMode,
    },
    /// `.task_graph(deps=..., ready=..., pools=...)`: the knob's kind and its text.
    TaskGraph { kind: DirectiveKind, value: String },
    /// `.spatial_map(grid=(...))`
    SpatialMap(Vec<u64>),
}

/// Which AICPU dispatch queue a task goes to. Keys are scalar expressions over task fields;
/// a keyed policy's count (`num_aicpus=`) limits it to the first that many AICPUs, 0 to all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dispatch {
    RoundRobin(u32),
    Affinity(ScalarExpr, u32),
    Hash(ScalarExpr, u32),
    DispatchBy(ScalarExpr, u32),
    WorkSteal,
}

/// When dispatched tasks are issued to cores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Timing {
    Immediate,
    Batched(u32),
    Interleaved(u32),
    /// Tasks per second of simulated time.
    RateLimit(f64),
}

impl Directive {
    /// The directive's row in the applicability table.
    pub fn kind(&self) -> DirectiveKind {
        match self {
            Directive::Dispatch(Dispatch::RoundRobin(_)) => DirectiveKind::RoundRobin,
            Directive::Dispatch(Dispatch::Affinity(..)) => DirectiveKind::Affinity,
            Directive::Dispatch(Dispatch::Hash(..)) => DirectiveKind::HashKey,
            Directive::Dispatch(Dispatch::DispatchBy(..)) => DirectiveKind::DispatchBy,
            Directive::Dispatch(Dispatch::WorkSteal) => DirectiveKind::WorkSteal,
            Directive::Streams(_) => DirectiveKind::Streams,
            Directive::StreamBy(_) => DirectiveKind::StreamBy,
            Directive::Timing(Timing::Immediate) => DirectiveKind::Immediate,
            Directive::Timing(Timing::Batched(_)) => DirectiveKind::Batched,
            Directive::Timing(Timing::Interleaved(_)) => DirectiveKind::Interleaved,
            Directive::Timing(Timing::RateLimit(_)) => DirectiveKind::RateLimit,
            Directive::Window { mode, .. } => mode.kind(),
            Directive::TaskGraph { kind, .. } => *kind,
            Directive::SpatialMap(_) => DirectiveKind::SpatialMap,
        }
    }
}
