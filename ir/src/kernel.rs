//! Kernels: parameters and a body of SSA ops on tiles (or a custom C++ body), with static
//! loops over ranges of those ops.

use serde::{Deserialize, Serialize};

use crate::affine::Affine;
use crate::plan::{Direction, F64};
use crate::types::{DType, TileType};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub body: KernelBody,
    /// The body's loops, outer before inner; ranges of ops nest or are disjoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<Loop>,
}

/// `for var in range(trips)` over ops `first..end` of the body: they run once per iteration,
/// in order, with `var` = 0, 1, ..., trips - 1 (a `range(start, stop, step)` is written over
/// this variable, `start + step * var`). A value defined inside is, after the loop, its last
/// iteration's (`trips` is at least 1).
///
/// A value carried from one iteration to the next is a `carry` op at the loop's start:
/// `%c = carry(init, next)` is `init` in the first iteration and, in each later one, what
/// op `next` (inside the loop) computed in the iteration before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loop {
    pub var: String,
    pub trips: u64,
    pub first: u32,
    pub end: u32,
    /// The pipelining depth the user stated (`pto.range(n, num_stages=2)`); `None`: the
    /// compiler chooses.
    pub stages: Option<u32>,
}

/// The op that carries a value across a loop's iterations (see [`Loop`]).
pub const CARRY: &str = "carry";

impl Kernel {
    /// Whether the body loops or reads or writes slices of its tile parameters: a kernel over
    /// tensors rather than over one tile each.
    pub fn iterates(&self) -> bool {
        !self.loops.is_empty()
            || matches!(&self.body, KernelBody::Ops(ops)
                if ops.iter().any(|o| o.args.iter().any(|a| matches!(a, Operand::Index(_)))))
    }

    /// How many times op `i` runs per task: the product of the trips of the loops around it.
    pub fn runs(&self, i: u32) -> u64 {
        self.loops
            .iter()
            .filter(|l| l.first <= i && i < l.end)
            .fold(1u64, |n, l| n.saturating_mul(l.trips))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamType {
    /// `In[Tile[M, N, dtype]]`, ...
    Tile(Direction, TileType),
    /// `Scalar[dtype] = default`
    Scalar(DType, Option<F64>),
    /// `Constexpr[int] = default`
    Constexpr(Option<F64>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KernelBody {
    /// Op `i` defines value `%i`.
    Ops(Vec<Op>),
    /// `@kernel(cpp_src=...)`: the C++ body and its includes.
    Cpp {
        code: String,
        includes: Vec<String>,
        /// The 1-based line of the `.wsp` file where the string's first line is, for mapping
        /// compiler errors back (WSP601).
        first_line: u32,
    },
}

/// `%i = op(args) : ty`. The op is a row of the analyzer's op table, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    pub op: String,
    pub args: Vec<Operand>,
    pub ty: ValueType,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// `%i`
    Value(u32),
    /// A kernel parameter, by name.
    Param(String),
    Number(F64),
    DType(DType),
    Shape(u64, u64),
    /// The first row or column of a slice of a tile parameter, over the loops' variables:
    /// `load(a, Index(r), Index(c))` reads the op's tile from row `r`, column `c` of `a`;
    /// `store(c, v, Index(r), Index(c))` writes there.
    Index(Affine),
}

/// What an op produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueType {
    Tile(TileType),
    /// Broadcasts against any tile.
    Scalar(DType),
    /// `store`: nothing.
    Unit,
}
