//! The op table: every `pto.*` op once, with its parameters, shape rule, dtype rule and doc text.
//! The kernel type checker reads it now; hover, completion and codegen read the same rows.

/// What an op parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpParamKind {
    /// A tile value (or a scalar/number where the shape rule broadcasts).
    Tile,
    /// A tile parameter of the kernel itself (`load`'s source, `store`'s destination).
    Param,
    /// An element type (`F32`, `DType.F16`).
    DType,
    /// A `(M, N)` tuple of integer constants.
    Shape,
    /// A number literal.
    Number,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpParam {
    pub name: &'static str,
    pub kind: OpParamKind,
    /// Whether the parameter may be left out (`acc=None`).
    pub optional: bool,
}

/// How the result's shape follows from the arguments' (M, N are the first tile's dimensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeRule {
    /// The first argument's shape.
    Same,
    /// NumPy broadcasting of two operands ([M,N] with [M,N], [M,1], [1,N], [1,1] or a scalar).
    Broadcast,
    /// [M,N] → [M,1]
    RowReduce,
    /// [M,N] → [1,N]
    ColReduce,
    /// ([M,N], [M,1]) → [M,N]
    RowBroadcast,
    /// ([M,N], [1,N]) → [M,N]
    ColBroadcast,
    /// [M,1], [1,N] or [1,1] → the shape argument.
    BroadcastTo,
    /// [M,K] × [K,N] → [M,N], with an optional [M,N] accumulator.
    Matmul,
    /// [M,N] → [N,M]
    Transpose,
    /// [M,N] → [M,N/2], N even.
    HalfCols,
    /// ([M,N], [M,N]) → [M,2N]
    Interleave,
    /// A scalar that broadcasts.
    Scalar,
    /// The shape argument.
    Alloc,
    /// `store(dst, v)`: no value; v must have dst's type.
    Store,
}

/// How the result's dtype follows from the arguments'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeRule {
    /// The first argument's dtype; every tile argument has the same.
    Same,
    /// As `Same`, and only float dtypes.
    Float,
    /// F16/BF16/F32 inputs give F32; the inputs share a dtype.
    MatmulAccumulate,
    /// The dtype argument.
    FromArgument,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub name: &'static str,
    pub params: &'static [OpParam],
    pub shape: ShapeRule,
    pub dtype: DtypeRule,
    pub doc: &'static str,
}

const fn p(name: &'static str, kind: OpParamKind) -> OpParam {
    OpParam {
        name,
        kind,
        optional: false,
    }
}

const X: &[OpParam] = &[p("x", OpParamKind::Tile)];
const AB: &[OpParam] = &[p("a", OpParamKind::Tile), p("b", OpParamKind::Tile)];

macro_rules! elementwise {
    ($($name:literal: $doc:literal;)*) => {
        [$(Op { name: $name, params: X, shape: ShapeRule::Same, dtype: DtypeRule::Float, doc: $doc },)*]
    };
}

macro_rules! binary {
    ($($name:literal: $doc:literal;)*) => {
        [$(Op { name: $name, params: AB, shape: ShapeRule::Broadcast, dtype: DtypeRule::Same, doc: $doc },)*]
    };
}

const BINARY: [Op; 6] = binary! {
    "add": "Elementwise a + b, broadcasting as NumPy does.";
    "sub": "Elementwise a - b, broadcasting as NumPy does.";
    "mul": "Elementwise a * b, broadcasting as NumPy does.";
    "div": "Elementwise a / b, broadcasting as NumPy does.";
    "maximum": "Elementwise maximum of a and b, broadcasting as NumPy does.";
    "minimum": "Elementwise minimum of a and b, broadcasting as NumPy does.";
};

const UNARY: [Op; 14] = elementwise! {
    "exp": "Elementwise e^x.";
    "log": "Elementwise natural logarithm.";
    "sqrt": "Elementwise square root.";
    "rsqrt": "Elementwise 1 / sqrt(x).";
    "tanh": "Elementwise hyperbolic tangent.";
    "sigmoid": "Elementwise 1 / (1 + e^-x).";
    "sin": "Elementwise sine.";
    "cos": "Elementwise cosine.";
    "relu": "Elementwise max(x, 0).";
    "gelu": "Elementwise GELU (tanh approximation).";
    "silu": "Elementwise x * sigmoid(x).";
    "neg": "Elementwise -x.";
    "abs": "Elementwise |x|.";
    "softmax": "Row-wise softmax: exp(x - rowmax(x)) / rowsum(...).";
};

const OTHER: [Op; 17] = [
    Op {
        name: "load",
        params: &[p("x", OpParamKind::Param)],
        shape: ShapeRule::Same,
        dtype: DtypeRule::Same,
        doc: "The tile of an `In` or `InOut` parameter.",
    },
    Op {
        name: "store",
        params: &[p("dst", OpParamKind::Param), p("v", OpParamKind::Tile)],
        shape: ShapeRule::Store,
        dtype: DtypeRule::Same,
        doc: "Writes v to an `Out` or `InOut` parameter; v has dst's shape and dtype.",
    },
    Op {
        name: "rowsum",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Same,
        doc: "Sum of each row: [M,N] → [M,1].",
    },
    Op {
        name: "rowmax",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Same,
        doc: "Maximum of each row: [M,N] → [M,1].",
    },
    Op {
        name: "rowmean",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Float,
        doc: "Mean of each row: [M,N] → [M,1].",
    },
    Op {
        name: "colsum",
        params: X,
        shape: ShapeRule::ColReduce,
        dtype: DtypeRule::Same,
        doc: "Sum of each column: [M,N] → [1,N].",
    },
    Op {
        name: "colmax",
        params: X,
        shape: ShapeRule::ColReduce,
        dtype: DtypeRule::Same,
        doc: "Maximum of each column: [M,N] → [1,N].",
    },
    Op {
        name: "rowmul",
        params: &[p("x", OpParamKind::Tile), p("r", OpParamKind::Tile)],
        shape: ShapeRule::RowBroadcast,
        dtype: DtypeRule::Same,
        doc: "Multiplies each row of x by the matching element of r: ([M,N], [M,1]) → [M,N].",
    },
    Op {
        name: "rowadd",
        params: &[p("x", OpParamKind::Tile), p("r", OpParamKind::Tile)],
        shape: ShapeRule::RowBroadcast,
        dtype: DtypeRule::Same,
        doc: "Adds the matching element of r to each row of x: ([M,N], [M,1]) → [M,N].",
    },
    Op {
        name: "colmul",
        params: &[p("x", OpParamKind::Tile), p("c", OpParamKind::Tile)],
        shape: ShapeRule::ColBroadcast,
        dtype: DtypeRule::Same,
        doc: "Multiplies each column of x by the matching element of c: ([M,N], [1,N]) → [M,N].",
    },
    Op {
        name: "coladd",
        params: &[p("x", OpParamKind::Tile), p("c", OpParamKind::Tile)],
        shape: ShapeRule::ColBroadcast,
        dtype: DtypeRule::Same,
        doc: "Adds the matching element of c to each column of x: ([M,N], [1,N]) → [M,N].",
    },
    Op {
        name: "broadcast",
        params: &[p("x", OpParamKind::Tile), p("shape", OpParamKind::Shape)],
        shape: ShapeRule::BroadcastTo,
        dtype: DtypeRule::Same,
        doc: "Repeats a [M,1], [1,N] or [1,1] tile to the given shape.",
    },
    Op {
        name: "matmul",
        params: &[
            p("a", OpParamKind::Tile),
            p("b", OpParamKind::Tile),
            OpParam {
                name: "acc",
                kind: OpParamKind::Tile,
                optional: true,
            },
        ],
        shape: ShapeRule::Matmul,
        dtype: DtypeRule::MatmulAccumulate,
        doc: "Matrix product [M,K] × [K,N] → [M,N] on the cube unit. F16/BF16 inputs accumulate in F32; `acc` ([M,N] F32) is added.",
    },
    Op {
        name: "transpose",
        params: X,
        shape: ShapeRule::Transpose,
        dtype: DtypeRule::Same,
        doc: "[M,N] → [N,M].",
    },
    Op {
        name: "constant",
        params: &[p("v", OpParamKind::Number), p("dtype", OpParamKind::DType)],
        shape: ShapeRule::Scalar,
        dtype: DtypeRule::FromArgument,
        doc: "A scalar of the given dtype that broadcasts against any tile.",
    },
    Op {
        name: "cast",
        params: &[p("x", OpParamKind::Tile), p("dtype", OpParamKind::DType)],
        shape: ShapeRule::Same,
        dtype: DtypeRule::FromArgument,
        doc: "x converted to another dtype (there is no implicit conversion).",
    },
    Op {
        name: "alloc",
        params: &[
            p("shape", OpParamKind::Shape),
            p("dtype", OpParamKind::DType),
        ],
        shape: ShapeRule::Alloc,
        dtype: DtypeRule::FromArgument,
        doc: "A zero tile of the given shape and dtype.",
    },
];

const LAYOUT: [Op; 3] = [
    Op {
        name: "slice_even",
        params: X,
        shape: ShapeRule::HalfCols,
        dtype: DtypeRule::Same,
        doc: "The even columns: [M,N] → [M,N/2], N even.",
    },
    Op {
        name: "slice_odd",
        params: X,
        shape: ShapeRule::HalfCols,
        dtype: DtypeRule::Same,
        doc: "The odd columns: [M,N] → [M,N/2], N even.",
    },
    Op {
        name: "interleave",
        params: AB,
        shape: ShapeRule::Interleave,
        dtype: DtypeRule::Same,
        doc: "Columns of a and b alternated: ([M,N], [M,N]) → [M,2N].",
    },
];

/// Every op, in the order docs and completion list them.
pub fn all() -> impl Iterator<Item = &'static Op> {
    OTHER[..2]
        .iter()
        .chain(BINARY.iter())
        .chain(UNARY.iter())
        .chain(OTHER[2..].iter())
        .chain(LAYOUT.iter())
}

pub fn lookup(name: &str) -> Option<&'static Op> {
    all().find(|op| op.name == name)
}

impl Op {
    /// `matmul(a, b, acc=None)`
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                if p.optional {
                    format!("{}=None", p.name)
                } else {
                    p.name.to_string()
                }
            })
            .collect();
        format!("pto.{}({})", self.name, params.join(", "))
    }
}
