//! The schedule's directives as the clock follows them: the dispatch policy that gives each
//! task its AICPU, streams, timing and the task window.

use wsp_ir::Directive;
use wsp_ir::schedule::{Dispatch, Timing};

use crate::graph::{Graph, TaskId, TaskKind};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Policy {
    RoundRobin(u32),
    /// `key mod n` over the first `n` AICPUs.
    Key(u32),
    /// The key's hash over the first `n` AICPUs.
    Hash(u32),
    WorkSteal,
}

impl Policy {
    /// The AICPU of the kernel task with this ordinal (its place among the kernel tasks, in
    /// enumeration order) and dispatch key.
    pub(super) fn queue(self, ordinal: u64, key: i64) -> u32 {
        match self {
            Policy::RoundRobin(k) => (ordinal % k as u64) as u32,
            Policy::WorkSteal => 0,
            Policy::Key(k) => key.rem_euclid(k as i64) as u32,
            Policy::Hash(k) => (mix(key) % k as u64) as u32,
        }
    }
}

fn mix(key: i64) -> u64 {
    // splitmix64: a fixed hash, the same on every machine.
    let mut z = (key as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The directives of a schedule the clock follows.
pub(super) struct Rules {
    pub(super) policy: Policy,
    pub(super) streams: u32,
    stream_by: bool,
    pub(super) timing: Timing,
    pub(super) window: u64,
}

impl Rules {
    pub(super) fn of(schedule: &[Directive], aicpus: u32) -> Rules {
        let mut r = Rules {
            policy: Policy::RoundRobin(aicpus),
            streams: 0,
            stream_by: false,
            timing: Timing::Immediate,
            window: u64::MAX,
        };
        for d in schedule {
            match d {
                Directive::Dispatch(Dispatch::RoundRobin(k)) => {
                    r.policy = Policy::RoundRobin((*k).clamp(1, aicpus))
                }
                // `num_aicpus=0` (the default) is every AICPU; more than the target has is all
                // of them, as for round robin.
                Directive::Dispatch(Dispatch::Affinity(_, k) | Dispatch::DispatchBy(_, k)) => {
                    r.policy = Policy::Key(if *k == 0 { aicpus } else { (*k).min(aicpus) })
                }
                Directive::Dispatch(Dispatch::Hash(_, k)) => {
                    r.policy = Policy::Hash(if *k == 0 { aicpus } else { (*k).min(aicpus) })
                }
                Directive::Dispatch(Dispatch::WorkSteal) => r.policy = Policy::WorkSteal,
                Directive::Streams(k) => r.streams = *k,
                Directive::StreamBy(_) => r.stream_by = true,
                Directive::Timing(t) => r.timing = t.clone(),
                // ABORT and BENCHMARK stall too, as the applicability table says.
                Directive::Window { size, .. } => r.window = (*size).max(1),
                _ => {}
            }
        }
        if r.stream_by && r.streams == 0 {
            r.streams = 1;
        }
        r
    }

    /// The stream of the kernel task with this ordinal and stream key.
    pub(super) fn stream(&self, ordinal: u64, key: i64) -> u32 {
        if self.stream_by {
            key.rem_euclid(self.streams as i64) as u32
        } else {
            (ordinal % self.streams as u64) as u32
        }
    }
}

/// The keys a schedule dispatches and streams by: its last keyed dispatch policy's and its
/// `stream_by`'s. What the enumerator evaluates for each task.
pub fn schedule_keys(
    schedule: &[Directive],
) -> (Option<&wsp_ir::ScalarExpr>, Option<&wsp_ir::ScalarExpr>) {
    let mut out = (None, None);
    for d in schedule {
        match d {
            Directive::Dispatch(
                Dispatch::Affinity(k, _) | Dispatch::Hash(k, _) | Dispatch::DispatchBy(k, _),
            ) => out.0 = Some(k),
            Directive::StreamBy(k) => out.1 = Some(k),
            _ => {}
        }
    }
    out
}

/// Whether the clock needs a graph whose launches are expanded ([`Graph::expand`]) for this
/// schedule: with streams, each instance waits for the one before it in its stream.
pub fn needs_instances(schedule: &[Directive]) -> bool {
    schedule
        .iter()
        .any(|d| matches!(d, Directive::Streams(_) | Directive::StreamBy(_)))
}

/// Where the schedule puts each task of `lo..hi` of an expanded graph.
pub struct Placement {
    /// Per task: its AICPU's queue; `u32::MAX` for a task that is not dispatched (a barrier
    /// or a collective completes on its own).
    pub queue_of: Vec<u32>,
    /// Per task, with `streams(n)`: its stream; empty without streams.
    pub stream_of: Vec<u32>,
}

/// The dispatch policy's queue and the stream of every kernel task of `lo..hi` of an
/// expanded graph, in enumeration order: what `--dump-tasks` and the NPU tree's expander
/// record. The clock places tasks by the same rules ([`Policy::queue`], [`Rules::stream`]).
pub fn placement(
    graph: &Graph,
    lo: TaskId,
    hi: TaskId,
    schedule: &[Directive],
    aicpus: u32,
) -> Placement {
    let rules = Rules::of(schedule, aicpus);
    let n = (hi - lo) as usize;
    let mut queue_of = vec![u32::MAX; n];
    let mut stream_of = vec![u32::MAX; if rules.streams > 0 { n } else { 0 }];
    let mut ordinal = 0u64;
    for i in 0..n {
        if !matches!(graph.tasks[lo as usize + i].kind, TaskKind::Kernel(_)) {
            continue;
        }
        let keys = graph.keys_of(lo + i as TaskId);
        queue_of[i] = rules.policy.queue(ordinal, keys.0);
        if rules.streams > 0 {
            stream_of[i] = rules.stream(ordinal, keys.1);
        }
        ordinal += 1;
    }
    Placement {
        queue_of,
        stream_of,
    }
}
