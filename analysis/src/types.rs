//! The types of kernel-body values.

use std::fmt;

pub use wsp_ir::{DType, TileType, shape_text};

/// The type of a value in a kernel body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum KernelType {
    Tile(TileType),
    /// A `Scalar[dtype]` parameter or `pto.constant(v, dtype)`: broadcasts against any tile.
    Scalar(DType),
    /// A number literal: broadcasts and takes the other operand's dtype.
    Number,
}

impl fmt::Display for KernelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelType::Tile(t) => write!(f, "Tile{t}"),
            KernelType::Scalar(d) => write!(f, "Scalar {d}"),
            KernelType::Number => f.write_str("number"),
        }
    }
}
