//! What one kernel costs on one AICore, from the instructions `wsp emit` writes for it
//! (`wsp_aicore::listing`): each instruction's cycles from one table, fitted to PTO-ISA's A2/A3
//! Perf-Sim by `cargo xtask calibrate` ([`fit`]), and the core's pipes run as the hardware runs
//! them: each pipe takes its instructions in order, a `wait_flag` holds its pipe until the
//! matching `set_flag`'s pipe has finished what came before it, and no instruction starts
//! before the scalar pipe has bound every tile (`TASSIGN`, one after another).
//!
//! A kernel `wsp emit` splits for A2/A3 costs its parts one after another (they pass values
//! through global memory, a task each). A kernel with no AICore form (a C++ body, an op
//! without an instruction) is estimated from its ops: each op's instruction row
//! (`wsp_ir::instructions`) on its result's shape, in sequence.
//!
//! Features of an instruction, the same for the fit and the model: for the cube, output
//! fractals and fractal products (16×16×16); for data movement, the tile's rows and 32-byte
//! blocks; for the vector unit, rows and 256-byte repeats (per row) of its largest tile.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use wsp_aicore::listing::{Listing, Pipe, Step};
use wsp_ir::arch::{Instr, Operand};
use wsp_ir::kernel::{KernelBody, ParamType, ValueType};
use wsp_ir::layout::Layouts;
use wsp_ir::{DType, Kernel};

/// One row of the instruction table: cycles = head + per_row × rows + per_unit × units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrCost {
    pub name: String,
    /// The dtype of the instruction's shape tile, or `*` for any.
    pub dtype: String,
    pub head: f64,
    pub per_row: f64,
    pub per_unit: f64,
    /// How many measured instructions the row was fitted to.
    #[serde(default)]
    pub samples: u64,
}

/// The table, as the target description holds it (`[instructions]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrTable {
    /// Where the figures come from.
    pub source: String,
    /// Cycles of one `TASSIGN` on the scalar pipe.
    pub assign: f64,
    /// What the first instruction of the vector pipe costs beyond its row.
    #[serde(default)]
    pub vector_start: f64,
    pub costs: Vec<InstrCost>,
}

/// Which pipe class an instruction's features are counted in.
fn class(pipe: Pipe) -> &'static str {
    match pipe {
        Pipe::M => "cube",
        Pipe::Mte1 | Pipe::Mte2 | Pipe::Mte3 | Pipe::Fix => "move",
        Pipe::V | Pipe::S => "vector",
    }
}

fn tile(o: &Operand) -> Option<(u64, u64, DType)> {
    match o {
        Operand::Tile { valid, dtype, .. } => Some((valid.0, valid.1, *dtype)),
        _ => None,
    }
}

fn is_row_reduction(name: &str) -> bool {
    wsp_ir::arch::instruction(name).is_some_and(|r| r.row_reduction)
}

/// Whether Perf-Sim's `cycles` for vector instruction `i` are its known fault rather than a
/// cost: an elementwise form over 256 repeats or more (a 64 KiB tile) is timed as if its
/// 8-bit repeat count had wrapped (TEXP over 64x256 f32: 4 cycles, over 64x128: 256). Such a
/// measurement is left out of the fit, and the kernel holding it is compared with Perf-Sim's
/// total less it plus the table's cost for it.
pub fn wrapped(i: &Instr, pipe: Pipe, cycles: u64, table: &InstrTable) -> bool {
    suspect(i, pipe) && cycles * 4 < table.cycles(i, pipe)
}

/// The dtype an instruction is keyed by and its features `[1, rows, units]`.
pub fn features(i: &Instr, pipe: Pipe) -> (DType, [f64; 3]) {
    let tiles: Vec<(u64, u64, DType)> = i.operands.iter().filter_map(tile).collect();
    let Some(&first) = tiles.first() else {
        return (DType::F32, [1.0, 0.0, 0.0]);
    };
    match class(pipe) {
        "cube" => {
            // TMATMUL(c, a, b[, bias]) and TMATMUL_ACC(c, c, a, b): a is M×K, b is K×N.
            let a = if i.name == "TMATMUL_ACC" { 2 } else { 1 };
            let (m, k, dt) = tiles.get(a).copied().unwrap_or(first);
            let n = tiles.get(a + 1).map_or(first.1, |b| b.1);
            let out = m.div_ceil(16) * n.div_ceil(16);
            (dt, [1.0, out as f64, (out * k.div_ceil(16)) as f64])
        }
        "move" => {
            // The on-chip tile: TLOAD's destination, a store's or move's source.
            let (r, c, dt) = if i.name == "TLOAD" {
                first
            } else {
                tiles.get(1).copied().unwrap_or(first)
            };
            let blocks = (r * c * dt.size_bytes() as u64).div_ceil(32);
            (dt, [1.0, r as f64, blocks as f64])
        }
        _ => {
            let (r, c, dt) = *tiles
                .iter()
                .max_by_key(|(r, c, _)| r * c)
                .expect("a first tile");
            let per_row = (c * dt.size_bytes() as u64).div_ceil(256);
            if is_row_reduction(&i.name) {
                // Rows reduce side by side; the tree across a row's repeats is what grows.
                return (dt, [1.0, r as f64, per_row as f64]);
            }
            (dt, [1.0, r as f64, (r * per_row) as f64])
        }
    }
}

/// The table's name for an instruction: its own; for data movement, where it moves data from
/// and to (`TLOAD:gm>vec`, `TMOV:mat>left`, `TSTORE:acc>gm`), as each path has its own
/// bandwidth; for vector work on rows under 256 bytes, `NAME:narrow`, and for a row
/// reduction over rows of exactly 256 bytes, `NAME:one`.
pub fn key(i: &Instr, pipe: Pipe) -> String {
    if class(pipe) == "vector" {
        let row_bytes = i
            .operands
            .iter()
            .filter_map(tile)
            .max_by_key(|(r, c, _)| r * c)
            .map_or(0, |(_, c, dt)| c * dt.size_bytes() as u64);
        let reduction = is_row_reduction(&i.name);
        // Rows narrower than one 256-byte repeat take another path through PTO-ISA's forms,
        // and a row reduction over one repeat per row needs no reduction across repeats.
        return if row_bytes < 256 {
            format!("{}:narrow", i.name)
        } else if reduction && row_bytes == 256 {
            format!("{}:one", i.name)
        } else {
            i.name.clone()
        };
    }
    if i.name == "TMATMUL_ACC" {
        // The same work as TMATMUL, into an accumulator that already holds a value.
        return "TMATMUL".to_string();
    }
    if class(pipe) != "move" {
        return i.name.clone();
    }
    let mem = |n: usize| match i.operands.get(n) {
        Some(Operand::Tile { kind, .. }) => format!("{kind:?}").to_lowercase(),
        Some(Operand::Global { .. }) => "gm".to_string(),
        _ => "?".to_string(),
    };
    format!("{}:{}>{}", i.name, mem(1), mem(0))
}

/// The dtype Perf-Sim prices an instruction of `d` as: its recorder names f32, i32 and i8, and
/// every other dtype fp16 (`include/pto/costmodel/perf_sim/recorder.hpp`, `dtype_str`), so a
/// bf16 tile costs what an f16 one does.
fn priced_as(d: DType) -> DType {
    match d {
        DType::F32 | DType::I32 | DType::I8 => d,
        _ => DType::F16,
    }
}

/// The table rows an instruction named `key` (see [`key`]) may take its cycles from, in the
/// order tried: its own at `dtype`, its own for any dtype, its class's at `dtype`, its class's.
/// The fit gives every one of them a sample of each measured instruction.
fn rows_of(key: &str, dtype: DType, pipe: Pipe) -> [(String, String); 4] {
    let class = format!("*{}", class(pipe));
    let dtype = priced_as(dtype).name().to_string();
    [
        (key.to_string(), dtype.clone()),
        (key.to_string(), "*".to_string()),
        (class.clone(), dtype),
        (class, "*".to_string()),
    ]
}

impl InstrTable {
    /// The row for `name` at `dtype`: its own, else its any-dtype row, else the class's
    /// (`*vector`, `*move`, `*cube`).
    fn row(&self, name: &str, dtype: DType, pipe: Pipe) -> Option<&InstrCost> {
        rows_of(name, dtype, pipe)
            .into_iter()
            .find_map(|(n, d)| self.costs.iter().find(|c| c.name == n && c.dtype == d))
    }

    pub fn cycles(&self, i: &Instr, pipe: Pipe) -> u64 {
        let (dtype, x) = features(i, pipe);
        self.row(&key(i, pipe), dtype, pipe).map_or(0, |c| {
            (c.head * x[0] + c.per_row * x[1] + c.per_unit * x[2])
                .round()
                .max(1.0) as u64
        })
    }
}

/// One part's cycles on its core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct PartCycles {
    pub total: u64,
    /// Of its instructions' cycles, those of loads from and stores to global memory, and the
    /// bytes they move.
    pub gm_cycles: u64,
    pub gm_bytes: u64,
}

fn index(p: Pipe) -> usize {
    Pipe::ALL
        .iter()
        .position(|q| *q == p)
        .expect("every pipe is listed")
}

/// The pipes of one core running `l`, each instruction costed by `table`.
pub fn run_listing(l: &Listing, table: &InstrTable) -> PartCycles {
    // Every tile is bound before any instruction starts.
    let bound = (l.tiles as f64 * table.assign).round() as u64;
    let mut core = Core {
        free: [bound; 7],
        flags: BTreeMap::new(),
        started: false,
        gm: [0, 0],
    };
    core.range(l, 0, l.steps.len(), 0, table);
    PartCycles {
        total: core.free.into_iter().max().unwrap_or(0),
        gm_cycles: core.gm[0],
        gm_bytes: core.gm[1],
    }
}

/// The ring a load reads or a store writes, if a mixed launch's (`g_wsp_ring2_s1`).
fn ring_of(instr: &Instr) -> Option<usize> {
    instr.operands.iter().find_map(|o| match o {
        Operand::Global { name, .. } => wsp_aicore::mixed::ring_of(name),
        _ => None,
    })
}

/// A mixed launch (`wsp_aicore::mixed`) as PTO-ISA's Perf-Sim times it: one stream of the
/// cube core's and its first vector core's instructions in the launch's order (the other
/// vector core runs as the first), each pipe a queue. An instruction starts when its queue is
/// free and its flags are raised; after the last writer of each tile or global it reads on
/// another pipe (tiles known by their address alone, whichever memory); and, where it reads
/// nothing another pipe wrote, after the scalar instruction before it. The scalar queue,
/// shared, runs the rings' calls: `TPUSH` (written just before the reading section) when the
/// producer's last store is done, `TPOP` when its push is, a cycle each; a cube core's loads
/// wait for its last pop. A flag into `PIPE_MTE2` waits on the queue of the last load.
pub fn run_mixed(m: &wsp_aicore::mixed::MixedCores, table: &InstrTable) -> PartCycles {
    use std::collections::{HashMap, VecDeque};
    use wsp_aicore::mixed::Run;
    use wsp_ir::mixed::Section;
    use wsp_ir::split::Core as Unit;
    // Queues: the shared scalar one, then each core's pipes.
    const S: usize = 0;
    let queue = |c: usize, p: Pipe| -> usize {
        match (c, p) {
            (_, Pipe::S) => S,
            (0, Pipe::Mte2) => 1,
            (_, Pipe::Mte1) => 2,
            (_, Pipe::M) => 3,
            (_, Pipe::Fix) => 4,
            (_, Pipe::Mte2) => 5,
            (_, Pipe::V) => 6,
            (_, Pipe::Mte3) => 7,
        }
    };
    let listings: Vec<Listing> = m
        .texts
        .iter()
        .map(|t| wsp_aicore::listing::listing(t))
        .collect();
    // Every tile of both cores is bound, one after another, before any instruction starts.
    let tiles: usize = listings.iter().map(|l| l.tiles).sum();
    let bound = (tiles as f64 * table.assign).round() as u64;
    let mut free = [bound; 8];
    // Each core's steps by section: a step is in the section of its op, or the one before.
    let mut sections: Vec<Vec<(Section, Vec<&Step>)>> = Vec::new();
    for (p, l) in m.programs.iter().zip(&listings) {
        let mut by: Vec<(Section, Vec<&Step>)> = Vec::new();
        let mut current = 0usize;
        for step in &l.steps {
            if let Step::Instr { op: Some(op), .. } = step
                && let Some(n) = p.sections.iter().rposition(|(at, _)| at <= op)
            {
                current = n;
            }
            while by.len() <= current {
                by.push((p.sections[by.len()].1, Vec::new()));
            }
            by[current].1.push(step);
        }
        sections.push(by);
    }
    let rings = m.plan.rings.len();
    let mut scalar_end = bound;
    let mut pushes: Vec<VecDeque<u64>> = vec![VecDeque::new(); rings];
    let mut last_pop = 0u64;
    let mut last_mte2 = 1usize;
    let mut last_end = [0u64; 8];
    let mut flags: HashMap<(Pipe, u32), VecDeque<u64>> = HashMap::new();
    let mut writers: HashMap<String, (usize, u64)> = HashMap::new();
    let mut gm = [0u64; 2];
    let key = |o: &Operand| match o {
        Operand::Tile { offset, .. } => Some(format!("@{offset}")),
        Operand::Global { name, .. } => Some(name.clone()),
        Operand::Scalar(_) => None,
    };
    let loads_ring = |step: &Step| match step {
        Step::Instr { instr, .. } if instr.name == "TLOAD" => ring_of(instr),
        _ => None,
    };
    // A flag's pipe's queue: `PIPE_MTE2`'s is the last load's.
    let flag_queue = |c: usize, p: Pipe, last_mte2: usize| {
        if p == Pipe::Mte2 {
            last_mte2
        } else {
            queue(c, p)
        }
    };
    let scalar = |free: &mut [u64; 8], after: u64| -> u64 {
        let end = free[S].max(after) + 1;
        free[S] = end;
        end
    };
    for run in m.schedule() {
        let (unit, section) = match run {
            Run::Section(unit, section) => (unit, section),
            Run::Push { ring, n } => {
                // Each waits for its producer's last store so far, of any ring.
                let last_store = match m.plan.rings[ring].from {
                    Unit::Cube => last_end[queue(0, Pipe::Fix)],
                    Unit::Vector => last_end[queue(1, Pipe::Mte3)],
                };
                for _ in 0..n {
                    scalar_end = scalar(&mut free, last_store);
                    pushes[ring].push_back(scalar_end);
                }
                continue;
            }
        };
        let c = match unit {
            Unit::Cube => 0,
            Unit::Vector => 1,
        };
        let Some((_, steps)) = sections[c].iter().find(|(s, _)| *s == section) else {
            continue;
        };
        for step in steps.iter().copied() {
            match step {
                Step::Instr { pipe, instr, .. } => {
                    let q = queue(c, *pipe);
                    let ring_load = loads_ring(step);
                    let ring_store = (instr.name == "TSTORE").then(|| ring_of(instr)).flatten();
                    if ring_store.is_some() {
                        scalar_end = scalar(&mut free, 0); // TALLOC
                    }
                    let mut start = free[q];
                    if let Some(r) = ring_load {
                        let pushed = pushes[r].pop_front().unwrap_or(0);
                        scalar_end = scalar(&mut free, pushed); // TPOP
                        start = start.max(scalar_end);
                        if c == 0 {
                            last_pop = scalar_end;
                        }
                    }
                    if c == 0 && *pipe == Pipe::Mte2 {
                        start = start.max(last_pop);
                    }
                    let mut cross = false;
                    for o in instr.operands.iter().skip(1) {
                        if let Some((wq, end)) = key(o).and_then(|k| writers.get(&k).copied())
                            && wq != q
                        {
                            start = start.max(end);
                            cross = true;
                        }
                    }
                    if !cross {
                        start = start.max(scalar_end);
                    }
                    let mut cycles = table.cycles(instr, *pipe);
                    if *pipe == Pipe::V && last_end[q] == 0 {
                        cycles += table.vector_start.round() as u64;
                    }
                    let end = start + cycles;
                    free[q] = end;
                    last_end[q] = end;
                    if *pipe == Pipe::Mte2 {
                        last_mte2 = q;
                    }
                    if let Some(bytes) = gm_bytes(instr) {
                        let times = if c == 1 { 2 } else { 1 };
                        gm[0] += cycles * times;
                        gm[1] += bytes * times;
                    }
                    if let Some(k) = instr.operands.first().and_then(key) {
                        writers.insert(k, (q, end));
                    }
                    if ring_load.is_some() {
                        scalar_end = scalar(&mut free, 0); // TFREE
                    }
                }
                Step::Signal { from, to, event } => {
                    let q = flag_queue(c, *from, last_mte2);
                    flags.entry((*to, *event)).or_default().push_back(free[q]);
                }
                Step::Wait { to, event, .. } => {
                    let q = flag_queue(c, *to, last_mte2);
                    if let Some(t) = flags.get_mut(&(*to, *event)).and_then(|f| f.pop_front()) {
                        free[q] = free[q].max(t);
                    }
                }
                Step::Barrier(_) => {}
            }
        }
    }
    PartCycles {
        total: free.into_iter().max().unwrap_or(0),
        gm_cycles: gm[0],
        gm_bytes: gm[1],
    }
}

/// Iterations of a loop simulated one by one before its last period is taken as its steady
/// state even where the pipes have not settled into one shift.
const SETTLE: u64 = 4096;

/// One core as a listing runs on it.
struct Core {
    /// When each pipe has finished what it was given.
    free: [u64; 7],
    /// Per flag, when each signal not yet waited for was raised.
    flags: BTreeMap<(Pipe, Pipe, u32), std::collections::VecDeque<u64>>,
    started: bool,
    /// Cycles and bytes of the loads and stores of global memory so far.
    gm: [u64; 2],
}

impl Core {
    fn step(&mut self, s: &Step, table: &InstrTable) {
        match s {
            Step::Instr { pipe, instr, .. } => {
                let mut c = table.cycles(instr, *pipe);
                if *pipe == Pipe::V && !self.started {
                    self.started = true;
                    c += table.vector_start.round() as u64;
                }
                self.free[index(*pipe)] += c;
                if let Some(bytes) = gm_bytes(instr) {
                    self.gm[0] += c;
                    self.gm[1] += bytes;
                }
            }
            Step::Signal { from, to, event } => self
                .flags
                .entry((*from, *to, *event))
                .or_default()
                .push_back(self.free[index(*from)]),
            Step::Wait { from, to, event } => {
                if let Some(t) = self
                    .flags
                    .get_mut(&(*from, *to, *event))
                    .and_then(|q| q.pop_front())
                {
                    let f = &mut self.free[index(*to)];
                    *f = (*f).max(t);
                }
            }
            // A pipe runs its instructions in order already.
            Step::Barrier(_) => {}
        }
    }

    /// Every time the state holds, and the flags' queue lengths (the state's shape).
    fn times(&self) -> (Vec<u64>, Vec<usize>) {
        let mut t: Vec<u64> = self.free.to_vec();
        let mut shape = Vec::new();
        for q in self.flags.values() {
            shape.push(q.len());
            t.extend(q.iter().copied());
        }
        (t, shape)
    }

    /// Adds `times` × `delta` to every time (in [`Core::times`]'s order) and to the counts.
    fn shift(&mut self, delta: &[u64], gm: [u64; 2], times: u64) {
        let mut d = delta.iter();
        let mut add = |x: &mut u64| {
            *x = x.saturating_add(d.next().copied().unwrap_or(0).saturating_mul(times));
        };
        self.free.iter_mut().for_each(&mut add);
        self.flags.values_mut().flatten().for_each(add);
        for (g, d) in self.gm.iter_mut().zip(gm) {
            *g = g.saturating_add(d.saturating_mul(times));
        }
    }

    /// Steps `first..end` of `l`, whose loops are `l.loops[next..]` that lie inside.
    fn range(
        &mut self,
        l: &Listing,
        first: usize,
        end: usize,
        mut next: usize,
        table: &InstrTable,
    ) {
        let mut i = first;
        while i < end {
            match l.loops.get(next) {
                Some(lp) if lp.first == i && lp.end <= end => {
                    self.repeat(l, next, table);
                    next = l.after(next);
                    i = lp.end;
                }
                _ => {
                    self.step(&l.steps[i], table);
                    i += 1;
                }
            }
        }
    }

    /// Loop `n` of `l`. Once two iterations in a row move every time that moves by the same
    /// amount, and every time that stays is below them (so it never matters again), the pipes
    /// are in their steady state: the remaining iterations shift the state by that amount
    /// each, exactly, and are not simulated one by one.
    fn repeat(&mut self, l: &Listing, n: usize, table: &InstrTable) {
        let lp = l.loops[n];
        let mut last: Option<Vec<u64>> = None;
        let mut t = 0;
        while t < lp.trips {
            let (before, shape) = self.times();
            let gm = self.gm;
            self.range(l, lp.first, lp.end, n + 1, table);
            t += 1;
            let (after, shape_after) = self.times();
            if shape != shape_after || after.iter().zip(&before).any(|(a, b)| a < b) {
                last = None;
                continue;
            }
            let delta: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
            let moved = delta.iter().copied().filter(|&d| d > 0);
            let step = moved.clone().next().unwrap_or(0);
            let uniform = moved.clone().all(|d| d == step);
            let lowest_moving = after
                .iter()
                .zip(&delta)
                .filter(|(_, d)| **d > 0)
                .map(|(a, _)| *a)
                .min()
                .unwrap_or(0);
            let still_below = after
                .iter()
                .zip(&delta)
                .all(|(a, d)| *d > 0 || *a <= lowest_moving);
            let settled = last.as_ref() == Some(&delta) && uniform && still_below;
            if (settled || t >= SETTLE) && t < lp.trips {
                let gm_delta = [self.gm[0] - gm[0], self.gm[1] - gm[1]];
                self.shift(&delta, gm_delta, lp.trips - t);
                return;
            }
            last = Some(delta);
        }
    }
}

/// The bytes a load from or store to global memory moves: its on-chip tile's valid part.
fn gm_bytes(i: &Instr) -> Option<u64> {
    let gm = i
        .operands
        .iter()
        .any(|o| matches!(o, Operand::Global { .. }));
    let (r, c, dt) = i.operands.iter().find_map(tile)?;
    gm.then_some(r * c * dt.size_bytes() as u64)
}

/// How a kernel's cycles were found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CostSource {
    /// From the instructions of its AICore form (its parts, if split).
    Instructions,
    /// From its ops, as it has no AICore form; why.
    Ops(String),
}

/// A kernel's modelled cycles, split by the unit of each part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Modelled {
    pub cube_cycles: u64,
    pub vector_cycles: u64,
    pub gm_cycles: u64,
    pub gm_bytes: u64,
    /// Each part, in stage order: its name and cycles.
    pub parts: Vec<(String, PartCycles)>,
    pub source: CostSource,
}

/// A loop kernel that runs as one mixed launch ([`run_mixed`]): the launch on a cube core and
/// its vector cores, as one task of its cube core; `None` for any other kernel.
fn model_mixed(k: &Kernel, layouts: &Layouts, table: &InstrTable) -> Option<Modelled> {
    let arch = &wsp_ir::arch::A2A3;
    let split = wsp_ir::split::split_kernel(k, arch).ok()??;
    let [part] = split.parts.as_slice() else {
        return None;
    };
    if part.core.is_some() {
        return None;
    }
    let c = run_mixed(&costed_cores(&part.kernel, layouts, table).ok()?, table);
    Some(Modelled {
        cube_cycles: c.total,
        vector_cycles: 0,
        gm_cycles: c.gm_cycles,
        gm_bytes: c.gm_bytes,
        parts: vec![(part.kernel.name.clone(), c)],
        source: CostSource::Instructions,
    })
}

/// The cores of `k`'s mixed launch, its pushes placed where [`run_mixed`] finds it fastest:
/// what `wsp emit` writes and what the clock times.
fn costed_cores(
    k: &Kernel,
    layouts: &Layouts,
    table: &InstrTable,
) -> Result<wsp_aicore::mixed::MixedCores, wsp_aicore::Refusal> {
    Ok(wsp_aicore::mixed::cores(k, &wsp_ir::arch::A2A3, layouts)?
        .costed(&|c| run_mixed(c, table).total))
}

/// The AICore parts of `k` for A2/A3 (itself, or its split), each read back as `wsp emit`
/// writes it with `table`'s costs ([`source`]); `Err` says why it has none.
pub fn listings(
    k: &Kernel,
    layouts: &Layouts,
    table: &InstrTable,
) -> Result<Vec<(Kernel, Listing)>, String> {
    let arch = &wsp_ir::arch::A2A3;
    let parts = match wsp_ir::split::split_kernel(k, arch)? {
        Some(split) if split.parts.iter().any(|p| p.core.is_none()) => {
            return Err("a mixed launch of the cube and vector cores is not modelled".into());
        }
        Some(split) => split.parts.into_iter().map(|p| p.kernel).collect(),
        None => vec![k.clone()],
    };
    parts
        .into_iter()
        .map(|p| {
            let src = source(&p, layouts, table).map_err(|r| r.message)?;
            Ok((p, wsp_aicore::listing::listing(&src)))
        })
        .collect()
}

/// The A2/A3 AICore C++ `wsp emit` writes for the AICore kernel `k` (one part of a split),
/// its form chosen by this model's cycles under `table`.
pub fn source(
    k: &Kernel,
    layouts: &Layouts,
    table: &InstrTable,
) -> Result<String, wsp_aicore::Refusal> {
    if wsp_ir::mixed::has_ring(k) {
        return costed_cores(k, layouts, table)?.source(k, layouts);
    }
    wsp_aicore::kernel_source_costed(k, &wsp_ir::arch::A2A3, layouts, &|src| {
        run_listing(&wsp_aicore::listing::listing(src), table).total
    })
}

/// The model's cycles for `k`.
pub fn model(k: &Kernel, layouts: &Layouts, table: &InstrTable) -> Modelled {
    // Only a loop kernel runs as a mixed launch: any other is split once, below.
    if k.iterates()
        && let Some(m) = model_mixed(k, layouts, table)
    {
        return m;
    }
    match listings(k, layouts, table) {
        Ok(parts) => {
            let mut m = Modelled {
                cube_cycles: 0,
                vector_cycles: 0,
                gm_cycles: 0,
                gm_bytes: 0,
                parts: Vec::new(),
                source: CostSource::Instructions,
            };
            for (p, l) in parts {
                let c = run_listing(&l, table);
                m.gm_cycles += c.gm_cycles;
                m.gm_bytes += c.gm_bytes;
                if wsp_aicore::unit(&p) == "cube" {
                    m.cube_cycles += c.total;
                } else {
                    m.vector_cycles += c.total;
                }
                m.parts.push((p.name.clone(), c));
            }
            m
        }
        Err(why) => {
            let (cube, cycles) = from_ops(k, table);
            Modelled {
                cube_cycles: if cube { cycles } else { 0 },
                vector_cycles: if cube { 0 } else { cycles },
                // An estimate does not say when it moves data.
                gm_cycles: 0,
                gm_bytes: 0,
                parts: Vec::new(),
                source: CostSource::Ops(why),
            }
        }
    }
}

/// An estimate for a kernel with no AICore form: each op's instructions on its result tile
/// in sequence, after loading every tile parameter it reads; a C++ body, its tiles' loads
/// and stores alone. Whether it has a matmul.
fn from_ops(k: &Kernel, table: &InstrTable) -> (bool, u64) {
    let on_chip = |t: wsp_ir::TileType, kind| Operand::Tile {
        name: String::new(),
        kind,
        layout: wsp_ir::arch::TileLayout::RowMajor,
        dtype: t.dtype,
        rows: t.rows,
        cols: t.cols,
        valid: (t.rows, t.cols),
        offset: 0,
        bytes: t.bytes(),
    };
    let vec = |t| on_chip(t, wsp_ir::arch::TileKind::Vec);
    let gm = |t: wsp_ir::TileType| Operand::Global {
        name: String::new(),
        layout: wsp_ir::arch::GmLayout::Nd,
        dtype: t.dtype,
    };
    let cost = |name: &str, operands: Vec<Operand>| {
        let i = Instr {
            name: name.to_string(),
            operands,
        };
        table.cycles(&i, wsp_aicore::listing::Pipe::of(&i))
    };
    let KernelBody::Ops(ops) = &k.body else {
        let cycles = k
            .params
            .iter()
            .filter_map(|p| match &p.ty {
                ParamType::Tile(access, t) => Some(if access.writes() {
                    cost("TSTORE", vec![gm(*t), vec(*t)])
                } else {
                    cost("TLOAD", vec![vec(*t), gm(*t)])
                }),
                _ => None,
            })
            .sum();
        return (false, cycles);
    };
    let mut cube = false;
    let mut cycles = 0u64;
    for (i, op) in ops.iter().enumerate() {
        // An op inside loops runs once per iteration of each; a carried value moves nothing.
        let runs = k.runs(i as u32);
        let ValueType::Tile(t) = op.ty else {
            if op.op == "store"
                && let Some(wsp_ir::kernel::Operand::Value(v)) = op.args.get(1)
                && let Some(ValueType::Tile(t)) = ops.get(*v as usize).map(|o| o.ty)
            {
                cycles =
                    cycles.saturating_add(cost("TSTORE", vec![gm(t), vec(t)]).saturating_mul(runs));
            }
            continue;
        };
        if op.op == wsp_ir::kernel::CARRY {
            continue;
        }
        let names: Vec<&str> = match op.op.as_str() {
            "load" => vec!["TLOAD"],
            "matmul" => {
                cube = true;
                vec!["TMATMUL"]
            }
            name => wsp_ir::instructions::lookup(name)
                .map(|r| r.instructions())
                .unwrap_or_else(|| vec!["*vector"]),
        };
        for n in names {
            let operands = if n == "TLOAD" {
                vec![vec(t), gm(t)]
            } else {
                vec![vec(t), vec(t)]
            };
            cycles = cycles.saturating_add(cost(n, operands).saturating_mul(runs));
        }
    }
    (cube, cycles)
}

/// What the model is compared with for a measured kernel: Perf-Sim's total, with each
/// instruction it timed as [`wrapped`] charged the table's cycles instead; and those
/// instructions.
pub fn reference(m: &Measured, l: &Listing, table: &InstrTable) -> (u64, Vec<String>) {
    let mut total = m.total_cycles.unwrap_or(0);
    let mut fixed = Vec::new();
    for ((_, pipe, i), (_, cycles)) in l.run_instrs().into_iter().zip(&m.instructions) {
        if wrapped(i, pipe, *cycles, table) {
            let c = table.cycles(i, pipe);
            total = total - cycles + c;
            fixed.push(format!("{} {cycles} -> {c}", i.name));
        }
    }
    (total, fixed)
}

/// The core a mixed launch's measurements name (`kernel_cycles.json`).
pub const MIXED: &str = "MIX";

/// One kernel as `perf_sim.json` records it.
#[derive(Debug, Clone, Deserialize)]
pub struct Measured {
    pub program: String,
    pub kernel: String,
    pub core: String,
    #[serde(default)]
    pub total_cycles: Option<u64>,
    #[serde(default)]
    pub not_simulated: Option<String>,
    /// Each instruction of the emitted kernel, in order: its name and cycles.
    #[serde(default)]
    pub instructions: Vec<(String, u64)>,
}

/// A fitted table and what it does to the measurements.
pub struct Fit {
    pub table: InstrTable,
    /// Per kernel, the table's cycles against Perf-Sim's, as text.
    pub report: String,
}

impl Fit {
    /// The `[instructions]` section of the target description.
    pub fn table_toml(&self, commit: &str, date: &str) -> String {
        let mut out = format!(
            "{MARK}\n# Fitted by `cargo xtask calibrate` to PTO-ISA {commit}'s A2/A3 Perf-Sim on {date}\n# (runtime/calibration/perf_sim.json); see docs/runtime.md. cycles = head + per_row x rows +\n# per_unit x units: units are 256-byte repeats (vector; a row reduction's, per row), 32-byte\n# blocks (data movement), 16x16x16 fractal products with per_row counting output fractals\n# (cube). `NAME:narrow`: rows under 256 bytes; `NAME:one`: a row reduction over 256-byte rows;\n# `TLOAD:gm>vec`: a move by its memories. `*vector`, `*move`, `*cube`: an instruction with no\n# row of its own. assign: each TASSIGN on the scalar pipe, before any instruction;\n# vector_start: the vector pipe's first instruction.\n[instructions]\nsource = \"PTO-ISA {commit} Perf-Sim, fitted {date}\"\nassign = {}\nvector_start = {:.1}\ncosts = [\n",
            self.table.assign, self.table.vector_start
        );
        for c in &self.table.costs {
            out.push_str(&format!(
                "  {{ name = \"{}\", dtype = \"{}\", head = {:.3}, per_row = {:.3}, per_unit = {:.3}, samples = {} }},\n",
                c.name, c.dtype, c.head, c.per_row, c.per_unit, c.samples
            ));
        }
        out.push_str("]\n");
        out
    }
}

/// The line from which the target description's table is `cargo xtask calibrate`'s.
pub const MARK: &str =
    "# ---- instruction table: written by `cargo xtask calibrate`, edits above this line ----";

/// `old` with its table (from [`MARK`] on) replaced by `table`.
pub fn replace_table(old: &str, table: &str) -> Result<String, String> {
    let at = old
        .find(MARK)
        .ok_or("the target description has no instruction-table mark line")?;
    Ok(format!("{}{table}", &old[..at]))
}

/// Fits the table to `measured`: each instruction's features from the emitted kernel's
/// listing (`listing_of`), least squares with coefficients kept non-negative, per instruction
/// and dtype; then per class and dtype, and per class, for instructions without a row.
pub fn fit(
    measured: &[Measured],
    listing_of: impl Fn(&Measured) -> Option<Listing>,
) -> Result<Fit, String> {
    let mut set = Samples::default();
    let mut listings = Vec::new();
    // A mixed launch's instructions are two cores', in one stream: not fitted to.
    for m in measured
        .iter()
        .filter(|m| m.total_cycles.is_some() && m.core != MIXED)
    {
        let l = listing_of(m).ok_or(format!("{}: no emitted kernel to read", m.kernel))?;
        set.add(m, &l)?;
        listings.push((m, l));
    }
    let mut table = InstrTable {
        source: String::new(),
        assign: 0.0,
        vector_start: 0.0,
        costs: set.rows(&mut String::new()),
    };
    // The vector pipe's start: the median of what first instructions with rows of their own
    // cost beyond them; then those instructions join their rows, less the start.
    let mut extra: Vec<f64> = set
        .starts
        .iter()
        .filter(|s| {
            set.by_key
                .contains_key(&(s.key.clone(), s.dtype.name().to_string()))
        })
        .map(|s| s.y - table.cycles(&s.instr, s.pipe) as f64)
        .collect();
    table.vector_start = median(&mut extra);
    for s in std::mem::take(&mut set.starts) {
        let y = (s.y - table.vector_start).max(1.0);
        set.push(&s.key, s.dtype, s.pipe, &s.instr, y, &s.at);
    }
    let mut excluded = String::new();
    table.costs = set.rows(&mut excluded);
    // The binding: what each kernel's total holds beyond its instructions, per tile bound
    // (the pipes run one after another under this emitter's flags).
    let mut per_tile: Vec<f64> = listings
        .iter()
        .filter(|(_, l)| l.tiles > 0)
        .map(|(m, l)| {
            let busy: u64 = m.instructions.iter().map(|(_, c)| c).sum();
            (m.total_cycles.unwrap_or(0) as f64 - busy as f64) / l.tiles as f64
        })
        .collect();
    table.assign = median(&mut per_tile);
    let report = report(&listings, &table, &excluded);
    Ok(Fit { table, report })
}

/// The middle value, at least 0; 0 for none.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0).max(0.0)
}

/// Per kernel, the table's cycles against Perf-Sim's, after the measurements left out.
fn report(listings: &[(&Measured, Listing)], table: &InstrTable, excluded: &str) -> String {
    let mut report = String::new();
    if !excluded.is_empty() {
        report = format!("excluded measurements:\n{excluded}\n");
    }
    report.push_str("kernel | program | Perf-Sim | compared with | model | error\n");
    for (m, l) in listings {
        let (r, fixed) = reference(m, l, table);
        let c = run_listing(l, table).total;
        let fixed = if fixed.is_empty() {
            String::new()
        } else {
            format!(" ({})", fixed.join(", "))
        };
        report.push_str(&format!(
            "{} | {} | {} | {r}{fixed} | {c} | {:+.1}%\n",
            m.kernel,
            m.program,
            m.total_cycles.unwrap_or(0),
            (c as f64 - r as f64) / r.max(1) as f64 * 100.0
        ));
    }
    report
}

/// The measured instructions by table row (name or class, dtype or `*`), and the first vector
/// instruction of each kernel apart: it pays the pipe's start.
#[derive(Default)]
struct Samples {
    by_key: BTreeMap<(String, String), Vec<Sample>>,
    starts: Vec<Start>,
}

struct Start {
    key: String,
    dtype: DType,
    pipe: Pipe,
    instr: Instr,
    y: f64,
    at: String,
}

impl Samples {
    /// Each instruction of `l` with its measured cycles from `m`, which must name the same.
    fn add(&mut self, m: &Measured, l: &Listing) -> Result<(), String> {
        let instrs: Vec<(Pipe, &Instr)> =
            l.run_instrs().into_iter().map(|(_, p, i)| (p, i)).collect();
        if instrs.len() != m.instructions.len() {
            return Err(format!(
                "{} ({}): {} instructions measured, {} emitted",
                m.kernel,
                m.program,
                m.instructions.len(),
                instrs.len()
            ));
        }
        let mut started = false;
        for ((pipe, i), (name, cycles)) in instrs.iter().zip(&m.instructions) {
            if &i.name != name {
                return Err(format!(
                    "{}: measured {name} where {} is emitted",
                    m.kernel, i.name
                ));
            }
            let (dtype, _) = features(i, *pipe);
            let (key, y) = (key(i, *pipe), *cycles as f64);
            let at = format!("{} ({}) {}", m.kernel, m.program, i.name);
            if *pipe == Pipe::V && !started {
                started = true;
                let (pipe, instr) = (*pipe, (*i).clone());
                self.starts.push(Start {
                    key,
                    dtype,
                    pipe,
                    instr,
                    y,
                    at,
                });
                continue;
            }
            self.push(&key, dtype, *pipe, i, y, &at);
        }
        Ok(())
    }

    /// One sample, under its own row and its fallbacks.
    fn push(&mut self, key: &str, dtype: DType, pipe: Pipe, i: &Instr, y: f64, at: &str) {
        let (_, x) = features(i, pipe);
        for row in rows_of(key, dtype, pipe) {
            self.by_key.entry(row).or_default().push(Sample {
                x,
                y,
                at: at.to_string(),
                suspect: suspect(i, pipe),
            });
        }
    }

    /// A row per key; what was left out goes to `excluded`.
    fn rows(&self, excluded: &mut String) -> Vec<InstrCost> {
        let mut costs = Vec::new();
        for ((name, dtype), all) in &self.by_key {
            // Perf-Sim's wrapped repeat counts (see `wrapped`): fitted without the suspects,
            // a suspect a factor of 4 under its row is left out.
            let sure: Vec<Sample> = all.iter().filter(|s| !s.suspect).cloned().collect();
            let first = nnls(if sure.is_empty() { all } else { &sure });
            let predict = |x: &[f64; 3]| (0..3).map(|i| first[i] * x[i]).sum::<f64>().max(1.0);
            let (samples, out): (Vec<Sample>, Vec<Sample>) = all
                .iter()
                .cloned()
                .partition(|s| !s.suspect || s.y * 4.0 >= predict(&s.x));
            if !name.starts_with('*') && dtype != "*" {
                for s in &out {
                    let p = predict(&s.x);
                    excluded.push_str(&format!("{}: {} cycles, row predicts {p:.0}\n", s.at, s.y));
                }
            }
            let c = nnls(&samples);
            costs.push(InstrCost {
                name: name.clone(),
                dtype: dtype.clone(),
                head: c[0],
                per_row: c[1],
                per_unit: c[2],
                samples: samples.len() as u64,
            });
        }
        costs
    }
}

/// One measured instruction: its features, cycles and where it was measured.
#[derive(Clone)]
struct Sample {
    x: [f64; 3],
    y: f64,
    at: String,
    /// Perf-Sim may have timed it with a wrapped repeat count.
    suspect: bool,
}

fn suspect(i: &Instr, pipe: Pipe) -> bool {
    pipe == Pipe::V && !is_row_reduction(&i.name) && features(i, pipe).1[2] >= 256.0
}

/// Least squares over every subset of the three features, the best whose coefficients are
/// all non-negative (exact for three unknowns: the non-negative optimum is one of them).
fn nnls(samples: &[Sample]) -> [f64; 3] {
    let mut best: ([f64; 3], f64) = ([0.0; 3], f64::MAX);
    for mask in 1u8..8 {
        let idx: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let Some(sol) = least_squares(samples, &idx) else {
            continue;
        };
        if sol.iter().any(|c| *c < 0.0) {
            continue;
        }
        let mut c = [0.0; 3];
        for (k, i) in idx.iter().enumerate() {
            c[*i] = sol[k];
        }
        let sse: f64 = samples
            .iter()
            .map(|s| {
                let p: f64 = (0..3).map(|i| c[i] * s.x[i]).sum();
                (p - s.y) * (p - s.y)
            })
            .sum();
        // Fewer features win ties: a column the data cannot tell apart stays zero.
        if sse < best.1 * (1.0 - 1e-9) {
            best = (c, sse);
        }
    }
    best.0
}

/// The normal equations over the features `idx`, by Gaussian elimination; `None` when they
/// are singular (the samples cannot tell the features apart).
fn least_squares(samples: &[Sample], idx: &[usize]) -> Option<Vec<f64>> {
    let n = idx.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for Sample { x, y, .. } in samples {
        for r in 0..n {
            for c in 0..n {
                a[r][c] += x[idx[r]] * x[idx[c]];
            }
            a[r][n] += x[idx[r]] * y;
        }
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|p, q| a[*p][col].abs().total_cmp(&a[*q][col].abs()))?;
        if a[pivot][col].abs() < 1e-9 {
            return None;
        }
        a.swap(col, pivot);
        let row = a[col].clone();
        for (r, line) in a.iter_mut().enumerate() {
            if r != col {
                let f = line[col] / row[col];
                for (x, p) in line.iter_mut().zip(&row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|r| a[r][n] / a[r][r]).collect())
}

/// Cycles measured per kernel (`wsp run --kernel-cycles FILE`): a tree's Perf-Sim
/// `kernel_cycles.json`, or the same shape written from a device profile. A kernel `wsp emit`
/// splits is measured when each of its parts is.
#[derive(Debug, Clone, Default)]
pub struct MeasuredCycles {
    /// Per kernel (or part) name: its core (`AIC`, `AIV`) and cycles; `None` when the file
    /// says it was not simulated.
    kernels: BTreeMap<String, (String, Option<u64>)>,
    /// Where the figures come from, for messages.
    pub source: String,
}

impl MeasuredCycles {
    /// `text`: `{"kernels": {"NAME": {"core": "AIV", "total_cycles": N}, ...}}`, entries
    /// with `not_simulated` instead of cycles allowed.
    pub fn parse(text: &str, source: &str) -> Result<MeasuredCycles, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        let Some(kernels) = v.get("kernels").and_then(|k| k.as_object()) else {
            return Err(format!(
                "{source}: no \"kernels\" object (a kernel_cycles.json maps each kernel to {{\"core\": ..., \"total_cycles\": ...}})"
            ));
        };
        let mut out = MeasuredCycles {
            kernels: BTreeMap::new(),
            source: source.to_string(),
        };
        for (name, e) in kernels {
            let core = e
                .get("core")
                .and_then(|c| c.as_str())
                .unwrap_or("")
                .to_string();
            let cycles = match (e.get("total_cycles"), e.get("not_simulated")) {
                (Some(c), _) => Some(c.as_u64().ok_or(format!(
                    "{source}: kernel `{name}`: total_cycles must be a whole number of cycles, not {c}"
                ))?),
                (None, Some(_)) => None,
                (None, None) => {
                    return Err(format!(
                        "{source}: kernel `{name}` has neither total_cycles nor not_simulated"
                    ));
                }
            };
            out.kernels.insert(name.clone(), (core, cycles));
        }
        Ok(out)
    }

    /// `Err` names what the file gives cycles for that is none of `kernels` nor a part of
    /// one.
    pub fn check_names(&self, kernels: &[&Kernel]) -> Result<(), String> {
        let unknown = self.unknown(kernels);
        if unknown.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
        Err(format!(
            "{} gives cycles for {}, which no kernel of this file is (nor one of its parts, NAME_aic0, NAME_aiv1, ...); its kernels: {}",
            self.source,
            unknown.join(", "),
            names.join(", ")
        ))
    }

    fn unknown(&self, kernels: &[&Kernel]) -> Vec<String> {
        self.kernels
            .keys()
            .filter(|name| {
                !kernels.iter().any(|k| {
                    *name == &k.name
                        || name
                            .strip_prefix(k.name.as_str())
                            .and_then(|rest| rest.strip_prefix('_'))
                            .is_some_and(is_part_suffix)
                })
            })
            .cloned()
            .collect()
    }

    /// `k`'s measured cycles on cube and vector cores, if the file has them: its own entry,
    /// or one for each of its parts (`NAME_aic0`, `NAME_aiv1`, ...).
    pub fn of(&self, k: &Kernel, modelled: &Modelled) -> Option<(u64, u64)> {
        // A mixed launch runs as a task of its cube core.
        let unit = |core: &str| core.eq_ignore_ascii_case("AIC") || core == MIXED;
        if let Some((core, Some(c))) = self.kernels.get(&k.name) {
            return Some(if unit(core) { (*c, 0) } else { (0, *c) });
        }
        // A split kernel's parts, or a mixed one's launch.
        if modelled.parts.len() < 2 && modelled.parts.first().is_none_or(|(p, _)| *p == k.name) {
            return None;
        }
        let (mut cube, mut vector) = (0, 0);
        for (part, _) in &modelled.parts {
            let (core, c) = self.kernels.get(part)?;
            let c = (*c)?;
            if unit(core) {
                cube += c;
            } else {
                vector += c;
            }
        }
        Some((cube, vector))
    }
}

/// `aic0`, `aiv12`: a part's suffix as `wsp_ir::split` names parts.
fn is_part_suffix(s: &str) -> bool {
    let digits = s
        .strip_prefix("aic")
        .or_else(|| s.strip_prefix("aiv"))
        .unwrap_or("");
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}
