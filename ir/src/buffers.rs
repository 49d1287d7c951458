//! On-chip buffer planning for AICore kernels: which tile buffers a kernel's PTO-ISA form needs
//! (UB vector tiles, L1 staging, L0A/L0B cube operands, L0C accumulators, scratch), where each
//! sits in its memory, and whether they fit. `wsp check --target ascend_npu` reports an
//! `Overflow` at its op; codegen places the tiles with `TASSIGN` at the planned offsets.
//!
//! Buffers whose values are dead are reused: a buffer is live from the op that first writes it
//! to the last op that reads it (inclusive), and two buffers share bytes only when their live
//! ranges do not meet, so an op's inputs and its result never alias.

use std::fmt;

use crate::arch::OnChip;
use crate::instructions::{self, Lowering, Tmp};
use crate::kernel::{KernelBody, Op, Operand, ParamType, ValueType};
use crate::ops::{self, Semantics, ShapeRule};
use crate::{DType, Kernel, TileType};

/// Byte alignment of a UB tile's start (PTO_UBUF_ALIGN_BYTES).
pub const UB_ALIGN: u64 = 32;
/// Byte alignment of a cube tile's start: one 512-byte fractal, as PTO-ISA's cube tiles use.
pub const CUBE_ALIGN: u64 = 512;
/// Cube tiles are padded to whole 16×16 fractals (valid rows/columns stay the IR's).
pub const FRACTAL: u64 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Memory {
    Ub,
    L1,
    L0a,
    L0b,
    L0c,
    /// The bias table.
    Bt,
}

impl Memory {
    pub const ALL: [Memory; 6] = [
        Memory::Ub,
        Memory::L1,
        Memory::L0a,
        Memory::L0b,
        Memory::L0c,
        Memory::Bt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Memory::Ub => "UB",
            Memory::L1 => "L1",
            Memory::L0a => "L0A",
            Memory::L0b => "L0B",
            Memory::L0c => "L0C",
            Memory::Bt => "the bias table",
        }
    }

    pub fn capacity(self, chip: &OnChip) -> u64 {
        match self {
            Memory::Ub => chip.ub,
            Memory::L1 => chip.l1,
            Memory::L0a => chip.l0a,
            Memory::L0b => chip.l0b,
            Memory::L0c => chip.l0c,
            Memory::Bt => chip.bias_table,
        }
    }

    fn align(self) -> u64 {
        match self {
            // PTO_UBUF_ALIGN_BYTES, PTO_BIAS_ALIGN_BYTES
            Memory::Ub | Memory::Bt => UB_ALIGN,
            _ => CUBE_ALIGN,
        }
    }
}

/// A tile value of the kernel: an op's result, or a tile parameter read directly as a value
/// (`pto.mul(x, x)` loads `x` once, at its first use).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Op(u32),
    Param(String),
}

/// What a buffer holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The value as a vector tile in UB.
    Vec(Value),
    /// The value staged in L1 for the cube.
    Mat(Value),
    /// Matmul `%i`'s left operand in L0A.
    Left(u32),
    /// Matmul `%i`'s right operand in L0B.
    Right(u32),
    /// Matmul `%i`'s result in L0C (fp32 for f16/bf16/f32 inputs).
    Acc(u32),
    /// The bias row matmul `%i` starts from ([`bias_add`]), staged in L1 by rows.
    BiasRow(u32),
    /// That row in the bias table.
    Bias(u32),
    /// Scratch tile `k` of op `%i` (see `scratch`).
    Tmp(u32, u8),
}

/// One planned buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    pub role: Role,
    pub memory: Memory,
    /// The IR's shape and dtype (the tile's valid region).
    pub tile: TileType,
    /// The padded shape the buffer is laid out in.
    pub rows: u64,
    pub cols: u64,
    /// Byte offset in `memory`.
    pub offset: u64,
    /// First and last op index (inclusive) the buffer is live at.
    pub live: (u32, u32),
}

impl Buffer {
    pub fn bytes(&self) -> u64 {
        self.rows * self.cols * self.tile.dtype.size_bytes() as u64
    }
}

/// Every buffer of a kernel, placed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BufferPlan {
    pub buffers: Vec<Buffer>,
}

impl BufferPlan {
    pub fn get(&self, role: &Role) -> Option<&Buffer> {
        self.buffers.iter().find(|b| &b.role == role)
    }

    /// Bytes in use at the busiest op, per memory.
    pub fn peak(&self, memory: Memory) -> u64 {
        self.buffers
            .iter()
            .filter(|b| b.memory == memory)
            .map(|b| b.offset + b.bytes())
            .max()
            .unwrap_or(0)
    }
}

/// A kernel whose buffers do not fit one of the AICore's memories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    pub memory: Memory,
    /// Bytes the memory would need at `op`.
    pub needed: u64,
    pub available: u64,
    /// The op (`%op`) at which the memory first overflows.
    pub op: u32,
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} overflows at %{}: {} bytes needed, {} available",
            self.memory.name(),
            self.op,
            self.needed,
            self.available
        )
    }
}

/// Whether a UB tile is a column (`[M,1]`, M > 1), laid out column-major as the row-expand
/// and row-reduce instructions take it.
pub fn is_column(tile: TileType) -> bool {
    tile.cols == 1 && tile.rows > 1
}

/// The padded shape of a tile in `memory`. In UB a row (a column's one column) fills whole
/// 32-byte blocks, and a tile of several rows has a multiple of 16 rows (32 for 1-byte
/// elements), so a tile and its row reduction or column agree on their row count, as the
/// row-reduce and row-expand instructions require. Cube tiles are whole fractals.
pub fn padded(tile: TileType, memory: Memory) -> (u64, u64) {
    match memory {
        Memory::Ub => {
            let per = UB_ALIGN / tile.dtype.size_bytes() as u64;
            let rows = if tile.rows > 1 {
                tile.rows.div_ceil(per.max(FRACTAL)) * per.max(FRACTAL)
            } else {
                1
            };
            if is_column(tile) {
                (rows, 1)
            } else {
                (rows, tile.cols.div_ceil(per) * per)
            }
        }
        // One row of whole 64-byte bursts (TMov.hpp's `TMovToBt`); f32 only.
        Memory::Bt => (1, tile.cols.div_ceil(FRACTAL) * FRACTAL),
        _ => (
            tile.rows.div_ceil(FRACTAL) * FRACTAL,
            tile.cols.div_ceil(FRACTAL) * FRACTAL,
        ),
    }
}

/// Whether a binary op's result is computed by one fused row/column-expand instruction
/// (`TROWEXPAND<OP>`/`TCOLEXPAND<OP>`) with the full-shape operand first. Commutative ops swap
/// their operands for that; otherwise the smaller operand is expanded into scratch first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broadcast {
    /// Both operands have the result's shape (or one is a scalar).
    None,
    /// `a` has the result's shape, `b` is `[M,1]` (or the reverse when `swapped`).
    Row { swapped: bool },
    /// `a` has the result's shape, `b` is `[1,N]` (or the reverse when `swapped`).
    Col { swapped: bool },
    /// Operands not of the result's shape are expanded into scratch tiles first.
    Expand,
}

pub fn commutative(op: &str) -> bool {
    matches!(op, "add" | "mul" | "maximum" | "minimum")
}

/// How a two-tile elementwise op of the given shapes is computed.
pub fn broadcast(op: &str, a: TileType, b: TileType, out: TileType) -> Broadcast {
    let full = |t: TileType| t.shape() == out.shape();
    // The fused row form takes its [M,1] operand column-major: a column, so M > 1. A single
    // row's [1,1] operand is expanded first.
    let row = |t: TileType| is_column(t) && t.rows == out.rows && out.cols > 1;
    let col = |t: TileType| t.cols == out.cols && t.rows == 1 && out.rows > 1;
    if full(a) && full(b) {
        Broadcast::None
    } else if full(a) && row(b) {
        Broadcast::Row { swapped: false }
    } else if full(a) && col(b) {
        Broadcast::Col { swapped: false }
    } else if commutative(op) && full(b) && row(a) {
        Broadcast::Row { swapped: true }
    } else if commutative(op) && full(b) && col(a) {
        Broadcast::Col { swapped: true }
    } else {
        Broadcast::Expand
    }
}

/// The scratch tiles expanding `t` to `out`'s shape needs: a `[1,1]` tile goes through a
/// `[1,N]` row first.
pub fn expand_steps(t: TileType, out: TileType) -> Vec<TileType> {
    if t.shape() == out.shape() {
        Vec::new()
    } else if t.rows == 1 && t.cols == 1 && out.rows > 1 && out.cols > 1 {
        vec![t.with_shape([1, out.cols]), out.with_dtype(t.dtype)]
    } else {
        vec![out.with_dtype(t.dtype)]
    }
}

/// The tile operand `o` of an op of `k` is, if it is one.
pub fn tile_of(k: &Kernel, ops: &[Op], o: &Operand) -> Option<TileType> {
    match o {
        Operand::Value(i) => match ops.get(*i as usize)?.ty {
            ValueType::Tile(t) => Some(t),
            _ => None,
        },
        Operand::Param(p) => match &k.params.iter().find(|q| &q.name == p)?.ty {
            ParamType::Tile(_, t) => Some(*t),
            _ => None,
        },
        _ => None,
    }
}

fn value_of(o: &Operand) -> Option<Value> {
    match o {
        Operand::Value(i) => Some(Value::Op(*i)),
        Operand::Param(p) => Some(Value::Param(p.clone())),
        _ => None,
    }
}

/// The scratch tiles op `%i`'s PTO-ISA sequence uses, in the order codegen names them
/// (`Role::Tmp(i, k)`), all in UB.
pub fn scratch(k: &Kernel, ops: &[Op], i: usize) -> Vec<TileType> {
    let op = &ops[i];
    let ValueType::Tile(out) = op.ty else {
        return Vec::new();
    };
    let arg = |n: usize| op.args.get(n).and_then(|a| tile_of(k, ops, a));
    // A row of fixed steps says which scratch tiles they use.
    if let Some(Lowering::Steps { tmps, .. }) = instructions::lookup(&op.op).map(|r| r.lowering) {
        return tmps
            .iter()
            .map(|t| match t {
                Tmp::Full => out,
                Tmp::Column => out.with_shape([out.rows, 1]),
            })
            .collect();
    }
    match op.op.as_str() {
        // TROWSUM/TROWMAX take a tmp tile of the source's shape.
        "rowsum" | "rowmax" | "rowmean" => arg(0).into_iter().collect(),
        "transpose" => vec![out],
        // interleave scatters its second operand into a tile of the result's shape.
        "interleave" => vec![out],
        // A single row's [1,1] factor is expanded to the row first (see `broadcast`).
        "rowmul" | "rowadd" => match arg(1) {
            Some(r) if !is_column(r) && out.cols > 1 => vec![out.with_dtype(r.dtype)],
            _ => Vec::new(),
        },
        "broadcast" => match arg(0) {
            Some(t) if t.rows == 1 && t.cols == 1 && out.rows > 1 && out.cols > 1 => {
                vec![t.with_shape([1, out.cols])]
            }
            _ => Vec::new(),
        },
        name => {
            let is_zip = matches!(
                ops::lookup(name).map(|r| (r.semantics, r.shape)),
                Some((Semantics::Zip(_), ShapeRule::Broadcast))
            );
            match (is_zip, arg(0), arg(1)) {
                (true, Some(a), Some(b)) if broadcast(name, a, b, out) == Broadcast::Expand => {
                    let mut v = expand_steps(a, out);
                    v.extend(expand_steps(b, out));
                    v
                }
                _ => Vec::new(),
            }
        }
    }
}

/// `store(p, matmul(a, b, acc=load(p)))` where the load and the product have no other use:
/// the product is added to `p` in global memory by an atomic-add store from L0C, so neither
/// the accumulator nor the product passes through UB (a cube-only kernel). The load's and
/// the store's op indices.
pub fn accumulates_in_place(ops: &[Op], i: usize) -> Option<(u32, u32)> {
    let op = ops.get(i)?;
    if op.op != "matmul" {
        return None;
    }
    let Some(Operand::Value(j)) = op.args.get(2) else {
        return None;
    };
    let load = ops.get(*j as usize)?;
    let (Some(Operand::Param(p)), "load") = (load.args.first(), load.op.as_str()) else {
        return None;
    };
    let reads = |v: u32| {
        ops.iter()
            .enumerate()
            .filter(|(_, o)| o.args.contains(&Operand::Value(v)))
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
    };
    if reads(*j) != [i] {
        return None;
    }
    let [s] = reads(i as u32)[..] else {
        return None;
    };
    let store = &ops[s];
    let writes_p = |o: &Op| o.op == "store" && o.args.first() == Some(&Operand::Param(p.clone()));
    let between = ops[*j as usize + 1..s].iter().any(writes_p);
    (writes_p(store) && !between).then_some((*j, s as u32))
}

/// Whether `cast` op `i` converts a matmul result on the cube: its operand is a matmul read by
/// nothing else, it converts to a 16-bit float or keeps f32, and a matmul reading the converted
/// tile (as its left or right operand) takes it in L1 through `TMOV` from L0C, which converts
/// to f16/bf16 only. Where a kernel is split, such a cast runs on the cube.
pub fn converts_matmul(ops: &[Op], i: usize) -> bool {
    let op = &ops[i];
    let (Some(Operand::Value(j)), ValueType::Tile(t)) = (op.args.first(), op.ty) else {
        return false;
    };
    let to_l1 = |n: usize| {
        matches!(t.dtype, DType::F16 | DType::BF16)
            && ops[n].args.get(2) != Some(&Operand::Value(i as u32))
    };
    op.op == "cast"
        && matches!(t.dtype, DType::F16 | DType::BF16 | DType::F32)
        && ops.get(*j as usize).is_some_and(|m| m.op == "matmul")
        && readers(ops, *j).all(|n| n == i)
        && readers(ops, i as u32).all(|n| ops[n].op != "matmul" || to_l1(n))
}

/// Whether `cast` op `i` is done by the fixpipe alone: it converts a matmul result
/// ([`converts_matmul`]) that is only stored (`TSTORE` from L0C to a half or bf16 tensor) or
/// read by matmuls (`TMOV` from L0C to L1), never by the vector unit.
pub fn fixpipe_cast(ops: &[Op], i: usize) -> bool {
    converts_matmul(ops, i)
        && readers(ops, i as u32).all(|n| matches!(ops[n].op.as_str(), "store" | "matmul"))
}

/// The matmul whose L0C tile holds the value of op `%v` when it is not a matmul's own: the
/// one a fixpipe cast converts, or the one a bias row is added to ([`bias_add`]).
pub fn held_in_acc(k: &Kernel, ops: &[Op], v: u32, chip: &OnChip) -> Option<u32> {
    if fixpipe_cast(ops, v as usize) {
        return match ops[v as usize].args.first() {
            Some(Operand::Value(m)) => Some(*m),
            _ => None,
        };
    }
    bias_add(k, ops, v as usize, chip).map(|(m, _)| m)
}

/// Whether `add` op `i` adds a bias row to a matmul's product on the cube, the matmul starting
/// its accumulator from the row in the bias table (`TMATMUL_BIAS`): one operand is a matmul of
/// two operands read by nothing else, the other a `[1,N]` f32 tile parameter (or a load of
/// one) the kernel never stores, small enough for the bias table; nothing reads the sum as a
/// matmul operand. The matmul's index and the bias parameter.
pub fn bias_add<'a>(k: &Kernel, ops: &'a [Op], i: usize, chip: &OnChip) -> Option<(u32, &'a str)> {
    let op = &ops[i];
    let ValueType::Tile(out) = op.ty else {
        return None;
    };
    if op.op != "add" || op.args.len() != 2 {
        return None;
    }
    let product = |o: &Operand| match o {
        Operand::Value(m) => {
            let mm = ops.get(*m as usize)?;
            (mm.op == "matmul" && mm.args.len() == 2 && readers(ops, *m).all(|n| n == i))
                .then_some(*m)
        }
        _ => None,
    };
    let (m, bias) = match (product(&op.args[0]), product(&op.args[1])) {
        (Some(m), _) => (m, &op.args[1]),
        (None, Some(m)) => (m, &op.args[0]),
        _ => return None,
    };
    let b = tile_of(k, ops, bias)?;
    let p = param_read(k, ops, bias)?;
    let (_, cols) = padded(b, Memory::Bt);
    let fits = b.rows == 1
        && b.cols == out.cols
        && b.dtype == DType::F32
        && out.dtype == DType::F32
        && cols * 4 <= chip.bias_table;
    let to_cube = readers(ops, i as u32).any(|n| ops[n].op == "matmul");
    (fits && !to_cube).then_some((m, p))
}

/// The tile parameter operand `o` reads (directly or through a load), when the kernel never
/// stores it: the cube may load it from global memory itself.
fn param_read<'a>(k: &Kernel, ops: &'a [Op], o: &'a Operand) -> Option<&'a str> {
    let p = match o {
        Operand::Param(p) => p,
        Operand::Value(v) => match &ops[*v as usize] {
            Op { op, args, .. } if op == "load" => match args.first()? {
                Operand::Param(p) => p,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let is_tile = k
        .params
        .iter()
        .any(|q| &q.name == p && matches!(q.ty, ParamType::Tile(..)));
    let stored = ops
        .iter()
        .any(|o| o.op == "store" && o.args.first() == Some(&Operand::Param(p.clone())));
    (is_tile && !stored).then_some(p.as_str())
}

/// Whether `transpose` op `i` is only a matmul's right operand, read from a tile parameter
/// the kernel never stores: the cube loads it transposed, as a column-major (DN) tensor into
/// a `Mat` tile in ZN layout, which becomes the `Right` operand as it is.
pub fn cube_transpose(k: &Kernel, ops: &[Op], i: usize) -> bool {
    let op = &ops[i];
    if op.op != "transpose" {
        return false;
    }
    transposed_param(k, ops, i).is_some()
        && readers(ops, i as u32).all(|n| {
            ops[n].op == "matmul"
                && ops[n].args.get(1) == Some(&Operand::Value(i as u32))
                && ops[n].args.first() != Some(&Operand::Value(i as u32))
        })
}

/// The tile parameter a `transpose` reads (directly or through a load), when the kernel
/// never stores it.
pub fn transposed_param<'a>(k: &Kernel, ops: &'a [Op], i: usize) -> Option<&'a str> {
    param_read(k, ops, ops[i].args.first()?)
}

/// The ops that read value `%v`.
fn readers(ops: &[Op], v: u32) -> impl Iterator<Item = usize> + '_ {
    ops.iter()
        .enumerate()
        .filter(move |(_, o)| o.args.contains(&Operand::Value(v)))
        .map(|(n, _)| n)
}

/// How each value is used, for deciding where it lives.
#[derive(Default)]
struct Uses {
    /// Ops that read it as a vector tile (vector ops, `store`, a matmul's `acc`).
    vec: Vec<u32>,
    /// Matmuls that read it as their left or right operand.
    cube: Vec<u32>,
    /// `store`s of it.
    store: Vec<u32>,
}

/// How long a plan keeps each buffer's bytes: the longer, the fewer instructions wait for
/// another to be done with bytes they write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetimes {
    /// From a buffer's first use to its last: the least memory.
    Tight,
    /// So that a pipe may run ahead: every tile parameter read as a value is live from the
    /// first op (its load may be issued before any instruction), and a matmul's L0 tiles are
    /// live from the previous matmul on (its operands move in, and its product starts, while
    /// the previous one's are still in use).
    Ahead,
    /// The whole kernel: no two buffers share bytes, so only reads of results wait.
    Whole,
}

/// Places every buffer `k`'s AICore form needs. `Ok` with an empty plan for a `cpp_src` kernel.
pub fn plan(k: &Kernel, chip: &OnChip) -> Result<BufferPlan, Overflow> {
    plan_with(k, chip, Lifetimes::Tight)
}

/// [`plan`] with buffers kept as `lifetimes` says.
pub fn plan_with(k: &Kernel, chip: &OnChip, lifetimes: Lifetimes) -> Result<BufferPlan, Overflow> {
    let ahead = lifetimes != Lifetimes::Tight;
    let KernelBody::Ops(ops) = &k.body else {
        return Ok(BufferPlan::default());
    };
    let mut uses: Vec<(Value, Uses)> = Vec::new();
    fn use_of(uses: &mut Vec<(Value, Uses)>, v: Value) -> &mut Uses {
        let p = match uses.iter().position(|(w, _)| *w == v) {
            Some(p) => p,
            None => {
                uses.push((v, Uses::default()));
                uses.len() - 1
            }
        };
        &mut uses[p].1
    }
    for (i, op) in ops.iter().enumerate() {
        let i = i as u32;
        if let Some((m, _)) = bias_add(k, ops, i as usize, chip) {
            // The cube adds the row as it multiplies: the sum stays in the product's L0C.
            use_of(&mut uses, Value::Op(m)).store.push(i);
            continue;
        }
        if fixpipe_cast(ops, i as usize) || cube_transpose(k, ops, i as usize) {
            // The cube reads the operand as it stores it (fixpipe) or loads it (transposed).
            if let (true, Some(Operand::Value(m))) = (op.op == "cast", op.args.first()) {
                use_of(&mut uses, Value::Op(*m)).store.push(i);
            }
            continue;
        }
        if op.op != "load" && op.op != "store" {
            for (n, a) in op.args.iter().enumerate() {
                let Some(v) = value_of(a) else { continue };
                if tile_of(k, ops, a).is_none() {
                    continue;
                }
                let u = use_of(&mut uses, v);
                if op.op == "matmul" && n < 2 {
                    u.cube.push(i);
                } else {
                    u.vec.push(i);
                }
            }
        }
        if op.op == "store"
            && let Some(v) = op.args.get(1).and_then(value_of)
        {
            // A converted or biased matmul result is stored from the matmul's L0C tile.
            if let Value::Op(c) = &v
                && let Some(m) = held_in_acc(k, ops, *c, chip)
            {
                use_of(&mut uses, Value::Op(m)).store.push(i);
            }
            use_of(&mut uses, v).store.push(i);
        }
    }
    let find = |v: &Value| uses.iter().find(|(w, _)| w == v).map(|(_, u)| u);

    let mut want: Vec<Buffer> = Vec::new();
    let mut add = |role: Role, memory: Memory, tile: TileType, live: (u32, u32)| {
        let (rows, cols) = match role {
            // One row, as the bias table takes it.
            Role::BiasRow(_) => padded(tile, Memory::Bt),
            _ => padded(tile, memory),
        };
        want.push(Buffer {
            role,
            memory,
            tile,
            rows,
            cols,
            offset: 0,
            live,
        });
    };
    let empty = Uses::default();
    // Tile parameters read directly as values, in order of first use.
    let mut params: Vec<(String, TileType)> = Vec::new();
    for (v, _) in &uses {
        if let Value::Param(p) = v
            && let Some(t) = tile_of(k, ops, &Operand::Param(p.clone()))
        {
            params.push((p.clone(), t));
        }
    }
    let last =
        |xs: &[&[u32]], at: u32| xs.iter().flat_map(|x| x.iter()).copied().fold(at, u32::max);
    let first = |xs: &[u32]| xs.iter().copied().min();
    for (p, t) in &params {
        let v = Value::Param(p.clone());
        let u = find(&v).unwrap_or(&empty);
        let all: Vec<u32> = u
            .vec
            .iter()
            .chain(&u.cube)
            .chain(&u.store)
            .copied()
            .collect();
        let start = first(&all).unwrap_or(0);
        let from = |s: u32| if ahead { 0 } else { s };
        if !u.vec.is_empty() || !u.store.is_empty() {
            let s = from(first(&[u.vec.as_slice(), &u.store].concat()).unwrap_or(start));
            add(
                Role::Vec(v.clone()),
                Memory::Ub,
                *t,
                (s, last(&[&u.vec, &u.store], s)),
            );
        }
        if let Some(s) = first(&u.cube).map(from) {
            add(Role::Mat(v), Memory::L1, *t, (s, last(&[&u.cube], s)));
        }
    }
    let in_place: Vec<(u32, u32)> = (0..ops.len())
        .filter_map(|i| accumulates_in_place(ops, i))
        .collect();
    let mut previous_matmul = None;
    for (i, op) in ops.iter().enumerate() {
        let i32 = i as u32;
        let v = Value::Op(i32);
        let u = find(&v).unwrap_or(&empty);
        if let Some((m, p)) = bias_add(k, ops, i, chip) {
            if let Some(b) = tile_of(k, ops, &Operand::Param(p.to_string())) {
                add(Role::BiasRow(m), Memory::L1, b, (m, m));
                add(Role::Bias(m), Memory::Bt, b, (m, m));
            }
            continue;
        }
        if in_place.iter().any(|&(j, _)| j == i32) || fixpipe_cast(ops, i) {
            // The accumulator stays in global memory; a converted result stays in L0C, and
            // reaches a matmul reading it converted into L1.
            if let (ValueType::Tile(t), Some(s)) = (op.ty, first(&u.cube))
                && fixpipe_cast(ops, i)
            {
                add(Role::Mat(v), Memory::L1, t, (i32, last(&[&u.cube], s)));
            }
            continue;
        }
        let only_cube = |u: &Uses| u.vec.is_empty() && u.store.is_empty();
        let staged = (op.op == "load" || cube_transpose(k, ops, i)) && only_cube(u);
        if let ValueType::Tile(t) = op.ty {
            let end = last(&[&u.vec, &u.cube, &u.store], i32);
            if op.op == "matmul" {
                let (Some(a), Some(b)) = (
                    op.args.first().and_then(|a| tile_of(k, ops, a)),
                    op.args.get(1).and_then(|a| tile_of(k, ops, a)),
                ) else {
                    continue;
                };
                let has_acc = op.args.len() > 2 && accumulates_in_place(ops, i).is_none();
                let in_vec = has_acc || !u.vec.is_empty() || !u.cube.is_empty();
                let from = match previous_matmul.replace(i32) {
                    Some(p) if ahead => p,
                    _ => i32,
                };
                add(Role::Left(i32), Memory::L0a, a, (from, i32));
                add(Role::Right(i32), Memory::L0b, b, (from, i32));
                let acc_end = if in_vec { i32 } else { end };
                add(Role::Acc(i32), Memory::L0c, t, (from, acc_end));
                if in_vec {
                    add(Role::Vec(v.clone()), Memory::Ub, t, (i32, end));
                }
            } else if staged {
                // Only the cube reads it: loaded straight into L1.
            } else {
                add(Role::Vec(v.clone()), Memory::Ub, t, (i32, end));
            }
            if let Some(s) = first(&u.cube) {
                let s = if staged { i32 } else { s };
                add(Role::Mat(v), Memory::L1, t, (s, last(&[&u.cube], s)));
            }
        }
        if cube_transpose(k, ops, i) {
            continue; // no scratch: nothing is transposed on the vector unit
        }
        for (n, t) in scratch(k, ops, i).into_iter().enumerate() {
            add(Role::Tmp(i32, n as u8), Memory::Ub, t, (i32, i32));
        }
    }
    if lifetimes == Lifetimes::Whole {
        let end = ops.len().saturating_sub(1) as u32;
        for b in &mut want {
            b.live = (0, end);
        }
    }
    place(&mut want, chip)?;
    Ok(BufferPlan { buffers: want })
}

/// First fit in order of live-range start: each buffer takes the lowest aligned offset clear
/// of every placed buffer whose live range meets its own.
fn place(buffers: &mut [Buffer], chip: &OnChip) -> Result<(), Overflow> {
    let mut idx: Vec<usize> = (0..buffers.len()).collect();
    // By first use; among buffers first used by one op, the largest first, so that a small
    // result placed first does not push a large scratch tile past a hole that would hold it.
    idx.sort_by_key(|&i| (buffers[i].live.0, std::cmp::Reverse(buffers[i].bytes()), i));
    let mut placed: Vec<usize> = Vec::new();
    let mut first_overflow: Option<Overflow> = None;
    for &i in &idx {
        let (mem, live, bytes) = (buffers[i].memory, buffers[i].live, buffers[i].bytes());
        let align = mem.align();
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .map(|&j| &buffers[j])
            .filter(|b| b.memory == mem && b.live.0 <= live.1 && live.0 <= b.live.1)
            .map(|b| (b.offset, b.offset + b.bytes()))
            .collect();
        busy.sort();
        let mut at = 0u64;
        for (s, e) in busy {
            if at + bytes <= s {
                break;
            }
            at = at.max(e.div_ceil(align) * align);
        }
        buffers[i].offset = at;
        placed.push(i);
        let available = mem.capacity(chip);
        if at + bytes > available {
            let o = Overflow {
                memory: mem,
                needed: at + bytes,
                available,
                op: live.0,
            };
            // Report the earliest op; among equal ops, the largest need.
            first_overflow = match first_overflow {
                Some(f)
                    if (f.op, std::cmp::Reverse(f.needed))
                        <= (o.op, std::cmp::Reverse(o.needed)) =>
                {
                    Some(f)
                }
                _ => Some(o),
            };
        }
    }
    match first_overflow {
        Some(o) => Err(o),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;
    use crate::kernel::{Param, ParamType};
    use crate::plan::Direction;

    fn tile(r: u64, c: u64, d: DType) -> TileType {
        TileType::new(r, c, d)
    }

    fn param(name: &str, dir: Direction, t: TileType) -> Param {
        Param {
            name: name.into(),
            ty: ParamType::Tile(dir, t),
        }
    }

    fn op(name: &str, args: Vec<Operand>, ty: ValueType) -> Op {
        Op {
            op: name.into(),
            args,
            ty,
        }
    }

    fn softmax(m: u64, n: u64) -> Kernel {
        let t = tile(m, n, DType::F32);
        let r = tile(m, 1, DType::F32);
        use Operand::{Param as P, Value as V};
        Kernel {
            name: "softmax_tile".into(),
            params: vec![param("x", Direction::In, t), param("y", Direction::Out, t)],
            body: KernelBody::Ops(vec![
                op("rowmax", vec![P("x".into())], ValueType::Tile(r)),
                op("sub", vec![P("x".into()), V(0)], ValueType::Tile(t)),
                op("exp", vec![V(1)], ValueType::Tile(t)),
                op("rowsum", vec![V(2)], ValueType::Tile(r)),
                op("div", vec![V(2), V(3)], ValueType::Tile(t)),
                op("store", vec![P("y".into()), V(4)], ValueType::Unit),
            ]),
            loops: Vec::new(),
        }
    }

    #[test]
    fn sizes_agree_with_the_target_description() {
        // runtime/targets/ascend_910b.toml: ub_kib = 192, l1_kib = 512. Tiles take UB up to
        // the 8 KiB that A2/A3 instructions keep as hidden scratch.
        let chip = crate::arch::A2A3.on_chip;
        assert_eq!(chip.ub + 8 * 1024, 192 * 1024);
        assert_eq!(chip.l1, 512 * 1024);
    }

    #[test]
    fn dead_values_share_bytes() {
        let p = plan(&softmax(64, 256), &crate::arch::A2A3.on_chip).unwrap();
        let full = 64 * 256 * 4;
        // x, its rowmax tmp, the row max; then sub reuses the tmp's bytes, and so on: at most
        // three full tiles (x, e and one tmp) are ever live together.
        assert!(p.peak(Memory::Ub) <= 3 * full + 2 * 64 * 4, "{p:#?}");
        for a in &p.buffers {
            for b in &p.buffers {
                let meet = a.live.0 <= b.live.1 && b.live.0 <= a.live.1;
                let overlap = a.offset < b.offset + b.bytes() && b.offset < a.offset + a.bytes();
                if a.role != b.role && a.memory == b.memory && meet {
                    assert!(!overlap, "{a:?} overlaps {b:?}");
                }
            }
        }
        let x = p.get(&Role::Vec(Value::Param("x".into()))).unwrap();
        assert_eq!((x.live, x.offset, x.cols), ((0, 1), 0, 256));
        let m = p.get(&Role::Vec(Value::Op(0))).unwrap();
        assert_eq!((m.rows, m.cols), (64, 1));
    }

    #[test]
    fn whole_lifetimes_share_no_bytes() {
        let k = softmax(16, 256);
        let chip = &crate::arch::A2A3.on_chip;
        let p = plan_with(&k, chip, Lifetimes::Whole).unwrap();
        for a in &p.buffers {
            for b in &p.buffers {
                let overlap = a.offset < b.offset + b.bytes() && b.offset < a.offset + a.bytes();
                if a.role != b.role && a.memory == b.memory {
                    assert!(!overlap, "{a:?} overlaps {b:?}");
                }
            }
        }
        // More than the tight plan, which reuses dead values' bytes; too much for UB at
        // twice the rows.
        assert!(p.peak(Memory::Ub) > plan(&k, chip).unwrap().peak(Memory::Ub));
        assert!(plan_with(&softmax(64, 256), chip, Lifetimes::Whole).is_err());
    }

    #[test]
    fn overflow_names_memory_and_op() {
        let e = plan(&softmax(128, 512), &crate::arch::A2A3.on_chip).unwrap_err();
        assert_eq!((e.memory, e.op, e.available), (Memory::Ub, 0, 184 * 1024));
        assert!(e.needed > e.available);
        assert_eq!(
            e.to_string(),
            format!(
                "UB overflows at %0: {} bytes needed, 188416 available",
                e.needed
            )
        );
    }

    #[test]
    fn accumulation_into_the_destination_stays_in_the_cube() {
        let a = tile(64, 64, DType::F16);
        let c = tile(64, 64, DType::F32);
        use Operand::{Param as P, Value as V};
        let k = Kernel {
            name: "matmul_acc".into(),
            params: vec![
                param("a", Direction::In, a),
                param("b", Direction::In, a),
                param("c", Direction::InOut, c),
            ],
            body: KernelBody::Ops(vec![
                op("load", vec![P("c".into())], ValueType::Tile(c)),
                op(
                    "matmul",
                    vec![P("a".into()), P("b".into()), V(0)],
                    ValueType::Tile(c),
                ),
                op("store", vec![P("c".into()), V(1)], ValueType::Unit),
            ]),
            loops: Vec::new(),
        };
        let KernelBody::Ops(ops) = &k.body else {
            unreachable!()
        };
        assert_eq!(accumulates_in_place(ops, 1), Some((0, 2)));
        let p = plan(&k, &crate::arch::A2A3.on_chip).unwrap();
        assert_eq!(p.peak(Memory::Ub), 0, "{p:#?}");
        assert_eq!(p.get(&Role::Acc(1)).unwrap().live, (1, 2));
    }

    #[test]
    fn matmul_uses_the_cube_memories() {
        let a = tile(64, 128, DType::F16);
        let b = tile(128, 128, DType::F16);
        let c = tile(64, 128, DType::F32);
        use Operand::{Param as P, Value as V};
        let k = Kernel {
            name: "mm".into(),
            params: vec![
                param("x", Direction::In, a),
                param("w", Direction::In, b),
                param("out", Direction::Out, c),
            ],
            body: KernelBody::Ops(vec![
                op(
                    "matmul",
                    vec![P("x".into()), P("w".into())],
                    ValueType::Tile(c),
                ),
                op("store", vec![P("out".into()), V(0)], ValueType::Unit),
            ]),
            loops: Vec::new(),
        };
        let p = plan(&k, &crate::arch::A2A3.on_chip).unwrap();
        let roles: Vec<(Role, Memory, u64)> = p
            .buffers
            .iter()
            .map(|b| (b.role.clone(), b.memory, b.offset))
            .collect();
        assert_eq!(
            roles,
            vec![
                // The larger first: w [128, 128], then x [64, 128].
                (
                    Role::Mat(Value::Param("x".into())),
                    Memory::L1,
                    128 * 128 * 2
                ),
                (Role::Mat(Value::Param("w".into())), Memory::L1, 0),
                (Role::Left(0), Memory::L0a, 0),
                (Role::Right(0), Memory::L0b, 0),
                (Role::Acc(0), Memory::L0c, 0),
            ]
        );
        // Stored straight from L0C: live until the store.
        assert_eq!(p.get(&Role::Acc(0)).unwrap().live, (0, 1));
    }
}
