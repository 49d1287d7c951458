//! The task graph of a run: every task enumerated so far, its kernel arguments, and the
//! dependency edges between tasks. Edges always run from a lower task id to a higher one, so
//! enumeration order is a topological order.

use rustc_hash::FxHashMap;

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
    /// Where this task's tile pointers start in `Graph::ptrs`.
    pub args: u32,
    /// Its strides and scalars, shared by every instance of one task of the program.
    pub sig: u32,
    /// Where its index values (`[b, h]`) start in `Graph::index`; they end where the next
    /// task's start.
    pub index: u32,
}

/// Where a task's strides and scalars start in the graph's pools.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sig {
    pub strides: u32,
    pub scalars: u32,
}

#[derive(Debug)]
pub struct Graph {
    pub tasks: Vec<Task>,
    /// (pred, succ), pred < succ.
    pub edges: Vec<(TaskId, TaskId)>,
    pub ptrs: Vec<*mut u8>,
    /// Signature 0 is the empty one, for barriers and collectives.
    pub sigs: Vec<Sig>,
    pub strides: Vec<i64>,
    pub scalars: Vec<f64>,
    pub index: Vec<i64>,
    /// Schedule keys (dispatch, stream) by task, for programs whose schedule has them;
    /// shorter than `tasks` when later tasks have none.
    pub keys: Vec<(i64, i64)>,
}

impl Default for Graph {
    fn default() -> Self {
        Graph {
            tasks: Vec::new(),
            edges: Vec::new(),
            ptrs: Vec::new(),
            sigs: vec![Sig::default()],
            strides: Vec::new(),
            scalars: Vec::new(),
            index: Vec::new(),
            keys: Vec::new(),
        }
    }
}

// SAFETY: the raw pointers point into tensor buffers that outlive every execution; tasks that
// share a region are ordered by the graph's edges.
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Graph {
    pub fn index_of(&self, t: TaskId) -> &[i64] {
        let lo = self.tasks[t as usize].index as usize;
        let hi = self
            .tasks
            .get(t as usize + 1)
            .map_or(self.index.len(), |n| n.index as usize);
        &self.index[lo..hi]
    }

    /// The task's dispatch and stream keys; (0, -1) for a task without.
    pub fn keys_of(&self, t: TaskId) -> (i64, i64) {
        self.keys.get(t as usize).copied().unwrap_or((0, -1))
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
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

impl Region {
    fn overlaps(&self, lo: &[u64], hi: &[u64]) -> bool {
        self.lo
            .iter()
            .zip(&self.hi)
            .zip(lo.iter().zip(hi))
            .all(|((a0, a1), (b0, b1))| a0 < b1 && b0 < a1)
    }

    fn is(&self, lo: &[u64], hi: &[u64]) -> bool {
        self.lo == lo && self.hi == hi
    }

    fn covered_by(&self, lo: &[u64], hi: &[u64]) -> bool {
        self.lo.iter().zip(lo).all(|(a, b)| a >= b) && self.hi.iter().zip(hi).all(|(a, b)| a <= b)
    }
}

/// The last writer and the readers since of one region. Task ids are stored plus one, so an
/// all-zero record is empty and a table of them can start as zeroed memory.
#[derive(Debug, Clone, Copy, Default)]
struct Record {
    writer: u32,
    /// The first reader.
    reader: u32,
    /// Further readers: a list in `Regions::lists`, plus one.
    more: u32,
}

/// Grids with at most this many tiles keep their records in a table indexed by tile.
const DENSE_TILES: u64 = 1 << 24;

/// Exact tracking of the regions tasks touch: a task depends on the last writer of every
/// region it reads, and on the last writer and the readers since of every region it writes.
#[derive(Debug, Default)]
pub struct Regions {
    tensors: Vec<TensorRecords>,
    /// Reader lists beyond a record's first reader, and the free ones.
    lists: Vec<Vec<TaskId>>,
    free: Vec<u32>,
}

#[derive(Debug, Default)]
struct TensorRecords {
    /// While every region seen has the same extents and is aligned to them, two regions
    /// overlap only when equal: records are found by tile number alone.
    grid: Option<Grid>,
    /// Otherwise, every record with its region, scanned.
    general: Vec<(Region, Record)>,
}

#[derive(Debug)]
struct Grid {
    extents: Vec<u64>,
    /// Per dimension, log2 of the extent when it is a power of two (most tiles), so that
    /// finding a tile needs no division.
    shifts: Vec<Option<u32>>,
    /// Per dimension, how far apart consecutive tiles are numbered.
    weights: Vec<u64>,
    table: Table,
}

#[derive(Debug)]
enum Table {
    Dense(Vec<Record>),
    Sparse(FxHashMap<u64, Record>),
}

impl Grid {
    fn new(shape: &[u64], extents: &[u64]) -> Grid {
        let mut weights = vec![0; shape.len()];
        let mut tiles = 1u64;
        for d in (0..shape.len()).rev() {
            weights[d] = tiles;
            tiles = tiles.saturating_mul(shape[d].div_ceil(extents[d]));
        }
        let table = if tiles <= DENSE_TILES {
            Table::Dense(vec![Record::default(); tiles as usize])
        } else {
            Table::Sparse(FxHashMap::default())
        };
        Grid {
            extents: extents.to_vec(),
            shifts: extents
                .iter()
                .map(|e| e.is_power_of_two().then(|| e.trailing_zeros()))
                .collect(),
            weights,
            table,
        }
    }

    /// The record of the tile at `lo`, if the region `lo..hi` is exactly one tile.
    fn record(&mut self, lo: &[u64], hi: &[u64]) -> Option<&mut Record> {
        let mut n = 0;
        for d in 0..lo.len() {
            let (l, e) = (lo[d], self.extents[d]);
            if hi[d] - l != e {
                return None;
            }
            let tile = match self.shifts[d] {
                Some(s) if l & (e - 1) == 0 => l >> s,
                None if l.is_multiple_of(e) => l / e,
                _ => return None,
            };
            n += tile * self.weights[d];
        }
        Some(match &mut self.table {
            Table::Dense(t) => &mut t[n as usize],
            Table::Sparse(m) => m.entry(n).or_default(),
        })
    }

    /// Every non-empty record with its region.
    fn drain(self) -> Vec<(Region, Record)> {
        let Grid {
            extents,
            weights,
            table,
            ..
        } = self;
        let region = |n: u64| {
            let lo: Vec<u64> = weights
                .iter()
                .zip(&extents)
                .enumerate()
                .map(|(d, (w, e))| {
                    let above = if d == 0 { u64::MAX } else { weights[d - 1] };
                    n % above / w * e
                })
                .collect();
            let hi = lo.iter().zip(&extents).map(|(l, e)| l + e).collect();
            Region { lo, hi }
        };
        let live = |r: &Record| r.writer != 0 || r.reader != 0;
        match table {
            Table::Dense(t) => t
                .into_iter()
                .enumerate()
                .filter(|(_, r)| live(r))
                .map(|(n, r)| (region(n as u64), r))
                .collect(),
            Table::Sparse(m) => {
                let mut v: Vec<_> = m.into_iter().filter(|(_, r)| live(r)).collect();
                v.sort_unstable_by_key(|(n, _)| *n);
                v.into_iter().map(|(n, r)| (region(n), r)).collect()
            }
        }
    }
}

impl Regions {
    /// Records an access by `task` to `lo..hi` of tensor `tensor` (of shape `shape`) and adds
    /// the tasks it must wait for to `deps`.
    pub fn access(
        &mut self,
        task: TaskId,
        tensor: usize,
        shape: &[u64],
        (lo, hi): (&[u64], &[u64]),
        dir: Direction,
        deps: &mut Vec<TaskId>,
    ) {
        if lo.iter().zip(hi).any(|(l, h)| l >= h) {
            return; // An empty region touches nothing.
        }
        if self.tensors.len() <= tensor {
            self.tensors.resize_with(tensor + 1, TensorRecords::default);
        }
        let Regions {
            tensors,
            lists,
            free,
        } = self;
        let recs = &mut tensors[tensor];
        if recs.grid.is_none() && recs.general.is_empty() {
            let extents: Vec<u64> = lo.iter().zip(hi).map(|(l, h)| h - l).collect();
            if lo.iter().zip(&extents).all(|(l, e)| l % e == 0) {
                recs.grid = Some(Grid::new(shape, &extents));
            }
        }
        if let Some(g) = &mut recs.grid {
            if let Some(rec) = g.record(lo, hi) {
                Self::update(lists, free, rec, task, dir, deps, true);
                return;
            }
            // Leave the fast path for good: the grid's records join the general list.
            recs.general = recs.grid.take().map(Grid::drain).unwrap_or_default();
        }
        let mut exact = false;
        for (r, rec) in recs.general.iter_mut() {
            if r.overlaps(lo, hi) {
                let same = r.is(lo, hi);
                Self::update(lists, free, rec, task, dir, deps, same);
                exact |= same;
            }
        }
        if dir.writes() {
            // A write that covers older records supersedes them.
            recs.general.retain(|(r, rec)| {
                let keep = r.is(lo, hi) || !r.covered_by(lo, hi);
                if !keep {
                    Self::release(lists, free, rec.more);
                }
                keep
            });
        }
        if !exact {
            let mut rec = Record::default();
            if dir.writes() {
                rec.writer = task + 1;
            } else {
                rec.reader = task + 1;
            }
            let region = Region {
                lo: lo.to_vec(),
                hi: hi.to_vec(),
            };
            recs.general.push((region, rec));
        }
    }

    fn release(lists: &mut [Vec<TaskId>], free: &mut Vec<u32>, more: u32) {
        if more != 0 {
            lists[more as usize - 1].clear();
            free.push(more - 1);
        }
    }

    /// Adds the dependencies of an access to `rec`; `own` says the access is exactly this
    /// record's region, so the record now describes it.
    fn update(
        lists: &mut Vec<Vec<TaskId>>,
        free: &mut Vec<u32>,
        rec: &mut Record,
        task: TaskId,
        dir: Direction,
        deps: &mut Vec<TaskId>,
        own: bool,
    ) {
        let me = task + 1;
        if rec.writer != 0 && rec.writer != me {
            deps.push(rec.writer - 1);
        }
        if dir.writes() {
            if rec.reader != 0 && rec.reader != me {
                deps.push(rec.reader - 1);
            }
            if rec.more != 0 {
                deps.extend(lists[rec.more as usize - 1].iter().filter(|&&r| r != task));
            }
            if own {
                Self::release(lists, free, rec.more);
                *rec = Record {
                    writer: me,
                    reader: 0,
                    more: 0,
                };
            }
        } else if own {
            let last = match rec.more {
                0 => rec.reader,
                m => lists[m as usize - 1].last().map_or(0, |r| r + 1),
            };
            if rec.reader == 0 {
                rec.reader = me;
            } else if last != me {
                if rec.more == 0 {
                    rec.more = match free.pop() {
                        Some(i) => i + 1,
                        None => {
                            lists.push(Vec::new());
                            lists.len() as u32
                        }
                    };
                }
                lists[rec.more as usize - 1].push(task);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{In, InOut, Out};

    const NONE: [TaskId; 0] = [];

    /// The dependencies of one access, sorted.
    fn access(
        r: &mut Regions,
        task: TaskId,
        shape: &[u64],
        lo: &[u64],
        hi: &[u64],
        dir: Direction,
    ) -> Vec<TaskId> {
        let mut deps = Vec::new();
        r.access(task, 0, shape, (lo, hi), dir, &mut deps);
        deps.sort_unstable();
        deps.dedup();
        deps
    }

    #[test]
    fn readers_wait_for_the_writer_and_the_next_writer_for_all_of_them() {
        for shape in [[8, 8], [1 << 20, 1 << 12]] {
            // The second shape has too many tiles for a table: its records are hashed.
            let r = &mut Regions::default();
            assert_eq!(access(r, 0, &shape, &[2, 0], &[4, 4], Out), NONE);
            assert_eq!(access(r, 1, &shape, &[2, 0], &[4, 4], In), [0]);
            assert_eq!(access(r, 2, &shape, &[2, 0], &[4, 4], In), [0]);
            assert_eq!(access(r, 3, &shape, &[0, 0], &[2, 4], In), NONE);
            assert_eq!(access(r, 4, &shape, &[2, 0], &[4, 4], InOut), [0, 1, 2]);
            assert_eq!(access(r, 5, &shape, &[2, 0], &[4, 4], In), [4]);
            assert_eq!(access(r, 6, &shape, &[2, 4], &[4, 8], Out), NONE);
        }
    }

    #[test]
    fn a_tile_of_another_size_sees_every_record_it_overlaps() {
        let shape = [6, 6, 8];
        let r = &mut Regions::default();
        // Tiles of 2×3×4.
        assert_eq!(access(r, 0, &shape, &[0, 0, 0], &[2, 3, 4], Out), NONE);
        assert_eq!(access(r, 1, &shape, &[4, 3, 4], &[6, 6, 8], Out), NONE);
        assert_eq!(access(r, 2, &shape, &[2, 3, 0], &[4, 6, 4], In), NONE);
        // Off the grid: one access spanning all three records.
        assert_eq!(
            access(r, 3, &shape, &[0, 0, 0], &[6, 6, 8], InOut),
            [0, 1, 2]
        );
        // The whole-tensor write superseded them all.
        assert_eq!(access(r, 4, &shape, &[4, 3, 4], &[6, 6, 8], In), [3]);
        assert_eq!(access(r, 5, &shape, &[1, 1, 1], &[2, 2, 2], Out), [3]);
        assert_eq!(access(r, 6, &shape, &[0, 0, 0], &[2, 2, 2], In), [3, 5]);
    }

    #[test]
    fn reader_lists_are_reused_after_a_write() {
        let shape = [4];
        let r = &mut Regions::default();
        for t in 0..3 {
            access(r, t, &shape, &[0], &[1], In);
        }
        assert_eq!(access(r, 3, &shape, &[0], &[1], Out), [0, 1, 2]);
        for t in 4..6 {
            assert_eq!(access(r, t, &shape, &[1], &[2], In), NONE);
        }
        assert_eq!(r.lists.len(), 1, "the freed list was taken again");
        assert_eq!(access(r, 6, &shape, &[1], &[2], Out), [4, 5]);
        // An empty region touches nothing.
        assert_eq!(access(r, 7, &shape, &[1], &[1], Out), NONE);
    }
}
