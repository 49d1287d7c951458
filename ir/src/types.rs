//! Element types and tile types.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! dtypes {
    ($($variant:ident = $name:literal, $bytes:literal, $float:literal;)*) => {
        /// An element type (`DType.F16`, ...).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum DType {
            $($variant,)*
        }

        impl DType {
            pub const ALL: &'static [DType] = &[$(DType::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(DType::$variant => $name,)*
                }
            }

            pub fn size_bytes(self) -> u32 {
                match self {
                    $(DType::$variant => $bytes,)*
                }
            }

            pub fn is_float(self) -> bool {
                match self {
                    $(DType::$variant => $float,)*
                }
            }
        }
    };
}

dtypes! {
    F16 = "F16", 2, true;
    BF16 = "BF16", 2, true;
    F32 = "F32", 4, true;
    F64 = "F64", 8, true;
    I8 = "I8", 1, false;
    I16 = "I16", 2, false;
    I32 = "I32", 4, false;
    I64 = "I64", 8, false;
    U8 = "U8", 1, false;
    U16 = "U16", 2, false;
    U32 = "U32", 4, false;
    U64 = "U64", 8, false;
}

impl DType {
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.iter().copied().find(|d| d.name() == name)
    }

    pub fn is_integer(self) -> bool {
        !self.is_float()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A 2-D tile: `Tile[M, N, dtype]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileType {
    pub rows: u64,
    pub cols: u64,
    pub dtype: DType,
}

impl TileType {
    pub fn new(rows: u64, cols: u64, dtype: DType) -> TileType {
        TileType { rows, cols, dtype }
    }

    pub fn shape(self) -> [u64; 2] {
        [self.rows, self.cols]
    }

    pub fn elems(self) -> u64 {
        self.rows * self.cols
    }

    pub fn bytes(self) -> u64 {
        self.elems() * self.dtype.size_bytes() as u64
    }

    pub fn with_shape(self, [rows, cols]: [u64; 2]) -> TileType {
        TileType { rows, cols, ..self }
    }

    pub fn with_dtype(self, dtype: DType) -> TileType {
        TileType { dtype, ..self }
    }
}

impl fmt::Display for TileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{},{}] {}", self.rows, self.cols, self.dtype)
    }
}

/// `[4,2,16,128]`
pub fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(","))
}
