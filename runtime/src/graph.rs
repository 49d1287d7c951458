//! The task graph of a run: every task enumerated so far, its kernel arguments, and the
//! dependency edges between tasks. Edges always run from a lower task id to a higher one, so
//! enumeration order is a topological order.
//!
//! An index launch is one entry of the graph standing for many instances of a kernel with
//! consecutive task ids. Edges name instances, so they stay exact; execution works on entries,
//! and [`Graph::expand`] gives every instance an entry of its own for a trace or a task dump.
//! A sequential launch holds the steps of a `P.seq` loop of one task: they run in order, and
//! the edge from each step to the next is implied, not stored.
//!
//! Which tensor regions earlier tasks touched, and so which edges a new task gets, is
//! [`crate::regions`]'s part.

pub type TaskId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A kernel of the program, by index.
    Kernel(u32),
    /// An ordering point with no work (`sequential()`, a `P.seq` step with many tasks).
    Barrier,
    /// Computes a derived tensor (`relayout`, `allreduce`) from its source.
    Collective(u32),
    /// The instances of an index launch, by index in `Graph::launches`.
    Launch(u32),
}

#[derive(Debug, Clone)]
pub struct Task {
    pub kind: TaskKind,
    /// Where this task's tile pointers start in `Graph::ptrs`.
    pub args: u32,
    /// Its strides and scalars, shared by every instance of one task of the program.
    pub sig: u32,
    /// Where its index values (`[b, h]`) start in `Graph::index`; they end where the next
    /// entry's start.
    pub index: u32,
}

/// Where a task's strides and scalars start in the graph's pools.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sig {
    pub strides: u32,
    pub scalars: u32,
}

/// `count` instances of one kernel, with task ids from `first`: instance `i` takes each tile
/// at its `base + i * step` bytes.
#[derive(Debug, Clone)]
pub struct Launch {
    pub kernel: u32,
    pub first: TaskId,
    pub count: u32,
    /// Its entry in `Graph::tasks`.
    pub entry: u32,
    pub sig: u32,
    pub tiles: Vec<(*mut u8, isize)>,
    /// Per index value: its value at instance 0 and its step per instance.
    pub index: Vec<(i64, i64)>,
    /// The steps of a `P.seq` loop: instance `i` waits for instance `i - 1` (an edge no list
    /// holds), and they run in order on one worker.
    pub sequential: bool,
}

impl Launch {
    /// Instance `i`'s index values.
    pub(crate) fn index_at(&self, i: u32) -> impl Iterator<Item = i64> + '_ {
        self.index
            .iter()
            .map(move |&(base, step)| base.wrapping_add(step.wrapping_mul(i as i64)))
    }
}

#[derive(Debug)]
pub struct Graph {
    /// The entries: a task each, or a launch for all its instances.
    pub tasks: Vec<Task>,
    /// (pred, succ) task ids, pred < succ.
    pub edges: Vec<(TaskId, TaskId)>,
    /// The edges that are a channel's: a sent task to its consumer's tasks, and back-pressure
    /// (a producer waiting for the consumer `depth` items back). Also in `edges`; kept for
    /// the trace.
    pub channel_edges: Vec<(TaskId, TaskId)>,
    /// The deliveries among them (a sent task to each task of its consumer), which the clock
    /// delays by the channel latency.
    pub deliveries: Vec<(TaskId, TaskId)>,
    /// (pred, succ) first ids of two launches of equal count: instance `i` of the second
    /// waits for instance `i` of the first.
    pub links: Vec<(TaskId, TaskId)>,
    pub launches: Vec<Launch>,
    pub ptrs: Vec<*mut u8>,
    /// Signature 0 is the empty one, for barriers and collectives.
    pub sigs: Vec<Sig>,
    pub strides: Vec<i64>,
    pub scalars: Vec<f64>,
    pub index: Vec<i64>,
    /// Schedule keys (dispatch, stream) by task, for programs whose schedule has them;
    /// shorter than the task count when later tasks have none.
    pub keys: Vec<(i64, i64)>,
    /// An exploration's keys: per task id, one value per key its configurations dispatch or
    /// stream by (`Enumerator::explore_keys`); shorter when later tasks have none.
    pub key_table: Vec<i64>,
    /// The id the next task gets.
    next: TaskId,
}

impl Default for Graph {
    fn default() -> Self {
        Graph {
            tasks: Vec::new(),
            edges: Vec::new(),
            channel_edges: Vec::new(),
            deliveries: Vec::new(),
            links: Vec::new(),
            launches: Vec::new(),
            ptrs: Vec::new(),
            sigs: vec![Sig::default()],
            strides: Vec::new(),
            scalars: Vec::new(),
            index: Vec::new(),
            keys: Vec::new(),
            key_table: Vec::new(),
            next: 0,
        }
    }
}

// SAFETY: the only fields that are not `Send` are the tile pointers (`ptrs`,
// `Launch::tiles`). They point into tensor buffers the run owns, which outlive every execution
// of the graph, and only the kernels of its tasks dereference them; moving the graph to another
// thread moves no buffer.
unsafe impl Send for Graph {}
// SAFETY: workers share `&Graph` and only read it. The one thing written through its pointers
// is tensor memory, by kernels and collectives, and tasks whose regions overlap a write are
// ordered by the graph's edges and links, so no two threads touch the same bytes at once.
unsafe impl Sync for Graph {}

impl Graph {
    /// The id the next task gets: the number of tasks so far, counting launch instances.
    pub fn next_id(&self) -> TaskId {
        self.next
    }

    /// Appends a task; its id.
    pub fn push(&mut self, task: Task) -> TaskId {
        self.tasks.push(task);
        self.next += 1;
        self.next - 1
    }

    /// Appends a launch of `count` instances; the id of the first.
    pub fn push_launch(&mut self, mut launch: Launch) -> TaskId {
        let first = self.next;
        launch.first = first;
        launch.entry = self.tasks.len() as u32;
        self.tasks.push(Task {
            kind: TaskKind::Launch(self.launches.len() as u32),
            args: 0,
            sig: launch.sig,
            index: self.index.len() as u32,
        });
        self.next += launch.count;
        self.launches.push(launch);
        first
    }

    /// The last launch whose first instance is at or before task `t`.
    fn launch_before(&self, t: TaskId) -> Option<&Launch> {
        let j = self.launches.partition_point(|l| l.first <= t);
        self.launches.get(j.checked_sub(1)?)
    }

    /// The launch instance `t` belongs to, with its number there.
    fn launch_of(&self, t: TaskId) -> Option<(&Launch, u32)> {
        self.instance_of(t).map(|(l, i)| (&self.launches[l], i))
    }

    /// The launch (by index in `launches`) whose instance `t` is, with its number there.
    pub(crate) fn instance_of(&self, t: TaskId) -> Option<(usize, u32)> {
        let j = self
            .launches
            .partition_point(|l| l.first <= t)
            .checked_sub(1)?;
        let l = &self.launches[j];
        (t - l.first < l.count).then_some((j, t - l.first))
    }

    /// The entry of task `t`.
    pub fn entry_of(&self, t: TaskId) -> u32 {
        match self.launch_before(t) {
            None => t,
            Some(l) if t - l.first < l.count => l.entry,
            // Every entry up to this launch's is one id, after it `count` ids.
            Some(l) => t - (l.first + l.count - 1 - l.entry),
        }
    }

    /// The task id of entry `e` (of a launch: its first instance's).
    pub fn id_of(&self, e: u32) -> TaskId {
        let j = self.launches.partition_point(|l| l.entry < e);
        match j.checked_sub(1).map(|j| &self.launches[j]) {
            None => e,
            Some(l) => e + (l.first + l.count - 1 - l.entry),
        }
    }

    /// What task `t` runs: a launch instance is a kernel task like any other.
    pub fn kind_of(&self, t: TaskId) -> Option<TaskKind> {
        match self.launch_of(t) {
            Some((l, _)) => Some(TaskKind::Kernel(l.kernel)),
            None => self.tasks.get(self.entry_of(t) as usize).map(|e| e.kind),
        }
    }

    /// How many of tasks `lo..hi` run a kernel, counting launch instances.
    pub fn kernel_tasks(&self, lo: TaskId, hi: TaskId) -> u64 {
        let entries = &self.tasks[self.entry_of(lo) as usize..self.entry_of(hi) as usize];
        let each = |t: &Task| match t.kind {
            TaskKind::Kernel(_) => 1,
            TaskKind::Launch(l) => u64::from(self.launches[l as usize].count),
            TaskKind::Barrier | TaskKind::Collective(_) => 0,
        };
        entries.iter().map(each).sum()
    }

    /// Calls `each` with task `t`'s index values (`[b, h]`) in order. Allocates nothing, for
    /// the fault handler.
    pub fn index_of(&self, t: TaskId, each: impl FnMut(i64)) {
        match self.launch_of(t) {
            Some((l, i)) => l.index_at(i).for_each(each),
            None => self
                .entry_index(self.entry_of(t) as usize)
                .iter()
                .copied()
                .for_each(each),
        }
    }

    /// The index values stored for entry `e` (none for a launch).
    pub(crate) fn entry_index(&self, e: usize) -> &[i64] {
        let Some(task) = self.tasks.get(e) else {
            return &[];
        };
        let hi = self
            .tasks
            .get(e + 1)
            .map_or(self.index.len(), |n| n.index as usize);
        &self.index[task.index as usize..hi]
    }

    /// Signature `sig`'s strides and scalars: each signature's run up to the next one's.
    pub(crate) fn signature_data(&self, sig: u32) -> (&[i64], &[f64]) {
        let s = self.sigs[sig as usize];
        let next = self.sigs.get(sig as usize + 1);
        let strides = next.map_or(self.strides.len(), |n| n.strides as usize);
        let scalars = next.map_or(self.scalars.len(), |n| n.scalars as usize);
        (
            &self.strides[s.strides as usize..strides],
            &self.scalars[s.scalars as usize..scalars],
        )
    }

    /// The task's dispatch and stream keys; (0, -1) for a task without.
    pub fn keys_of(&self, t: TaskId) -> (i64, i64) {
        self.keys.get(t as usize).copied().unwrap_or((0, -1))
    }

    /// Predecessor lists of tasks `lo..hi` of an expanded graph, CSR, counting only edges inside
    /// the range, as offsets from `lo`: task `lo + i` waits for `lo + preds[at[i]..at[i + 1]]`.
    pub fn predecessors(&self, lo: TaskId, hi: TaskId) -> (Vec<u32>, Vec<u32>) {
        let n = (hi - lo) as usize;
        let mut at = vec![0u32; n + 1];
        let in_range = |&&(p, s): &&(TaskId, TaskId)| p >= lo && s < hi && s >= lo;
        for &(_, s) in self.edges.iter().filter(in_range) {
            at[(s - lo) as usize + 1] += 1;
        }
        for i in 0..n {
            at[i + 1] += at[i];
        }
        let mut fill = at.clone();
        let mut preds = vec![0u32; at[n] as usize];
        for &(p, s) in self.edges.iter().filter(in_range) {
            let slot = &mut fill[(s - lo) as usize];
            preds[*slot as usize] = p - lo;
            *slot += 1;
        }
        (at, preds)
    }

    /// Successor lists of entries `lo..hi`, CSR, counting only edges inside the range, and
    /// each entry's count of predecessors; `None` when no edge lies inside the range.
    pub fn successors(
        &self,
        lo: u32,
        hi: u32,
        first_edge: usize,
    ) -> Option<(Vec<u32>, Vec<u32>, Vec<u32>)> {
        // An edge between two steps of a sequential launch is its own order.
        let in_range = |&(p, s): &(u32, u32)| p >= lo && s < hi && p != s;
        let edges = || {
            let by_entry = |&(p, s): &(TaskId, TaskId)| (self.entry_of(p), self.entry_of(s));
            self.edges[first_edge..]
                .iter()
                .chain(&self.links)
                .map(by_entry)
                .filter(in_range)
        };
        edges().next()?;
        let n = (hi - lo) as usize;
        let mut offsets = vec![0u32; n + 1];
        let mut pending = vec![0u32; n];
        for (p, s) in edges() {
            offsets[(p - lo) as usize + 1] += 1;
            pending[(s - lo) as usize] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut succs = vec![0; offsets[n] as usize];
        for (p, s) in edges() {
            let slot = &mut fill[(p - lo) as usize];
            succs[*slot as usize] = s;
            *slot += 1;
        }
        Some((offsets, succs, pending))
    }

    /// Gives every launch instance an entry (a kernel task) of its own, and every link and
    /// sequential launch its edges, so that entries and task ids coincide. Instances have no
    /// tile pointers: an expanded graph is for the simulated clock, the trace and the task
    /// dump, not for running again.
    pub fn expand(&mut self) {
        if self.launches.is_empty() {
            return;
        }
        let mut tasks = Vec::with_capacity(self.next as usize);
        let mut index = Vec::new();
        for (e, t) in self.tasks.iter().enumerate() {
            if let TaskKind::Launch(l) = t.kind {
                let l = &self.launches[l as usize];
                for i in 0..l.count {
                    tasks.push(Task {
                        kind: TaskKind::Kernel(l.kernel),
                        args: u32::MAX,
                        sig: l.sig,
                        index: index.len() as u32,
                    });
                    index.extend(l.index_at(i));
                }
                continue;
            }
            tasks.push(Task {
                index: index.len() as u32,
                ..t.clone()
            });
            index.extend_from_slice(self.entry_index(e));
        }
        for &(p, s) in &self.links {
            let count = |t| self.launch_of(t).map_or(0, |(l, _)| l.count);
            let count = count(p).min(count(s));
            self.edges.extend((0..count).map(|i| (p + i, s + i)));
        }
        // A sequential launch's steps, each after the one before.
        for l in self.launches.iter().filter(|l| l.sequential) {
            let steps = l.first + 1..l.first + l.count;
            self.edges.extend(steps.map(|t| (t - 1, t)));
        }
        self.tasks = tasks;
        self.index = index;
        self.links.clear();
        self.launches.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_instances_have_ids_and_expand_into_tasks() {
        let g = &mut Graph::default();
        let task = |g: &mut Graph, v: i64| {
            let index = g.index.len() as u32;
            g.index.push(v);
            g.push(Task {
                kind: TaskKind::Kernel(0),
                args: 0,
                sig: 0,
                index,
            })
        };
        let launch = |g: &mut Graph, count| {
            g.push_launch(Launch {
                kernel: 1,
                first: 0,
                count,
                entry: 0,
                sig: 0,
                tiles: Vec::new(),
                index: vec![(10, 2)],
                sequential: false,
            })
        };
        assert_eq!(task(g, 100), 0);
        assert_eq!(launch(g, 3), 1);
        assert_eq!(task(g, 104), 4);
        assert_eq!(launch(g, 2), 5);
        assert_eq!(task(g, 107), 7);
        g.links.push((1, 5));
        let entries: Vec<u32> = (0..8).map(|t| g.entry_of(t)).collect();
        assert_eq!(entries, [0, 1, 1, 1, 2, 3, 3, 4]);
        let ids: Vec<TaskId> = (0..5).map(|e| g.id_of(e)).collect();
        assert_eq!(ids, [0, 1, 4, 5, 7]);
        let index = |g: &Graph, t| {
            let mut v = Vec::new();
            g.index_of(t, |x| v.push(x));
            v
        };
        assert_eq!(index(g, 3), [14]);
        assert_eq!(index(g, 4), [104]);
        assert_eq!(g.kind_of(6), Some(TaskKind::Kernel(1)));
        // The link: entry 3 waits for entry 1.
        let (_, succs, pending) = g.successors(0, 5, 0).unwrap();
        assert_eq!((succs, pending), (vec![3], vec![0, 0, 0, 1, 0]));
        g.expand();
        assert_eq!(g.tasks.len(), 8);
        let all: Vec<Vec<i64>> = (0..8).map(|t| index(g, t)).collect();
        assert_eq!(all, [[100], [10], [12], [14], [104], [10], [12], [107]]);
        assert_eq!(g.edges, [(1, 5), (2, 6)]);
    }
}
