//! The task graph of a run: every task enumerated so far, its kernel arguments, and the
//! dependency edges between tasks. Edges always run from a lower task id to a higher one, so
//! enumeration order is a topological order.

use std::collections::HashMap;

use wsp_ir::plan::Direction;

pub type TaskId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A kernel of the program, by index.
    Kernel(u32),
    /// An ordering point with no work (`sequential()`, a `P.seq` step with many tasks).
    Barrier,
    /// Computes a derived tensor (`relayout`, `allreduce`) from its source.
    Collective(u32),
}

#[derive(Debug, Clone)]
pub struct Task {
    pub kind: TaskKind,
    /// Where this task's pointers, strides and scalars start in the graph's pools.
    pub args: u32,
    pub scalars: u32,
    /// The task's index values (`[b, h]`), in `Graph::index`.
    pub index: (u32, u32),
    /// Schedule keys evaluated at enumeration.
    pub dispatch_key: i64,
    pub stream_key: i64,
    /// Which execution of the file's actions enumerated it (for the trace).
    pub execution: u32,
}

#[derive(Debug, Default)]
pub struct Graph {
    pub tasks: Vec<Task>,
    /// (pred, succ), pred < succ.
    pub edges: Vec<(TaskId, TaskId)>,
    pub ptrs: Vec<*mut u8>,
    pub strides: Vec<i64>,
    pub scalars: Vec<f64>,
    pub index: Vec<i64>,
}

// SAFETY: the raw pointers point into tensor buffers that outlive every execution; tasks that
// share a region are ordered by the graph's edges.
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Graph {
    pub fn index_of(&self, t: TaskId) -> &[i64] {
        let (lo, hi) = self.tasks[t as usize].index;
        &self.index[lo as usize..hi as usize]
    }

    /// Successor lists of tasks `lo..hi`, CSR, counting only edges inside the range.
    pub fn successors(
        &self,
        lo: TaskId,
        hi: TaskId,
        first_edge: usize,
    ) -> (Vec<u32>, Vec<TaskId>, Vec<u32>) {
        let n = (hi - lo) as usize;
        let mut offsets = vec![0u32; n + 1];
        let mut pending = vec![0u32; n];
        let edges = &self.edges[first_edge..];
        for &(p, s) in edges {
            if p >= lo && s < hi {
                offsets[(p - lo) as usize + 1] += 1;
                pending[(s - lo) as usize] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut succs = vec![0; offsets[n] as usize];
        for &(p, s) in edges {
            if p >= lo && s < hi {
                let slot = &mut fill[(p - lo) as usize];
                succs[*slot as usize] = s;
                *slot += 1;
            }
        }
        (offsets, succs, pending)
    }
}

/// A rectangular region of a tensor: per dimension, `lo..hi`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    pub tensor: u32,
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

impl Region {
    fn overlaps(&self, other: &Region) -> bool {
        self.tensor == other.tensor
            && self
                .lo
                .iter()
                .zip(&self.hi)
                .zip(other.lo.iter().zip(&other.hi))
                .all(|((a0, a1), (b0, b1))| a0 < b1 && b0 < a1)
    }

    fn covers(&self, other: &Region) -> bool {
        self.lo.iter().zip(&other.lo).all(|(a, b)| a <= b)
            && self.hi.iter().zip(&other.hi).all(|(a, b)| a >= b)
    }

    fn extents(&self) -> Vec<u64> {
        self.lo.iter().zip(&self.hi).map(|(l, h)| h - l).collect()
    }
}

#[derive(Debug, Default)]
struct Record {
    writer: Option<TaskId>,
    readers: Vec<TaskId>,
}

/// Exact tracking of the regions tasks touch: a task depends on the last writer of every
/// region it reads, and on the last writer and the readers since of every region it writes.
#[derive(Debug, Default)]
pub struct Regions {
    tensors: HashMap<u32, TensorRecords>,
}

#[derive(Debug, Default)]
struct TensorRecords {
    /// While every region seen has the same extents and is aligned to them, two regions
    /// overlap only when equal: records are found by their first corner alone.
    grid: Option<Vec<u64>>,
    by_corner: HashMap<Vec<u64>, Record>,
    /// Otherwise, every record with its region, scanned.
    general: Vec<(Region, Record)>,
}

impl Regions {
    /// Records an access by `task` and returns the tasks it must wait for.
    pub fn access(
        &mut self,
        task: TaskId,
        region: &Region,
        dir: Direction,
        deps: &mut Vec<TaskId>,
    ) {
        let recs = self.tensors.entry(region.tensor).or_default();
        let ext = region.extents();
        let aligned = region
            .lo
            .iter()
            .zip(&ext)
            .all(|(l, e)| *e == 0 || l % e == 0);
        let on_grid = match &recs.grid {
            None if recs.by_corner.is_empty() && recs.general.is_empty() && aligned => {
                recs.grid = Some(ext.clone());
                true
            }
            Some(g) => *g == ext && aligned,
            None => false,
        };
        if on_grid {
            let rec = recs.by_corner.entry(region.lo.clone()).or_default();
            Self::update(rec, task, dir, deps, true);
            return;
        }
        if let Some(g) = recs.grid.take() {
            // Leave the fast path for good: move the grid records into the general list.
            for (lo, rec) in recs.by_corner.drain() {
                let hi = lo.iter().zip(&g).map(|(l, e)| l + e).collect();
                recs.general.push((
                    Region {
                        tensor: region.tensor,
                        lo,
                        hi,
                    },
                    rec,
                ));
            }
        }
        let mut exact = false;
        for (r, rec) in recs.general.iter_mut() {
            if r.overlaps(region) {
                let same = r == region;
                Self::update(rec, task, dir, deps, same);
                exact |= same;
            }
        }
        if dir.writes() {
            // A write that covers older records supersedes them.
            recs.general
                .retain(|(r, _)| r == region || !region.covers(r));
        }
        if !exact {
            let mut rec = Record::default();
            if dir.writes() {
                rec.writer = Some(task);
            } else {
                rec.readers.push(task);
            }
            recs.general.push((region.clone(), rec));
        }
    }

    /// Adds the dependencies of an access to `rec`; `own` says the access is exactly this
    /// record's region, so the record now describes it.
    fn update(rec: &mut Record, task: TaskId, dir: Direction, deps: &mut Vec<TaskId>, own: bool) {
        if let Some(w) = rec.writer
            && w != task
        {
            deps.push(w);
        }
        if dir.writes() {
            deps.extend(rec.readers.iter().copied().filter(|&r| r != task));
            if own {
                rec.writer = Some(task);
                rec.readers.clear();
            }
        } else if own && rec.readers.last() != Some(&task) {
            rec.readers.push(task);
        }
    }
}
