//! Which PTO-ISA instructions compute each op of the op table (`crate::ops`) on an AICore. One
//! row per op name; shapes, dtypes and semantics stay in the op table. Codegen
//! (`aicore/src/lib.rs`) emits the rows, the analyzer reports an op without an AICore
//! form (WSP507) for `ascend_npu`, and `crate::buffers::scratch` sizes the tmp tiles the
//! sequences use.

/// How an op becomes PTO-ISA instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// `INSTR(dst, src)`.
    Unary(&'static str),
    /// Elementwise over two operands: both tiles of one shape, a tile and a scalar, or the
    /// full tile with an `[M,1]` (`row`) or `[1,N]` (`col`) operand expanded on the fly.
    /// Other broadcasts expand the small operand with `TROWEXPAND`/`TCOLEXPAND` first.
    Binary {
        tiles: &'static str,
        scalar: &'static str,
        row: &'static str,
        col: &'static str,
    },
    /// `row`: `([M,N], [M,1])` with the row-expand instruction; else `([M,N], [1,N])` with the
    /// column-expand one.
    Expand { row: bool, instr: &'static str },
    /// `INSTR(dst, src, tmp)` along rows, then `TMULS` by `1/N` for a mean.
    RowReduce { instr: &'static str, mean: bool },
    /// `INSTR(dst, src)` down columns.
    ColReduce(&'static str),
    /// Vector instructions in a fixed order over the op's result, its tile operand, scratch
    /// tiles and constants: the emitter writes them as they stand, the buffer planner places
    /// `tmps`, the clock costs `steps`.
    Steps {
        steps: &'static [Step],
        tmps: &'static [Tmp],
    },
    /// A sequence with code of its own in the emitter (data movement, the cube, bit
    /// tricks); the instructions it uses, in order.
    Sequence(&'static [&'static str]),
    /// No AICore form; the reason. A kernel using it is reported, not emitted.
    Unsupported(&'static str),
}

/// One instruction of a [`Lowering::Steps`] row: `INSTR(operands...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub instr: &'static str,
    pub operands: &'static [Slot],
}

/// An operand of a [`Step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The op's result tile.
    Dst,
    /// The op's tile operand.
    X,
    /// Scratch tile `n` of the row's `tmps`.
    Tmp(u8),
    /// A constant, a C++ expression in the result's element type.
    Scalar(&'static str),
}

/// The shape of a scratch tile of a [`Lowering::Steps`] row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tmp {
    /// The result's shape.
    Full,
    /// One column of the result's rows, `[M,1]`.
    Column,
}

const fn step(instr: &'static str, operands: &'static [Slot]) -> Step {
    Step { instr, operands }
}

use Slot::{Dst, Scalar, X};
const T0: Slot = Slot::Tmp(0);
const T1: Slot = Slot::Tmp(1);

/// `t = 2 / (e^t + 1)` negated plus one is `tanh(t / 2)`: these leave `-2 / (e^t + 1)` in
/// `t` (`T0`); the row adds 1 (tanh) or 2 (1 + tanh). The quotient goes through `T1`: A2/A3's
/// scalar ÷ tile broadcasts the scalar into its destination before it reads the divisor.
macro_rules! tanh_tail {
    () => {
        [
            step("TEXP", &[T0, T0]),
            step("TADDS", &[T0, T0, Scalar("1")]),
            step("TDIVS", &[T1, Scalar("2"), T0]),
            step("TMULS", &[T0, T1, Scalar("-1")]),
        ]
    };
}

const TANH: [Step; 6] = {
    let tail = tanh_tail!();
    [
        step("TMULS", &[T0, X, Scalar("2")]),
        tail[0],
        tail[1],
        tail[2],
        tail[3],
        step("TADDS", &[Dst, T0, Scalar("1")]),
    ]
};

const GELU: [Step; 12] = {
    let tail = tanh_tail!();
    [
        step("TMUL", &[T0, X, X]),
        step("TMUL", &[T0, T0, X]),
        step("TMULS", &[T0, T0, Scalar("0.044715f")]),
        step("TADD", &[T0, T0, X]),
        step("TMULS", &[T0, T0, Scalar("2 * 0.7978845608f")]),
        tail[0],
        tail[1],
        tail[2],
        tail[3],
        // 1 + tanh
        step("TADDS", &[T0, T0, Scalar("2")]),
        step("TMULS", &[Dst, X, Scalar("0.5f")]),
        step("TMUL", &[Dst, Dst, T0]),
    ]
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The op's name in `wsp_ir::ops`.
    pub op: &'static str,
    pub lowering: Lowering,
}

const fn row(op: &'static str, lowering: Lowering) -> Row {
    Row { op, lowering }
}

const fn binary(
    tiles: &'static str,
    scalar: &'static str,
    row: &'static str,
    col: &'static str,
) -> Lowering {
    Lowering::Binary {
        tiles,
        scalar,
        row,
        col,
    }
}

use Lowering::{ColReduce, Expand, RowReduce, Sequence, Steps, Unary, Unsupported};

pub const TABLE: &[Row] = &[
    // GM → UB (MTE2), or GM → L1 when only the cube reads the tile.
    row("load", Sequence(&["TLOAD"])),
    // UB → GM (MTE3), or L0C → GM (FIX) for a matmul result stored as is.
    row("store", Sequence(&["TSTORE"])),
    row(
        "add",
        binary("TADD", "TADDS", "TROWEXPANDADD", "TCOLEXPANDADD"),
    ),
    row(
        "sub",
        binary("TSUB", "TSUBS", "TROWEXPANDSUB", "TCOLEXPANDSUB"),
    ),
    row(
        "mul",
        binary("TMUL", "TMULS", "TROWEXPANDMUL", "TCOLEXPANDMUL"),
    ),
    row(
        "div",
        binary("TDIV", "TDIVS", "TROWEXPANDDIV", "TCOLEXPANDDIV"),
    ),
    row(
        "maximum",
        binary("TMAX", "TMAXS", "TROWEXPANDMAX", "TCOLEXPANDMAX"),
    ),
    row(
        "minimum",
        binary("TMIN", "TMINS", "TROWEXPANDMIN", "TCOLEXPANDMIN"),
    ),
    row("exp", Unary("TEXP")),
    row("log", Unary("TLOG")),
    row("sqrt", Unary("TSQRT")),
    row("rsqrt", Unary("TRSQRT")),
    // tanh(x) = 1 - 2 / (e^2x + 1)
    row(
        "tanh",
        Steps {
            steps: &TANH,
            tmps: &[Tmp::Full, Tmp::Full],
        },
    ),
    // 1 / (1 + e^-x): `1 + e^-x` apart from the result, which TRECIP must not read.
    row(
        "sigmoid",
        Steps {
            steps: &[
                step("TMULS", &[T0, X, Scalar("-1")]),
                step("TEXP", &[T0, T0]),
                step("TADDS", &[T0, T0, Scalar("1")]),
                step("TRECIP", &[Dst, T0]),
            ],
            tmps: &[Tmp::Full],
        },
    ),
    row(
        "sin",
        Unsupported("PTO-ISA has no sine instruction on the vector unit"),
    ),
    row(
        "cos",
        Unsupported("PTO-ISA has no cosine instruction on the vector unit"),
    ),
    row("relu", Unary("TRELU")),
    // 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))), tanh as above.
    row(
        "gelu",
        Steps {
            steps: &GELU,
            tmps: &[Tmp::Full, Tmp::Full],
        },
    ),
    // x / (1 + e^-x): `1 + e^-x` built in the result, which the elementwise TDIV may
    // overwrite.
    row(
        "silu",
        Steps {
            steps: &[
                step("TMULS", &[Dst, X, Scalar("-1")]),
                step("TEXP", &[Dst, Dst]),
                step("TADDS", &[Dst, Dst, Scalar("1")]),
                step("TDIV", &[Dst, X, Dst]),
            ],
            tmps: &[],
        },
    ),
    row("neg", Unary("TNEG")),
    row("abs", Unary("TABS")),
    // Row-wise: the row max into the [M,1] scratch (the reductions take a full-shape one),
    // subtracted, exponentiated, summed, divided.
    row(
        "softmax",
        Steps {
            steps: &[
                step("TROWMAX", &[T1, X, T0]),
                step("TROWEXPANDSUB", &[Dst, X, T1]),
                step("TEXP", &[Dst, Dst]),
                step("TROWSUM", &[T1, Dst, T0]),
                step("TROWEXPANDDIV", &[Dst, Dst, T1]),
            ],
            tmps: &[Tmp::Full, Tmp::Column],
        },
    ),
    row(
        "rowsum",
        RowReduce {
            instr: "TROWSUM",
            mean: false,
        },
    ),
    row(
        "rowmax",
        RowReduce {
            instr: "TROWMAX",
            mean: false,
        },
    ),
    row(
        "rowmean",
        RowReduce {
            instr: "TROWSUM",
            mean: true,
        },
    ),
    row("colsum", ColReduce("TCOLSUM")),
    row("colmax", ColReduce("TCOLMAX")),
    row(
        "rowmul",
        Expand {
            row: true,
            instr: "TROWEXPANDMUL",
        },
    ),
    row(
        "rowadd",
        Expand {
            row: true,
            instr: "TROWEXPANDADD",
        },
    ),
    row(
        "colmul",
        Expand {
            row: false,
            instr: "TCOLEXPANDMUL",
        },
    ),
    row(
        "coladd",
        Expand {
            row: false,
            instr: "TCOLEXPANDADD",
        },
    ),
    // [M,1] → TROWEXPAND, [1,N] → TCOLEXPAND, [1,1] → both.
    row("broadcast", Sequence(&["TROWEXPAND", "TCOLEXPAND"])),
    // Operands GM → L1 (TLOAD) or UB → L1 (TMOV), L1 → L0A/L0B (TMOV), the product into L0C
    // with fp32 accumulation; `acc` is added on the vector unit after L0C → UB.
    row(
        "matmul",
        Sequence(&["TLOAD", "TMOV", "TMOV", "TMATMUL", "TMOV", "TADD"]),
    ),
    row("transpose", Sequence(&["TTRANS"])),
    // A scalar: an immediate operand of the `*S` instructions.
    row("constant", Sequence(&[])),
    // Round to nearest, ties to even, as the CPU kernels' conversions.
    row("cast", Sequence(&["TCVT"])),
    row("alloc", Sequence(&["TEXPANDS"])),
    // TGATHER by mask P0101 (even columns) or P1010 (odd ones), which packs the result's
    // rows: they must be whole 32-byte blocks (`form_for_shapes`).
    row("slice_even", Sequence(&["TGATHER"])),
    row("slice_odd", Sequence(&["TGATHER"])),
    // TSCATTER a into the even columns and b into the odd ones of a tmp tile (each zero-fills
    // the rest), then OR their bits: exact for every value. The operands' rows must be whole
    // 32-byte blocks of 2- or 4-byte elements (`form_for_shapes`).
    row("interleave", Sequence(&["TSCATTER", "TSCATTER", "TOR"])),
    // TCI from 0, ascending, on the scalar pipe.
    row("iota_u32", Sequence(&["TCI"])),
    // (score, index) pairs, the index's u32 bits in the f32 slot after its score.
    row("tsort32", Sequence(&["TSORT32"])),
    // The odd slots of the first k pairs (TGATHER P1010): the indices' bits, read as I32.
    // The k indices must fill whole 32-byte blocks (`form_for_shapes`).
    row("extract_topk_indices", Sequence(&["TGATHER"])),
];

pub fn lookup(op: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.op == op)
}

/// Why op `i` of `ops` has no AICore form, if it has none: its row says so, or its shapes do
/// not fit its instructions. `tile_of` gives an operand's tile. The emitter refuses such an op
/// and the analyzer reports it (WSP507), from this one function.
pub fn no_form(
    op: &crate::kernel::Op,
    tile_of: impl Fn(&crate::kernel::Operand) -> Option<crate::TileType>,
) -> Option<String> {
    let row = lookup(&op.op)?;
    if let Lowering::Unsupported(why) = row.lowering {
        return Some(why.to_string());
    }
    if let Some(i) = row
        .instructions()
        .into_iter()
        .find(|i| crate::arch::instruction(i).is_none_or(|r| !r.a2a3))
    {
        return Some(format!("its instruction `{i}` has no A2/A3 form"));
    }
    let out = match op.ty {
        crate::kernel::ValueType::Tile(t) => t,
        _ => return None,
    };
    let arg = |n: usize| op.args.get(n).and_then(&tile_of);
    let bytes = |cols: u64, t: crate::TileType| cols * t.dtype.size_bytes() as u64;
    match op.op.as_str() {
        "slice_even" | "slice_odd" if !bytes(out.cols, out).is_multiple_of(32) => Some(format!(
            "TGATHER packs each result row, so a row of {} {} elements must fill whole 32-byte blocks",
            out.cols, out.dtype
        )),
        "slice_even" | "slice_odd" if !matches!(out.dtype.size_bytes(), 2 | 4) => Some(format!(
            "TGATHER takes 2- or 4-byte elements, not {}",
            out.dtype
        )),
        "extract_topk_indices" if !bytes(out.cols, out).is_multiple_of(32) => Some(format!(
            "TGATHER packs the indices, so k = {} of them ({}) must fill whole 32-byte blocks: k a multiple of {}",
            out.cols,
            out.dtype,
            32 / out.dtype.size_bytes()
        )),
        "interleave" => {
            let a = arg(0)?;
            if !matches!(a.dtype.size_bytes(), 2 | 4) {
                Some(format!(
                    "TSCATTER takes 2- or 4-byte elements, not {}",
                    a.dtype
                ))
            } else if !bytes(a.cols, a).is_multiple_of(32) {
                Some(format!(
                    "TSCATTER reads each operand row whole, so a row of {} {} elements must fill whole 32-byte blocks",
                    a.cols, a.dtype
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether op `op` computes on bf16 tiles with an instruction that takes no bf16 on A2/A3
/// (the instruction table's `bf16`: only data movement and conversion do; the cube multiplies
/// bf16). `crate::widen` computes such an op in f32 between conversions.
pub fn computes_bf16(
    op: &crate::kernel::Op,
    tile_of: impl Fn(&crate::kernel::Operand) -> Option<crate::TileType>,
) -> bool {
    let Some(row) = lookup(&op.op) else {
        return false;
    };
    let tiles = match op.ty {
        crate::kernel::ValueType::Tile(t) => Some(t),
        _ => None,
    };
    let bf16 = tiles
        .into_iter()
        .chain(op.args.iter().filter_map(&tile_of))
        .any(|t| t.dtype == crate::DType::BF16);
    let moves_only = row
        .instructions()
        .iter()
        .all(|i| crate::arch::instruction(i).is_some_and(|r| r.bf16));
    bf16 && op.op != "matmul" && !moves_only
}

impl Row {
    /// The instructions the row's lowering names.
    pub fn instructions(&self) -> Vec<&'static str> {
        match self.lowering {
            Unary(i) | ColReduce(i) => vec![i],
            Lowering::Binary {
                tiles,
                scalar,
                row,
                col,
            } => vec![tiles, scalar, row, col],
            Expand { instr, .. } => vec![instr],
            RowReduce { instr, mean } => {
                if mean {
                    vec![instr, "TMULS"]
                } else {
                    vec![instr]
                }
            }
            Lowering::Steps { steps, .. } => steps.iter().map(|s| s.instr).collect(),
            Sequence(seq) => seq.to_vec(),
            Unsupported(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_has_a_row() {
        for op in crate::ops::all() {
            assert!(
                lookup(op.name).is_some(),
                "op {} has no row in the instruction table",
                op.name
            );
        }
        for r in TABLE {
            assert!(
                crate::ops::lookup(r.op).is_some(),
                "instruction row {} names no op",
                r.op
            );
        }
        // Every instruction a row names has a row of the architecture's instruction table.
        for r in TABLE {
            for i in r.instructions() {
                assert!(
                    crate::arch::instruction(i).is_some(),
                    "`{}` lowers to `{i}`, which the instruction table lacks",
                    r.op
                );
            }
        }
        let mut names: Vec<&str> = TABLE.iter().map(|r| r.op).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TABLE.len(), "an op has two rows");
    }

    #[test]
    fn bf16_math_is_found_where_the_instructions_take_no_bf16() {
        use crate::DType::{BF16, F32};
        use crate::kernel::{Op, Operand, ValueType};
        let x = crate::TileType::new(16, 16, BF16);
        let tile_of = |o: &Operand| match o {
            Operand::Param(_) => Some(x),
            _ => None,
        };
        let op = |name: &str, ty| Op {
            op: name.into(),
            args: vec![Operand::Param("x".into()), Operand::Param("x".into())],
            ty: ValueType::Tile(ty),
        };
        assert!(computes_bf16(&op("exp", x), tile_of));
        assert!(computes_bf16(&op("add", x), tile_of));
        assert!(computes_bf16(&op("rowsum", x.with_shape([16, 1])), tile_of));
        for (name, ty) in [
            ("cast", x.with_dtype(F32)),
            ("matmul", x.with_dtype(F32)),
            ("slice_even", x),
            ("transpose", x),
        ] {
            assert!(!computes_bf16(&op(name, ty), tile_of), "{name}");
        }
    }
}
