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
//!   with nothing ready takes the earliest ready task of the AICPU with the most ready work.
//!   Without a policy, round-robin over all AICPUs.
//! - Each AICPU has a ready set fed by dependency resolution: a task is ready when every task
//!   it depends on has been dispatched, at the time the last of them ends, and an AICPU hands
//!   out ready tasks by ready time, then enumeration order (a task waiting on its predecessor
//!   holds up nothing behind it). The AICPU is then busy for the dispatch latency, and the
//!   task starts on the earliest free core of its unit (cube if the kernel has a matmul, else
//!   vector).
//! - `streams(n)`: a task also waits for the previous task of its stream (`stream_by(key)` mod
//!   n, or enumeration order mod n) to end.
//! - Timing: `immediate` as above; `batched(n)` dispatches n ready tasks at once, paying the
//!   latency once plus `batch_issue` per further task; `interleaved(n)` lets an AICPU take at
//!   most n tasks of one stream before turning to the next stream that has a ready task
//!   (among its first 64 ready tasks);
//!   `rate_limit(r)` spaces dispatches at least 1/r simulated seconds apart.
//! - `TaskWindow(size, "tasks", STALL)`: at most `size` tasks dispatched and not ended; an
//!   AICPU stalls until one ends.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

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
    /// The lower bound from dependencies alone: the longest chain of dispatch latencies,
    /// kernels and collectives, with AICPUs and cores unlimited.
    pub critical_path_cycles: u64,
    /// Cycles cores spent running kernel tasks, summed over cores: over `cores × total_cycles`
    /// it is the run's core utilisation.
    pub busy_core_cycles: u64,
    /// The same, per unit: cube, vector.
    pub busy_cycles: [u64; 2],
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

    // Dependency resolution: a task is ready once every task it depends on (and the task
    // before it in its stream) has been dispatched, at the time the last of them ends; ready
    // kernels wait in their AICPU's ready set, by ready time then enumeration order.
    let mut prev_in_stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
    let mut next_in_stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
    let mut last_of_stream: Vec<u32> = vec![u32::MAX; streams as usize];
    let mut left = vec![0usize; aicpus as usize];
    for (i, &q) in queue_of.iter().enumerate() {
        if q == u32::MAX {
            continue;
        }
        left[q as usize] += 1;
        if streams > 0 {
            let s = stream_of[i];
            let prev = last_of_stream[s as usize];
            prev_in_stream[i] = prev;
            if prev != u32::MAX {
                next_in_stream[prev as usize] = i as u32;
            }
            last_of_stream[s as usize] = i as u32;
        }
    }
    let mut succ_at = vec![0u32; n + 1];
    for &p in &preds {
        succ_at[p as usize + 1] += 1;
    }
    for i in 0..n {
        succ_at[i + 1] += succ_at[i];
    }
    let mut fill = succ_at.clone();
    let mut succs = vec![0u32; preds.len()];
    for i in 0..n {
        for k in pred_at[i]..pred_at[i + 1] {
            let p = preds[k as usize] as usize;
            succs[fill[p] as usize] = i as u32;
            fill[p] += 1;
        }
    }
    let mut pending: Vec<u32> = (0..n)
        .map(|i| {
            let stream_prev = prev_in_stream.get(i).is_some_and(|&p| p != u32::MAX);
            pred_at[i + 1] - pred_at[i] + u32::from(stream_prev)
        })
        .collect();

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
        ready: vec![BTreeSet::new(); aicpus as usize],
        ready_at: vec![0; n],
        queue_of: &queue_of,
        touched: Vec::new(),
        work: Vec::new(),
    };
    // Those that wait for nothing; resolving them makes others ready in turn. The kernels
    // among them fill each AICPU's ready set at once (a bulk build, not one insertion each:
    // for an index launch that is every instance).
    let roots: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    let mut initial: Vec<Vec<(u64, u32)>> = vec![Vec::new(); aicpus as usize];
    let (kernels, others): (Vec<usize>, Vec<usize>) =
        roots.into_iter().partition(|&i| st.is_kernel(i));
    for i in kernels {
        let ready = st.ready_time(i);
        st.ready_at[i] = ready;
        initial[queue_of[i] as usize].push((ready, i as u32));
    }
    for (set, tasks) in st.ready.iter_mut().zip(initial) {
        *set = tasks.into_iter().collect();
    }
    for i in others {
        st.resolved(i, &succ_at, &succs, &next_in_stream, &mut pending);
    }
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
    let mut remaining: usize = left.iter().sum();
    let mut busy_cycles = [0u64; 2];

    // Each AICPU's next dispatch, kept until its ready set or its own time changes. Stealing
    // looks at the other AICPUs' sets, so it reconsiders every AICPU each time.
    let reconsider_all = policy == Policy::WorkSteal;
    let mut cands: Vec<Option<Cand>> = (0..aicpus).map(|_| None).collect();
    let mut stale = vec![true; aicpus as usize];

    // Decisions are made in time order: no dispatch happens before the one before it, so a
    // task not ready yet becomes ready later than any candidate now.
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
            // Work stealing: an AICPU with nothing ready takes ready work from the AICPU
            // with the most of it.
            let q = if policy == Policy::WorkSteal && st.ready[a].is_empty() {
                (0..aicpus as usize)
                    .filter(|&q| q != a && !st.ready[q].is_empty())
                    .max_by_key(|&q| (st.ready[q].len(), Reverse(q)))
                    .unwrap_or(a)
            } else {
                a
            };
            let ready = &st.ready[q];
            let mut c = Cand {
                partial: false,
                base: aicpu_free[a],
                queue: q,
                tasks: Vec::new(),
            };
            if let Some(k) = interleave {
                // Among the first ready tasks, the one of the stream whose turn it is.
                let mut found: Option<(u32, usize, u64)> = None;
                for &(r, i) in ready.iter().take(LOOKAHEAD) {
                    let i = i as usize;
                    let s = stream_of[i];
                    let mut rank = (s + streams - cur_stream[a]) % streams;
                    if rank == 0 && taken[a] >= k {
                        rank = streams;
                    }
                    if found.is_none_or(|(fr, _, _)| rank < fr) {
                        found = Some((rank, i, r));
                    }
                }
                if let Some((_, i, r)) = found {
                    c.tasks.push(i);
                    c.base = c.base.max(r);
                }
            } else {
                for &(r, i) in ready.iter().take(batch_n) {
                    c.tasks.push(i as usize);
                    c.base = c.base.max(r);
                }
                // A batch not yet full while more of this queue's tasks wait.
                c.partial = c.tasks.len() < batch_n && left[q] > ready.len();
            }
            cands[a] = (!c.tasks.is_empty()).then_some(c);
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
            st.ready[q].remove(&(st.ready_at[i], i as u32));
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
            busy_cycles[usize::from(!cost.cube)] += cycles;
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
        left[q] -= tasks.len();
        remaining -= tasks.len();
        // What this dispatch changed: this AICPU's time, the queue it took from, and the
        // ready sets of the AICPUs whose tasks it made ready.
        for &i in &tasks {
            st.dispatched(i, &succ_at, &succs, &next_in_stream, &mut pending);
        }
        stale[a] = true;
        stale[q] = true;
        for b in st.touched.drain(..) {
            stale[b] = true;
        }
    }
    let total_cycles = st.end.iter().copied().max().unwrap_or(0);
    // Predecessors come first in enumeration order, so one pass finds every chain's end.
    let mut chain = vec![0u64; n];
    for i in 0..n {
        let mut start = 0;
        for k in st.pred_at[i]..st.pred_at[i + 1] {
            start = start.max(chain[st.preds[k as usize] as usize]);
        }
        chain[i] = start
            + match graph.tasks[lo as usize + i].kind {
                TaskKind::Kernel(k) => {
                    let extra = extra_cycles.get(lo as usize + i).copied().unwrap_or(0);
                    target.dispatch_latency + costs[k as usize].cycles + extra
                }
                TaskKind::Collective(c) => collective_cycles[c as usize],
                _ => 0,
            };
    }
    Timeline {
        total_cycles,
        critical_path_cycles: chain.into_iter().max().unwrap_or(0),
        busy_core_cycles: st.busy_core_cycles,
        busy_cycles,
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

/// How many of its ready tasks an interleaving AICPU looks at for one of the next stream.
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
    /// Per AICPU, its ready kernel tasks by (ready time, task).
    ready: Vec<BTreeSet<(u64, u32)>>,
    /// Per kernel task, once ready: when (its key in `ready`).
    ready_at: Vec<u64>,
    queue_of: &'a [u32],
    /// AICPUs whose ready set grew since they were last told.
    touched: Vec<usize>,
    work: Vec<usize>,
}

impl State<'_> {
    fn is_kernel(&self, i: usize) -> bool {
        matches!(
            self.graph.tasks[self.lo as usize + i].kind,
            TaskKind::Kernel(_)
        )
    }

    /// When task `i` may start, once everything it waits for has ended.
    fn ready_time(&self, i: usize) -> u64 {
        let mut t = 0;
        for k in self.pred_at[i]..self.pred_at[i + 1] {
            t = t.max(self.end[self.preds[k as usize] as usize]);
        }
        match self.prev_in_stream.get(i) {
            Some(&p) if p != u32::MAX => t.max(self.end[p as usize]),
            _ => t,
        }
    }

    /// Task `i` has been dispatched: its successors are one step nearer ready.
    fn dispatched(
        &mut self,
        i: usize,
        succ_at: &[u32],
        succs: &[u32],
        next_in_stream: &[u32],
        pending: &mut [u32],
    ) {
        // A reused stack: this runs once per dispatched task.
        let mut work = std::mem::take(&mut self.work);
        work.push(i);
        while let Some(j) = work.pop() {
            let next = next_in_stream.get(j).copied().filter(|&s| s != u32::MAX);
            let after = succs[succ_at[j] as usize..succ_at[j + 1] as usize]
                .iter()
                .copied()
                .chain(next);
            for s in after {
                let s = s as usize;
                pending[s] -= 1;
                if pending[s] == 0 && self.resolve(s) {
                    work.push(s);
                }
            }
        }
        self.work = work;
    }

    /// Task `i` has nothing left to wait for: the first step of `dispatched`'s walk.
    fn resolved(
        &mut self,
        i: usize,
        succ_at: &[u32],
        succs: &[u32],
        next_in_stream: &[u32],
        pending: &mut [u32],
    ) {
        if self.resolve(i) {
            self.dispatched(i, succ_at, succs, next_in_stream, pending);
        }
    }

    /// A task whose predecessors have all been dispatched: a kernel joins its AICPU's ready
    /// set; a barrier or collective ends at once (after its transfer) and is `true`, so its
    /// successors move on too.
    fn resolve(&mut self, i: usize) -> bool {
        let ready = self.ready_time(i);
        if self.is_kernel(i) {
            self.ready_at[i] = ready;
            let q = self.queue_of[i] as usize;
            self.ready[q].insert((ready, i as u32));
            self.touched.push(q);
            return false;
        }
        let cost = match self.graph.tasks[self.lo as usize + i].kind {
            TaskKind::Collective(c) => self.collective_cycles[c as usize],
            _ => 0,
        };
        self.end[i] = ready + cost;
        self.done[i] = true;
        if cost > 0 && self.keep_spans {
            self.spans.push(Span {
                task: self.lo + i as TaskId,
                aicpu: u32::MAX,
                dispatch: ready,
                core: u32::MAX,
                start: ready,
                end: ready + cost,
            });
        }
        true
    }
}
