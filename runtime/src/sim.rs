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
//! ([`needs_instances`], [`Graph::expand`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rustc_hash::FxHashMap;
use wsp_ir::Directive;
use wsp_ir::schedule::{Dispatch, Timing};

use crate::graph::{Graph, TaskId, TaskKind};
use crate::target::TargetDesc;

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

impl Policy {
    /// The AICPU of the kernel task with this ordinal (its place among the kernel tasks, in
    /// enumeration order) and dispatch key.
    fn queue(self, ordinal: u64, key: i64) -> u32 {
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
struct Rules {
    policy: Policy,
    streams: u32,
    stream_by: bool,
    timing: Timing,
    window: u64,
}

impl Rules {
    fn of(schedule: &[Directive], aicpus: u32) -> Rules {
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
    fn stream(&self, ordinal: u64, key: i64) -> u32 {
        if self.stream_by {
            key.rem_euclid(self.streams as i64) as u32
        } else {
            (ordinal % self.streams as u64) as u32
        }
    }
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

/// A node of the clock's graph: an entry of the task graph, or a launch instance with
/// dependencies of its own.
#[derive(Debug, Clone, Copy)]
enum Node {
    Kernel(u32),
    Barrier,
    Collective(u32),
    /// A launch, by index in `Clock::launches`. Its predecessors are what every instance
    /// waits for; it is dispatched, for its successors, when its last instance is.
    Launch(u32),
    /// Launch, instance number.
    Instance(u32, u32),
}

/// What an AICPU dispatches: a kernel node, or a launch instance.
#[derive(Debug, Clone, Copy)]
enum Target {
    Node(u32),
    Instance(u32, u32),
}

/// An entry of a ready set, keyed by (ready time, task id).
#[derive(Debug, Clone, Copy)]
enum Item {
    One(Target),
    /// `left` instances of a launch that wait only for its shared predecessors, from
    /// instance `head` on: those this AICPU gets, in order. Its key's task id is at most
    /// `head`'s (the run's first), and no other entry's lies between.
    Run {
        launch: u32,
        head: u32,
        left: u32,
    },
}

#[derive(Default)]
struct ReadySet {
    items: BTreeMap<(u64, TaskId), Item>,
    /// Tasks, counting each run's.
    len: usize,
}

struct LaunchInfo {
    node: u32,
    first: TaskId,
    count: u32,
    kernel: u32,
    /// Instance 0's place among the kernel tasks.
    ordinal: u64,
    /// How far apart the instances one AICPU gets are.
    stride: u32,
    /// Instances `0..cover` wait for an instance of another launch.
    cover: u32,
    /// Each instance after the first waits for the one before (a `P.seq` loop's steps).
    sequential: bool,
    /// The links into it: the launch waited for, and how many instances the link covers.
    links_in: Vec<(u32, u32)>,
    links_out: Vec<u32>,
    /// Instances (numbers, sorted) with predecessors of their own besides links.
    pinned_in: Vec<u32>,
    /// Whether any instance is a node of its own.
    pinned: bool,
    /// Instances not dispatched yet.
    left: u32,
    max_end: u64,
    /// When its shared predecessors had all ended, once they have.
    common: Option<u64>,
    /// Instances whose own predecessors have ended before the shared ones: number, time.
    parked: Vec<(u32, u64)>,
}

impl LaunchInfo {
    fn free(&self, i: u32) -> bool {
        i >= self.cover && !(self.sequential && i > 0) && self.pinned_in.binary_search(&i).is_err()
    }

    /// How many instances instance `i` waits for, one each: links, and the step before.
    fn waits(&self, i: u32) -> u32 {
        let links = self.links_in.iter().filter(|&&(_, c)| i < c).count() as u32;
        links + u32::from(self.sequential && i > 0)
    }

    /// The first instance from `i` on, `stride` apart, that waits only for the shared
    /// predecessors.
    fn next_free(&self, mut i: u32) -> Option<u32> {
        if self.sequential {
            return (i == 0 && self.free(0)).then_some(0);
        }
        if i < self.cover {
            i += (self.cover - i).div_ceil(self.stride) * self.stride;
        }
        while i < self.count {
            if self.free(i) {
                return Some(i);
            }
            i += self.stride;
        }
        None
    }

    /// How many instances from `i` on, `stride` apart, wait only for the shared predecessors
    /// (`i` at or past `cover`).
    fn free_from(&self, i: u32) -> u32 {
        if self.sequential {
            return u32::from(i == 0 && self.free(0));
        }
        let own = self
            .pinned_in
            .iter()
            .filter(|&&p| p >= i && (p - i).is_multiple_of(self.stride));
        (self.count - i).div_ceil(self.stride) - own.count() as u32
    }

    /// The first instance the policy gives AICPU `q`. Instances have no schedule keys: a
    /// loop with keys is enumerated task by task.
    fn first_on(&self, policy: Policy, q: u32) -> Option<u32> {
        let start = match policy {
            Policy::RoundRobin(k) if q < k => {
                let k = u64::from(k);
                ((u64::from(q) + k - self.ordinal % k) % k) as u32
            }
            Policy::RoundRobin(_) => return None,
            _ if policy.queue(self.ordinal, 0) == q => 0,
            _ => return None,
        };
        (start < self.count).then_some(start)
    }
}

/// The clock's state over the tasks of one execution.
struct Clock<'a> {
    costs: &'a [KernelCost],
    extra_cycles: &'a [u64],
    collective_cycles: &'a [u64],
    latency: u64,
    keep_spans: bool,
    policy: Policy,
    nodes: Vec<Node>,
    /// Per node: its task id (a launch's first instance's).
    ids: Vec<TaskId>,
    /// Nodes up to here are entries; the rest are instances, in `pinned` order.
    entries: usize,
    /// The task ids of the instances that are nodes, sorted.
    pinned: Vec<TaskId>,
    launches: Vec<LaunchInfo>,
    succ_at: Vec<u32>,
    succs: Vec<u32>,
    pred_at: Vec<u32>,
    preds: Vec<u32>,
    /// Per kernel node: its AICPU; with streams, its stream and the next node of it.
    queue: Vec<u32>,
    stream: Vec<u32>,
    next_in_stream: Vec<u32>,
    /// Per successor entry (as `succs`): the cycles the edge adds, a channel delivery's
    /// latency; empty when no edge adds any. `pred_delay` the same per `preds` entry.
    succ_delay: Vec<u64>,
    pred_delay: Vec<u64>,
    /// Per node: predecessors not yet dispatched, and when the dispatched ones end.
    pending: Vec<u32>,
    ready_at: Vec<u64>,
    /// Instances waiting for more than one link: links left, when those arrived end.
    waiting: FxHashMap<TaskId, (u32, u64)>,
    ready: Vec<ReadySet>,
    /// AICPUs whose ready set grew since they were last told.
    touched: Vec<usize>,
    spans: Vec<Span>,
    /// When the last barrier or collective ended.
    undispatched_end: u64,
    work: Vec<(u32, u64)>,
}

/// Marks an endpoint of a canonical edge as a launch instance's (by task id), not an entry's.
const INSTANCE: u64 = 1 << 32;

/// One end of sorted, distinct `(key, task)` pairs as the clock's endpoints: a key's run of
/// tasks that is every instance of one launch becomes that launch's entry (`entry` of any
/// of them), other instances stay themselves (marked [`INSTANCE`]), and other tasks become
/// their entries.
fn collapse<K: Copy + Eq>(
    graph: &Graph,
    pairs: &[(K, TaskId)],
    entry: impl Fn(TaskId) -> u64,
) -> Vec<(K, u64)> {
    let mut out = Vec::with_capacity(pairs.len());
    let mut k = 0;
    while k < pairs.len() {
        let (key, t) = pairs[k];
        let Some((l, _)) = graph.instance_of(t) else {
            out.push((key, entry(t)));
            k += 1;
            continue;
        };
        let l = &graph.launches[l];
        let end = l.first + l.count;
        let m = pairs[k..]
            .iter()
            .take_while(|&&(q, u)| q == key && u < end)
            .count();
        if m == l.count as usize {
            out.push((key, entry(t)));
        } else {
            let each = pairs[k..k + m].iter();
            out.extend(each.map(|&(key, u)| (key, INSTANCE | u64::from(u))));
        }
        k += m;
    }
    out
}

impl<'a> Clock<'a> {
    /// The clock's graph of tasks `lo..hi`. An edge to every instance of a launch is an edge
    /// to the launch; one from every instance, an edge from it; the rest make instances
    /// nodes of their own.
    fn new(
        graph: &'a Graph,
        lo: TaskId,
        hi: TaskId,
        rules: &Rules,
        costs: Costs<'a>,
        target: &TargetDesc,
        keep_spans: bool,
    ) -> Clock<'a> {
        let aicpus = target.aicpus.max(1);
        let (elo, ehi) = (graph.entry_of(lo) as usize, graph.entry_of(hi) as usize);
        let first_launch = graph.launches.partition_point(|l| l.first < lo);
        let mut nodes = Vec::with_capacity(ehi - elo);
        let mut ids = Vec::with_capacity(ehi - elo);
        let mut launches = Vec::new();
        let mut id = lo;
        for e in elo..ehi {
            ids.push(id);
            id += 1;
            nodes.push(match graph.tasks[e].kind {
                TaskKind::Kernel(k) => Node::Kernel(k),
                TaskKind::Barrier => Node::Barrier,
                TaskKind::Collective(c) => Node::Collective(c),
                TaskKind::Launch(l) => {
                    let l = &graph.launches[l as usize];
                    id += l.count - 1;
                    launches.push(LaunchInfo {
                        node: (e - elo) as u32,
                        first: l.first,
                        count: l.count,
                        kernel: l.kernel,
                        ordinal: 0,
                        stride: 1,
                        cover: 0,
                        sequential: l.sequential,
                        links_in: Vec::new(),
                        links_out: Vec::new(),
                        pinned_in: Vec::new(),
                        pinned: false,
                        left: l.count,
                        max_end: 0,
                        common: None,
                        parked: Vec::new(),
                    });
                    Node::Launch(launches.len() as u32 - 1)
                }
            });
        }
        let entries = nodes.len();
        let entry = |t: TaskId| u64::from(graph.entry_of(t)) - elo as u64;

        let mut edges: Vec<(TaskId, TaskId)> = graph
            .edges
            .iter()
            .copied()
            .filter(|&(p, s)| p >= lo && s < hi && s >= lo)
            .collect();
        edges.sort_unstable();
        edges.dedup();
        // Successors first, then predecessors: each pass keys the other end.
        let mut half: Vec<(u64, TaskId)> = collapse(graph, &edges, entry)
            .into_iter()
            .map(|(p, s)| (s, p))
            .collect();
        drop(edges);
        half.sort_unstable();
        // (successor, predecessor), both as endpoints.
        let canon = collapse(graph, &half, entry);
        drop(half);
        let mut pinned: Vec<TaskId> = canon
            .iter()
            .flat_map(|&(s, p)| [p, s])
            .filter(|&x| x & INSTANCE != 0)
            .map(|x| x as TaskId)
            .collect();
        pinned.sort_unstable();
        pinned.dedup();
        for &t in &pinned {
            let (l, i) = graph.instance_of(t).expect("an instance");
            let l = (l - first_launch) as u32;
            launches[l as usize].pinned = true;
            nodes.push(Node::Instance(l, i));
            ids.push(t);
        }
        let node = |x: u64| -> u32 {
            if x & INSTANCE == 0 {
                return x as u32;
            }
            let at = pinned.binary_search(&(x as TaskId)).expect("pinned above");
            (entries + at) as u32
        };
        let n = nodes.len();
        let (mut succ_at, mut pred_at) = (vec![0u32; n + 1], vec![0u32; n + 1]);
        let canon: Vec<(u32, u32)> = canon.iter().map(|&(s, p)| (node(p), node(s))).collect();
        for &(p, s) in &canon {
            succ_at[p as usize + 1] += 1;
            pred_at[s as usize + 1] += 1;
            if let Node::Instance(l, i) = nodes[s as usize] {
                launches[l as usize].pinned_in.push(i);
            }
        }
        for i in 0..n {
            succ_at[i + 1] += succ_at[i];
            pred_at[i + 1] += pred_at[i];
        }
        let (mut succ_fill, mut pred_fill) = (succ_at.clone(), pred_at.clone());
        let mut succs = vec![0u32; canon.len()];
        let mut preds = vec![0u32; canon.len()];
        for &(p, s) in &canon {
            succs[succ_fill[p as usize] as usize] = s;
            succ_fill[p as usize] += 1;
            preds[pred_fill[s as usize] as usize] = p;
            pred_fill[s as usize] += 1;
        }
        drop(canon);
        // A channel delivery (the one task sent, to each task of its consumer) adds the
        // channel latency. A launch node stands for its first instance: a delivery to a
        // consumer's launch reaches every instance of it.
        let (mut succ_delay, mut pred_delay) = (Vec::new(), Vec::new());
        if costs.channel_latency > 0 && !graph.deliveries.is_empty() {
            let mut delivered: Vec<(TaskId, TaskId)> = graph
                .deliveries
                .iter()
                .copied()
                .filter(|&(p, s)| p >= lo && s >= lo && s < hi)
                .collect();
            delivered.sort_unstable();
            let delay = |p: usize, s: usize| {
                let d = delivered.binary_search(&(ids[p], ids[s])).is_ok();
                if d { costs.channel_latency } else { 0 }
            };
            succ_delay = (0..n)
                .flat_map(|j| (succ_at[j]..succ_at[j + 1]).map(move |k| (j, k)))
                .map(|(j, k)| delay(j, succs[k as usize] as usize))
                .collect();
            pred_delay = (0..n)
                .flat_map(|j| (pred_at[j]..pred_at[j + 1]).map(move |k| (j, k)))
                .map(|(j, k)| delay(preds[k as usize] as usize, j))
                .collect();
        }
        let mut pending: Vec<u32> = (0..n).map(|i| pred_at[i + 1] - pred_at[i]).collect();
        for l in &mut launches {
            l.pinned_in.sort_unstable();
            l.pinned_in.dedup();
        }

        // Links: instance `i` of the second launch waits for instance `i` of the first.
        let local = |t: TaskId| {
            graph
                .instance_of(t)
                .filter(|&(l, i)| i == 0 && l >= first_launch)
                .map(|(l, _)| l - first_launch)
        };
        for &(p, s) in &graph.links {
            if p < lo || s >= hi {
                continue;
            }
            let (Some(a), Some(b)) = (local(p), local(s)) else {
                continue;
            };
            let cover = launches[a].count.min(launches[b].count);
            launches[b].links_in.push((a as u32, cover));
            launches[b].cover = launches[b].cover.max(cover);
            launches[a].links_out.push(b as u32);
        }
        for j in entries..n {
            if let Node::Instance(l, i) = nodes[j] {
                pending[j] += launches[l as usize].waits(i);
            }
        }

        // Placement: each kernel's AICPU and stream by its ordinal.
        let mut queue = vec![u32::MAX; n];
        let streams = rules.streams;
        let mut stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
        let mut next_in_stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
        let mut last_of_stream = vec![u32::MAX; streams as usize];
        let mut ordinal = 0u64;
        for j in 0..entries {
            match nodes[j] {
                Node::Kernel(_) => {
                    let keys = graph.keys_of(ids[j]);
                    queue[j] = rules.policy.queue(ordinal, keys.0);
                    if streams > 0 {
                        let s = rules.stream(ordinal, keys.1);
                        stream[j] = s;
                        let prev = last_of_stream[s as usize];
                        if prev != u32::MAX {
                            next_in_stream[prev as usize] = j as u32;
                            pending[j] += 1;
                        }
                        last_of_stream[s as usize] = j as u32;
                    }
                    ordinal += 1;
                }
                Node::Launch(l) => {
                    let l = &mut launches[l as usize];
                    l.ordinal = ordinal;
                    if let Policy::RoundRobin(k) = rules.policy {
                        l.stride = k;
                    }
                    ordinal += u64::from(l.count);
                }
                _ => {}
            }
        }
        debug_assert!(
            streams == 0 || launches.is_empty(),
            "streams need instances"
        );
        Clock {
            costs: costs.kernels,
            extra_cycles: costs.extra_cycles,
            collective_cycles: costs.collectives,
            // A task's own length on a chain: handed out, picked up, run, and its end observed.
            latency: target.dispatch_latency + target.core_pickup + target.completion_latency,
            keep_spans,
            policy: rules.policy,
            nodes,
            ids,
            entries,
            pinned,
            launches,
            succ_at,
            succs,
            pred_at,
            preds,
            queue,
            stream,
            next_in_stream,
            succ_delay,
            pred_delay,
            pending,
            ready_at: vec![0; n],
            waiting: FxHashMap::default(),
            ready: (0..aicpus).map(|_| ReadySet::default()).collect(),
            touched: Vec::new(),
            spans: Vec::new(),
            undispatched_end: 0,
            work: Vec::new(),
        }
    }

    /// How many kernel tasks each AICPU gets.
    fn tasks_per_aicpu(&self) -> Vec<usize> {
        let mut left = vec![0usize; self.ready.len()];
        for &q in &self.queue[..self.entries] {
            if q != u32::MAX {
                left[q as usize] += 1;
            }
        }
        for l in &self.launches {
            for (q, left) in left.iter_mut().enumerate() {
                if let Some(i) = l.first_on(self.policy, q as u32) {
                    *left += (l.count - i).div_ceil(l.stride) as usize;
                }
            }
        }
        left
    }

    /// The node of a launch instance that has one.
    fn pinned_node(&self, l: &LaunchInfo, i: u32) -> Option<u32> {
        if !l.pinned {
            return None;
        }
        let at = self.pinned.binary_search(&(l.first + i)).ok()?;
        Some((self.entries + at) as u32)
    }

    fn insert(&mut self, q: usize, key: (u64, TaskId), item: Item, tasks: usize) {
        // An instance that joins a run of its launch at the same time splits it, so the
        // set's order stays enumeration order.
        if let Item::One(Target::Instance(l, i)) = item
            && let Some((&(r, id), &Item::Run { launch, head, left })) =
                self.ready[q].items.range(..key).next_back()
            && launch == l
            && r == key.0
        {
            let run = &self.launches[l as usize];
            let items = &mut self.ready[q].items;
            if i < head {
                // It goes before the run's first: the run's key moves up to its first.
                let item = items.remove(&(r, id)).expect("found above");
                items.insert((r, run.first + head), item);
            } else {
                let before = run.free_from(head) - run.free_from(i);
                if before < left {
                    let next = run.next_free(i).expect("the run goes on");
                    let first = Item::Run {
                        launch,
                        head,
                        left: before,
                    };
                    items.insert((r, id), first);
                    let rest = Item::Run {
                        launch,
                        head: next,
                        left: left - before,
                    };
                    items.insert((r, run.first + next), rest);
                }
            }
        }
        self.ready[q].items.insert(key, item);
        self.ready[q].len += tasks;
        self.touched.push(q);
    }

    /// Removes task `id`, ready at `r`, from the ready set of AICPU `q` (of a run: its
    /// first, which moves on in place).
    fn take(&mut self, q: usize, (r, id): (u64, TaskId)) {
        let set = &mut self.ready[q];
        set.len -= 1;
        let (&key, item) = set
            .items
            .range_mut(..=(r, id))
            .next_back()
            .expect("a ready task");
        match item {
            Item::Run { launch, head, left } if *left > 1 => {
                let l = &self.launches[*launch as usize];
                *head = l.next_free(*head + l.stride).expect("a run's count");
                *left -= 1;
            }
            _ => {
                set.items.remove(&key);
            }
        }
    }

    /// The tasks AICPU `q`'s ready set holds, in the order it hands them out.
    fn ready_tasks(&self, q: usize) -> impl Iterator<Item = (u64, TaskId, Target)> + '_ {
        self.ready[q].items.iter().flat_map(|(&(r, id), &item)| {
            let (one, run) = match item {
                Item::One(t) => (Some((r, id, t)), None),
                Item::Run { launch, head, left } => {
                    let l = &self.launches[launch as usize];
                    let each = std::iter::successors(Some(head), |&i| l.next_free(i + l.stride));
                    let tasks = each.take(left as usize);
                    (
                        None,
                        Some(tasks.map(move |i| (r, l.first + i, Target::Instance(launch, i)))),
                    )
                }
            };
            one.into_iter().chain(run.into_iter().flatten())
        })
    }

    /// Instance `i` of launch `l` has nothing of its own left to wait for, since `r`.
    fn instance_ready(&mut self, l: u32, i: u32, r: u64) {
        let launch = &mut self.launches[l as usize];
        let Some(common) = launch.common else {
            launch.parked.push((i, r));
            return;
        };
        let q = self.policy.queue(launch.ordinal + u64::from(i), 0) as usize;
        let key = (r.max(common), launch.first + i);
        self.insert(q, key, Item::One(Target::Instance(l, i)), 1);
    }

    /// Launch `l`'s shared predecessors have ended, at `r`: its free instances join the ready
    /// sets, a run per AICPU, and so do the instances parked for them.
    fn launch_ready(&mut self, l: u32, r: u64) {
        self.launches[l as usize].common = Some(r);
        for q in 0..self.ready.len() {
            let launch = &self.launches[l as usize];
            let Some(head) = launch
                .first_on(self.policy, q as u32)
                .and_then(|i| launch.next_free(i))
            else {
                continue;
            };
            let left = launch.free_from(head);
            let key = (r, launch.first + head);
            let run = Item::Run {
                launch: l,
                head,
                left,
            };
            self.insert(q, key, run, left as usize);
        }
        for (i, at) in std::mem::take(&mut self.launches[l as usize].parked) {
            self.instance_ready(l, i, at);
        }
    }

    /// A predecessor of node `s` ended at `e`; `s`'s end when that completes a barrier or a
    /// collective, which take no AICPU.
    fn arrive(&mut self, s: u32, e: u64) -> Option<u64> {
        let s = s as usize;
        self.pending[s] -= 1;
        self.ready_at[s] = self.ready_at[s].max(e);
        if self.pending[s] > 0 {
            return None;
        }
        self.resolve(s)
    }

    /// Node `s` waits for nothing more.
    fn resolve(&mut self, s: usize) -> Option<u64> {
        let r = self.ready_at[s];
        let cost = match self.nodes[s] {
            Node::Kernel(_) => {
                let key = (r, self.ids[s]);
                self.insert(
                    self.queue[s] as usize,
                    key,
                    Item::One(Target::Node(s as u32)),
                    1,
                );
                return None;
            }
            Node::Launch(l) => {
                self.launch_ready(l, r);
                return None;
            }
            Node::Instance(l, i) => {
                self.instance_ready(l, i, r);
                return None;
            }
            Node::Barrier => 0,
            Node::Collective(c) => self.collective_cycles[c as usize],
        };
        if cost > 0 && self.keep_spans {
            self.spans.push(Span {
                task: self.ids[s],
                aicpu: u32::MAX,
                dispatch: r,
                core: u32::MAX,
                start: r,
                end: r + cost,
                finish: r + cost,
            });
        }
        self.undispatched_end = self.undispatched_end.max(r + cost);
        Some(r + cost)
    }

    /// Node `n` has been dispatched (a launch: its last instance), ending at `end`: its
    /// successors are one step nearer ready.
    fn dispatched(&mut self, n: u32, end: u64) {
        // A reused stack: this runs once per dispatched task.
        let mut work = std::mem::take(&mut self.work);
        work.push((n, end));
        while let Some((j, e)) = work.pop() {
            let j = j as usize;
            for k in self.succ_at[j]..self.succ_at[j + 1] {
                let s = self.succs[k as usize];
                let e = e + self.succ_delay.get(k as usize).copied().unwrap_or(0);
                if let Some(end) = self.arrive(s, e) {
                    work.push((s, end));
                }
            }
            if let Some(&s) = self.next_in_stream.get(j)
                && s != u32::MAX
                && let Some(end) = self.arrive(s, e)
            {
                work.push((s, end));
            }
        }
        self.work = work;
    }

    /// A dispatched task ends at `end`.
    fn ended(&mut self, t: Target, end: u64) {
        let (l, i) = match t {
            Target::Node(n) => return self.dispatched(n, end),
            Target::Instance(l, i) => (l, i),
        };
        let launch = &mut self.launches[l as usize];
        launch.max_end = launch.max_end.max(end);
        launch.left -= 1;
        let last = launch.left == 0;
        let launch = &self.launches[l as usize];
        if let Some(n) = self.pinned_node(launch, i) {
            self.dispatched(n, end);
        }
        for k in 0..self.launches[l as usize].links_out.len() {
            let to = self.launches[l as usize].links_out[k];
            self.waited_for(to, i, end);
        }
        let launch = &self.launches[l as usize];
        if launch.sequential && i + 1 < launch.count {
            self.waited_for(l, i + 1, end);
        }
        if last {
            let launch = &self.launches[l as usize];
            self.dispatched(launch.node, launch.max_end);
        }
    }

    /// An instance that instance `i` of launch `l` waits for (a linked one, or the step
    /// before) ended at `end`.
    fn waited_for(&mut self, l: u32, i: u32, end: u64) {
        let launch = &self.launches[l as usize];
        let links = launch.waits(i);
        if links == 0 || i >= launch.count {
            return;
        }
        if let Some(n) = self.pinned_node(launch, i) {
            if let Some(end) = self.arrive(n, end) {
                self.dispatched(n, end);
            }
            return;
        }
        let t = launch.first + i;
        let r = if links == 1 {
            end
        } else {
            let w = self.waiting.entry(t).or_insert((links, 0));
            w.0 -= 1;
            w.1 = w.1.max(end);
            if w.0 > 0 {
                return;
            }
            self.waiting.remove(&t).map_or(end, |w| w.1)
        };
        self.instance_ready(l, i, r);
    }

    /// The kernel a task runs.
    fn kernel(&self, t: Target) -> u32 {
        match t {
            Target::Node(n) => match self.nodes[n as usize] {
                Node::Kernel(k) => k,
                _ => unreachable!("only kernels are dispatched"),
            },
            Target::Instance(l, _) => self.launches[l as usize].kernel,
        }
    }

    /// A kernel task's cycles: its kernel's, and what a custom body added.
    fn cycles(&self, k: u32, t: TaskId) -> u64 {
        self.costs[k as usize].cycles + self.extra_cycles.get(t as usize).copied().unwrap_or(0)
    }

    /// The longest chain of dependencies, each task taking its dispatch latency and its
    /// cycles (kernels) or transfer (collectives), each channel delivery its latency, and
    /// nothing else.
    fn critical_path(&self) -> u64 {
        let own = |k: u32, t: TaskId| self.latency + self.cycles(k, t);
        let mut chains = Chains {
            node: vec![0u64; self.nodes.len()],
            common: vec![0u64; self.launches.len()],
            uniform: vec![None; self.launches.len()],
            steps: (0..self.launches.len()).map(|_| Steps::None).collect(),
        };
        let preds_end = |chain: &[u64], n: usize| {
            let (a, b) = (self.pred_at[n] as usize, self.pred_at[n + 1] as usize);
            let delay = |k: usize| self.pred_delay.get(k).copied().unwrap_or(0);
            (a..b)
                .map(|k| chain[self.preds[k] as usize] + delay(k))
                .max()
                .unwrap_or(0)
        };
        // Predecessors come first in enumeration order, so one pass finds every chain's end.
        for n in 0..self.entries {
            let start = preds_end(&chains.node, n);
            chains.node[n] = match self.nodes[n] {
                Node::Kernel(k) => start + own(k, self.ids[n]),
                Node::Collective(c) => start + self.collective_cycles[c as usize],
                Node::Barrier | Node::Instance(..) => start,
                Node::Launch(l) => {
                    let launch = &self.launches[l as usize];
                    chains.common[l as usize] = start;
                    // Its instances that are nodes: their predecessors came before.
                    let lo = self.pinned.partition_point(|&t| t < launch.first);
                    let hi = self
                        .pinned
                        .partition_point(|&t| t < launch.first + launch.count);
                    if launch.sequential {
                        // Its steps in order, each after the one before.
                        let plain =
                            hi == lo && self.extra_cycles.is_empty() && launch.links_in.is_empty();
                        if plain {
                            let step = own(launch.kernel, launch.first);
                            chains.steps[l as usize] = Steps::Alike { start, step };
                            start + step * u64::from(launch.count)
                        } else {
                            let mut each: Vec<u64> = Vec::with_capacity(launch.count as usize);
                            for i in 0..launch.count {
                                let t = launch.first + i;
                                let mut from = self.linked_chain(l, i, &chains);
                                from = from.max(each.last().copied().unwrap_or(0));
                                let node = self.pinned_node(launch, i);
                                if let Some(n) = node {
                                    from = from.max(preds_end(&chains.node, n as usize));
                                }
                                let end = from + own(launch.kernel, t);
                                if let Some(n) = node {
                                    chains.node[n as usize] = end;
                                }
                                each.push(end);
                            }
                            let last = each.last().copied().unwrap_or(start);
                            chains.steps[l as usize] = Steps::Each(each);
                            last
                        }
                    } else {
                        for j in self.entries + lo..self.entries + hi {
                            let Node::Instance(_, i) = self.nodes[j] else {
                                continue;
                            };
                            let linked = self.linked_chain(l, i, &chains);
                            chains.node[j] = preds_end(&chains.node, j).max(linked)
                                + own(launch.kernel, self.ids[j]);
                        }
                        // Every instance's chain is the same unless some have predecessors or
                        // cycles of their own, or a link that matters covers only some.
                        let links = launch.links_in.iter();
                        let same = hi == lo
                            && self.extra_cycles.is_empty()
                            && links.clone().all(|&(p, c)| {
                                chains.uniform[p as usize]
                                    .is_some_and(|v| c == launch.count || v <= start)
                            });
                        if same {
                            let linked = links.filter_map(|&(p, _)| chains.uniform[p as usize]);
                            let v = linked.fold(start, u64::max) + own(launch.kernel, launch.first);
                            chains.uniform[l as usize] = Some(v);
                            v
                        } else {
                            (0..launch.count)
                                .map(|i| self.instance_chain(l, i, &chains))
                                .max()
                                .unwrap_or(0)
                        }
                    }
                }
            };
        }
        chains.node.into_iter().max().unwrap_or(0)
    }

    /// Where instance `i` of launch `l` may start on the critical path: after its shared
    /// predecessors and the instances it is linked to.
    fn linked_chain(&self, l: u32, i: u32, chains: &Chains) -> u64 {
        let launch = &self.launches[l as usize];
        let linked = launch.links_in.iter().filter(|&&(_, c)| i < c);
        linked
            .map(|&(p, _)| self.instance_chain(p, i, chains))
            .fold(chains.common[l as usize], u64::max)
    }

    /// Where instance `i` of launch `l` ends on the critical path.
    fn instance_chain(&self, l: u32, i: u32, chains: &Chains) -> u64 {
        if let Some(v) = chains.uniform[l as usize] {
            return v;
        }
        match &chains.steps[l as usize] {
            Steps::None => {}
            Steps::Alike { start, step } => return start + step * u64::from(i + 1),
            Steps::Each(each) => return each[i as usize],
        }
        let launch = &self.launches[l as usize];
        if let Some(n) = self.pinned_node(launch, i) {
            return chains.node[n as usize];
        }
        let t = launch.first + i;
        self.linked_chain(l, i, chains) + self.latency + self.cycles(launch.kernel, t)
    }
}

/// The critical path's chains so far.
struct Chains {
    /// Per node where it ends (a launch: its last instance).
    node: Vec<u64>,
    /// Per launch, where its shared predecessors end.
    common: Vec<u64>,
    /// Per launch whose instances all end at once: when.
    uniform: Vec<Option<u64>>,
    /// Per sequential launch, where its steps end.
    steps: Vec<Steps>,
}

/// Where the steps of a sequential launch end on the critical path.
enum Steps {
    /// Not a sequential launch.
    None,
    /// Each step after the one before, from `start`, `step` cycles each.
    Alike { start: u64, step: u64 },
    /// Step by step, where steps differ (their own cycles, predecessors or links).
    Each(Vec<u64>),
}

/// Simulates tasks `lo..hi` of the graph under `schedule`; the spans are kept for a trace.
/// Under streams ([`needs_instances`]) the graph's launches must be expanded.
pub fn simulate(
    graph: &Graph,
    lo: TaskId,
    hi: TaskId,
    schedule: &[Directive],
    costs: Costs,
    target: &TargetDesc,
    keep_spans: bool,
) -> Timeline {
    let aicpus = target.aicpus.max(1);
    let rules = Rules::of(schedule, aicpus);
    let (policy, streams, window) = (rules.policy, rules.streams, rules.window);
    let mut st = Clock::new(graph, lo, hi, &rules, costs, target, keep_spans);
    let mut left = st.tasks_per_aicpu();
    let mut remaining: usize = left.iter().sum();

    // Those that wait for nothing; resolving them makes others ready in turn. Kernels fill
    // each AICPU's ready set at once (a bulk build, not one insertion each).
    let mut initial: Vec<Vec<((u64, TaskId), Item)>> = vec![Vec::new(); aicpus as usize];
    let mut others = Vec::new();
    for n in 0..st.entries {
        if st.pending[n] > 0 {
            continue;
        }
        match st.nodes[n] {
            Node::Kernel(_) => {
                let item = Item::One(Target::Node(n as u32));
                initial[st.queue[n] as usize].push(((0, st.ids[n]), item));
            }
            _ => others.push(n),
        }
    }
    for (q, tasks) in initial.into_iter().enumerate() {
        st.ready[q].len = tasks.len();
        st.ready[q].items = tasks.into_iter().collect();
    }
    for n in others {
        if let Some(end) = st.resolve(n) {
            st.dispatched(n as u32, end);
        }
    }
    // Per AICPU's clusters (or one set for all), per unit (cube, vector): the cores by the
    // time they free up, then by number.
    let owners = Owners::of(target);
    let mut pools = owners.pools(target);
    let mut memory = Memory::of(target);
    let mut in_flight: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut aicpu_free = vec![0u64; aicpus as usize];
    let mut next_rate_slot = 0u64;
    let rate_gap = match rules.timing {
        Timing::RateLimit(r) if r > 0.0 => (target.clock_ghz * 1e9 / r).ceil() as u64,
        _ => 0,
    };
    let batch_n = match rules.timing {
        Timing::Batched(k) => k.max(1) as usize,
        _ => 1,
    };
    let interleave = match rules.timing {
        Timing::Interleaved(k) if streams > 0 => Some(k.max(1)),
        _ => None,
    };
    // Interleaving state per AICPU: the stream it takes from and how many it took in a row.
    let mut cur_stream = vec![0u32; aicpus as usize];
    let mut taken = vec![0u32; aicpus as usize];
    let mut busy_cycles = [0u64; 2];
    let mut busy_core_cycles = 0u64;
    let mut total_cycles = 0u64;

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
            let q = if policy == Policy::WorkSteal && st.ready[a].len == 0 {
                (0..aicpus as usize)
                    .filter(|&q| q != a && st.ready[q].len > 0)
                    .max_by_key(|&q| (st.ready[q].len, Reverse(q)))
                    .unwrap_or(a)
            } else {
                a
            };
            let mut c = Cand {
                partial: false,
                base: aicpu_free[a],
                queue: q,
                tasks: Vec::new(),
            };
            if let Some(k) = interleave {
                // Among the first ready tasks, the one of the stream whose turn it is.
                let mut found: Option<(u32, (u64, TaskId, Target))> = None;
                for task in st.ready_tasks(q).take(LOOKAHEAD) {
                    let Target::Node(n) = task.2 else {
                        continue;
                    };
                    let s = st.stream[n as usize];
                    let mut rank = (s + streams - cur_stream[a]) % streams;
                    if rank == 0 && taken[a] >= k {
                        rank = streams;
                    }
                    if found.is_none_or(|(fr, _)| rank < fr) {
                        found = Some((rank, task));
                    }
                }
                if let Some((_, task)) = found {
                    c.tasks.push(task);
                    c.base = c.base.max(task.0);
                }
            } else {
                for task in st.ready_tasks(q).take(batch_n) {
                    c.tasks.push(task);
                    c.base = c.base.max(task.0);
                }
                // A batch not yet full while more of this queue's tasks wait.
                c.partial = c.tasks.len() < batch_n && left[q] > st.ready[q].len;
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
        let mut ends = Vec::with_capacity(tasks.len());
        for &(r, id, task) in &tasks {
            st.take(q, (r, id));
            let k = st.kernel(task);
            let unit = usize::from(!costs.kernels[k as usize].cube);
            // A custom body's own cycles (`pto::cpu_sim::add_cycles`) on top of its tiles'.
            let kernel = &costs.kernels[k as usize];
            // The core that frees up first; every core free by the arrival is as good.
            let mut first = pools[owners.of_aicpu(a)][unit]
                .peek_mut()
                .expect("a target has a core of each unit");
            let Reverse((free, core)) = *first;
            // Picked up, then run: its loads and stores stretched by what the cores running
            // then ask of global memory.
            let start = free.max(arrive) + target.core_pickup;
            let cycles = st.cycles(k, id) + memory.stretch(now, start, kernel, st.cycles(k, id));
            let end = start + cycles;
            // Its AICPU sees it end: successors may go, and the core takes its next task.
            let e = end + target.completion_latency;
            busy_core_cycles += cycles;
            // A mixed kernel's vector ops are the vector unit's work.
            let vector = kernel.vector_cycles.min(cycles);
            busy_cycles[unit] += cycles - vector;
            busy_cycles[1] += vector;
            *first = Reverse((e, core));
            drop(first);
            total_cycles = total_cycles.max(e);
            ends.push(e);
            if window != u64::MAX {
                in_flight.push(Reverse(e));
            }
            if keep_spans {
                st.spans.push(Span {
                    task: id,
                    aicpu: a as u32,
                    dispatch: t,
                    core,
                    start,
                    end,
                    finish: e,
                });
            }
            if let Target::Node(n) = task
                && streams > 0
            {
                let s = st.stream[n as usize];
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
        for (&(_, _, task), e) in tasks.iter().zip(ends) {
            st.ended(task, e);
        }
        stale[a] = true;
        stale[q] = true;
        for b in st.touched.drain(..) {
            stale[b] = true;
        }
    }
    Timeline {
        // Barriers and collectives end without a dispatch.
        total_cycles: total_cycles.max(st.undispatched_end),
        critical_path_cycles: st.critical_path(),
        busy_core_cycles,
        busy_cycles,
        spans: st.spans,
    }
}

/// Per core, the AICPU that hands it tasks; -1 for every core when any AICPU may.
pub fn owner_of_cores(target: &TargetDesc) -> Vec<i64> {
    Owners::of(target).of_cores(target)
}

/// Cores by the time they free up, then by number.
type Cores = BinaryHeap<Reverse<(u64, u32)>>;

/// Which cores each AICPU hands tasks to. On the 910B's runtime (hw-native-sys/simpler,
/// `scheduler_cold_path.cpp`'s `assign_cores_to_threads`), AICore cluster `c` (one cube core,
/// two vector cores) belongs to scheduler `c mod n`; a target without that shape, or with
/// more AICPUs than clusters, shares every core.
struct Owners {
    /// Per AICPU, its pool; one pool when shared.
    pool_of: Vec<usize>,
    clusters: u32,
}

impl Owners {
    fn of(target: &TargetDesc) -> Owners {
        let aicpus = target.aicpus.max(1);
        let clusters = target.cube_cores;
        let owned =
            target.aicpu_owns_clusters && target.vector_cores == 2 * clusters && clusters >= aicpus;
        Owners {
            pool_of: (0..aicpus as usize)
                .map(|a| if owned { a } else { 0 })
                .collect(),
            clusters: if owned { clusters } else { 0 },
        }
    }

    /// Per core (cube cores, then vector), the AICPU that owns it; -1 for every core when
    /// they are shared.
    fn of_cores(&self, target: &TargetDesc) -> Vec<i64> {
        let cube = target.cube_cores;
        (0..cube + target.vector_cores)
            .map(|c| {
                if self.clusters == 0 {
                    return -1;
                }
                let cluster = if c < cube { c } else { (c - cube) / 2 };
                i64::from(cluster % self.pool_of.len() as u32)
            })
            .collect()
    }

    fn of_aicpu(&self, a: usize) -> usize {
        self.pool_of[a]
    }

    fn pools(&self, target: &TargetDesc) -> Vec<[Cores; 2]> {
        let cube = target.cube_cores;
        if self.clusters == 0 {
            return vec![[
                (0..cube).map(|c| Reverse((0, c))).collect(),
                (cube..cube + target.vector_cores)
                    .map(|c| Reverse((0, c)))
                    .collect(),
            ]];
        }
        let n = self.pool_of.len() as u32;
        (0..n)
            .map(|a| {
                let mine = (0..self.clusters).filter(|c| c % n == a);
                [
                    mine.clone().map(|c| Reverse((0, c))).collect(),
                    mine.flat_map(|c| [cube + 2 * c, cube + 2 * c + 1])
                        .map(|v| Reverse((0, v)))
                        .collect(),
                ]
            })
            .collect()
    }
}

/// Global memory shared by the chip's cores: the tasks running (their ends and the bytes per
/// cycle each asks for), and what the chip gives per cycle.
struct Memory {
    running: Vec<(u64, u64, f64)>,
    bytes_per_cycle: f64,
}

impl Memory {
    fn of(target: &TargetDesc) -> Memory {
        Memory {
            running: Vec::new(),
            bytes_per_cycle: target.chip_gm_gb_s * 1e9 / (target.clock_ghz * 1e9),
        }
    }

    /// The cycles a task starting at `start` adds to its loads and stores (`cycles` in all)
    /// when the tasks running then and it ask more than the chip gives: its share of the
    /// bandwidth, taken at its start. `now` is the dispatch time, which only grows: a task
    /// that ended by then ends before every later start.
    fn stretch(&mut self, now: u64, start: u64, k: &KernelCost, cycles: u64) -> u64 {
        if k.gm_bytes == 0 || cycles == 0 {
            return 0;
        }
        self.running.retain(|&(_, end, _)| end > now);
        let rate = k.gm_bytes as f64 / cycles as f64;
        let asked: f64 = rate
            + self
                .running
                .iter()
                .filter(|&&(s, e, _)| s <= start && start < e)
                .map(|&(_, _, r)| r)
                .sum::<f64>();
        let factor = (asked / self.bytes_per_cycle).max(1.0);
        let extra = (k.gm_cycles as f64 * (factor - 1.0)).round() as u64;
        self.running.push((start, start + cycles + extra, rate));
        extra
    }
}

/// An AICPU's next dispatch: from which queue, which tasks (ready time, id, task), and when,
/// before the limits every AICPU shares.
struct Cand {
    /// A batch not yet full while more tasks wait: it goes only when nothing else can.
    partial: bool,
    base: u64,
    queue: usize,
    tasks: Vec<(u64, TaskId, Target)>,
}

impl Cand {
    /// Orders candidates: full batches before partial ones, then by time (below 2^63).
    fn key(&self, floor: u64) -> u64 {
        (u64::from(self.partial) << 63) | self.base.max(floor)
    }
}

/// How many of its ready tasks an interleaving AICPU looks at for one of the next stream.
const LOOKAHEAD: usize = 64;

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64;
    use wsp_ir::ScalarExpr;
    use wsp_ir::schedule::WindowMode;

    use super::*;
    use crate::graph::{Launch, Task};

    /// A random graph: tasks, barriers, collectives and launches in two executions, with
    /// edges to and from single instances, every instance, or some of them, and links.
    fn graph(rng: &mut Pcg64) -> (Graph, Vec<(TaskId, TaskId)>) {
        let mut g = Graph::default();
        let mut ranges = Vec::new();
        for _ in 0..2 {
            let lo = g.next_id();
            // (first id, count) per entry, and the launches' first ids.
            let mut entries: Vec<(TaskId, u32)> = Vec::new();
            for _ in 0..rng.random_range(1..12) {
                let task = |kind| Task {
                    kind,
                    args: 0,
                    sig: 0,
                    index: 0,
                };
                let first = match rng.random_range(0..8) {
                    0..3 => {
                        let id = g.push(task(TaskKind::Kernel(rng.random_range(0..3))));
                        if rng.random_bool(0.2) {
                            g.keys.resize(id as usize, (0, -1));
                            g.keys.push((rng.random_range(-3..9), 0));
                        }
                        (id, 1)
                    }
                    3 => (g.push(task(TaskKind::Barrier)), 1),
                    4 => (
                        g.push(task(TaskKind::Collective(rng.random_range(0..2)))),
                        1,
                    ),
                    _ => {
                        let count = rng.random_range(2..9);
                        let sequential = rng.random_bool(0.3);
                        let launch = Launch {
                            kernel: rng.random_range(0..3),
                            first: 0,
                            count,
                            entry: 0,
                            sig: 0,
                            tiles: Vec::new(),
                            index: vec![(0, 1)],
                            sequential,
                        };
                        let first = g.push_launch(launch);
                        if sequential {
                            // Each step after the one before (implied), and some after an
                            // earlier one.
                            for t in first + 2..first + count {
                                if rng.random_bool(0.2) {
                                    g.edges.push((rng.random_range(first..t - 1), t));
                                }
                            }
                        }
                        (first, count)
                    }
                };
                entries.push(first);
            }
            for _ in 0..rng.random_range(0..3 * entries.len()) {
                let a = rng.random_range(0..entries.len());
                let b = rng.random_range(0..entries.len());
                if a >= b {
                    continue;
                }
                let ((pa, ca), (pb, cb)) = (entries[a], entries[b]);
                // Which instances of each end: one, all, or the first few.
                let mut some = |first: TaskId, count: u32| -> Vec<TaskId> {
                    match rng.random_range(0..3) {
                        0 => vec![first + rng.random_range(0..count)],
                        1 => (first..first + count).collect(),
                        _ => (first..first + rng.random_range(1..=count)).collect(),
                    }
                };
                let (from, to) = (some(pa, ca), some(pb, cb));
                for &p in &from {
                    g.edges.extend(to.iter().map(|&s| (p, s)));
                }
                if ca > 1 && cb > 1 && rng.random_bool(0.5) {
                    g.links.push((pa, pb));
                }
            }
            ranges.push((lo, g.next_id()));
        }
        (g, ranges)
    }

    fn schedule(rng: &mut Pcg64) -> Vec<Directive> {
        let key = ScalarExpr::Const(0);
        let mut s = vec![match rng.random_range(0..5) {
            0 => Directive::Dispatch(Dispatch::RoundRobin(rng.random_range(1..5))),
            1 => Directive::Dispatch(Dispatch::WorkSteal),
            2 => Directive::Dispatch(Dispatch::Affinity(key, rng.random_range(0..4))),
            3 => Directive::Dispatch(Dispatch::Hash(key, rng.random_range(0..4))),
            _ => Directive::Timing(Timing::Immediate),
        }];
        match rng.random_range(0..5) {
            0 => s.push(Directive::Timing(Timing::Batched(rng.random_range(1..4)))),
            1 => s.push(Directive::Timing(Timing::RateLimit(1e8))),
            2 => s.push(Directive::Window {
                size: rng.random_range(1..4),
                unit: "tasks".into(),
                mode: WindowMode::Stall,
            }),
            _ => {}
        }
        s
    }

    /// A launch is one node however many instances it has, and an AICPU holds its ready
    /// instances as one run: the clock's memory does not grow with the instance count.
    #[test]
    fn a_launch_is_one_node_and_one_run_per_aicpu() {
        let mut g = Graph::default();
        let count = 1 << 24;
        g.push_launch(Launch {
            kernel: 0,
            first: 0,
            count,
            entry: 0,
            sig: 0,
            tiles: Vec::new(),
            index: vec![(0, 1)],
            sequential: false,
        });
        let target = TargetDesc::default();
        let rules = Rules::of(&[], target.aicpus);
        let kernels = [KernelCost {
            cycles: 10,
            ..KernelCost::default()
        }];
        let costs = Costs {
            kernels: &kernels,
            extra_cycles: &[],
            collectives: &[],
            channel_latency: 0,
        };
        let mut clock = Clock::new(&g, 0, count, &rules, costs, &target, false);
        assert_eq!((clock.nodes.len(), clock.pinned.len()), (1, 0));
        assert_eq!(clock.resolve(0), None);
        let runs: Vec<(usize, usize)> = clock
            .ready
            .iter()
            .map(|set| (set.items.len(), set.len))
            .collect();
        // Round robin: AICPU q gets instances q, q + aicpus, ...
        let each = (0..target.aicpus).map(|q| (1, (count - q).div_ceil(target.aicpus) as usize));
        assert_eq!(runs, each.collect::<Vec<_>>());
    }

    /// The clock over a graph with launches equals the clock over the same graph with
    /// every instance a task of its own (`Graph::expand`): the same cycles, critical path,
    /// busy cycles and the same span for every task; with channel deliveries (every edge of
    /// some tasks that are not instances, as a sent task's are) delayed by a latency too.
    #[test]
    fn launches_simulate_as_their_instances_would() {
        let mut delayed = 0;
        for seed in 0..3000 {
            let rng = &mut Pcg64::seed_from_u64(seed);
            let (mut with_launches, ranges) = graph(&mut rng.clone());
            let (mut expanded, _) = graph(rng);
            expanded.expand();
            let channel_latency = if rng.random_bool(0.5) {
                rng.random_range(1..40)
            } else {
                0
            };
            let senders: Vec<TaskId> = (0..with_launches.next_id())
                .filter(|&t| with_launches.instance_of(t).is_none())
                .filter(|_| rng.random_bool(0.3))
                .collect();
            let deliveries: Vec<(TaskId, TaskId)> = with_launches
                .edges
                .iter()
                .copied()
                .filter(|(p, _)| senders.contains(p))
                .collect();
            with_launches.deliveries = deliveries.clone();
            expanded.deliveries = deliveries;
            let schedule = schedule(rng);
            let cube_cores = rng.random_range(1..4);
            let target = TargetDesc {
                aicpus: rng.random_range(1..5),
                cube_cores,
                // Clusters (two vector cores a cube core) half the time: AICPUs own them.
                vector_cores: match rng.random_bool(0.5) {
                    true => 2 * cube_cores,
                    false => rng.random_range(1..4),
                },
                aicpu_owns_clusters: rng.random_bool(0.7),
                dispatch_latency: rng.random_range(0..6),
                batch_issue: rng.random_range(0..3),
                core_pickup: rng.random_range(0..4),
                completion_latency: rng.random_range(0..4),
                // Little enough that tasks running together stretch their transfers.
                chip_gm_gb_s: rng.random_range(5.0..40.0),
                ..TargetDesc::default()
            };
            let kernels: Vec<KernelCost> = (0..3)
                .map(|_| {
                    let cycles = rng.random_range(1..30);
                    KernelCost {
                        cycles,
                        cube: rng.random_bool(0.4),
                        vector_cycles: rng.random_range(0..10),
                        gm_cycles: rng.random_range(0..=cycles),
                        gm_bytes: rng.random_range(0..200),
                    }
                })
                .collect();
            let ids = with_launches.next_id() as usize;
            let extra: Vec<u64> = match rng.random_bool(0.3) {
                true => (0..ids).map(|_| rng.random_range(0..10)).collect(),
                false => Vec::new(),
            };
            let collectives = [rng.random_range(0..20), rng.random_range(0..20)];
            for &(lo, hi) in &ranges {
                let run = |g: &Graph| {
                    let costs = Costs {
                        kernels: &kernels,
                        extra_cycles: &extra,
                        collectives: &collectives,
                        channel_latency,
                    };
                    let mut t = simulate(g, lo, hi, &schedule, costs, &target, true);
                    t.spans.sort_by_key(|s| s.task);
                    t
                };
                let t = run(&with_launches);
                assert_eq!(
                    t,
                    run(&expanded),
                    "seed {seed}, tasks {lo}..{hi}, {schedule:?}"
                );
                if channel_latency > 0 {
                    let costs = Costs {
                        kernels: &kernels,
                        extra_cycles: &extra,
                        collectives: &collectives,
                        channel_latency: 0,
                    };
                    let undelayed =
                        simulate(&with_launches, lo, hi, &schedule, costs, &target, false);
                    // (Not always later: list scheduling is not monotonic.)
                    delayed += usize::from(undelayed.total_cycles != t.total_cycles);
                }
            }
        }
        // The latency is felt, not only carried.
        assert!(delayed > 300, "{delayed}");
    }
}
