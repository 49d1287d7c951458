//! The AICPUs dispatching ready tasks to the cores they own, in time order: the clock's run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use wsp_ir::Directive;
use wsp_ir::schedule::Timing;

use super::graph::Clock;
use super::policy::{Policy, Rules};
use super::ready::{Item, Node, Target};
use super::report::{Costs, KernelCost, Span, Timeline};
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, TaskId};

/// Simulates tasks `lo..hi` of the graph under `schedule`; the spans are kept for a trace.
/// Under streams ([`needs_instances`](super::needs_instances)) the graph's launches must be
/// expanded.
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
    let mut st = Clock::new(graph, lo, hi, &rules, costs, target, keep_spans);
    let left = st.tasks_per_aicpu();
    st.resolve_sources(aicpus);
    let mut run = Dispatcher::new(st, &rules, costs.kernels, target, keep_spans, left);
    // Decisions are made in time order: no dispatch happens before the one before it, so a
    // task not ready yet becomes ready later than any candidate now.
    while run.remaining > 0 {
        let floor = run.floor();
        run.reconsider();
        let Some(a) = run.pick(floor) else {
            // Nothing can go: enumeration order rules this out. Stop rather than spin.
            break;
        };
        run.issue(a, floor);
    }
    run.timeline()
}

impl Clock<'_> {
    /// Those that wait for nothing; resolving them makes others ready in turn. Kernels fill
    /// each AICPU's ready set at once (a bulk build, not one insertion each).
    fn resolve_sources(&mut self, aicpus: u32) {
        let mut initial: Vec<Vec<((u64, TaskId), Item)>> = vec![Vec::new(); aicpus as usize];
        let mut others = Vec::new();
        for n in 0..self.entries {
            if self.pending[n] > 0 {
                continue;
            }
            match self.nodes[n] {
                Node::Kernel(_) => {
                    let item = Item::One(Target::Node(n as u32));
                    initial[self.queue[n] as usize].push(((0, self.ids[n]), item));
                }
                _ => others.push(n),
            }
        }
        for (q, tasks) in initial.into_iter().enumerate() {
            self.ready[q].len = tasks.len();
            self.ready[q].items = tasks.into_iter().collect();
        }
        for n in others {
            if let Some(end) = self.resolve(n) {
                self.dispatched(n as u32, end);
            }
        }
    }
}

/// The dispatch loop's state: the clock, the cores, global memory, and each AICPU's time,
/// interleaving and next dispatch.
struct Dispatcher<'a> {
    st: Clock<'a>,
    target: &'a TargetDesc,
    kernels: &'a [KernelCost],
    keep_spans: bool,
    policy: Policy,
    streams: u32,
    window: u64,
    /// Per AICPU, the kernel tasks it has yet to dispatch; and those of all.
    left: Vec<usize>,
    remaining: usize,
    owners: Owners,
    /// Per AICPU's clusters (or one set for all), per unit (cube, vector): the cores by the
    /// time they free up, then by number.
    pools: Vec<[Cores; 2]>,
    memory: Memory,
    in_flight: BinaryHeap<Reverse<u64>>,
    aicpu_free: Vec<u64>,
    next_rate_slot: u64,
    rate_gap: u64,
    batch_n: usize,
    interleave: Option<u32>,
    /// Interleaving state per AICPU: the stream it takes from and how many it took in a row.
    cur_stream: Vec<u32>,
    taken: Vec<u32>,
    busy_cycles: [u64; 2],
    busy_core_cycles: u64,
    total_cycles: u64,
    /// Each AICPU's next dispatch, kept until what it was chosen from changes: the AICPU's
    /// own time or stream (`stale`), a queue it reads (`changed`: its tasks or count left),
    /// under work stealing its victim (`victims`: the one it read), and when it pulls, its
    /// cores (`cores_changed`: the pool the last dispatch used).
    cands: Vec<Cand>,
    stale: Vec<bool>,
    changed: Vec<bool>,
    victims: Vec<Option<usize>>,
    cores_changed: Option<usize>,
    /// Work stealing one task at a time: an AICPU pulls a task for an idle core, from the
    /// first ready task of each unit of its queue and of its victim's (`heads`, per queue).
    pulls: bool,
    heads: Vec<Heads>,
    /// When the last dispatch went.
    now: u64,
    /// The ends of the tasks of the dispatch being issued, kept for its allocation.
    ends: Vec<u64>,
    /// Whether every kernel runs on one unit: then a queue's first task is its only head.
    one_unit: bool,
}

impl<'a> Dispatcher<'a> {
    fn new(
        st: Clock<'a>,
        rules: &Rules,
        kernels: &'a [KernelCost],
        target: &'a TargetDesc,
        keep_spans: bool,
        left: Vec<usize>,
    ) -> Dispatcher<'a> {
        let aicpus = target.aicpus.max(1);
        let remaining: usize = left.iter().sum();
        let owners = Owners::of(target);
        let pools = owners.pools(target);
        let rate_gap = match rules.timing {
            Timing::RateLimit(r) if r > 0.0 => (target.clock_ghz * 1e9 / r).ceil() as u64,
            _ => 0,
        };
        let batch_n = match rules.timing {
            Timing::Batched(k) => k.max(1) as usize,
            _ => 1,
        };
        let interleave = match rules.timing {
            Timing::Interleaved(k) if rules.streams > 0 => Some(k.max(1)),
            _ => None,
        };
        Dispatcher {
            st,
            target,
            kernels,
            keep_spans,
            policy: rules.policy,
            streams: rules.streams,
            window: rules.window,
            left,
            remaining,
            owners,
            pools,
            memory: Memory::of(target),
            in_flight: BinaryHeap::new(),
            aicpu_free: vec![0u64; aicpus as usize],
            next_rate_slot: 0,
            rate_gap,
            batch_n,
            interleave,
            cur_stream: vec![0u32; aicpus as usize],
            taken: vec![0u32; aicpus as usize],
            busy_cycles: [0u64; 2],
            busy_core_cycles: 0,
            total_cycles: 0,
            cands: (0..aicpus).map(|_| Cand::default()).collect(),
            stale: vec![true; aicpus as usize],
            changed: vec![true; aicpus as usize],
            victims: vec![None; aicpus as usize],
            cores_changed: None,
            pulls: rules.policy == Policy::WorkSteal && batch_n == 1 && interleave.is_none(),
            heads: vec![[None; 2]; aicpus as usize],
            now: 0,
            ends: Vec::new(),
            one_unit: kernels.iter().all(|k| k.cube) || !kernels.iter().any(|k| k.cube),
        }
    }

    /// The earliest any AICPU may dispatch now.
    fn floor(&self) -> u64 {
        // A full window holds every AICPU until its first task ends.
        let window_open = if self.in_flight.len() as u64 >= self.window {
            self.in_flight.peek().map_or(0, |r| r.0)
        } else {
            0
        };
        self.now.max(self.next_rate_slot).max(window_open)
    }

    /// The next dispatch of each AICPU whose own may have changed.
    fn reconsider(&mut self) {
        let most = if self.policy == Policy::WorkSteal {
            self.most_ready()
        } else {
            [None; 2]
        };
        if self.pulls {
            // A pulling AICPU's choice reads of a queue only its heads' ready times and units: a
            // queue changed behind its heads, or whose heads moved on to tasks as ready on the
            // same units, has not changed for it (`issue` takes the task now at the head).
            for q in 0..self.heads.len() {
                if self.changed[q] {
                    let heads = self.heads_of(q);
                    self.changed[q] = pulled(&heads) != pulled(&self.heads[q]);
                    self.heads[q] = heads;
                }
            }
        }
        for a in 0..self.cands.len() {
            // The queue with the most ready tasks, or the next one for that queue's AICPU.
            let victim = if most[0] == Some(a) { most[1] } else { most[0] };
            let reads_victim = self.pulls || self.st.ready[a].len == 0;
            let victim_changed =
                victim != self.victims[a] || victim.is_some_and(|v| self.changed[v]);
            let cores_changed = self.pulls && self.cores_changed == Some(self.owners.of_aicpu(a));
            if self.stale[a] || self.changed[a] || (reads_victim && victim_changed) || cores_changed
            {
                self.stale[a] = false;
                self.victims[a] = victim;
                // Refilled in place: its task list's allocation is kept.
                let mut c = std::mem::take(&mut self.cands[a]);
                self.candidate(a, victim, &mut c);
                self.cands[a] = c;
            }
        }
        self.changed.fill(false);
        self.cores_changed = None;
    }

    /// The two queues with the most ready tasks, the lower-numbered first among equals.
    fn most_ready(&self) -> [Option<usize>; 2] {
        let len = |q: Option<usize>| q.map_or(0, |q| self.st.ready[q].len);
        let mut most = [None; 2];
        for (q, set) in self.st.ready.iter().enumerate() {
            if set.len > len(most[0]) {
                most = [Some(q), most[0]];
            } else if set.len > len(most[1]) {
                most[1] = Some(q);
            }
        }
        most
    }

    /// AICPU `a`'s next dispatch, into `c`: no tasks if it has none to hand out. `victim` is
    /// the AICPU it steals from under work stealing.
    fn candidate(&self, a: usize, victim: Option<usize>, c: &mut Cand) {
        let st = &self.st;
        // Work stealing: an AICPU with nothing ready takes ready work from the AICPU
        // with the most of it.
        let q = match victim {
            Some(v) if st.ready[a].len == 0 => v,
            _ => a,
        };
        c.partial = false;
        c.base = self.aicpu_free[a];
        c.queue = q;
        c.tasks.clear();
        if let Some(k) = self.interleave {
            let streams = self.streams;
            // Among the first ready tasks, the one of the stream whose turn it is.
            let mut found: Option<(u32, Task)> = None;
            for task in st.ready_tasks(q).take(LOOKAHEAD) {
                let Target::Node(n) = task.2 else {
                    continue;
                };
                let s = st.stream[n as usize];
                let mut rank = (s + streams - self.cur_stream[a]) % streams;
                if rank == 0 && self.taken[a] >= k {
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
        } else if self.pulls {
            // As simpler's schedulers pull from a shared ready queue (scheduler_dispatch.cpp,
            // run_staging_order): a task goes to a core that is idle when it arrives, so an
            // AICPU whose own cores are busy leaves it to one whose cores are free, which
            // steals it at a cost. What a dispatch makes ready joins its AICPU's own queue.
            let own = self.earliest_start(a, a);
            let stolen = victim.and_then(|v| Some((v, self.earliest_start(a, v)?)));
            let (queue, (base, _, head)) = match (own, stolen) {
                // The sooner start, then the older task, as one shared queue would give.
                (Some(o), Some((v, s))) if (s.0, s.1) < (o.0, o.1) => (v, s),
                (Some(o), _) => (a, o),
                (None, Some(s)) => s,
                (None, None) => return,
            };
            c.queue = queue;
            c.base = base;
            c.head = head;
            c.tasks.push(self.heads[queue][head].expect("a head").0);
        } else {
            for task in st.ready_tasks(q).take(self.batch_n) {
                c.tasks.push(task);
                c.base = c.base.max(task.0);
            }
            // A batch not yet full while more of this queue's tasks wait.
            c.partial = c.tasks.len() < self.batch_n && self.left[q] > st.ready[q].len;
        }
    }

    /// Which of queue `q`'s heads AICPU `a` could hand to an idle core soonest: when, when it
    /// became ready, and which head. Each unit's first ready task is a head, so a busy cube
    /// does not hold up vector work; the earlier head goes when both start as soon.
    fn earliest_start(&self, a: usize, q: usize) -> Option<(u64, u64, usize)> {
        let mut best: Option<(u64, u64, usize)> = None;
        for (head, &((r, _, _), unit)) in self.heads[q].iter().map_while(Option::as_ref).enumerate()
        {
            let base = self.idle_core_base(a, q, unit).max(r);
            if best.is_none_or(|(b, _, _)| base < b) {
                best = Some((base, r, head));
            }
        }
        best
    }

    /// Queue `q`'s first ready task, and the first of the other unit among its first
    /// `LOOKAHEAD` tasks, with their units.
    fn heads_of(&self, q: usize) -> Heads {
        let mut heads: Heads = [None; 2];
        // Tasks before the entry: an entry's tasks are of one kernel, so a run is passed whole.
        let mut before = 0;
        for (task, n) in self.st.ready_entries(q) {
            if before >= LOOKAHEAD {
                break;
            }
            let unit = self.unit(task.2);
            match heads[0] {
                None if self.one_unit => return [Some((task, unit)), None],
                None => heads[0] = Some((task, unit)),
                Some((_, first)) if unit != first => {
                    heads[1] = Some((task, unit));
                    break;
                }
                Some(_) => {}
            }
            before += n as usize;
        }
        heads
    }

    /// The unit (0 cube, 1 vector) a task runs on.
    fn unit(&self, task: Target) -> usize {
        usize::from(!self.kernels[self.st.kernel(task) as usize].cube)
    }

    /// The earliest AICPU `a` may hand a task of `unit`, taken from queue `q`, to one of its
    /// cores so that it arrives as the core frees up.
    fn idle_core_base(&self, a: usize, q: usize, unit: usize) -> u64 {
        let Reverse((free, _)) = *self.pools[self.owners.of_aicpu(a)][unit]
            .peek()
            .expect("a target has a core of each unit");
        let lead = self.target.dispatch_latency + self.steal_cost(a, q);
        self.aicpu_free[a].max(free.saturating_sub(lead))
    }

    /// What taking a task from another AICPU's queue costs the thief.
    fn steal_cost(&self, a: usize, q: usize) -> u64 {
        if a == q { 0 } else { self.target.steal_latency }
    }

    /// The earliest candidate, full batches first, then the lowest AICPU.
    fn pick(&self, floor: u64) -> Option<usize> {
        let mut pick = None;
        let mut best = u64::MAX;
        for (a, c) in self.cands.iter().enumerate() {
            if !c.tasks.is_empty() {
                let key = c.key(floor);
                if pick.is_none() || key < best {
                    (pick, best) = (Some(a), key);
                }
            }
        }
        pick
    }

    /// Dispatches AICPU `a`'s candidate, and marks what it changed.
    fn issue(&mut self, a: usize, floor: u64) {
        let (base, q) = (self.cands[a].base, self.cands[a].queue);
        // Given back empty below, for the AICPU's next candidate.
        let mut tasks = std::mem::take(&mut self.cands[a].tasks);
        if self.pulls {
            // The queue's heads may have moved on since the choice, to tasks as ready on the
            // same units: it stands, for the task now at its place.
            tasks[0] = self.heads[q][self.cands[a].head].expect("a head").0;
        }
        let mut t = base.max(floor);
        // The window: wait until fewer than `window` tasks are in flight.
        if self.window != u64::MAX {
            while let Some(&Reverse(e)) = self.in_flight.peek() {
                if e <= t {
                    self.in_flight.pop();
                } else if (self.in_flight.len() + tasks.len()) as u64 > self.window {
                    t = e;
                    self.in_flight.pop();
                } else {
                    break;
                }
            }
        }
        self.now = t;
        let target = self.target;
        let issue = self.steal_cost(a, q)
            + target.dispatch_latency
            + target.batch_issue * (tasks.len() as u64 - 1);
        let arrive = t + issue;
        self.aicpu_free[a] = arrive;
        if self.rate_gap > 0 {
            self.next_rate_slot = t + self.rate_gap * tasks.len() as u64;
        }
        let mut ends = std::mem::take(&mut self.ends);
        ends.clear();
        for &(r, id, task) in &tasks {
            self.st.take(q, (r, id));
            ends.push(self.run(a, t, arrive, id, task));
        }
        self.left[q] -= tasks.len();
        self.remaining -= tasks.len();
        // What this dispatch changed: this AICPU's time, the queue it took from, and the
        // ready sets of the AICPUs whose tasks it made ready.
        if self.policy == Policy::WorkSteal {
            self.st.home = Some(a);
        }
        for (&(_, _, task), &e) in tasks.iter().zip(&ends) {
            self.st.ended(task, e);
        }
        self.st.home = None;
        self.ends = ends;
        tasks.clear();
        self.cands[a].tasks = tasks;
        for (from, to, n) in self.st.moved.drain(..) {
            self.left[from] -= n;
            self.left[to] += n;
            // A batch's `partial` reads the count left; `to`'s set grew, so it is touched.
            self.changed[from] = true;
        }
        self.stale[a] = true;
        self.changed[q] = true;
        for b in self.st.touched.drain(..) {
            self.changed[b] = true;
        }
        self.cores_changed = Some(self.owners.of_aicpu(a));
    }

    /// Runs task `id`, which AICPU `a` dispatched at `t` and which reaches the cores at
    /// `arrive`, on its core; when its AICPU sees it end.
    fn run(&mut self, a: usize, t: u64, arrive: u64, id: TaskId, task: Target) -> u64 {
        let (st, target) = (&mut self.st, self.target);
        let k = st.kernel(task);
        let unit = usize::from(!self.kernels[k as usize].cube);
        // A custom body's own cycles (`pto::cpu_sim::add_cycles`) on top of its tiles'.
        let kernel = &self.kernels[k as usize];
        // The core that frees up first; every core free by the arrival is as good.
        let mut first = self.pools[self.owners.of_aicpu(a)][unit]
            .peek_mut()
            .expect("a target has a core of each unit");
        let Reverse((free, core)) = *first;
        // Picked up, then run: its loads and stores stretched by what the cores running
        // then ask of global memory.
        let start = free.max(arrive) + target.core_pickup;
        let cycles = st.cycles(k, id)
            + self
                .memory
                .stretch(self.now, start, kernel, st.cycles(k, id));
        let end = start + cycles;
        // Its AICPU sees it end: successors may go, and the core takes its next task.
        let e = end + target.completion_latency;
        self.busy_core_cycles += cycles;
        // A mixed kernel's vector ops are the vector unit's work.
        let vector = kernel.vector_cycles.min(cycles);
        self.busy_cycles[unit] += cycles - vector;
        self.busy_cycles[1] += vector;
        *first = Reverse((e, core));
        drop(first);
        self.total_cycles = self.total_cycles.max(e);
        if self.window != u64::MAX {
            self.in_flight.push(Reverse(e));
        }
        if self.keep_spans {
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
            && self.streams > 0
        {
            let s = st.stream[n as usize];
            if s == self.cur_stream[a] {
                self.taken[a] += 1;
            } else {
                self.cur_stream[a] = s;
                self.taken[a] = 1;
            }
        }
        e
    }

    /// What the run came to.
    fn timeline(self) -> Timeline {
        Timeline {
            // Barriers and collectives end without a dispatch.
            total_cycles: self.total_cycles.max(self.st.undispatched_end),
            critical_path_cycles: self.st.critical_path(),
            busy_core_cycles: self.busy_core_cycles,
            busy_cycles: self.busy_cycles,
            spans: self.st.spans,
            undispatched: self.remaining,
        }
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
        // Stretched, it moves the same bytes over more cycles: it asks less per cycle.
        let stretched = k.gm_bytes as f64 / (cycles + extra) as f64;
        self.running
            .push((start, start + cycles + extra, stretched));
        extra
    }
}

/// An AICPU's next dispatch: from which queue, which tasks (ready time, id, task), and when,
/// before the limits every AICPU shares. No tasks: nothing to hand out.
#[derive(Default)]
struct Cand {
    /// A batch not yet full while more tasks wait: it goes only when nothing else can.
    partial: bool,
    /// Pulling, which of its queue's heads it takes.
    head: usize,
    base: u64,
    queue: usize,
    tasks: Vec<Task>,
}

impl Cand {
    /// Orders candidates: full batches before partial ones, then by time (below 2^63).
    fn key(&self, floor: u64) -> u64 {
        (u64::from(self.partial) << 63) | self.base.max(floor)
    }
}

/// A ready task: when it became ready, its id, and what runs.
type Task = (u64, TaskId, Target);

/// A queue's first ready task and the first of the other unit, if it is near enough, with
/// their units (0 cube, 1 vector).
type Heads = [Option<(Task, usize)>; 2];

/// What a pulling AICPU's choice reads of a queue's heads: when they became ready, and their
/// units.
fn pulled(heads: &Heads) -> [Option<(u64, usize)>; 2] {
    heads.map(|h| h.map(|((r, _, _), unit)| (r, unit)))
}

/// How many of its ready tasks an interleaving AICPU looks at for one of the next stream, and
/// a pulling one for a task of the other unit.
const LOOKAHEAD: usize = 64;
