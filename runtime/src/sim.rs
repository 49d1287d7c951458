//! The simulated clock: a deterministic discrete-event model of AICPUs dispatching tasks to
//! cube and vector cores, following the program's schedule. It reads only the task graph,
//! the kernels' per-op costs and the target description, so `total_cycles` is a pure function
//! of the program, its inputs and the target.
//!
//! The model:
//! - Each task goes to one AICPU's queue by the dispatch policy: `round_robin(n)` over the
//!   first min(n, aicpus) queues in enumeration order; `affinity(key)` and `dispatch_by(key)`
//!   to queue key mod aicpus; `hash(key)` to a mixed hash of the key mod aicpus;
//!   `work_steal` puts every task on AICPU 0's queue, where enumeration made it, and an AICPU
//!   whose queue is empty takes the oldest ready task of the fullest other queue. Without a
//!   policy, round-robin over all AICPUs.
//! - An AICPU dispatches its queue in order: a task leaves when every task it depends on has
//!   been dispatched, at the time the last of them ends; the AICPU is then busy for the
//!   dispatch latency, and the task starts on the earliest free core of its unit (cube if the
//!   kernel has a matmul, else vector).
//! - `streams(n)`: a task also waits for the previous task of its stream (`stream_by(key)` mod
//!   n, or enumeration order mod n) to end.
//! - Timing: `immediate` as above; `batched(n)` dispatches n ready tasks at once, paying the
//!   latency once plus `batch_issue` per further task; `interleaved(n)` lets an AICPU take at
//!   most n tasks of one stream before turning to the next stream that has a ready task;
//!   `rate_limit(r)` spaces dispatches at least 1/r simulated seconds apart.
//! - `TaskWindow(size, "tasks", STALL)`: at most `size` tasks dispatched and not ended; an
//!   AICPU stalls until one ends.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wsp_ir::Directive;
use wsp_ir::schedule::{Dispatch, Timing};

use crate::graph::{Graph, TaskId, TaskKind};
use crate::target::TargetDesc;

/// What one kernel costs and where it runs.
#[derive(Debug, Clone, Copy)]
pub struct KernelCost {
    pub cycles: u64,
    pub cube: bool,
}

/// Where a task ran on the simulated timeline.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub task: TaskId,
    pub aicpu: u32,
    pub dispatch: u64,
    /// Core index: cube cores first, then vector cores; `u32::MAX` for collectives.
    pub core: u32,
    pub start: u64,
    pub end: u64,
}

pub struct Timeline {
    pub total_cycles: u64,
    /// Cycles cores spent running kernel tasks, summed over cores: over `cores × total_cycles`
    /// it is the run's core utilisation.
    pub busy_core_cycles: u64,
    pub spans: Vec<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Policy {
    RoundRobin(u32),
    /// `key mod n` over the first `n` AICPUs.
    Key(u32),
    /// The key's hash over the first `n` AICPUs.
    Hash(u32),
    WorkSteal,
}

fn mix(key: i64) -> u64 {
    // splitmix64: a fixed hash, the same on every machine.
    let mut z = (key as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where the schedule puts each task of `lo..hi`: its AICPU queue and its stream.
pub struct Placement {
    policy: Policy,
    pub streams: u32,
    timing: Timing,
    window: u64,
    /// Per task: its AICPU's queue; `u32::MAX` for a task that is not dispatched (a barrier
    /// or a collective completes on its own).
    pub queue_of: Vec<u32>,
    /// Per task, with `streams(n)`: its stream; empty without streams.
    pub stream_of: Vec<u32>,
}

/// The dispatch policy's queue and the stream of every kernel task of `lo..hi`, in
/// enumeration order: what the simulated clock dispatches from, and what `--dump-tasks` and
/// the NPU tree's expander record.
pub fn placement(
    graph: &Graph,
    lo: TaskId,
    hi: TaskId,
    schedule: &[Directive],
    aicpus: u32,
) -> Placement {
    let n = (hi - lo) as usize;
    let mut policy = Policy::RoundRobin(aicpus);
    let mut streams = 0u32;
    let mut stream_by = false;
    let mut timing = Timing::Immediate;
    let mut window = u64::MAX;
    for d in schedule {
        match d {
            Directive::Dispatch(Dispatch::RoundRobin(k)) => {
                policy = Policy::RoundRobin((*k).clamp(1, aicpus))
            }
            // `num_aicpus=0` (the default) is every AICPU; more than the target has is all of
            // them, as for round robin.
            Directive::Dispatch(Dispatch::Affinity(_, k) | Dispatch::DispatchBy(_, k)) => {
                policy = Policy::Key(if *k == 0 { aicpus } else { (*k).min(aicpus) })
            }
            Directive::Dispatch(Dispatch::Hash(_, k)) => {
                policy = Policy::Hash(if *k == 0 { aicpus } else { (*k).min(aicpus) })
            }
            Directive::Dispatch(Dispatch::WorkSteal) => policy = Policy::WorkSteal,
            Directive::Streams(k) => streams = *k,
            Directive::StreamBy(_) => stream_by = true,
            Directive::Timing(t) => timing = t.clone(),
            // ABORT and BENCHMARK stall too, as the applicability table says.
            Directive::Window { size, .. } => window = (*size).max(1),
            _ => {}
        }
    }
    if stream_by && streams == 0 {
        streams = 1;
    }
    let mut queue_of = vec![u32::MAX; n];
    let mut stream_of = vec![u32::MAX; if streams > 0 { n } else { 0 }];
    let mut ordinal = 0u64;
    for i in 0..n {
        let t = &graph.tasks[lo as usize + i];
        if !matches!(t.kind, TaskKind::Kernel(_)) {
            continue;
        }
        let keys = graph.keys_of(lo + i as TaskId);
        queue_of[i] = match policy {
            Policy::RoundRobin(k) => (ordinal % k as u64) as u32,
            Policy::WorkSteal => 0,
            Policy::Key(k) => keys.0.rem_euclid(k as i64) as u32,
            Policy::Hash(k) => (mix(keys.0) % k as u64) as u32,
        };
        if streams > 0 {
            stream_of[i] = if stream_by {
                keys.1.rem_euclid(streams as i64) as u32
            } else {
                (ordinal % streams as u64) as u32
            };
        }
        ordinal += 1;
    }
    Placement {
        policy,
        streams,
        timing,
        window,
        queue_of,
        stream_of,
    }
}

/// Simulates tasks `lo..hi` of the graph under `schedule`; the spans are kept for a trace.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    graph: &Graph,
    lo: TaskId,
    hi: TaskId,
    schedule: &[Directive],
    costs: &[KernelCost],
    extra_cycles: &[u64],
    collective_cycles: &[u64],
    target: &TargetDesc,
    keep_spans: bool,
) -> Timeline {
    let n = (hi - lo) as usize;
    let aicpus = target.aicpus.max(1);
    let Placement {
        policy,
        streams,
        timing,
        window,
        queue_of,
        stream_of,
    } = placement(graph, lo, hi, schedule, aicpus);
    let (pred_at, preds) = graph.predecessors(lo, hi);

    let mut queues: Vec<Vec<u32>> = vec![Vec::new(); aicpus as usize];
    let mut prev_in_stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
    let mut last_of_stream: Vec<u32> = vec![u32::MAX; streams as usize];
    for (i, &q) in queue_of.iter().enumerate() {
        if q == u32::MAX {
            continue;
        }
        queues[q as usize].push(i as u32);
        if streams > 0 {
            let s = stream_of[i];
            prev_in_stream[i] = last_of_stream[s as usize];
            last_of_stream[s as usize] = i as u32;
        }
    }

    let mut st = State {
        graph,
        lo,
        pred_at,
        preds,
        prev_in_stream,
        collective_cycles,
        done: vec![false; n],
        end: vec![0; n],
        spans: Vec::new(),
        busy_core_cycles: 0,
        keep_spans,
    };
    // Per unit (cube, vector): the cores by the time they free up, then by number.
    let cube_cores = target.cube_cores;
    let mut pools: [BinaryHeap<Reverse<(u64, u32)>>; 2] = [
        (0..cube_cores).map(|c| Reverse((0, c))).collect(),
        (cube_cores..cube_cores + target.vector_cores)
            .map(|c| Reverse((0, c)))
            .collect(),
    ];
    let mut in_flight: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut aicpu_free = vec![0u64; aicpus as usize];
    let mut head = vec![0usize; aicpus as usize];
    let mut next_rate_slot = 0u64;
    let rate_gap = match timing {
        Timing::RateLimit(r) if r > 0.0 => (target.clock_ghz * 1e9 / r).ceil() as u64,
        _ => 0,
    };
    let batch_n = match timing {
        Timing::Batched(k) => k.max(1) as usize,
        _ => 1,
    };
    let interleave = match timing {
        Timing::Interleaved(k) if streams > 0 => Some(k.max(1)),
        _ => None,
    };
    // Interleaving state per AICPU: the stream it takes from and how many it took in a row.
    let mut cur_stream = vec![0u32; aicpus as usize];
    let mut taken = vec![0u32; aicpus as usize];
    let mut remaining: usize = queues.iter().map(Vec::len).sum();

    // Each AICPU's next dispatch, kept until something it depends on changes. Stealing and
    // interleaving look at other queues and streams, so they reconsider every AICPU each time.
    let reconsider_all = policy == Policy::WorkSteal || interleave.is_some();
    let mut cands: Vec<Option<Cand>> = (0..aicpus).map(|_| None).collect();
    let mut stale = vec![true; aicpus as usize];

    // Decisions are made in time order: no dispatch happens before the one before it.
    let mut now = 0u64;
    while remaining > 0 {
        // A full window holds every AICPU until its first task ends.
        let window_open = if in_flight.len() as u64 >= window {
            in_flight.peek().map_or(0, |r| r.0)
        } else {
            0
        };
        let floor = now.max(next_rate_slot).max(window_open);
        for a in 0..aicpus as usize {
            if !(reconsider_all || stale[a]) {
                continue;
            }
            stale[a] = false;
            let mut sources = [a, usize::MAX];
            if policy == Policy::WorkSteal && head[a] >= queues[a].len() {
                // Idle with an empty queue: steal from the fullest other queue.
                if let Some(q) = (0..aicpus as usize)
                    .filter(|&q| q != a && head[q] < queues[q].len())
                    .max_by_key(|&q| (queues[q].len() - head[q], Reverse(q)))
                {
                    sources[1] = q;
                }
            }
            let mut best: Option<Cand> = None;
            for q in sources.into_iter().filter(|&q| q != usize::MAX) {
                let queue = &queues[q][head[q]..];
                let mut c = Cand {
                    partial: false,
                    base: aicpu_free[a],
                    queue: q,
                    tasks: Vec::new(),
                };
                if let (Some(k), true) = (interleave, q == a) {
                    // Look ahead a bounded distance for the stream whose turn it is.
                    let mut found: Option<(u32, usize, u64)> = None;
                    let mut seen = 0;
                    for &i in queue {
                        let i = i as usize;
                        if st.done[i] {
                            continue;
                        }
                        seen += 1;
                        if seen > LOOKAHEAD {
                            break;
                        }
                        let Some(r) = st.ready_at(i) else { continue };
                        let s = stream_of[i];
                        let mut rank = (s + streams - cur_stream[a]) % streams;
                        if rank == 0 && taken[a] >= k {
                            rank = streams;
                        }
                        if found.is_none_or(|(fr, _, _)| rank < fr) {
                            found = Some((rank, i, r));
                        }
                    }
                    let Some((_, i, r)) = found else { continue };
                    c.tasks.push(i);
                    c.base = c.base.max(r);
                } else {
                    let mut blocked = false;
                    for &i in queue {
                        let i = i as usize;
                        if st.done[i] {
                            continue;
                        }
                        if c.tasks.len() == batch_n {
                            break;
                        }
                        match st.ready_at(i) {
                            Some(r) => {
                                c.tasks.push(i);
                                c.base = c.base.max(r);
                            }
                            None => {
                                blocked = true;
                                break;
                            }
                        }
                    }
                    if c.tasks.is_empty() {
                        continue;
                    }
                    c.partial = c.tasks.len() < batch_n && blocked;
                }
                if best.as_ref().is_none_or(|b| c.key(floor) < b.key(floor)) {
                    best = Some(c);
                }
            }
            cands[a] = best;
        }
        // The earliest candidate, full batches first, then the lowest AICPU.
        let mut pick = None;
        let mut best = u64::MAX;
        for (a, c) in cands.iter().enumerate() {
            if let Some(c) = c {
                let key = c.key(floor);
                if pick.is_none() || key < best {
                    (pick, best) = (Some(a), key);
                }
            }
        }
        let Some(a) = pick else {
            // Nothing can go: enumeration order rules this out. Stop rather than spin.
            break;
        };
        let Cand {
            base,
            queue: q,
            tasks,
            ..
        } = cands[a].take().expect("chosen above");
        let mut t = base.max(floor);
        // The window: wait until fewer than `window` tasks are in flight.
        if window != u64::MAX {
            while let Some(&Reverse(e)) = in_flight.peek() {
                if e <= t {
                    in_flight.pop();
                } else if (in_flight.len() + tasks.len()) as u64 > window {
                    t = e;
                    in_flight.pop();
                } else {
                    break;
                }
            }
        }
        now = t;
        let issue = target.dispatch_latency + target.batch_issue * (tasks.len() as u64 - 1);
        let arrive = t + issue;
        aicpu_free[a] = arrive;
        if rate_gap > 0 {
            next_rate_slot = t + rate_gap * tasks.len() as u64;
        }
        for &i in &tasks {
            let TaskKind::Kernel(k) = graph.tasks[lo as usize + i].kind else {
                continue;
            };
            let cost = costs[k as usize];
            // A custom body's own cycles (`pto::cpu_sim::add_cycles`) on top of its tiles'.
            let cycles = cost.cycles + extra_cycles.get(lo as usize + i).copied().unwrap_or(0);
            // The core that frees up first; every core free by the arrival is as good.
            let mut first = pools[usize::from(!cost.cube)]
                .peek_mut()
                .expect("a target has a core of each unit");
            let Reverse((free, core)) = *first;
            let start = free.max(arrive);
            let e = start + cycles;
            st.busy_core_cycles += cycles;
            *first = Reverse((e, core));
            drop(first);
            st.end[i] = e;
            st.done[i] = true;
            if window != u64::MAX {
                in_flight.push(Reverse(e));
            }
            if keep_spans {
                st.spans.push(Span {
                    task: lo + i as TaskId,
                    aicpu: a as u32,
                    dispatch: t,
                    core,
                    start,
                    end: e,
                });
            }
            if streams > 0 {
                let s = stream_of[i];
                if s == cur_stream[a] {
                    taken[a] += 1;
                } else {
                    cur_stream[a] = s;
                    taken[a] = 1;
                }
            }
        }
        while head[q] < queues[q].len() && st.done[queues[q][head[q]] as usize] {
            head[q] += 1;
        }
        remaining -= tasks.len();
        // What this dispatch may have changed: the AICPU's own next task, and any AICPU
        // waiting on a task that just went.
        stale[a] = true;
        for (b, c) in cands.iter().enumerate() {
            if c.as_ref().is_none_or(|c| c.partial) {
                stale[b] = true;
            }
        }
    }
    for i in 0..n {
        if !matches!(graph.tasks[lo as usize + i].kind, TaskKind::Kernel(_)) {
            st.settle(i);
        }
    }
    let total_cycles = st.end.iter().copied().max().unwrap_or(0);
    Timeline {
        total_cycles,
        busy_core_cycles: st.busy_core_cycles,
        spans: st.spans,
    }
}

/// An AICPU's next dispatch: from which queue, which tasks, and when, before the limits
/// every AICPU shares.
struct Cand {
    /// A batch not yet full while more tasks wait: it goes only when nothing else can.
    partial: bool,
    base: u64,
    queue: usize,
    tasks: Vec<usize>,
}

impl Cand {
    /// Orders candidates: full batches before partial ones, then by time (below 2^63).
    fn key(&self, floor: u64) -> u64 {
        (u64::from(self.partial) << 63) | self.base.max(floor)
    }
}

/// How far an interleaving AICPU looks into its queue for a task of the next stream.
const LOOKAHEAD: usize = 64;

struct State<'a> {
    graph: &'a Graph,
    lo: TaskId,
    /// Task `i`'s predecessors are `preds[pred_at[i]..pred_at[i + 1]]`.
    pred_at: Vec<u32>,
    preds: Vec<TaskId>,
    /// Per task, the previous task of its stream; empty without streams.
    prev_in_stream: Vec<u32>,
    collective_cycles: &'a [u64],
    done: Vec<bool>,
    end: Vec<u64>,
    spans: Vec<Span>,
    busy_core_cycles: u64,
    keep_spans: bool,
}

impl State<'_> {
    fn is_kernel(&self, i: usize) -> bool {
        matches!(
            self.graph.tasks[self.lo as usize + i].kind,
            TaskKind::Kernel(_)
        )
    }

    /// Whether task `i` has ended (settling barriers and collectives whose predecessors have).
    fn finished(&mut self, i: usize) -> bool {
        self.done[i] || (!self.is_kernel(i) && self.settle(i))
    }

    /// When a kernel task may be dispatched, if every task before it has been.
    fn ready_at(&mut self, i: usize) -> Option<u64> {
        let mut t = 0;
        for k in self.pred_at[i]..self.pred_at[i + 1] {
            let p = self.preds[k as usize] as usize;
            if !self.finished(p) {
                return None;
            }
            t = t.max(self.end[p]);
        }
        let prev = self.prev_in_stream.get(i).copied().unwrap_or(u32::MAX);
        if prev != u32::MAX {
            if !self.done[prev as usize] {
                return None;
            }
            t = t.max(self.end[prev as usize]);
        }
        Some(t)
    }

    /// Ends a barrier or collective once its predecessors have ended; iterative, since
    /// barriers may chain.
    fn settle(&mut self, i: usize) -> bool {
        let mut stack = vec![i];
        while let Some(&j) = stack.last() {
            if self.done[j] {
                stack.pop();
                continue;
            }
            let mut blocked = false;
            let mut ready = 0;
            for k in self.pred_at[j]..self.pred_at[j + 1] {
                let p = self.preds[k as usize] as usize;
                if self.done[p] {
                    ready = ready.max(self.end[p]);
                } else if self.is_kernel(p) {
                    return false;
                } else {
                    stack.push(p);
                    blocked = true;
                }
            }
            if blocked {
                continue;
            }
            let cost = match self.graph.tasks[self.lo as usize + j].kind {
                TaskKind::Collective(c) => self.collective_cycles[c as usize],
                _ => 0,
            };
            self.end[j] = ready + cost;
            self.done[j] = true;
            if cost > 0 && self.keep_spans {
                self.spans.push(Span {
                    task: self.lo + j as TaskId,
                    aicpu: u32::MAX,
                    dispatch: ready,
                    core: u32::MAX,
                    start: ready,
                    end: ready + cost,
                });
            }
            stack.pop();
        }
        true
    }
}
