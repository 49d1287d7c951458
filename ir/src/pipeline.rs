//! A kernel over tensors (one that loops, [`Kernel::iterates`]) as an AICore runs it: a
//! matmul accumulated over a K loop, its operands streamed GM → L1 → L0A/L0B through
//! ping-pong buffers, its accumulator kept in L0C and stored once through the fixpipe, as
//! PTO-ISA's hand-written GEMM does (`kernels/manual/a2a3/gemm_performance`).
//!
//! [`plan`] finds that form in a kernel's ops and places its buffers, `stages` of each operand
//! in flight. The emitter (`wsp_aicore`) writes it; the analyzer reports what does not fit
//! (WSP506, counting the buffers in flight) and what has no such form (WSP507) from the same
//! plan.

use std::fmt;

use crate::arch::Arch;
use crate::buffers::{Memory, Overflow, padded};
use crate::kernel::{Kernel, KernelBody, Op, Operand, ParamType, ValueType};
use crate::{Affine, DType, TileType};

/// One operand of the matmul: a slice of a tensor parameter, loaded each iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    /// The `load` op.
    pub load: u32,
    pub param: String,
    /// The slice's first row and column, over the loops' variables.
    pub row: Affine,
    pub col: Affine,
    pub tile: TileType,
}

/// Where a kernel's ops and loops are not the pipelined form, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoForm {
    /// Op `op` (or the kernel, if `None`) is not part of the form.
    Op(Option<u32>, String),
    Overflow(Overflow),
}

impl fmt::Display for NoForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoForm::Op(_, why) => f.write_str(why),
            NoForm::Overflow(o) => write!(f, "{o}"),
        }
    }
}

/// A GEMM kernel over tensors, pipelined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CubeLoop {
    pub matmul: u32,
    pub left: Streamed,
    pub right: Streamed,
    /// The loop the accumulator is carried over (index into `Kernel::loops`); `None`: the
    /// matmul runs once per store.
    pub k_loop: Option<usize>,
    /// The `store` op and its slice of the output parameter.
    pub store: u32,
    pub out: String,
    pub out_row: Affine,
    pub out_col: Affine,
    pub acc: TileType,
    /// Operand tiles in flight in L1 (each operand has this many buffers), and in L0A/L0B.
    pub l1_stages: u32,
    pub l0_stages: u32,
    /// Column blocks of the accumulator, each its own L0C tile (and each a block of the right
    /// operand's columns), so the fixpipe stores one while the cube computes another: 2 where
    /// the columns split into whole fractals, else 1.
    pub parts: u32,
    /// The accumulator starts from the output slice it is stored to (`acc = pto.load(c[...])`,
    /// a K loop, `pto.store(c[...], acc)`): the K loop starts from zeros and the store adds
    /// into global memory (the fixpipe's atomic add), so nothing is loaded.
    pub adds_into_out: Option<u32>,
}

impl CubeLoop {
    /// A block of `t`'s columns: one of [`CubeLoop::parts`].
    pub fn part(&self, t: TileType) -> TileType {
        TileType {
            cols: t.cols / self.parts as u64,
            ..t
        }
    }

    /// Bytes of one buffer of each kind: L1 left and right, L0A, L0B, L0C.
    pub fn bytes(&self) -> [(Memory, u64); 4] {
        let b = buffer_bytes;
        [
            (
                Memory::L1,
                b(self.left.tile, Memory::L1) + b(self.right.tile, Memory::L1),
            ),
            (Memory::L0a, b(self.left.tile, Memory::L0a)),
            (Memory::L0b, b(self.right.tile, Memory::L0b)),
            (Memory::L0c, b(self.acc, Memory::L0c)),
        ]
    }
}

/// Bytes of a buffer holding `t` in `memory`, padded as it is laid out there.
pub fn buffer_bytes(t: TileType, memory: Memory) -> u64 {
    let (r, c) = padded(t, memory);
    r * c * t.dtype.size_bytes() as u64
}

/// What `wsp emit` writes of a loop kernel, for messages.
const FORM: &str = "`wsp emit` writes a loop kernel for an AICore when it is a GEMM: one matmul accumulated over a K loop, its operands loaded by slices in that loop and its result stored once after it";

/// A kernel that multiplies two tiles once (`c = a @ b` of its tile parameters, read as they
/// are or loaded, the product stored whole) written as the same GEMM over `steps` K steps:
/// the form [`plan`] pipelines, so that one step's loads overlap another's cube work and the
/// fixpipe stores one column part while the cube computes the other. `None`: not such a
/// kernel, or its K is not `steps` whole fractals.
pub fn k_steps(k: &Kernel, steps: u64) -> Option<Kernel> {
    let KernelBody::Ops(ops) = &k.body else {
        return None;
    };
    if k.iterates() || steps < 2 {
        return None;
    }
    // The parameter an operand reads: itself, or a whole load of it.
    let param = |o: &Operand| match o {
        Operand::Param(p) => Some(p.clone()),
        Operand::Value(v) => match ops.get(*v as usize) {
            Some(Op { op, args, .. }) if op == "load" && args.len() == 1 => match &args[0] {
                Operand::Param(p) => Some(p.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let mut matmul = None;
    let mut store = None;
    for (i, o) in ops.iter().enumerate() {
        match o.op.as_str() {
            "load" if param(&Operand::Value(i as u32)).is_some() => {}
            "matmul" if matmul.is_none() && o.args.len() == 2 => matmul = Some(i as u32),
            "store" if store.is_none() => store = Some(o),
            _ => return None,
        }
    }
    let mm = matmul?;
    let m = &ops[mm as usize];
    let (a, b) = (param(&m.args[0])?, param(&m.args[1])?);
    let [Operand::Param(c), Operand::Value(v)] = store?.args.as_slice() else {
        return None;
    };
    let ValueType::Tile(acc) = m.ty else {
        return None;
    };
    let tile = |name: &str| crate::buffers::tile_of(k, ops, &Operand::Param(name.into()));
    let (at, bt, ct) = (tile(&a)?, tile(&b)?, tile(c)?);
    let kt = at.cols / steps;
    if *v != mm
        || ct != acc
        || !at.cols.is_multiple_of(steps)
        || !kt.is_multiple_of(crate::buffers::FRACTAL)
    {
        return None;
    }
    let step = |t: TileType, rows: u64, cols: u64| ValueType::Tile(TileType { rows, cols, ..t });
    let at_k = Affine {
        constant: 0,
        terms: vec![("k".into(), kt as i64)],
    };
    let zero = Operand::Index(Affine::constant(0));
    let body = vec![
        Op {
            op: "alloc".into(),
            args: vec![
                Operand::Shape(acc.rows, acc.cols),
                Operand::DType(acc.dtype),
            ],
            ty: ValueType::Tile(acc),
        },
        Op {
            op: crate::kernel::CARRY.into(),
            args: vec![Operand::Value(0), Operand::Value(4)],
            ty: ValueType::Tile(acc),
        },
        Op {
            op: "load".into(),
            args: vec![
                Operand::Param(a),
                zero.clone(),
                Operand::Index(at_k.clone()),
            ],
            ty: step(at, at.rows, kt),
        },
        Op {
            op: "load".into(),
            args: vec![Operand::Param(b), Operand::Index(at_k), zero],
            ty: step(bt, kt, bt.cols),
        },
        Op {
            op: "matmul".into(),
            args: vec![Operand::Value(2), Operand::Value(3), Operand::Value(1)],
            ty: ValueType::Tile(acc),
        },
        Op {
            op: "store".into(),
            args: vec![Operand::Param(c.clone()), Operand::Value(4)],
            ty: ValueType::Unit,
        },
    ];
    Some(Kernel {
        name: k.name.clone(),
        params: k.params.clone(),
        body: KernelBody::Ops(body),
        loops: vec![crate::kernel::Loop {
            var: "k".into(),
            trips: steps,
            first: 1,
            end: 5,
            stages: None,
        }],
    })
}

/// Pipelining depth when the user states none: two of each operand in flight, as PTO-ISA's
/// hand-written kernels keep.
const DEFAULT_STAGES: u32 = 2;

fn op_at(ops: &[Op], i: u32) -> Option<&Op> {
    ops.get(i as usize)
}

fn slice(ops: &[Op], i: u32, want: &str) -> Result<Streamed, NoForm> {
    let no = |why: String| NoForm::Op(Some(i), why);
    let op = op_at(ops, i).ok_or_else(|| no(format!("%{i} is not an op")))?;
    if op.op != "load" {
        return Err(no(format!(
            "the matmul's {want} operand is `{}` (%{i}); in a loop kernel `wsp emit` writes matmuls of tiles loaded in the matmul's own loop",
            op.op
        )));
    }
    let Some(Operand::Param(p)) = op.args.first() else {
        return Err(no(format!("load (%{i}) of no parameter")));
    };
    if op.args.iter().any(|a| matches!(a, Operand::Number(_))) {
        return Err(no(format!(
            "load (%{i}) pads a partial tile, which `wsp emit` does not yet write for an AICore; make the tensor a multiple of the tile"
        )));
    }
    let (row, col) = starts(&op.args);
    let ValueType::Tile(tile) = op.ty else {
        return Err(no(format!("load (%{i}) is not a tile")));
    };
    Ok(Streamed {
        load: i,
        param: p.clone(),
        row,
        col,
        tile,
    })
}

/// A slice's first row and column (0 where the op takes the whole parameter).
pub fn starts(args: &[Operand]) -> (Affine, Affine) {
    let mut idx = args.iter().filter_map(|a| match a {
        Operand::Index(x) => Some(x.clone()),
        _ => None,
    });
    (
        idx.next().unwrap_or_default(),
        idx.next().unwrap_or_default(),
    )
}

/// The innermost loop around op `i`.
fn loop_of(k: &Kernel, i: u32) -> Option<usize> {
    k.loops
        .iter()
        .enumerate()
        .filter(|(_, l)| l.first <= i && i < l.end)
        .min_by_key(|(_, l)| l.end - l.first)
        .map(|(n, _)| n)
}

/// The pipelined form of `k`, its buffers checked against `arch`'s memories.
pub fn plan(k: &Kernel, arch: &Arch) -> Result<CubeLoop, NoForm> {
    let KernelBody::Ops(ops) = &k.body else {
        return Err(NoForm::Op(None, "a C++ body has no AICore form".into()));
    };
    let kernel_no = |why: String| NoForm::Op(None, why);
    let matmuls: Vec<u32> = (0..ops.len() as u32)
        .filter(|&i| ops[i as usize].op == "matmul")
        .collect();
    let &[mm] = matmuls.as_slice() else {
        // At the second matmul, or the first op a GEMM does not have.
        let at = matmuls.get(1).copied().or_else(|| {
            (0..ops.len() as u32).find(|&i| {
                !["load", "store", "alloc", crate::kernel::CARRY]
                    .contains(&ops[i as usize].op.as_str())
            })
        });
        let what = match at {
            Some(i) if matmuls.len() > 1 => format!("a second matmul (%{i})"),
            Some(i) => format!("`{}` (%{i})", ops[i as usize].op),
            None => "no matmul".to_string(),
        };
        return Err(NoForm::Op(
            at,
            format!(
                "kernel `{}` loops over its tensors with {what}; {FORM}",
                k.name
            ),
        ));
    };
    let m = &ops[mm as usize];
    let left = match m.args.first() {
        Some(Operand::Value(v)) => slice(ops, *v, "left")?,
        _ => {
            return Err(NoForm::Op(
                Some(mm),
                "the matmul's left operand is not a loaded slice".into(),
            ));
        }
    };
    let right = match m.args.get(1) {
        Some(Operand::Value(v)) => slice(ops, *v, "right")?,
        _ => {
            return Err(NoForm::Op(
                Some(mm),
                "the matmul's right operand is not a loaded slice".into(),
            ));
        }
    };
    let ValueType::Tile(acc) = m.ty else {
        return Err(NoForm::Op(Some(mm), "the matmul is not a tile".into()));
    };
    let home = loop_of(k, mm);
    // The accumulator: a carry of the matmul's loop, starting from zeros.
    let (k_loop, carry, init) = match m.args.get(2) {
        None => (None, None, None),
        Some(Operand::Value(c)) => {
            let carry = op_at(ops, *c).filter(|o| o.op == crate::kernel::CARRY);
            let (Some(carry), Some(l)) = (carry, home) else {
                return Err(NoForm::Op(
                    Some(mm),
                    "the matmul accumulates into a value it does not carry over its loop; in a loop kernel `wsp emit` writes `acc = pto.matmul(a, b, acc=acc)` over a K loop, `acc` starting from `pto.alloc`".into(),
                ));
            };
            let (Some(Operand::Value(init)), Some(Operand::Value(next))) =
                (carry.args.first(), carry.args.get(1))
            else {
                return Err(NoForm::Op(Some(*c), "a carry of no value".into()));
            };
            if *next != mm || loop_of(k, *c) != Some(l) {
                return Err(NoForm::Op(
                    Some(*c),
                    "the matmul's accumulator is carried over another loop than the matmul's own"
                        .into(),
                ));
            }
            // From zeros, or from the output slice it is stored to (checked with the store).
            if op_at(ops, *init).is_none_or(|o| o.op != "alloc" && o.op != "load") {
                return Err(NoForm::Op(
                    Some(*init),
                    "the accumulator starts from a value, not from `pto.alloc` or a load of the slice it is stored to: `wsp emit` writes a K loop whose accumulator starts from zeros (the first step's TMATMUL)".into(),
                ));
            }
            (Some(l), Some(*c), Some(*init))
        }
        Some(_) => {
            return Err(NoForm::Op(
                Some(mm),
                "the matmul accumulates into a parameter".into(),
            ));
        }
    };
    // The operands' loads are in the matmul's own loop, so each step loads its own.
    for o in [&left, &right] {
        if loop_of(k, o.load) != home {
            return Err(NoForm::Op(
                Some(o.load),
                "this load is outside the matmul's loop; `wsp emit` writes a loop kernel whose matmul operands are loaded in the matmul's own loop".into(),
            ));
        }
    }
    // Every other op: the store of the result after the K loop.
    let mut store = None;
    for (i, op) in ops.iter().enumerate() {
        let i = i as u32;
        if [Some(mm), Some(left.load), Some(right.load), carry, init].contains(&Some(i)) {
            continue;
        }
        if op.op == "store" && op.args.get(1) == Some(&Operand::Value(mm)) && store.is_none() {
            store = Some(i);
            continue;
        }
        return Err(NoForm::Op(
            Some(i),
            format!("`{}` (%{i}) is not part of the GEMM: {FORM}", op.op),
        ));
    }
    let Some(store) = store else {
        return Err(kernel_no(format!(
            "kernel `{}` never stores its matmul's result",
            k.name
        )));
    };
    let so = &ops[store as usize];
    let Some(Operand::Param(out)) = so.args.first() else {
        return Err(NoForm::Op(Some(store), "a store to no parameter".into()));
    };
    if k_loop.is_some_and(|l| {
        let l = &k.loops[l];
        l.first <= store && store < l.end
    }) {
        return Err(NoForm::Op(
            Some(store),
            "the result is stored inside its K loop; store it once, after the loop".into(),
        ));
    }
    let Some(ParamType::Tile(_, out_t)) = k.params.iter().find(|p| &p.name == out).map(|p| &p.ty)
    else {
        return Err(NoForm::Op(
            Some(store),
            "a store to no tile parameter".into(),
        ));
    };
    if out_t.dtype != acc.dtype || acc.dtype != DType::F32 {
        return Err(NoForm::Op(
            Some(store),
            format!(
                "the accumulator is {} and the output {}; `wsp emit` stores an f32 accumulator to an f32 tensor",
                acc.dtype.name(),
                out_t.dtype.name()
            ),
        ));
    }
    let (out_row, out_col) = starts(&so.args);
    // An accumulator loaded from the slice it is stored to is added into it by the store.
    let adds_into_out = match init.and_then(|i| op_at(ops, i).map(|o| (i, o))) {
        Some((i, o)) if o.op == "load" => {
            let same = o.args.first() == so.args.first()
                && starts(&o.args) == (out_row.clone(), out_col.clone())
                && o.ty == ValueType::Tile(acc)
                && !o.args.iter().any(|a| matches!(a, Operand::Number(_)));
            if !same
                || k_loop.is_some_and(|l| {
                    loop_of(k, i) != loop_of(k, store) || {
                        let l = &k.loops[l];
                        l.first <= i && i < l.end
                    }
                })
            {
                return Err(NoForm::Op(
                    Some(i),
                    "the accumulator starts from a load of another slice than the one it is stored to; `wsp emit` writes a K loop whose accumulator starts from zeros or from the slice it is stored to".into(),
                ));
            }
            Some(i)
        }
        _ => None,
    };
    // A store whose slice runs past the tensor's end is a partial tile.
    let extent = |v: &str| k.loops.iter().find(|l| l.var == v).map(|l| l.trips);
    let past = |a: &Affine, len: u64, dim: u64| {
        a.bounds(extent)
            .is_none_or(|(lo, hi)| lo < 0 || hi as u64 + len > dim)
    };
    if past(&out_row, acc.rows, out_t.rows) || past(&out_col, acc.cols, out_t.cols) {
        return Err(NoForm::Op(
            Some(store),
            "this store writes a partial tile, which `wsp emit` does not yet write for an AICore; make the tensor a multiple of the tile".into(),
        ));
    }
    for o in [&left, &right] {
        if let Some(ParamType::Tile(_, t)) =
            k.params.iter().find(|p| p.name == o.param).map(|p| &p.ty)
            && (past(&o.row, o.tile.rows, t.rows) || past(&o.col, o.tile.cols, t.cols))
        {
            return Err(NoForm::Op(
                Some(o.load),
                "this load reads a partial tile, which `wsp emit` does not yet write for an AICore"
                    .into(),
            ));
        }
    }
    let stated = k_loop.and_then(|l| k.loops[l].stages);
    let mut plan = CubeLoop {
        matmul: mm,
        left,
        right,
        k_loop,
        store,
        out: out.clone(),
        out_row,
        out_col,
        acc,
        l1_stages: stated.unwrap_or(DEFAULT_STAGES),
        l0_stages: 1,
        adds_into_out,
        parts: if acc.cols % (2 * crate::buffers::FRACTAL) == 0 {
            2
        } else {
            1
        },
    };
    fit(&mut plan, stated.is_some(), arch)?;
    Ok(plan)
}

/// Chooses the depths in L0 (two where both fit, as L0A/L0B are ping-ponged) and, without a
/// stated one, in L1; checks every memory counting the buffers in flight.
fn fit(p: &mut CubeLoop, stated: bool, arch: &Arch) -> Result<(), NoForm> {
    let chip = &arch.on_chip;
    let [(_, l1), (_, l0a), (_, l0b), (_, l0c)] = p.bytes();
    if !stated {
        while p.l1_stages > 1 && p.l1_stages as u64 * l1 > chip.l1 {
            p.l1_stages -= 1;
        }
    }
    // MTE1 takes an event per operand and L1 stage, and one per L0 stage (two).
    let most = (arch.events - 2) / 2;
    if stated && p.l1_stages > most {
        return Err(NoForm::Op(
            Some(p.matmul),
            format!(
                "`num_stages={}` needs {} event IDs into MTE1 (one per operand and stage, and two for L0); an {} pipe has {}, so at most `num_stages={most}`",
                p.l1_stages,
                2 * p.l1_stages + 2,
                arch.name,
                arch.events
            ),
        ));
    }
    p.l1_stages = p.l1_stages.min(most);
    p.l0_stages = p.l1_stages.min(2);
    while p.l0_stages > 1
        && (p.l0_stages as u64 * l0a > chip.l0a || p.l0_stages as u64 * l0b > chip.l0b)
    {
        p.l0_stages -= 1;
    }
    let checks = [
        (Memory::L1, p.l1_stages as u64 * l1, chip.l1, p.left.load),
        (Memory::L0a, p.l0_stages as u64 * l0a, chip.l0a, p.matmul),
        (Memory::L0b, p.l0_stages as u64 * l0b, chip.l0b, p.matmul),
        (Memory::L0c, l0c, chip.l0c, p.matmul),
    ];
    for (memory, needed, available, op) in checks {
        if needed > available {
            return Err(NoForm::Overflow(Overflow {
                memory,
                needed,
                available,
                op,
            }));
        }
    }
    Ok(())
}

/// Loop variable `var` of `k` as the emitted C++ names it: `i_` and its name, or the loop's
/// position where the name is not ASCII.
pub fn loop_var(k: &Kernel, var: &str) -> String {
    if var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("i_{var}")
    } else {
        let n = k.loops.iter().position(|l| l.var == var).unwrap_or(0);
        format!("i_{n}")
    }
}

/// `a` as a C++ `int64_t` expression over the loop variables.
pub fn affine_cxx(k: &Kernel, a: &Affine) -> String {
    let mut out = String::new();
    for (v, c) in &a.terms {
        if !out.is_empty() {
            out.push_str(" + ");
        }
        if *c == 1 {
            out.push_str(&loop_var(k, v));
        } else {
            out.push_str(&format!("{c} * {}", loop_var(k, v)));
        }
    }
    if a.constant != 0 || out.is_empty() {
        if !out.is_empty() {
            out.push_str(" + ");
        }
        out.push_str(&a.constant.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Param;
    use crate::plan::Direction;

    fn tile(name: &str, dir: Direction, rows: u64, cols: u64, dtype: DType) -> Param {
        Param {
            name: name.into(),
            ty: ParamType::Tile(dir, TileType { rows, cols, dtype }),
        }
    }

    /// `c = a @ b` for a 64x128 and 128x64, f16 into f32.
    fn one_tile() -> Kernel {
        let acc = TileType {
            rows: 64,
            cols: 64,
            dtype: DType::F32,
        };
        Kernel {
            name: "mm".into(),
            params: vec![
                tile("a", Direction::In, 64, 128, DType::F16),
                tile("b", Direction::In, 128, 64, DType::F16),
                tile("c", Direction::Out, 64, 64, DType::F32),
            ],
            body: KernelBody::Ops(vec![
                Op {
                    op: "matmul".into(),
                    args: vec![Operand::Param("a".into()), Operand::Param("b".into())],
                    ty: ValueType::Tile(acc),
                },
                Op {
                    op: "store".into(),
                    args: vec![Operand::Param("c".into()), Operand::Value(0)],
                    ty: ValueType::Unit,
                },
            ]),
            loops: Vec::new(),
        }
    }

    #[test]
    fn a_one_tile_matmul_is_a_gemm_over_k_steps() {
        let k = one_tile();
        let looped = k_steps(&k, 4).unwrap();
        let p = plan(&looped, &crate::arch::A2A3).unwrap();
        assert_eq!(looped.loops[p.k_loop.unwrap()].trips, 4);
        assert_eq!((p.left.tile.cols, p.right.tile.rows), (32, 32));
        assert_eq!(p.left.col, Affine::var("k").scale(32).unwrap());
        assert_eq!(p.right.row, Affine::var("k").scale(32).unwrap());
        assert_eq!((p.store, p.out.as_str()), (5, "c"));
        // Steps of 16 (whole fractals) at most; a kernel with more than the product is not
        // this form.
        assert!(k_steps(&k, 8).is_some());
        assert!(k_steps(&k, 16).is_none());
        let mut more = k.clone();
        if let KernelBody::Ops(ops) = &mut more.body {
            ops.insert(1, ops[0].clone());
        }
        assert!(k_steps(&more, 2).is_none());
    }
}
