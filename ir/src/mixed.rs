//! A kernel that loops over tiles and mixes cube and vector work (flash attention: `s = q @
//! k_j^T` on the cube, an online softmax on the vector unit, `p @ v_j` on the cube, the
//! rescaled accumulator on the vector unit) as ONE A2/A3 mixed launch: one AIC and two AIVs,
//! the AIVs splitting the rows, as PTO-ISA's hand-written flash attention runs
//! (`kernels/manual/common/flash_atten`).
//!
//! [`plan`] finds that form: one loop whose iteration is stages that alternate between the
//! cores, cube first (at most cube, vector, cube, vector); before it, loads the cube reads
//! and vector set-up; after it, vector work on what the loop carried. Each value one core
//! computes in an iteration and the other reads goes through a ring of `depth` slots in
//! global memory (workspace the host allocates for the launch, [`RING_PARAM`]), with
//! cross-core flags, so the cube runs `depth - 1` iterations ahead of the vector cores.
//!
//! [`unroll`] writes each core's work as a straight kernel, the loop unrolled in the order
//! that core runs it (the cube's first stage `depth - 1` iterations ahead), with slices and
//! ring slots as views of parameters ([`View`]): the form `wsp_aicore` already writes, whose
//! sections it then interleaves into the one launch.

use crate::arch::Arch;
use crate::kernel::{CARRY, Kernel, KernelBody, Op, Operand, Param, ParamType, ValueType};
use crate::ops::{self, Semantics};
use crate::plan::Direction;
use crate::units::{Core, Place, place};
use crate::{DType, TileType};

/// The parameter the split adds to a mixed kernel: its rings' global memory.
pub const RING_PARAM: &str = "wsp_ring";

/// Vector cores per cube core (A2/A3): each takes half of the rows.
pub const LANES: u64 = 2;

/// The ring depth when the loop states none (`pto.range(n, num_stages=)`).
pub const DEFAULT_DEPTH: u32 = 2;

/// Bytes a ring slot is aligned to in global memory.
const SLOT_ALIGN: u64 = 512;

/// Why a kernel has no mixed form, at the op (or the kernel) that is not of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMix {
    pub op: Option<u32>,
    pub message: String,
}

fn no(op: Option<u32>, message: impl Into<String>) -> NoMix {
    NoMix {
        op,
        message: message.into(),
    }
}

/// A value handed from one core to the other once per iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    /// The op whose value it carries.
    pub value: u32,
    /// The core that computes it.
    pub from: Core,
    /// The whole value (all rows); each vector core writes or reads its half.
    pub tile: TileType,
    /// Where its slots start in the ring workspace, in bytes.
    pub offset: u64,
    pub slot_bytes: u64,
}

/// A mixed loop kernel's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mixed {
    /// The loop (index into `Kernel::loops`) and its trips.
    pub lp: usize,
    pub trips: u64,
    /// Slots per ring; the cube runs `depth - 1` iterations ahead.
    pub depth: u32,
    /// Rows of the vector work; each vector core takes `rows / LANES`.
    pub rows: u64,
    pub rings: Vec<Ring>,
    /// Per op: the core it runs on (`None`: either, repeated where needed).
    place: Vec<Option<Core>>,
    /// Per op inside the loop: its stage (0 and 2 on the cube, 1 and 3 on the vector cores).
    stage: Vec<Option<u32>>,
}

/// Whether `k` is a mixed loop kernel as the split passes it on: with its rings' parameter.
pub fn has_ring(k: &Kernel) -> bool {
    k.params.iter().any(|p| p.name == RING_PARAM)
}

impl Mixed {
    /// A tile as one core of `core` holds it: a vector core, its half of the rows.
    pub fn held(&self, t: TileType, core: Core) -> TileType {
        match core {
            Core::Vector if t.rows == self.rows => TileType {
                rows: t.rows / LANES,
                ..t
            },
            _ => t,
        }
    }

    /// Bytes of the ring workspace.
    pub fn ring_bytes(&self) -> u64 {
        self.rings
            .iter()
            .map(|r| r.offset + r.slot_bytes * self.depth as u64)
            .max()
            .unwrap_or(0)
    }

    /// The ring workspace as a tile the split passes the kernel: f32 words.
    pub fn ring_tile(&self) -> TileType {
        TileType::new(1, self.ring_bytes() / 4, DType::F32)
    }

    /// Iterations the cube's first stage runs ahead of the rest.
    pub fn ahead(&self) -> u64 {
        (self.depth as u64 - 1).min(self.trips)
    }

    /// Stages of an iteration.
    pub fn stages(&self) -> u32 {
        self.stage.iter().flatten().max().map_or(0, |s| s + 1)
    }

    /// Each section in the order the launch's one program runs them (PTO-ISA's flash
    /// attention: the cube's first stage and the vector stage after it `ahead` iterations
    /// early; then per iteration the cube's first stage of a later one, this one's later cube
    /// stage, the later one's vector stage and this one's later vector stage): what PTO-ISA's
    /// simulations, which run the cores' code one after another, need to see each hand-off
    /// written before it is read, with each core's work between a hand-off's write and its
    /// read.
    pub fn order(&self) -> Vec<(Core, Section)> {
        let mut out = vec![
            (Core::Cube, Section::Prologue),
            (Core::Vector, Section::Prologue),
        ];
        let stages = self.stages();
        let st = |s: u32, iter: u64| (stage_core(s), Section::Stage { stage: s, iter });
        let ahead = self.ahead().max(1);
        for t in 0..ahead.min(self.trips) {
            out.extend((0..stages.min(2)).map(|s| st(s, t)));
        }
        for t in 0..self.trips {
            let next = t + ahead;
            for s in [0, 2, 1, 3] {
                let iter = if s < 2 { next } else { t };
                if s < stages && iter < self.trips {
                    out.push(st(s, iter));
                }
            }
        }
        out.push((Core::Vector, Section::Epilogue));
        out
    }
}

/// A piece of one core's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Before the loop.
    Prologue,
    /// Stage `stage` of iteration `iter`.
    Stage { stage: u32, iter: u64 },
    /// After the loop.
    Epilogue,
}

/// What a parameter of an unrolled core program views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A parameter of the kernel.
    Param(String),
    /// Slot `slot` of ring `ring`.
    Ring { ring: usize, slot: u32 },
}

/// A parameter of an unrolled core program: a block of a kernel parameter or of a ring slot,
/// from row `row` and column `col` (plus, on a vector core, its lane's first row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub base: Base,
    pub row: u64,
    pub col: u64,
    /// Rows further on for each vector core (lane): `lane * lane_rows`.
    pub lane_rows: u64,
}

/// One core's program: a straight kernel, the view each of its tile parameters is, and where
/// each section starts (op index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreProgram {
    pub core: Core,
    pub kernel: Kernel,
    pub views: Vec<(String, View)>,
    pub sections: Vec<(u32, Section)>,
    /// For each op, the kernel's op it computes or hands on.
    pub origin: Vec<u32>,
}

/// The mixed form of `k`, or why it has none.
pub fn plan(k: &Kernel, arch: &Arch) -> Result<Mixed, NoMix> {
    let KernelBody::Ops(ops) = &k.body else {
        return Err(no(None, "a C++ body"));
    };
    let [lp] = k.loops.as_slice() else {
        return Err(no(
            None,
            format!("{} loops, where the form has one", k.loops.len()),
        ));
    };
    let (first, end) = (lp.first as usize, lp.end as usize);
    let inside = |i: usize| first <= i && i < end;
    // Where each op runs; a carried value lives where the value it carries is computed.
    let mut places: Vec<Place> = Vec::with_capacity(ops.len());
    for i in 0..ops.len() {
        let p = if ops[i].op == CARRY {
            Place::On(Core::Vector)
        } else {
            place(k, ops, i, &places, arch)
        };
        places.push(p);
    }
    for (i, op) in ops.iter().enumerate() {
        if op.op == CARRY {
            let next = match op.args.get(1) {
                Some(Operand::Value(n)) => *n as usize,
                _ => return Err(no(Some(i as u32), "a carried value without its next value")),
            };
            if places[next] != Place::On(Core::Vector) {
                return Err(no(
                    Some(next as u32),
                    "a value the cube computes is carried to the next iteration: only the vector cores carry values",
                ));
            }
        }
        if op.op == "load"
            && op.args.len() > 1
            && op.args.iter().any(|a| matches!(a, Operand::Number(_)))
        {
            return Err(no(Some(i as u32), "a partial tile (`pad=`)"));
        }
        if !inside(i) && places[i] == Place::On(Core::Cube) {
            return Err(no(
                Some(i as u32),
                "cube work outside the loop: the form runs the cube's work inside it",
            ));
        }
    }
    // The cube runs ahead: it cannot wait for a carried value, nor for vector work before
    // the loop.
    for i in first..end {
        if places[i] != Place::On(Core::Cube) {
            continue;
        }
        for a in &ops[i].args {
            let Operand::Value(v) = a else { continue };
            let v = *v as usize;
            if ops[v].op == CARRY {
                return Err(no(
                    Some(i as u32),
                    "the cube reads a carried value: the cube runs ahead, so it cannot wait for the vector cores' last iteration",
                ));
            }
            if !inside(v) && places[v] == Place::On(Core::Vector) {
                return Err(no(
                    Some(i as u32),
                    "the cube reads a value the vector cores compute before the loop: compute it on the cube, or pass it in",
                ));
            }
        }
    }
    // Stages: each op inside the loop in the earliest stage of its core after the values of
    // this iteration it reads (cube stages even, vector stages odd), and a carried value read
    // no earlier than the stage that computes its next value (the vector cores run a later
    // iteration's early stages before this one's late ones): until no stage moves.
    let mut stage: Vec<Option<u32>> = vec![None; ops.len()];
    for _ in 0..=ops.len() {
        let before = stage.clone();
        for i in first..end {
            let Place::On(core) = places[i] else { continue };
            if ops[i].op == CARRY {
                if let Some(Operand::Value(n)) = ops[i].args.get(1) {
                    stage[i] = before[*n as usize];
                }
                continue;
            }
            let mut lb = 0;
            for a in &ops[i].args {
                let Operand::Value(v) = a else { continue };
                lb = lb.max(earliest(ops, &places, &stage, *v as usize, core, inside));
            }
            let mut s = lb;
            if stage_core(s) != core {
                s += 1;
            }
            stage[i] = Some(s);
        }
        if stage == before {
            break;
        }
    }
    for i in first..end {
        if ops[i].op == CARRY {
            stage[i] = None;
        }
    }
    let stages = stage.iter().flatten().max().map_or(0, |s| s + 1);
    if stages < 2 {
        return Err(no(None, "no work on both cores inside the loop"));
    }
    if stages > 4 {
        let at = (first..end).find(|&i| stage[i].is_some_and(|s| s >= 4));
        return Err(no(
            at.map(|i| i as u32),
            "a fifth hand-off between the cores in one iteration: the form has at most cube, vector, cube, vector",
        ));
    }
    // A carried value is read in a stage no earlier than the one that computes its next
    // value: the vector cores run a later iteration's early stage before this one's late one.
    for c in first..end {
        let (CARRY, Some(Operand::Value(next))) = (ops[c].op.as_str(), ops[c].args.get(1)) else {
            continue;
        };
        let sn = stage[*next as usize].unwrap_or(0);
        if let Some(r) = (first..end).find(|&r| {
            ops[r].args.contains(&Operand::Value(c as u32)) && stage[r].is_some_and(|sr| sr < sn)
        }) {
            return Err(no(
                Some(r as u32),
                "reads a value the loop carries from a later stage of the iteration before: the vector cores run this stage of the next iteration before that stage",
            ));
        }
    }
    // The vector work splits its rows between the two vector cores.
    let mut rows = None;
    for (i, op) in ops.iter().enumerate() {
        if places[i] != Place::On(Core::Vector) {
            continue;
        }
        if let Some(why) = not_row_wise(k, ops, i) {
            return Err(no(Some(i as u32), why));
        }
        let ValueType::Tile(t) = op.ty else { continue };
        match rows {
            None => rows = Some(t.rows),
            Some(r) if r != t.rows => {
                return Err(no(
                    Some(i as u32),
                    format!(
                        "vector work on {} rows beside {r}: the two vector cores split one row count",
                        t.rows
                    ),
                ));
            }
            _ => {}
        }
    }
    let rows = rows.ok_or_else(|| no(None, "no vector tile"))?;
    if rows % (LANES * 8) != 0 {
        return Err(no(
            None,
            format!("{rows} rows do not split into two vector cores' halves of whole 8-row blocks"),
        ));
    }
    // Hand-offs: values of this iteration read on the other core.
    let mut rings: Vec<Ring> = Vec::new();
    for i in first..end {
        let Some(si) = stage[i] else { continue };
        let from = stage_core(si);
        let read_across = (first..end).any(|j| {
            stage[j].is_some_and(|sj| stage_core(sj) != from)
                && ops[j].args.contains(&Operand::Value(i as u32))
        });
        if !read_across {
            continue;
        }
        let ValueType::Tile(tile) = ops[i].ty else {
            return Err(no(Some(i as u32), "a scalar handed between the cores"));
        };
        if tile.rows != rows {
            return Err(no(
                Some(i as u32),
                format!(
                    "a hand-off of {} rows where the vector cores split {rows}",
                    tile.rows
                ),
            ));
        }
        let slot_bytes =
            (tile.elems() * tile.dtype.size_bytes() as u64).div_ceil(SLOT_ALIGN) * SLOT_ALIGN;
        rings.push(Ring {
            value: i as u32,
            from,
            tile,
            offset: 0,
            slot_bytes,
        });
    }
    // Values after the loop: only vector values.
    for (i, op) in ops.iter().enumerate().skip(end) {
        for a in &op.args {
            if let Operand::Value(v) = a
                && stage[*v as usize].is_some_and(|s| stage_core(s) == Core::Cube)
            {
                return Err(no(
                    Some(i as u32),
                    "a value the cube computes in the loop is read after it: store it on the vector cores",
                ));
            }
        }
    }
    let depth = lp.stages.unwrap_or(DEFAULT_DEPTH);
    if depth < 2 {
        return Err(no(
            None,
            "`num_stages=1` gives each hand-off ring one slot, so the cube could not run ahead of the vector cores: state 2 or more",
        ));
    }
    let mut offset = 0;
    for r in &mut rings {
        r.offset = offset;
        offset += r.slot_bytes * depth as u64;
    }
    Ok(Mixed {
        lp: 0,
        trips: lp.trips,
        depth,
        rows,
        rings,
        place: places
            .iter()
            .map(|p| match p {
                Place::On(c) => Some(*c),
                Place::Anywhere => None,
            })
            .collect(),
        stage,
    })
}

/// The core stage `s` runs on: the cube's stages are even.
fn stage_core(s: u32) -> Core {
    if s.is_multiple_of(2) {
        Core::Cube
    } else {
        Core::Vector
    }
}

/// The earliest stage an op on `core` reading value `v` can take.
fn earliest(
    ops: &[Op],
    places: &[Place],
    stage: &[Option<u32>],
    v: usize,
    core: Core,
    inside: impl Fn(usize) -> bool + Copy,
) -> u32 {
    if !inside(v) {
        return 0;
    }
    match (stage[v], places[v]) {
        (None, _) if ops[v].op == CARRY => 0,
        (Some(s), Place::On(c)) => s + u32::from(c != core),
        // Loads and constants: after what they read.
        _ => ops[v]
            .args
            .iter()
            .filter_map(|a| match a {
                Operand::Value(w) => Some(earliest(ops, places, stage, *w as usize, core, inside)),
                _ => None,
            })
            .max()
            .unwrap_or(0),
    }
}

/// Why vector op `i` cannot run as two halves of its rows, if it cannot.
fn not_row_wise(k: &Kernel, ops: &[Op], i: usize) -> Option<String> {
    let op = &ops[i];
    let tile_of = |a: &Operand| match a {
        Operand::Value(v) => match ops[*v as usize].ty {
            ValueType::Tile(t) => Some(t),
            _ => None,
        },
        Operand::Param(p) => k
            .params
            .iter()
            .find(|q| &q.name == p)
            .and_then(|q| match q.ty {
                ParamType::Tile(_, t) => Some(t),
                _ => None,
            }),
        _ => None,
    };
    let ValueType::Tile(out) = op.ty else {
        return None;
    };
    match op.op.as_str() {
        "load" | "store" | "alloc" | "cast" | "constant" | CARRY => return None,
        _ => {}
    }
    let row = ops::lookup(&op.op).map(|o| o.semantics);
    let ok = match row {
        Some(Semantics::Map(_)) => true,
        Some(Semantics::Reduce { rows, .. }) => rows,
        Some(Semantics::Zip(_)) => op.args.iter().all(|a| match tile_of(a) {
            Some(t) => t.rows == out.rows && (t.cols == out.cols || t.cols == 1),
            None => true,
        }),
        _ => false,
    };
    (!ok).then(|| {
        format!(
            "`{}` does not work row by row, so the two vector cores cannot each take half of the rows",
            op.op
        )
    })
}

/// Each core's program: the cube's and one vector core's (its lane's rows), unrolled.
pub fn unroll(k: &Kernel, m: &Mixed) -> Result<[CoreProgram; 2], NoMix> {
    Ok([
        unroll_core(k, m, Core::Cube)?,
        unroll_core(k, m, Core::Vector)?,
    ])
}

struct Unrolled<'a> {
    k: &'a Kernel,
    ops: &'a [Op],
    m: &'a Mixed,
    core: Core,
    body: Vec<Op>,
    origin: Vec<u32>,
    /// The kernel's op being written.
    at: u32,
    params: Vec<Param>,
    views: Vec<(String, View)>,
    /// Per iteration (and the prologue, `None`), each original op's value in `body`.
    before: Vec<Option<u32>>,
    iters: Vec<Vec<Option<u32>>>,
}

fn unroll_core(k: &Kernel, m: &Mixed, core: Core) -> Result<CoreProgram, NoMix> {
    let KernelBody::Ops(ops) = &k.body else {
        return Err(no(None, "a C++ body"));
    };
    let mut u = Unrolled {
        k,
        ops,
        m,
        core,
        body: Vec::new(),
        origin: Vec::new(),
        at: 0,
        params: Vec::new(),
        views: Vec::new(),
        before: vec![None; ops.len()],
        iters: vec![vec![None; ops.len()]; m.trips as usize],
    };
    let lp = &k.loops[m.lp];
    let mut sections = Vec::new();
    for (c, section) in m.order() {
        if c != core {
            continue;
        }
        let start = u.body.len() as u32;
        let wanted: Vec<usize> = match section {
            Section::Prologue => (0..lp.first as usize)
                .filter(|&i| m.place[i] == Some(core))
                .collect(),
            Section::Stage { stage, .. } => (lp.first as usize..lp.end as usize)
                .filter(|&i| m.stage[i] == Some(stage))
                .collect(),
            Section::Epilogue => (lp.end as usize..ops.len())
                .filter(|&i| m.place[i] != Some(Core::Cube))
                .collect(),
        };
        let iter = match section {
            Section::Stage { iter, .. } => Some(iter),
            _ => None,
        };
        for i in wanted {
            u.value(i, iter)?;
        }
        if u.body.len() as u32 > start {
            sections.push((start, section));
        }
    }
    let name = format!("{}_{}", k.name, core.name());
    let mut params = u.params;
    // Scalars, as the kernel has them.
    for p in &k.params {
        if !matches!(p.ty, ParamType::Tile(..))
            && u.body
                .iter()
                .any(|o| o.args.contains(&Operand::Param(p.name.clone())))
        {
            params.push(p.clone());
        }
    }
    Ok(CoreProgram {
        core,
        kernel: Kernel {
            name,
            params,
            body: KernelBody::Ops(u.body),
            loops: Vec::new(),
        },
        views: u.views,
        sections,
        origin: u.origin,
    })
}

impl Unrolled<'_> {
    fn lane_rows(&self) -> u64 {
        match self.core {
            Core::Cube => 0,
            Core::Vector => self.m.rows / LANES,
        }
    }

    /// A tile as this core holds it: on a vector core, its lane's rows.
    fn held(&self, t: TileType) -> TileType {
        self.m.held(t, self.core)
    }

    fn mapped(&self, i: usize, iter: Option<u64>) -> Option<u32> {
        let inside = {
            let lp = &self.k.loops[self.m.lp];
            (lp.first as usize..lp.end as usize).contains(&i)
        };
        match iter {
            Some(t) if inside => self.iters[t as usize][i],
            _ => self.before[i],
        }
    }

    fn set(&mut self, i: usize, iter: Option<u64>, v: u32) {
        let lp = &self.k.loops[self.m.lp];
        let inside = (lp.first as usize..lp.end as usize).contains(&i);
        match iter {
            Some(t) if inside => self.iters[t as usize][i] = Some(v),
            _ => self.before[i] = Some(v),
        }
    }

    fn push(&mut self, op: Op) -> u32 {
        self.body.push(op);
        self.origin.push(self.at);
        self.body.len() as u32 - 1
    }

    /// A parameter viewing `view` as `tile` (`dir`), named after what it views.
    fn view_param(&mut self, name: String, view: View, tile: TileType, dir: Direction) -> Operand {
        if !self.views.iter().any(|(n, _)| *n == name) {
            self.params.push(Param {
                name: name.clone(),
                ty: ParamType::Tile(dir, tile),
            });
            self.views.push((name.clone(), view));
        } else if let Some(p) = self.params.iter_mut().find(|p| p.name == name)
            && let ParamType::Tile(d, _) = &mut p.ty
            && *d != dir
        {
            *d = Direction::InOut;
        }
        Operand::Param(name)
    }

    /// The slice (or whole) of parameter `p` an op reads or writes at iteration `iter`.
    fn slice(
        &mut self,
        p: &str,
        args: &[Operand],
        iter: Option<u64>,
        tile: TileType,
        dir: Direction,
    ) -> Operand {
        let var = &self.k.loops[self.m.lp].var;
        let at = |a: Option<&Operand>| match a {
            Some(Operand::Index(a)) => {
                (a.constant + a.coefficient(var) * iter.unwrap_or(0) as i64).max(0) as u64
            }
            _ => 0,
        };
        let (row, col) = (at(args.first()), at(args.get(1)));
        let lane_rows = self.lane_rows();
        let name = if row == 0 && col == 0 {
            p.to_string()
        } else {
            format!("{p}__r{row}c{col}")
        };
        let view = View {
            base: Base::Param(p.to_string()),
            row,
            col,
            lane_rows: if tile.rows == self.m.rows {
                lane_rows
            } else {
                0
            },
        };
        self.view_param(name, view, self.held(tile), dir)
    }

    fn ring_operand(&mut self, r: usize, iter: u64, dir: Direction) -> Operand {
        let ring = &self.m.rings[r];
        let slot = (iter % self.m.depth as u64) as u32;
        let tile = self.held(ring.tile);
        let view = View {
            base: Base::Ring { ring: r, slot },
            row: 0,
            col: 0,
            lane_rows: self.lane_rows(),
        };
        self.view_param(format!("{RING_PARAM}{r}_s{slot}"), view, tile, dir)
    }

    /// Writes op `i` (and what it needs of this core) for iteration `iter`.
    fn value(&mut self, i: usize, iter: Option<u64>) -> Result<u32, NoMix> {
        let lp = &self.k.loops[self.m.lp];
        let inside = (lp.first as usize..lp.end as usize).contains(&i);
        let caller = std::mem::replace(&mut self.at, i as u32);
        let v = self.value_at(i, iter, inside);
        self.at = caller;
        v
    }

    fn value_at(&mut self, i: usize, iter: Option<u64>, inside: bool) -> Result<u32, NoMix> {
        let op = &self.ops[i];
        // A value of the loop read after it is its last iteration's.
        let iter = match (iter, inside) {
            (None, true) => Some(self.m.trips - 1),
            (it, _) => it,
        };
        if let Some(v) = self.mapped(i, iter) {
            return Ok(v);
        }
        // A carried value: its initial value, or the last iteration's next value.
        if op.op == CARRY {
            let (Some(Operand::Value(init)), Some(Operand::Value(next))) =
                (op.args.first(), op.args.get(1))
            else {
                return Err(no(Some(i as u32), "a carry without its values"));
            };
            let v = match iter {
                Some(t) if t > 0 => self.value(*next as usize, Some(t - 1))?,
                _ => self.value(*init as usize, None)?,
            };
            self.set(i, iter, v);
            return Ok(v);
        }
        // A value of this iteration the other core computes: from its ring.
        let other = self.m.place[i].is_some_and(|c| c != self.core) && inside;
        if other {
            let r = self
                .m
                .rings
                .iter()
                .position(|r| r.value == i as u32)
                .ok_or_else(|| no(Some(i as u32), "a value of the other core without a ring"))?;
            let src = self.ring_operand(r, iter.unwrap_or(0), Direction::In);
            let v = self.push(Op {
                op: "load".into(),
                args: vec![src],
                ty: ValueType::Tile(self.held(self.m.rings[r].tile)),
            });
            self.set(i, iter, v);
            return Ok(v);
        }
        let ty = match op.ty {
            ValueType::Tile(t) => ValueType::Tile(self.held(t)),
            t => t,
        };
        let written = match op.op.as_str() {
            "load" => {
                let Some(Operand::Param(p)) = op.args.first() else {
                    return Err(no(Some(i as u32), "a load of no parameter"));
                };
                let ValueType::Tile(t) = op.ty else {
                    return Err(no(Some(i as u32), "a load of a scalar"));
                };
                let src = self.slice(p, &op.args[1..], iter, t, Direction::In);
                vec![src]
            }
            "store" => {
                let (Some(Operand::Param(p)), Some(v)) = (op.args.first(), op.args.get(1)) else {
                    return Err(no(Some(i as u32), "a store to no parameter"));
                };
                let t = match v {
                    Operand::Value(v) => match self.ops[*v as usize].ty {
                        ValueType::Tile(t) => t,
                        _ => return Err(no(Some(i as u32), "a store of a scalar")),
                    },
                    _ => return Err(no(Some(i as u32), "a store of a parameter")),
                };
                let value = self.operand(v, iter)?;
                let dst = self.slice(p, &op.args[2..], iter, t, Direction::Out);
                vec![dst, value]
            }
            _ => {
                let mut args = Vec::with_capacity(op.args.len());
                for a in &op.args {
                    args.push(self.operand(a, iter)?);
                }
                args
            }
        };
        let v = self.push(Op {
            op: op.op.clone(),
            args: written,
            ty,
        });
        self.set(i, iter, v);
        // A value the other core reads: into its ring.
        if inside
            && let Some(r) = self.m.rings.iter().position(|r| r.value == i as u32)
            && self.m.rings[r].from == self.core
        {
            let dst = self.ring_operand(r, iter.unwrap_or(0), Direction::Out);
            self.push(Op {
                op: "store".into(),
                args: vec![dst, Operand::Value(v)],
                ty: ValueType::Unit,
            });
        }
        Ok(v)
    }

    fn operand(&mut self, a: &Operand, iter: Option<u64>) -> Result<Operand, NoMix> {
        Ok(match a {
            Operand::Value(v) => Operand::Value(self.value(*v as usize, iter)?),
            Operand::Param(p) => match self.k.params.iter().find(|q| &q.name == p).map(|q| &q.ty) {
                Some(ParamType::Tile(_, t)) => {
                    let t = *t;
                    self.slice(p, &[], iter, t, Direction::In)
                }
                _ => a.clone(),
            },
            // `alloc`'s shape, as this core holds it.
            Operand::Shape(r, c) => {
                let t = self.held(TileType::new(*r, *c, DType::F32));
                Operand::Shape(t.rows, t.cols)
            }
            a => a.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::arch::A2A3;
    use crate::kernel::Loop;
    use crate::{Affine, plan::F64};

    fn v(i: u32) -> Operand {
        Operand::Value(i)
    }

    fn p(n: &str) -> Operand {
        Operand::Param(n.into())
    }

    fn t(r: u64, c: u64, d: DType) -> ValueType {
        ValueType::Tile(TileType::new(r, c, d))
    }

    /// `examples/perf/fa_small.wsp`'s kernel as the analyzer lowers it: Q [64,64], K and V
    /// [512,64] in tiles of 128 keys, an online softmax.
    pub(crate) fn flash_attention(depth: Option<u32>) -> Kernel {
        use DType::{F16, F32};
        let op = |name: &str, args: Vec<Operand>, ty: ValueType| Op {
            op: name.into(),
            args,
            ty,
        };
        let row = |j: i64| Operand::Index(Affine::var("j").scale(j).unwrap());
        let zero = Operand::Index(Affine::constant(0));
        let tile = |n: &str, d: Direction, r, c, dt| Param {
            name: n.into(),
            ty: ParamType::Tile(d, TileType::new(r, c, dt)),
        };
        let ops = vec![
            op("load", vec![p("q")], t(64, 64, F16)),
            op(
                "alloc",
                vec![Operand::Shape(64, 1), Operand::DType(F32)],
                t(64, 1, F32),
            ),
            op("sub", vec![v(1), Operand::Number(F64(1e30))], t(64, 1, F32)),
            op(
                "alloc",
                vec![Operand::Shape(64, 1), Operand::DType(F32)],
                t(64, 1, F32),
            ),
            op(
                "alloc",
                vec![Operand::Shape(64, 64), Operand::DType(F32)],
                t(64, 64, F32),
            ),
            op(CARRY, vec![v(3), v(20)], t(64, 1, F32)),
            op(CARRY, vec![v(4), v(25)], t(64, 64, F32)),
            op(CARRY, vec![v(2), v(13)], t(64, 1, F32)),
            op(
                "load",
                vec![p("k"), row(128), zero.clone()],
                t(128, 64, F16),
            ),
            op("transpose", vec![v(8)], t(64, 128, F16)),
            op("matmul", vec![v(0), v(9)], t(64, 128, F32)),
            op(
                "mul",
                vec![v(10), Operand::Number(F64(0.125))],
                t(64, 128, F32),
            ),
            op("rowmax", vec![v(11)], t(64, 1, F32)),
            op("maximum", vec![v(7), v(12)], t(64, 1, F32)),
            op("sub", vec![v(11), v(13)], t(64, 128, F32)),
            op("exp", vec![v(14)], t(64, 128, F32)),
            op("sub", vec![v(7), v(13)], t(64, 1, F32)),
            op("exp", vec![v(16)], t(64, 1, F32)),
            op("mul", vec![v(5), v(17)], t(64, 1, F32)),
            op("rowsum", vec![v(15)], t(64, 1, F32)),
            op("add", vec![v(18), v(19)], t(64, 1, F32)),
            op("cast", vec![v(15), Operand::DType(F16)], t(64, 128, F16)),
            op("load", vec![p("v"), row(128), zero], t(128, 64, F16)),
            op("matmul", vec![v(21), v(22)], t(64, 64, F32)),
            op("mul", vec![v(6), v(17)], t(64, 64, F32)),
            op("add", vec![v(24), v(23)], t(64, 64, F32)),
            op("div", vec![v(25), v(20)], t(64, 64, F32)),
            op("store", vec![p("o"), v(26)], ValueType::Unit),
        ];
        Kernel {
            name: "flash_attention".into(),
            params: vec![
                tile("q", Direction::In, 64, 64, F16),
                tile("k", Direction::In, 512, 64, F16),
                tile("v", Direction::In, 512, 64, F16),
                tile("o", Direction::Out, 64, 64, F32),
            ],
            body: KernelBody::Ops(ops),
            loops: vec![Loop {
                var: "j".into(),
                trips: 4,
                first: 5,
                end: 26,
                stages: depth,
            }],
        }
    }

    fn shown(c: &CoreProgram) -> String {
        let mut out = format!("{}\n", c.kernel.param_texts().join(", "));
        for (n, view) in &c.views {
            out.push_str(&format!("  {n} = {view:?}\n"));
        }
        let ops = c.kernel.op_texts();
        for (i, text) in ops.iter().enumerate() {
            if let Some((_, s)) = c.sections.iter().find(|(at, _)| *at as usize == i) {
                out.push_str(&format!("-- {s:?}\n"));
            }
            out.push_str(&format!("  {text}\n"));
        }
        out
    }

    #[test]
    fn flash_attention_is_two_cores_four_stages_three_rings() {
        let k = flash_attention(None);
        let m = plan(&k, &A2A3).unwrap();
        assert_eq!(
            (m.trips, m.depth, m.rows, m.stages(), m.ahead()),
            (4, 2, 64, 4, 1)
        );
        let rings: Vec<(u32, Core, u64, u64)> = m
            .rings
            .iter()
            .map(|r| (r.value, r.from, r.offset, r.slot_bytes))
            .collect();
        assert_eq!(
            rings,
            [
                (10, Core::Cube, 0, 32768),
                (21, Core::Vector, 65536, 16384),
                (23, Core::Cube, 98304, 16384)
            ]
        );
        assert_eq!(m.ring_bytes(), 131072);
        let order: Vec<String> = m
            .order()
            .iter()
            .map(|(c, s)| match s {
                Section::Stage { stage, iter } => format!("{}{stage}.{iter}", c.name()),
                s => format!("{}:{s:?}", c.name()),
            })
            .collect();
        expect!["aic:Prologue aiv:Prologue aic0.0 aiv1.0 aic0.1 aic2.0 aiv1.1 aiv3.0 aic0.2 aic2.1 aiv1.2 aiv3.1 aic0.3 aic2.2 aiv1.3 aiv3.2 aic2.3 aiv3.3 aiv:Epilogue"]
            .assert_eq(&order.join(" "));
    }

    #[test]
    fn each_core_runs_its_stages_unrolled_through_the_rings() {
        let k = flash_attention(Some(3));
        let m = plan(&k, &A2A3).unwrap();
        let [cube, vector] = unroll(&k, &m).unwrap();
        expect![[r#"
            k: In Tile[128,64] F16, q: In Tile[64,64] F16, wsp_ring0_s0: Out Tile[64,128] F32, k__r128c0: In Tile[128,64] F16, wsp_ring0_s1: Out Tile[64,128] F32, k__r256c0: In Tile[128,64] F16, wsp_ring0_s2: Out Tile[64,128] F32, wsp_ring1_s0: In Tile[64,128] F16, v: In Tile[128,64] F16, wsp_ring2_s0: Out Tile[64,64] F32, k__r384c0: In Tile[128,64] F16, wsp_ring1_s1: In Tile[64,128] F16, v__r128c0: In Tile[128,64] F16, wsp_ring2_s1: Out Tile[64,64] F32, wsp_ring1_s2: In Tile[64,128] F16, v__r256c0: In Tile[128,64] F16, wsp_ring2_s2: Out Tile[64,64] F32, v__r384c0: In Tile[128,64] F16
              k = View { base: Param("k"), row: 0, col: 0, lane_rows: 0 }
              q = View { base: Param("q"), row: 0, col: 0, lane_rows: 0 }
              wsp_ring0_s0 = View { base: Ring { ring: 0, slot: 0 }, row: 0, col: 0, lane_rows: 0 }
              k__r128c0 = View { base: Param("k"), row: 128, col: 0, lane_rows: 0 }
              wsp_ring0_s1 = View { base: Ring { ring: 0, slot: 1 }, row: 0, col: 0, lane_rows: 0 }
              k__r256c0 = View { base: Param("k"), row: 256, col: 0, lane_rows: 0 }
              wsp_ring0_s2 = View { base: Ring { ring: 0, slot: 2 }, row: 0, col: 0, lane_rows: 0 }
              wsp_ring1_s0 = View { base: Ring { ring: 1, slot: 0 }, row: 0, col: 0, lane_rows: 0 }
              v = View { base: Param("v"), row: 0, col: 0, lane_rows: 0 }
              wsp_ring2_s0 = View { base: Ring { ring: 2, slot: 0 }, row: 0, col: 0, lane_rows: 0 }
              k__r384c0 = View { base: Param("k"), row: 384, col: 0, lane_rows: 0 }
              wsp_ring1_s1 = View { base: Ring { ring: 1, slot: 1 }, row: 0, col: 0, lane_rows: 0 }
              v__r128c0 = View { base: Param("v"), row: 128, col: 0, lane_rows: 0 }
              wsp_ring2_s1 = View { base: Ring { ring: 2, slot: 1 }, row: 0, col: 0, lane_rows: 0 }
              wsp_ring1_s2 = View { base: Ring { ring: 1, slot: 2 }, row: 0, col: 0, lane_rows: 0 }
              v__r256c0 = View { base: Param("v"), row: 256, col: 0, lane_rows: 0 }
              wsp_ring2_s2 = View { base: Ring { ring: 2, slot: 2 }, row: 0, col: 0, lane_rows: 0 }
              v__r384c0 = View { base: Param("v"), row: 384, col: 0, lane_rows: 0 }
            -- Stage { stage: 0, iter: 0 }
              %0 = load(k) : Tile[128,64] F16
              %1 = transpose(%0) : Tile[64,128] F16
              %2 = load(q) : Tile[64,64] F16
              %3 = matmul(%2, %1) : Tile[64,128] F32
              store(wsp_ring0_s0, %3)
            -- Stage { stage: 0, iter: 1 }
              %5 = load(k__r128c0) : Tile[128,64] F16
              %6 = transpose(%5) : Tile[64,128] F16
              %7 = matmul(%2, %6) : Tile[64,128] F32
              store(wsp_ring0_s1, %7)
            -- Stage { stage: 0, iter: 2 }
              %9 = load(k__r256c0) : Tile[128,64] F16
              %10 = transpose(%9) : Tile[64,128] F16
              %11 = matmul(%2, %10) : Tile[64,128] F32
              store(wsp_ring0_s2, %11)
            -- Stage { stage: 2, iter: 0 }
              %13 = load(wsp_ring1_s0) : Tile[64,128] F16
              %14 = load(v) : Tile[128,64] F16
              %15 = matmul(%13, %14) : Tile[64,64] F32
              store(wsp_ring2_s0, %15)
            -- Stage { stage: 0, iter: 3 }
              %17 = load(k__r384c0) : Tile[128,64] F16
              %18 = transpose(%17) : Tile[64,128] F16
              %19 = matmul(%2, %18) : Tile[64,128] F32
              store(wsp_ring0_s0, %19)
            -- Stage { stage: 2, iter: 1 }
              %21 = load(wsp_ring1_s1) : Tile[64,128] F16
              %22 = load(v__r128c0) : Tile[128,64] F16
              %23 = matmul(%21, %22) : Tile[64,64] F32
              store(wsp_ring2_s1, %23)
            -- Stage { stage: 2, iter: 2 }
              %25 = load(wsp_ring1_s2) : Tile[64,128] F16
              %26 = load(v__r256c0) : Tile[128,64] F16
              %27 = matmul(%25, %26) : Tile[64,64] F32
              store(wsp_ring2_s2, %27)
            -- Stage { stage: 2, iter: 3 }
              %29 = load(wsp_ring1_s0) : Tile[64,128] F16
              %30 = load(v__r384c0) : Tile[128,64] F16
              %31 = matmul(%29, %30) : Tile[64,64] F32
              store(wsp_ring2_s0, %31)
        "#]].assert_eq(&shown(&cube));
        expect![[r#"
            wsp_ring0_s0: In Tile[32,128] F32, wsp_ring1_s0: Out Tile[32,128] F16, wsp_ring0_s1: In Tile[32,128] F32, wsp_ring1_s1: Out Tile[32,128] F16, wsp_ring0_s2: In Tile[32,128] F32, wsp_ring1_s2: Out Tile[32,128] F16, wsp_ring2_s0: In Tile[32,64] F32, wsp_ring2_s1: In Tile[32,64] F32, wsp_ring2_s2: In Tile[32,64] F32, o: Out Tile[32,64] F32
              wsp_ring0_s0 = View { base: Ring { ring: 0, slot: 0 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring1_s0 = View { base: Ring { ring: 1, slot: 0 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring0_s1 = View { base: Ring { ring: 0, slot: 1 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring1_s1 = View { base: Ring { ring: 1, slot: 1 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring0_s2 = View { base: Ring { ring: 0, slot: 2 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring1_s2 = View { base: Ring { ring: 1, slot: 2 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring2_s0 = View { base: Ring { ring: 2, slot: 0 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring2_s1 = View { base: Ring { ring: 2, slot: 1 }, row: 0, col: 0, lane_rows: 32 }
              wsp_ring2_s2 = View { base: Ring { ring: 2, slot: 2 }, row: 0, col: 0, lane_rows: 32 }
              o = View { base: Param("o"), row: 0, col: 0, lane_rows: 32 }
            -- Prologue
              %0 = alloc((32, 1), F32) : Tile[32,1] F32
              %1 = sub(%0, 1000000000000000000000000000000) : Tile[32,1] F32
              %2 = alloc((32, 1), F32) : Tile[32,1] F32
              %3 = alloc((32, 64), F32) : Tile[32,64] F32
            -- Stage { stage: 1, iter: 0 }
              %4 = load(wsp_ring0_s0) : Tile[32,128] F32
              %5 = mul(%4, 0.125) : Tile[32,128] F32
              %6 = rowmax(%5) : Tile[32,1] F32
              %7 = maximum(%1, %6) : Tile[32,1] F32
              %8 = sub(%5, %7) : Tile[32,128] F32
              %9 = exp(%8) : Tile[32,128] F32
              %10 = sub(%1, %7) : Tile[32,1] F32
              %11 = exp(%10) : Tile[32,1] F32
              %12 = mul(%2, %11) : Tile[32,1] F32
              %13 = rowsum(%9) : Tile[32,1] F32
              %14 = add(%12, %13) : Tile[32,1] F32
              %15 = cast(%9, F16) : Tile[32,128] F16
              store(wsp_ring1_s0, %15)
            -- Stage { stage: 1, iter: 1 }
              %17 = load(wsp_ring0_s1) : Tile[32,128] F32
              %18 = mul(%17, 0.125) : Tile[32,128] F32
              %19 = rowmax(%18) : Tile[32,1] F32
              %20 = maximum(%7, %19) : Tile[32,1] F32
              %21 = sub(%18, %20) : Tile[32,128] F32
              %22 = exp(%21) : Tile[32,128] F32
              %23 = sub(%7, %20) : Tile[32,1] F32
              %24 = exp(%23) : Tile[32,1] F32
              %25 = mul(%14, %24) : Tile[32,1] F32
              %26 = rowsum(%22) : Tile[32,1] F32
              %27 = add(%25, %26) : Tile[32,1] F32
              %28 = cast(%22, F16) : Tile[32,128] F16
              store(wsp_ring1_s1, %28)
            -- Stage { stage: 1, iter: 2 }
              %30 = load(wsp_ring0_s2) : Tile[32,128] F32
              %31 = mul(%30, 0.125) : Tile[32,128] F32
              %32 = rowmax(%31) : Tile[32,1] F32
              %33 = maximum(%20, %32) : Tile[32,1] F32
              %34 = sub(%31, %33) : Tile[32,128] F32
              %35 = exp(%34) : Tile[32,128] F32
              %36 = sub(%20, %33) : Tile[32,1] F32
              %37 = exp(%36) : Tile[32,1] F32
              %38 = mul(%27, %37) : Tile[32,1] F32
              %39 = rowsum(%35) : Tile[32,1] F32
              %40 = add(%38, %39) : Tile[32,1] F32
              %41 = cast(%35, F16) : Tile[32,128] F16
              store(wsp_ring1_s2, %41)
            -- Stage { stage: 3, iter: 0 }
              %43 = mul(%3, %11) : Tile[32,64] F32
              %44 = load(wsp_ring2_s0) : Tile[32,64] F32
              %45 = add(%43, %44) : Tile[32,64] F32
            -- Stage { stage: 1, iter: 3 }
              %46 = load(wsp_ring0_s0) : Tile[32,128] F32
              %47 = mul(%46, 0.125) : Tile[32,128] F32
              %48 = rowmax(%47) : Tile[32,1] F32
              %49 = maximum(%33, %48) : Tile[32,1] F32
              %50 = sub(%47, %49) : Tile[32,128] F32
              %51 = exp(%50) : Tile[32,128] F32
              %52 = sub(%33, %49) : Tile[32,1] F32
              %53 = exp(%52) : Tile[32,1] F32
              %54 = mul(%40, %53) : Tile[32,1] F32
              %55 = rowsum(%51) : Tile[32,1] F32
              %56 = add(%54, %55) : Tile[32,1] F32
              %57 = cast(%51, F16) : Tile[32,128] F16
              store(wsp_ring1_s0, %57)
            -- Stage { stage: 3, iter: 1 }
              %59 = mul(%45, %24) : Tile[32,64] F32
              %60 = load(wsp_ring2_s1) : Tile[32,64] F32
              %61 = add(%59, %60) : Tile[32,64] F32
            -- Stage { stage: 3, iter: 2 }
              %62 = mul(%61, %37) : Tile[32,64] F32
              %63 = load(wsp_ring2_s2) : Tile[32,64] F32
              %64 = add(%62, %63) : Tile[32,64] F32
            -- Stage { stage: 3, iter: 3 }
              %65 = mul(%64, %53) : Tile[32,64] F32
              %66 = load(wsp_ring2_s0) : Tile[32,64] F32
              %67 = add(%65, %66) : Tile[32,64] F32
            -- Epilogue
              %68 = div(%67, %56) : Tile[32,64] F32
              store(o, %68)
        "#]].assert_eq(&shown(&vector));
    }

    #[test]
    fn what_the_form_refuses_is_located() {
        let mut k = flash_attention(Some(1));
        assert_eq!(
            plan(&k, &A2A3).unwrap_err().message,
            "`num_stages=1` gives each hand-off ring one slot, so the cube could not run ahead of the vector cores: state 2 or more"
        );
        // The cube reading the running max.
        k.loops[0].stages = None;
        let KernelBody::Ops(ops) = &mut k.body else {
            unreachable!()
        };
        ops[10].args[0] = v(7);
        ops[10].ty = t(64, 128, DType::F32);
        let e = plan(&k, &A2A3).unwrap_err();
        assert_eq!(e.op, Some(10), "{}", e.message);
    }
}
