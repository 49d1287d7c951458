//! The clock's graph of one execution's tasks, and dependency resolution over it: which tasks
//! become ready when, as the tasks they wait for are dispatched and end.

use rustc_hash::FxHashMap;

use super::policy::{Policy, Rules};
use super::ready::{Item, LaunchInfo, Node, ReadySet, Target};
use super::report::{Costs, KernelCost, Span};
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, TaskId, TaskKind};

/// The clock's state over the tasks of one execution.
pub(super) struct Clock<'a> {
    pub(super) costs: &'a [KernelCost],
    pub(super) extra_cycles: &'a [u64],
    pub(super) collective_cycles: &'a [u64],
    pub(super) latency: u64,
    pub(super) keep_spans: bool,
    pub(super) policy: Policy,
    pub(super) nodes: Vec<Node>,
    /// Per node: its task id (a launch's first instance's).
    pub(super) ids: Vec<TaskId>,
    /// Nodes up to here are entries; the rest are instances, in `pinned` order.
    pub(super) entries: usize,
    /// The task ids of the instances that are nodes, sorted.
    pub(super) pinned: Vec<TaskId>,
    pub(super) launches: Vec<LaunchInfo>,
    pub(super) succ_at: Vec<u32>,
    pub(super) succs: Vec<u32>,
    pub(super) pred_at: Vec<u32>,
    pub(super) preds: Vec<u32>,
    /// Per kernel node: its AICPU; with streams, its stream and the next node of it.
    pub(super) queue: Vec<u32>,
    pub(super) stream: Vec<u32>,
    pub(super) next_in_stream: Vec<u32>,
    /// Per successor entry (as `succs`): the cycles the edge adds, a channel delivery's
    /// latency; empty when no edge adds any. `pred_delay` the same per `preds` entry.
    pub(super) succ_delay: Vec<u64>,
    pub(super) pred_delay: Vec<u64>,
    /// Per node: predecessors not yet dispatched, and when the dispatched ones end.
    pub(super) pending: Vec<u32>,
    pub(super) ready_at: Vec<u64>,
    /// Instances waiting for more than one link: links left, when those arrived end.
    pub(super) waiting: FxHashMap<TaskId, (u32, u64)>,
    pub(super) ready: Vec<ReadySet>,
    /// AICPUs whose ready set grew since they were last told.
    pub(super) touched: Vec<usize>,
    /// Under work stealing, the AICPU whose dispatch is being resolved: what it makes ready
    /// joins its own queue, as a work-stealing runtime keeps a worker's released work local.
    /// `moved` records (from, to, tasks) for the dispatcher's per-queue counts.
    pub(super) home: Option<usize>,
    pub(super) moved: Vec<(usize, usize, usize)>,
    pub(super) spans: Vec<Span>,
    /// When the last barrier or collective ended.
    pub(super) undispatched_end: u64,
    pub(super) work: Vec<(u32, u64)>,
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

/// The nodes of the entries of tasks `lo..hi` in order, their task ids (a launch's first
/// instance's), and their launches.
fn entries(graph: &Graph, lo: TaskId, hi: TaskId) -> (Vec<Node>, Vec<TaskId>, Vec<LaunchInfo>) {
    let (elo, ehi) = (graph.entry_of(lo) as usize, graph.entry_of(hi) as usize);
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
    (nodes, ids, launches)
}

/// The distinct edges among tasks `lo..hi` as (successor, predecessor) endpoints
/// ([`collapse`]), sorted.
fn canonical_edges(graph: &Graph, lo: TaskId, hi: TaskId) -> Vec<(u64, u64)> {
    let elo = graph.entry_of(lo) as usize;
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
    collapse(graph, &half, entry)
}

impl<'a> Clock<'a> {
    /// The clock's graph of tasks `lo..hi`. An edge to every instance of a launch is an edge
    /// to the launch; one from every instance, an edge from it; the rest make instances
    /// nodes of their own.
    pub(super) fn new(
        graph: &'a Graph,
        lo: TaskId,
        hi: TaskId,
        rules: &Rules,
        costs: Costs<'a>,
        target: &TargetDesc,
        keep_spans: bool,
    ) -> Clock<'a> {
        let aicpus = target.aicpus.max(1);
        let first_launch = graph.launches.partition_point(|l| l.first < lo);
        let (nodes, ids, launches) = entries(graph, lo, hi);
        let mut clock = Clock {
            costs: costs.kernels,
            extra_cycles: costs.extra_cycles,
            collective_cycles: costs.collectives,
            // A task's own length on a chain: handed out, picked up, run, and its end observed.
            latency: target.dispatch_latency + target.core_pickup + target.completion_latency,
            keep_spans,
            policy: rules.policy,
            entries: nodes.len(),
            nodes,
            ids,
            pinned: Vec::new(),
            launches,
            succ_at: Vec::new(),
            succs: Vec::new(),
            pred_at: Vec::new(),
            preds: Vec::new(),
            queue: Vec::new(),
            stream: Vec::new(),
            next_in_stream: Vec::new(),
            succ_delay: Vec::new(),
            pred_delay: Vec::new(),
            pending: Vec::new(),
            ready_at: Vec::new(),
            waiting: FxHashMap::default(),
            ready: (0..aicpus).map(|_| ReadySet::default()).collect(),
            touched: Vec::new(),
            home: None,
            moved: Vec::new(),
            spans: Vec::new(),
            undispatched_end: 0,
            work: Vec::new(),
        };
        let canon = clock.pin_instances(graph, first_launch, canonical_edges(graph, lo, hi));
        clock.adjacency(canon);
        clock.channel_delays(graph, lo, hi, costs.channel_latency);
        let n = clock.nodes.len();
        let pred_at = &clock.pred_at;
        clock.pending = (0..n).map(|i| pred_at[i + 1] - pred_at[i]).collect();
        for l in &mut clock.launches {
            l.pinned_in.sort_unstable();
            l.pinned_in.dedup();
        }
        clock.links(graph, lo, hi, first_launch);
        clock.place(graph, rules, costs.keys);
        clock.ready_at = vec![0; n];
        clock
    }

    /// Makes the instances that the canonical edges (successor, predecessor) name nodes of
    /// their own, after the entries; the edges as (predecessor, successor) nodes.
    fn pin_instances(
        &mut self,
        graph: &Graph,
        first_launch: usize,
        canon: Vec<(u64, u64)>,
    ) -> Vec<(u32, u32)> {
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
            self.launches[l as usize].pinned = true;
            self.nodes.push(Node::Instance(l, i));
            self.ids.push(t);
        }
        let entries = self.entries;
        let node = |x: u64| -> u32 {
            if x & INSTANCE == 0 {
                return x as u32;
            }
            let at = pinned.binary_search(&(x as TaskId)).expect("pinned above");
            (entries + at) as u32
        };
        let canon = canon.iter().map(|&(s, p)| (node(p), node(s))).collect();
        self.pinned = pinned;
        canon
    }

    /// The successor and predecessor arrays: node `j`'s successors are
    /// `succs[succ_at[j]..succ_at[j + 1]]`, its predecessors the same in `preds`.
    fn adjacency(&mut self, canon: Vec<(u32, u32)>) {
        let n = self.nodes.len();
        let (mut succ_at, mut pred_at) = (vec![0u32; n + 1], vec![0u32; n + 1]);
        for &(p, s) in &canon {
            succ_at[p as usize + 1] += 1;
            pred_at[s as usize + 1] += 1;
            if let Node::Instance(l, i) = self.nodes[s as usize] {
                self.launches[l as usize].pinned_in.push(i);
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
        (self.succ_at, self.succs) = (succ_at, succs);
        (self.pred_at, self.preds) = (pred_at, preds);
    }

    /// A channel delivery (the one task sent, to each task of its consumer) adds the
    /// channel latency. A launch node stands for its first instance: a delivery to a
    /// consumer's launch reaches every instance of it.
    fn channel_delays(&mut self, graph: &Graph, lo: TaskId, hi: TaskId, latency: u64) {
        if latency == 0 || graph.deliveries.is_empty() {
            return;
        }
        let mut delivered: Vec<(TaskId, TaskId)> = graph
            .deliveries
            .iter()
            .copied()
            .filter(|&(p, s)| p >= lo && s >= lo && s < hi)
            .collect();
        delivered.sort_unstable();
        let ids = &self.ids;
        let delay = |p: usize, s: usize| {
            let d = delivered.binary_search(&(ids[p], ids[s])).is_ok();
            if d { latency } else { 0 }
        };
        let n = self.nodes.len();
        let (succ_at, succs) = (&self.succ_at, &self.succs);
        let (pred_at, preds) = (&self.pred_at, &self.preds);
        let succ_delay = (0..n)
            .flat_map(|j| (succ_at[j]..succ_at[j + 1]).map(move |k| (j, k)))
            .map(|(j, k)| delay(j, succs[k as usize] as usize))
            .collect();
        let pred_delay = (0..n)
            .flat_map(|j| (pred_at[j]..pred_at[j + 1]).map(move |k| (j, k)))
            .map(|(j, k)| delay(preds[k as usize] as usize, j))
            .collect();
        (self.succ_delay, self.pred_delay) = (succ_delay, pred_delay);
    }

    /// Links: instance `i` of the second launch waits for instance `i` of the first.
    fn links(&mut self, graph: &Graph, lo: TaskId, hi: TaskId, first_launch: usize) {
        let local = |t: TaskId| {
            graph
                .instance_of(t)
                .filter(|&(l, i)| i == 0 && l >= first_launch)
                .map(|(l, _)| l - first_launch)
        };
        let launches = &mut self.launches;
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
        for j in self.entries..self.nodes.len() {
            if let Node::Instance(l, i) = self.nodes[j] {
                self.pending[j] += self.launches[l as usize].waits(i);
            }
        }
    }

    /// Placement: each kernel's AICPU and stream by its ordinal.
    fn place(&mut self, graph: &Graph, rules: &Rules, keys: Option<&[(i64, i64)]>) {
        let n = self.nodes.len();
        let mut queue = vec![u32::MAX; n];
        let streams = rules.streams;
        let mut stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
        let mut next_in_stream = vec![u32::MAX; if streams > 0 { n } else { 0 }];
        let mut last_of_stream = vec![u32::MAX; streams as usize];
        let mut ordinal = 0u64;
        for j in 0..self.entries {
            match self.nodes[j] {
                Node::Kernel(_) => {
                    let id = self.ids[j];
                    let keys = match keys {
                        Some(k) => k.get(id as usize).copied().unwrap_or((0, -1)),
                        None => graph.keys_of(id),
                    };
                    queue[j] = rules.policy.queue(ordinal, keys.0);
                    if streams > 0 {
                        let s = rules.stream(ordinal, keys.1);
                        stream[j] = s;
                        let prev = last_of_stream[s as usize];
                        if prev != u32::MAX {
                            next_in_stream[prev as usize] = j as u32;
                            self.pending[j] += 1;
                        }
                        last_of_stream[s as usize] = j as u32;
                    }
                    ordinal += 1;
                }
                Node::Launch(l) => {
                    let l = &mut self.launches[l as usize];
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
            streams == 0 || self.launches.is_empty(),
            "streams need instances"
        );
        (self.queue, self.stream) = (queue, stream);
        self.next_in_stream = next_in_stream;
    }

    /// How many kernel tasks each AICPU gets.
    pub(super) fn tasks_per_aicpu(&self) -> Vec<usize> {
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
    pub(super) fn pinned_node(&self, l: &LaunchInfo, i: u32) -> Option<u32> {
        if !l.pinned {
            return None;
        }
        let at = self.pinned.binary_search(&(l.first + i)).ok()?;
        Some((self.entries + at) as u32)
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
        let q = self.rehome(q, 1);
        self.insert(q, key, Item::One(Target::Instance(l, i)), 1);
    }

    /// The queue for tasks the policy gives queue `q`: under work stealing, the releasing
    /// AICPU's.
    fn rehome(&mut self, q: usize, tasks: usize) -> usize {
        match self.home {
            Some(h) if h != q => {
                self.moved.push((q, h, tasks));
                h
            }
            _ => q,
        }
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
            let q = self.rehome(q, left as usize);
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
    pub(super) fn resolve(&mut self, s: usize) -> Option<u64> {
        let r = self.ready_at[s];
        let cost = match self.nodes[s] {
            Node::Kernel(_) => {
                let key = (r, self.ids[s]);
                let q = self.rehome(self.queue[s] as usize, 1);
                self.insert(q, key, Item::One(Target::Node(s as u32)), 1);
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
    pub(super) fn dispatched(&mut self, n: u32, end: u64) {
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
    pub(super) fn ended(&mut self, t: Target, end: u64) {
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
    pub(super) fn kernel(&self, t: Target) -> u32 {
        match t {
            Target::Node(n) => match self.nodes[n as usize] {
                Node::Kernel(k) => k,
                _ => unreachable!("only kernels are dispatched"),
            },
            Target::Instance(l, _) => self.launches[l as usize].kernel,
        }
    }

    /// A kernel task's cycles: its kernel's, and what a custom body added.
    pub(super) fn cycles(&self, k: u32, t: TaskId) -> u64 {
        self.costs[k as usize].cycles + self.extra_cycles.get(t as usize).copied().unwrap_or(0)
    }
}
