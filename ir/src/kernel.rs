//! Kernels: parameters and a body of SSA ops on tiles (or a custom C++ body).

use serde::{Deserialize, Serialize};

use crate::plan::{Direction, F64};
use crate::types::{DType, TileType};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub body: KernelBody,
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
