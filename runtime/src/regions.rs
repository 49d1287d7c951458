//! Region tracking for the task graph: per tensor, the last writer and the readers since of
//! every region tasks touched, so that a new task depends on exactly the tasks whose accesses
//! conflict with its own (read after write, write after read or write).
//!
//! Tiles on a regular grid find their record by tile number; anything else falls back to a
//! scanned list. An index launch keeps one record for all its instances while the tensor has
//! no per-task records, and turns into per-instance records when it gets one.

use rustc_hash::FxHashMap;

use wsp_ir::plan::Direction;

use crate::graph::TaskId;

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
    /// Accesses of index launches, one record for all instances, while the tensor has no
    /// other records.
    launches: Vec<LaunchRecord>,
}

/// The tiles an index launch touches on one tensor: instance `i` the region
/// `lo + i * step .. hi + i * step`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strided {
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
    pub step: Vec<i64>,
    pub count: u32,
}

impl Strided {
    /// Instance `i`'s region.
    fn at(&self, i: u32) -> (Vec<u64>, Vec<u64>) {
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        self.at_into(i, &mut lo, &mut hi);
        (lo, hi)
    }

    /// Instance `i`'s region, into `lo` and `hi`.
    pub fn at_into(&self, i: u32, lo: &mut Vec<u64>, hi: &mut Vec<u64>) {
        let shift = |v: &[u64], out: &mut Vec<u64>| {
            out.clear();
            let each = v.iter().zip(&self.step);
            out.extend(each.map(|(&v, &s)| v.wrapping_add_signed(s.wrapping_mul(i as i64))));
        };
        shift(&self.lo, lo);
        shift(&self.hi, hi);
    }

    /// Whether no region is empty (an empty one touches nothing, and all are alike).
    fn touches(&self) -> bool {
        self.count > 0 && self.lo.iter().zip(&self.hi).all(|(l, h)| l < h)
    }

    /// Whether no two instances' regions overlap.
    pub fn disjoint(&self) -> bool {
        self.count <= 1
            || self
                .lo
                .iter()
                .zip(&self.hi)
                .zip(&self.step)
                .any(|((l, h), s)| s.unsigned_abs() >= h - l)
    }

    /// Whether some instance's region overlaps some instance's region of `other`, judged by
    /// the boxes around all of each.
    pub fn may_overlap(&self, other: &Strided) -> bool {
        let (a0, a1) = self.hull();
        let (b0, b1) = other.hull();
        (0..a0.len()).all(|d| a0[d] < b1[d] && b0[d] < a1[d])
    }

    fn hull(&self) -> (Vec<u64>, Vec<u64>) {
        let (first, last) = (self.at(0), self.at(self.count.saturating_sub(1)));
        let lo = first
            .0
            .iter()
            .zip(&last.0)
            .map(|(a, b)| *a.min(b))
            .collect();
        let hi = first
            .1
            .iter()
            .zip(&last.1)
            .map(|(a, b)| *a.max(b))
            .collect();
        (lo, hi)
    }
}

/// The last launch that wrote a [`Strided`] set of tiles and the launches that read it since,
/// by first id (plus one for the writer, 0 for none).
#[derive(Debug)]
struct LaunchRecord {
    tiles: Strided,
    writer: TaskId,
    readers: Vec<TaskId>,
}

/// A tensor with more launch records than this takes no further launches of new tiles.
const LAUNCH_RECORDS: usize = 32;

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
        if !self.tensors[tensor].launches.is_empty() {
            self.materialize(tensor, shape);
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

    /// Whether an index launch can record its access to `tiles` of `tensor` in one record:
    /// the tensor has no per-task records, and every launch record is of the same tiles, far
    /// from them, or read only as this access is. Otherwise the launch's instances are
    /// enumerated one by one.
    pub fn can_launch(&self, tensor: usize, tiles: &Strided, dir: Direction) -> bool {
        let Some(r) = self.tensors.get(tensor) else {
            return true;
        };
        let same = r.launches.iter().any(|l| l.tiles == *tiles);
        let apart = |l: &LaunchRecord| {
            l.tiles == *tiles || (l.writer == 0 && !dir.writes()) || !l.tiles.may_overlap(tiles)
        };
        !tiles.touches()
            || (r.grid.is_none()
                && r.general.is_empty()
                && (same || r.launches.len() < LAUNCH_RECORDS)
                && r.launches.iter().all(apart))
    }

    /// Records the access of launch `first` (of `tiles.count` instances) to `tiles`, which
    /// [`Regions::can_launch`] allowed, and adds to `links` the first ids of the launches
    /// whose instance `i` each instance `i` must wait for.
    pub fn launch_access(
        &mut self,
        first: TaskId,
        tensor: usize,
        tiles: &Strided,
        dir: Direction,
        links: &mut Vec<TaskId>,
    ) {
        if !tiles.touches() {
            return;
        }
        if self.tensors.len() <= tensor {
            self.tensors.resize_with(tensor + 1, TensorRecords::default);
        }
        let records = &mut self.tensors[tensor].launches;
        let Some(rec) = records.iter_mut().find(|l| l.tiles == *tiles) else {
            records.push(LaunchRecord {
                tiles: tiles.clone(),
                writer: if dir.writes() { first + 1 } else { 0 },
                readers: if dir.writes() { vec![] } else { vec![first] },
            });
            return;
        };
        if rec.writer != 0 && rec.writer != first + 1 {
            links.push(rec.writer - 1);
        }
        if dir.writes() {
            links.extend(rec.readers.iter().filter(|&&r| r != first));
            rec.writer = first + 1;
            rec.readers.clear();
        } else if rec.readers.last() != Some(&first) {
            rec.readers.push(first);
        }
    }

    /// Turns a tensor's launch records into the per-instance records the same instances
    /// would have left, before an access that is not a launch of the same tiles.
    fn materialize(&mut self, tensor: usize, shape: &[u64]) {
        let launches = std::mem::take(&mut self.tensors[tensor].launches);
        let mut deps = Vec::new();
        for l in &launches {
            for i in 0..l.tiles.count {
                let (lo, hi) = l.tiles.at(i);
                if l.writer != 0 {
                    self.access(
                        l.writer - 1 + i,
                        tensor,
                        shape,
                        (&lo, &hi),
                        Direction::Out,
                        &mut deps,
                    );
                }
                for &r in &l.readers {
                    self.access(r + i, tensor, shape, (&lo, &hi), Direction::In, &mut deps);
                }
                deps.clear();
            }
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

    /// Tiles [2, 4] down the rows of an [8, 4] tensor, one per instance of a launch of 4.
    fn rows(first_row: u64, step: i64) -> Strided {
        Strided {
            lo: vec![first_row, 0],
            hi: vec![first_row + 2, 4],
            step: vec![step, 0],
            count: 4,
        }
    }

    fn launch(r: &mut Regions, first: TaskId, tiles: &Strided, dir: Direction) -> Vec<TaskId> {
        assert!(r.can_launch(0, tiles, dir));
        let mut links = Vec::new();
        r.launch_access(first, 0, tiles, dir, &mut links);
        links.sort_unstable();
        links
    }

    #[test]
    fn launches_of_the_same_tiles_wait_instance_by_instance() {
        let shape = [8, 4];
        let r = &mut Regions::default();
        assert_eq!(launch(r, 0, &rows(0, 2), Out), NONE);
        assert_eq!(launch(r, 4, &rows(0, 2), In), [0]);
        assert_eq!(launch(r, 8, &rows(0, 2), In), [0]);
        assert_eq!(launch(r, 12, &rows(0, 2), InOut), [0, 4, 8]);
        // A task's access turns the records into the ones the instances would have left:
        // instance 2 of the last launch wrote rows 4..6.
        assert_eq!(access(r, 16, &shape, &[4, 0], &[6, 4], In), [14]);
        assert!(
            !r.can_launch(0, &rows(0, 2), In),
            "the tensor has per-task records"
        );
    }

    #[test]
    fn a_launch_of_other_tiles_must_not_overlap_what_launches_wrote() {
        let r = &mut Regions::default();
        assert_eq!(launch(r, 0, &rows(0, 2), In), NONE);
        // Reads of other tiles need no order among them.
        assert_eq!(launch(r, 4, &rows(6, -2), In), NONE);
        assert!(
            !r.can_launch(0, &rows(6, -2), Out),
            "overlaps the first launch's reads"
        );
        let r = &mut Regions::default();
        assert_eq!(launch(r, 0, &rows(0, 2), Out), NONE);
        assert!(
            !r.can_launch(0, &rows(6, -2), In),
            "reads what instances wrote"
        );
        let far = Strided {
            lo: vec![0, 0],
            hi: vec![1, 4],
            step: vec![1, 0],
            count: 4,
        };
        // Rows 0..4 in steps of one overlap rows 0..8 in steps of two.
        assert!(!r.can_launch(0, &far, In));
        // An empty region touches nothing.
        let empty = Strided {
            hi: vec![0, 0],
            ..far.clone()
        };
        assert!(r.can_launch(0, &empty, Out));
        assert!(rows(0, 2).disjoint() && !rows(0, 1).disjoint() && !rows(0, 0).disjoint());
        // A per-task access elsewhere still sees the writer of its rows, and nothing else.
        assert_eq!(access(r, 4, &[8, 4], &[2, 0], &[4, 4], In), [1]);
        assert_eq!(access(r, 5, &[8, 4], &[6, 0], &[8, 4], Out), [3]);
    }

    /// Tiles of a property test: `count` instances, instance `i` touching rows
    /// `row + i * step .. row + i * step + rows` of an [16, 4] tensor.
    #[derive(Debug, Clone)]
    struct Rows {
        row: u64,
        rows: u64,
        step: i64,
        count: u32,
    }

    fn some_rows() -> impl proptest::strategy::Strategy<Value = Rows> {
        use proptest::prelude::*;
        (0u64..16, 1u64..3, -2i64..3, 1u32..5)
            .prop_map(|(row, rows, step, count)| Rows {
                row,
                rows,
                step,
                count,
            })
            .prop_filter("inside the tensor", |o| {
                let last = o.row as i64 + o.step * (o.count as i64 - 1);
                last >= 0 && last + o.rows as i64 <= 16 && o.row + o.rows <= 16
            })
    }

    proptest::proptest! {
        /// Launch records, their links and their materialization give every instance exactly
        /// the dependencies per-task records give the same accesses one by one. Accesses draw
        /// from three sets of tiles, so that launches often meet the same tiles again.
        #[test]
        fn launch_records_are_exact(
            pool in proptest::collection::vec(some_rows(), 3),
            picks in proptest::collection::vec((0usize..3, 0usize..3, proptest::bool::weighted(0.2)), 1..16),
        ) {
            let ops: Vec<(Rows, Direction, bool)> = picks
                .iter()
                .map(|&(p, d, as_task)| (pool[p].clone(), [In, Out, InOut][d], as_task))
                .collect();
            let shape = [16, 4];
            let (mut tasks, mut launched) = (Regions::default(), Regions::default());
            let (mut expected, mut got) = (Vec::new(), Vec::new());
            let mut first = 0;
            for (o, dir, as_task) in &ops {
                let dir = *dir;
                let tiles = Strided {
                    lo: vec![o.row, 0],
                    hi: vec![o.row + o.rows, 4],
                    step: vec![o.step, 0],
                    count: o.count,
                };
                let mut deps = Vec::new();
                for i in 0..o.count {
                    let (lo, hi) = tiles.at(i);
                    tasks.access(first + i, 0, &shape, (&lo, &hi), dir, &mut deps);
                    expected.extend(deps.drain(..).map(|d| (d, first + i)));
                }
                let launch = !as_task
                    && (!dir.writes() || tiles.disjoint())
                    && launched.can_launch(0, &tiles, dir);
                if launch {
                    let mut links = Vec::new();
                    launched.launch_access(first, 0, &tiles, dir, &mut links);
                    for p in links {
                        got.extend((0..o.count).map(|i| (p + i, first + i)));
                    }
                } else {
                    for i in 0..o.count {
                        let (lo, hi) = tiles.at(i);
                        launched.access(first + i, 0, &shape, (&lo, &hi), dir, &mut deps);
                        got.extend(deps.drain(..).map(|d| (d, first + i)));
                    }
                }
                first += o.count;
            }
            for e in [&mut expected, &mut got] {
                e.retain(|(p, s)| p != s);
                e.sort_unstable();
                e.dedup();
            }
            proptest::prop_assert_eq!(expected, got);
        }
    }
}
