//! Row blocks: a vector kernel whose every op works row by row runs as `n` blocks of its rows,
//! alternating between two sets of UB buffers, so that one block's loads (MTE2) and stores
//! (MTE3) overlap another's vector work. Each block is the kernel itself over `rows / n` rows
//! (its sub-kernel, planned in half of UB): its instructions are ordered as the whole kernel's
//! are, on event IDs of its own buffer set, and a block waits for the block two before it, the
//! last user of its buffers, to finish.
//!
//! More blocks overlap more but pay each instruction's fixed cost more often; the emitter
//! keeps whichever count the caller's cost of the emitted text finds fastest
//! ([`crate::kernel_source_costed`]).

use wsp_ir::buffers;
use wsp_ir::instructions::{self, Lowering};
use wsp_ir::kernel::{KernelBody, Op, Operand, ParamType, ValueType};
use wsp_ir::plan::Direction;
use wsp_ir::{Kernel, TileType};

/// Block counts tried, fewest first.
const COUNTS: [u64; 3] = [2, 4, 8];

/// The fewest rows a block has.
const MIN_ROWS: u64 = 8;

/// The rows of `k` if it can run as row blocks: each op's result has them, each op works row
/// by row (elementwise, along rows, or with a `[1,N]` parameter read whole by every block),
/// and it loads and stores whole tiles.
pub(crate) fn rows(k: &Kernel) -> Option<u64> {
    let KernelBody::Ops(ops) = &k.body else {
        return None;
    };
    if k.iterates() || !ops.iter().any(|o| o.op == "store") {
        return None;
    }
    let m = most_rows(k, ops)?;
    if m < 2 * MIN_ROWS {
        return None;
    }
    let params_ok = k.params.iter().all(|p| match p.ty {
        ParamType::Tile(d, t) => t.rows == m || (t.rows == 1 && d == Direction::In),
        _ => true,
    });
    let ops_ok = ops.iter().all(|o| row_wise(k, ops, o, m));
    (params_ok && ops_ok).then_some(m)
}

fn row_wise(k: &Kernel, ops: &[Op], o: &Op, m: u64) -> bool {
    let tile = |a: &Operand| buffers::tile_of(k, ops, a).is_some();
    let result = match o.ty {
        ValueType::Tile(t) => t.rows == m,
        ValueType::Unit => o.op == "store",
        // Each block computes a scalar of scalars again; one of a tile would be of its rows.
        ValueType::Scalar(_) => return !o.args.iter().any(tile),
    };
    let shapes = o.args.iter().all(|a| match a {
        Operand::Shape(r, _) => *r == m,
        Operand::Index(_) => false,
        _ => true,
    });
    let lowering = match instructions::lookup(&o.op).map(|r| r.lowering) {
        Some(
            Lowering::Unary(_)
            | Lowering::Binary { .. }
            | Lowering::Expand { .. }
            | Lowering::RowReduce { .. }
            | Lowering::Steps { .. },
        ) => true,
        _ => matches!(
            o.op.as_str(),
            "load" | "store" | "cast" | "alloc" | "constant"
        ),
    };
    result && shapes && lowering
}

/// The most rows any tile of `k` has, its results' or its parameters'.
pub(crate) fn most_rows(k: &Kernel, ops: &[Op]) -> Option<u64> {
    let results = ops.iter().filter_map(|o| match o.ty {
        ValueType::Tile(t) => Some(t.rows),
        _ => None,
    });
    let params = k.params.iter().filter_map(|p| match p.ty {
        ParamType::Tile(_, t) => Some(t.rows),
        _ => None,
    });
    results.chain(params).max()
}

/// The block counts to try for `m` rows, fewest first: each block has the same rows, at
/// least [`MIN_ROWS`].
pub(crate) fn counts(m: u64) -> impl Iterator<Item = u64> {
    COUNTS
        .into_iter()
        .filter(move |n| m.is_multiple_of(*n) && m / n >= MIN_ROWS)
}

/// `k` over `rows` of its `m` rows: every tile of `m` rows has `rows`.
pub(crate) fn sub_kernel(k: &Kernel, m: u64, rows: u64) -> Kernel {
    let fit = |t: TileType| {
        if t.rows == m {
            TileType { rows, ..t }
        } else {
            t
        }
    };
    let mut sub = k.clone();
    for p in &mut sub.params {
        if let ParamType::Tile(d, t) = p.ty {
            p.ty = ParamType::Tile(d, fit(t));
        }
    }
    if let KernelBody::Ops(ops) = &mut sub.body {
        for o in ops {
            if let ValueType::Tile(t) = o.ty {
                o.ty = ValueType::Tile(fit(t));
            }
            for a in &mut o.args {
                if let Operand::Shape(r, _) = a
                    && *r == m
                {
                    *r = rows;
                }
            }
        }
    }
    sub
}
