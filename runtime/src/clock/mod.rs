//! The simulated clock: a deterministic discrete-event model of AICPUs dispatching tasks to
//! cube and vector cores, following the program's schedule. It reads only the task graph,
//! the kernels' per-op costs and the target description, so `total_cycles` is a pure function
//! of the program, its inputs and the target.
//!
//! The model:
//! - Each task goes to one AICPU's queue by the dispatch policy: `round_robin(n)` over the
//!   first min(n, aicpus) queues in enumeration order; `affinity(key)` and `dispatch_by(key)`
//!   to queue key mod aicpus; `hash(key)` to a mixed hash of the key mod aicpus;
//!   `work_steal` starts the tasks that wait for nothing on AICPU 0's queue and puts each
//!   task a dispatch makes ready on the dispatching AICPU's; an AICPU hands a task out only to
//!   arrive as a core of its kind frees up, and takes another AICPU's earliest ready task,
//!   paying `steal_latency`, when it would start it sooner. Without a policy, round-robin
//!   over all AICPUs.
//! - Each AICPU has a ready set fed by dependency resolution: a task is ready when every task
//!   it depends on has been dispatched, at the time the last of them ends, and an AICPU hands
//!   out ready tasks by ready time, then enumeration order (a task waiting on its predecessor
//!   holds up nothing behind it). The AICPU is then busy for the dispatch latency, and the
//!   task goes to the earliest free core of its unit (cube if the kernel has a matmul, else
//!   vector) among the clusters the AICPU owns (cluster c: AICPU c mod aicpus, as
//!   hw-native-sys/simpler assigns them). The core picks it up (`core_pickup`), runs it, and
//!   its AICPU sees it end `completion_latency` later: only then may its successors go and
//!   the core take another task.
//! - Global memory: a kernel's loads and stores stretch when the tasks running at its start
//!   and it ask more bytes per cycle than the chip's bandwidth (`chip_gm_gb_s`) gives.
//! - `streams(n)`: a task also waits for the previous task of its stream (`stream_by(key)` mod
//!   n, or enumeration order mod n) to end.
//! - Timing: `immediate` as above; `batched(n)` dispatches n ready tasks at once, paying the
//!   latency once plus `batch_issue` per further task; `interleaved(n)` lets an AICPU take at
//!   most n tasks of one stream before turning to the next stream that has a ready task
//!   (among its first 64 ready tasks);
//!   `rate_limit(r)` spaces dispatches at least 1/r simulated seconds apart.
//! - `TaskWindow(size, "tasks", STALL)`: at most `size` tasks dispatched and not ended; an
//!   AICPU stalls until one ends.
//!
//! An index launch stays one node of the clock's graph, whatever its instance count: the
//! instances that wait only for what every instance waits for become ready together, and
//! each AICPU holds them as one run of its ready set (the instances the policy gives it, in
//! order). An instance that has dependencies of its own (an edge to or from it alone, or a
//! link to an instance of an earlier launch) is resolved on its own, and costs memory only
//! while it waits. So the clock's memory grows with entries and edges, not with instances,
//! and the result is the one the same graph gives with every instance a task of its own
//! (the tests compare the two). Streams order every instance after the one before it in its
//! stream: under them, and for a trace, the caller expands launches first
//! ([`needs_instances`], [`Graph::expand`](crate::graph::Graph::expand)).
//!
//! The files: `policy.rs` reads the schedule's directives; `graph.rs` builds the clock's graph
//! and resolves dependencies; `ready.rs` holds each AICPU's ready set; `dispatch.rs` runs the
//! AICPUs and cores; `critical.rs` finds the critical path; `target.rs` reads the target
//! description; `kernel_model.rs` costs each kernel from its AICore instructions with the
//! description's instruction table; `report.rs` holds the results; `swimlane.rs` writes them
//! in simpler's profiling formats.

mod critical;
mod dispatch;
mod graph;
pub mod kernel_model;
mod policy;
mod ready;
mod report;
pub mod swimlane;
pub mod target;
#[cfg(test)]
mod tests;

pub use dispatch::{owner_of_cores, simulate};
pub use policy::{Placement, needs_instances, placement, schedule_keys};
pub use report::{Costs, KernelCost, Span, Timeline};
