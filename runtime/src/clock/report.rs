//! What the clock charges for each task and what it reports: the timeline.

use crate::graph::TaskId;

/// What the clock charges for each task.
#[derive(Clone, Copy)]
pub struct Costs<'a> {
    /// Per kernel.
    pub kernels: &'a [KernelCost],
    /// Per task id, what a custom body added (`pto::cpu_sim::add_cycles`); empty without.
    pub extra_cycles: &'a [u64],
    /// Per collective, its transfer.
    pub collectives: &'a [u64],
    /// What each channel delivery adds between the sent task's end and its consumer's
    /// readiness (`__pto_wsp_channel_latency_cycles`).
    pub channel_latency: u64,
    /// Per task id, its dispatch and stream keys when they are not the graph's own: a
    /// configuration an exploration scores over a graph enumerated once.
    pub keys: Option<&'a [(i64, i64)]>,
}

/// What one kernel costs and where it runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelCost {
    pub cycles: u64,
    pub cube: bool,
    /// Of `cycles`, those of vector ops in a kernel that runs on a cube core (one mixing
    /// matmuls and vector work): utilisation counts them as the vector unit's.
    pub vector_cycles: u64,
    /// Of `cycles`, those of its global-memory loads and stores, and the bytes they move:
    /// what stretches when the cores running at once ask more of global memory than the
    /// chip has.
    pub gm_cycles: u64,
    pub gm_bytes: u64,
}

/// Where a task ran on the simulated timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub task: TaskId,
    pub aicpu: u32,
    pub dispatch: u64,
    /// Core index: cube cores first, then vector cores; `u32::MAX` for collectives.
    pub core: u32,
    /// The kernel's run on the core, after its pickup.
    pub start: u64,
    pub end: u64,
    /// When its AICPU saw it end.
    pub finish: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Timeline {
    pub total_cycles: u64,
    /// The lower bound from dependencies alone: the longest chain of dispatch latencies,
    /// kernels and collectives, with AICPUs and cores unlimited.
    pub critical_path_cycles: u64,
    /// Cycles cores spent running kernel tasks, summed over cores: over `cores × total_cycles`
    /// it is the run's core utilisation.
    pub busy_core_cycles: u64,
    /// The same, per unit: cube, vector.
    pub busy_cycles: [u64; 2],
    pub spans: Vec<Span>,
    /// Kernel tasks never dispatched: the schedule stalled (a window no task can leave).
    pub undispatched: usize,
}
