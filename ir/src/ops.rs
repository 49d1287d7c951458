//! The op table: every `pto.*` op once, with its parameters, shape rule, dtype rule and doc text.
//! The analyzer's kernel type checker and hover, codegen and the cost model read the same rows.

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
    /// `iota_u32(cols)`: [1, cols].
    Iota,
    /// `tsort32(scores, idx)`: [1,32] scores and [1,32] indices → [1,64] (score, index) pairs.
    Sort32,
    /// `extract_topk_indices(pairs, k)`: [1,64] pairs → [1,k].
    TopK,
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
    /// Always this dtype.
    Fixed(crate::types::DType),
}

/// What the generated code computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantics {
    /// Elementwise: a C++ expression over `x`.
    Map(&'static str),
    /// Elementwise with NumPy broadcasting: a C++ expression over `a` and `b`.
    Zip(&'static str),
    /// Along each row (`rows`) or column: a start value and a C++ expression combining `acc`
    /// and `x`; `mean` divides by the count.
    Reduce {
        rows: bool,
        init: Init,
        combine: &'static str,
        mean: bool,
    },
    /// Code of its own in codegen (load, store, matmul, transpose, cast, ...).
    Structural,
}

/// A reduction's start value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    Zero,
    /// The lowest value of the dtype (-inf for floats).
    Lowest,
}

/// The unit of an AICore that runs the op, for the simulated clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Vector unit: head + slope × 256-byte repeats + tail.
    Vector,
    /// Cube unit: 16×16×16 fractals.
    Cube,
    /// Global memory ↔ unified buffer: bytes / bandwidth.
    Transfer,
    /// No cost (a scalar constant).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub name: &'static str,
    pub params: &'static [OpParam],
    pub shape: ShapeRule,
    pub dtype: DtypeRule,
    pub semantics: Semantics,
    pub unit: Unit,
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
    ($($name:literal = $cpp:literal: $doc:literal;)*) => {
        [$(Op { name: $name, params: X, shape: ShapeRule::Same, dtype: DtypeRule::Float,
                semantics: Semantics::Map($cpp), unit: Unit::Vector, doc: $doc },)*]
    };
}

macro_rules! binary {
    ($($name:literal = $cpp:literal: $doc:literal;)*) => {
        [$(Op { name: $name, params: AB, shape: ShapeRule::Broadcast, dtype: DtypeRule::Same,
                semantics: Semantics::Zip($cpp), unit: Unit::Vector, doc: $doc },)*]
    };
}

const BINARY: [Op; 6] = binary! {
    "add" = "a + b": "Elementwise a + b, broadcasting as NumPy does.";
    "sub" = "a - b": "Elementwise a - b, broadcasting as NumPy does.";
    "mul" = "a * b": "Elementwise a * b, broadcasting as NumPy does.";
    "div" = "a / b": "Elementwise a / b, broadcasting as NumPy does.";
    "maximum" = "(a > b ? a : b)": "Elementwise maximum of a and b, broadcasting as NumPy does.";
    "minimum" = "(a < b ? a : b)": "Elementwise minimum of a and b, broadcasting as NumPy does.";
};

const UNARY: [Op; 13] = elementwise! {
    "exp" = "std::exp(x)": "Elementwise e^x.";
    "log" = "std::log(x)": "Elementwise natural logarithm.";
    "sqrt" = "std::sqrt(x)": "Elementwise square root.";
    "rsqrt" = "1 / std::sqrt(x)": "Elementwise 1 / sqrt(x).";
    "tanh" = "std::tanh(x)": "Elementwise hyperbolic tangent.";
    "sigmoid" = "1 / (1 + std::exp(-x))": "Elementwise 1 / (1 + e^-x).";
    "sin" = "std::sin(x)": "Elementwise sine.";
    "cos" = "std::cos(x)": "Elementwise cosine.";
    "relu" = "(x > 0 ? x : 0)": "Elementwise max(x, 0).";
    // 0.5 x (1 + tanh(u)) written as x sigmoid(2u): one exp rather than tanh's two branches
    // and a quotient, and no cancellation where tanh(u) nears -1. 2u = -1.5957691216 (x +
    // 0.044715 x^3) is factored as x (a + b x^2), one step shorter for a vectorized loop.
    "gelu" = "x / (1 + std::exp(x * (-1.5957691216f - 0.0713548163f * (x * x))))": "Elementwise GELU (tanh approximation).";
    "silu" = "x / (1 + std::exp(-x))": "Elementwise x * sigmoid(x).";
    "neg" = "-x": "Elementwise -x.";
    "abs" = "std::abs(x)": "Elementwise |x|.";
};

const SOFTMAX: Op = Op {
    name: "softmax",
    params: X,
    shape: ShapeRule::Same,
    dtype: DtypeRule::Float,
    semantics: Semantics::Structural,
    unit: Unit::Vector,
    doc: "Row-wise softmax: exp(x - rowmax(x)) / rowsum(...).",
};

const OTHER: [Op; 17] = [
    Op {
        name: "load",
        params: &[
            p("x", OpParamKind::Param),
            OpParam {
                name: "pad",
                kind: OpParamKind::Number,
                optional: true,
            },
        ],
        shape: ShapeRule::Same,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Transfer,
        doc: "The tile of an `In` or `InOut` parameter, or of a slice of it (`x[r0:r1, c0:c1]`); `pad=` fills what a slice has past the parameter's last row or column.",
    },
    Op {
        name: "store",
        params: &[p("dst", OpParamKind::Param), p("v", OpParamKind::Tile)],
        shape: ShapeRule::Store,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Transfer,
        doc: "Writes v to an `Out` or `InOut` parameter; v has dst's shape and dtype.",
    },
    Op {
        name: "rowsum",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Same,
        semantics: Semantics::Reduce {
            rows: true,
            init: Init::Zero,
            combine: "acc + x",
            mean: false,
        },
        unit: Unit::Vector,
        doc: "Sum of each row: [M,N] → [M,1].",
    },
    Op {
        name: "rowmax",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Same,
        semantics: Semantics::Reduce {
            rows: true,
            init: Init::Lowest,
            combine: "(x > acc ? x : acc)",
            mean: false,
        },
        unit: Unit::Vector,
        doc: "Maximum of each row: [M,N] → [M,1].",
    },
    Op {
        name: "rowmean",
        params: X,
        shape: ShapeRule::RowReduce,
        dtype: DtypeRule::Float,
        semantics: Semantics::Reduce {
            rows: true,
            init: Init::Zero,
            combine: "acc + x",
            mean: true,
        },
        unit: Unit::Vector,
        doc: "Mean of each row: [M,N] → [M,1].",
    },
    Op {
        name: "colsum",
        params: X,
        shape: ShapeRule::ColReduce,
        dtype: DtypeRule::Same,
        semantics: Semantics::Reduce {
            rows: false,
            init: Init::Zero,
            combine: "acc + x",
            mean: false,
        },
        unit: Unit::Vector,
        doc: "Sum of each column: [M,N] → [1,N].",
    },
    Op {
        name: "colmax",
        params: X,
        shape: ShapeRule::ColReduce,
        dtype: DtypeRule::Same,
        semantics: Semantics::Reduce {
            rows: false,
            init: Init::Lowest,
            combine: "(x > acc ? x : acc)",
            mean: false,
        },
        unit: Unit::Vector,
        doc: "Maximum of each column: [M,N] → [1,N].",
    },
    Op {
        name: "rowmul",
        params: &[p("x", OpParamKind::Tile), p("r", OpParamKind::Tile)],
        shape: ShapeRule::RowBroadcast,
        dtype: DtypeRule::Same,
        semantics: Semantics::Zip("a * b"),
        unit: Unit::Vector,
        doc: "Multiplies each row of x by the matching element of r: ([M,N], [M,1]) → [M,N].",
    },
    Op {
        name: "rowadd",
        params: &[p("x", OpParamKind::Tile), p("r", OpParamKind::Tile)],
        shape: ShapeRule::RowBroadcast,
        dtype: DtypeRule::Same,
        semantics: Semantics::Zip("a + b"),
        unit: Unit::Vector,
        doc: "Adds the matching element of r to each row of x: ([M,N], [M,1]) → [M,N].",
    },
    Op {
        name: "colmul",
        params: &[p("x", OpParamKind::Tile), p("c", OpParamKind::Tile)],
        shape: ShapeRule::ColBroadcast,
        dtype: DtypeRule::Same,
        semantics: Semantics::Zip("a * b"),
        unit: Unit::Vector,
        doc: "Multiplies each column of x by the matching element of c: ([M,N], [1,N]) → [M,N].",
    },
    Op {
        name: "coladd",
        params: &[p("x", OpParamKind::Tile), p("c", OpParamKind::Tile)],
        shape: ShapeRule::ColBroadcast,
        dtype: DtypeRule::Same,
        semantics: Semantics::Zip("a + b"),
        unit: Unit::Vector,
        doc: "Adds the matching element of c to each column of x: ([M,N], [1,N]) → [M,N].",
    },
    Op {
        name: "broadcast",
        params: &[p("x", OpParamKind::Tile), p("shape", OpParamKind::Shape)],
        shape: ShapeRule::BroadcastTo,
        dtype: DtypeRule::Same,
        semantics: Semantics::Map("x"),
        unit: Unit::Vector,
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
        semantics: Semantics::Structural,
        unit: Unit::Cube,
        doc: "Matrix product [M,K] × [K,N] → [M,N] on the cube unit. F16/BF16 inputs accumulate in F32; `acc` ([M,N] F32) is added.",
    },
    Op {
        name: "transpose",
        params: X,
        shape: ShapeRule::Transpose,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "[M,N] → [N,M].",
    },
    Op {
        name: "constant",
        params: &[p("v", OpParamKind::Number), p("dtype", OpParamKind::DType)],
        shape: ShapeRule::Scalar,
        dtype: DtypeRule::FromArgument,
        semantics: Semantics::Structural,
        unit: Unit::None,
        doc: "A scalar of the given dtype that broadcasts against any tile.",
    },
    Op {
        name: "cast",
        params: &[p("x", OpParamKind::Tile), p("dtype", OpParamKind::DType)],
        shape: ShapeRule::Same,
        dtype: DtypeRule::FromArgument,
        semantics: Semantics::Structural,
        unit: Unit::Vector,
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
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "A zero tile of the given shape and dtype.",
    },
];

const LAYOUT: [Op; 3] = [
    Op {
        name: "slice_even",
        params: X,
        shape: ShapeRule::HalfCols,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "The even columns: [M,N] → [M,N/2], N even.",
    },
    Op {
        name: "slice_odd",
        params: X,
        shape: ShapeRule::HalfCols,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "The odd columns: [M,N] → [M,N/2], N even.",
    },
    Op {
        name: "interleave",
        params: AB,
        shape: ShapeRule::Interleave,
        dtype: DtypeRule::Same,
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "Columns of a and b alternated: ([M,N], [M,N]) → [M,2N].",
    },
];

/// PTO-ISA's TSORT32 and the helpers the original framework's TopK routing uses around it.
const SORTING: [Op; 3] = [
    Op {
        name: "iota_u32",
        params: &[p("cols", OpParamKind::Number)],
        shape: ShapeRule::Iota,
        dtype: DtypeRule::Fixed(crate::types::DType::U32),
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "The indices 0, 1, ..., cols-1 as a [1,cols] U32 tile.",
    },
    Op {
        name: "tsort32",
        params: &[p("scores", OpParamKind::Tile), p("idx", OpParamKind::Tile)],
        shape: ShapeRule::Sort32,
        dtype: DtypeRule::Fixed(crate::types::DType::F32),
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "PTO-ISA TSORT32: [1,32] F32 scores with [1,32] U32 indices → [1,64] F32 (score, index) pairs, by score descending, ties by lower index first.",
    },
    Op {
        name: "extract_topk_indices",
        params: &[p("pairs", OpParamKind::Tile), p("k", OpParamKind::Number)],
        shape: ShapeRule::TopK,
        dtype: DtypeRule::Fixed(crate::types::DType::I32),
        semantics: Semantics::Structural,
        unit: Unit::Vector,
        doc: "The first k indices of `tsort32`'s pairs as a [1,k] I32 tile (1 <= k <= 32).",
    },
];

/// Every op, in the order docs and completion list them.
pub fn all() -> impl Iterator<Item = &'static Op> {
    OTHER[..2]
        .iter()
        .chain(BINARY.iter())
        .chain(UNARY.iter())
        .chain(std::iter::once(&SOFTMAX))
        .chain(OTHER[2..].iter())
        .chain(LAYOUT.iter())
        .chain(SORTING.iter())
}

/// The op named `name`, or by an accepted alias (`max` for `maximum`).
pub fn lookup(name: &str) -> Option<&'static Op> {
    let name = alias(name).filter(|a| a.accepted).map_or(name, |a| a.op);
    all().find(|op| op.name == name)
}

/// Another spelling of an op with exactly its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    pub name: &'static str,
    /// The op's own name.
    pub op: &'static str,
    /// Whether `pto.NAME` is accepted as written (the original framework's own aliases). Names of
    /// other frameworks are not, but replacing them with the op keeps their meaning, so the
    /// checker offers that as a machine-applicable fix.
    pub accepted: bool,
    /// Where the spelling comes from, for the message.
    pub from: &'static str,
}

const fn spelling(
    name: &'static str,
    op: &'static str,
    accepted: bool,
    from: &'static str,
) -> Alias {
    Alias {
        name,
        op,
        accepted,
        from,
    }
}

/// Every known alias. Only exact equivalents belong here: a fix taken from this table must never
/// change what the code computes (Triton's `tl.max(x, axis)` is a reduction, so `max` is listed
/// as PTO-WSP's elementwise alias only because the original defines it so).
pub const ALIASES: &[Alias] = &[
    spelling("max", "maximum", true, "PTO-WSP"),
    spelling("min", "minimum", true, "PTO-WSP"),
    spelling("multiply", "mul", false, "NumPy"),
    spelling("subtract", "sub", false, "NumPy"),
    spelling("divide", "div", false, "NumPy"),
    spelling("true_divide", "div", false, "NumPy"),
    spelling("negative", "neg", false, "NumPy"),
    spelling("absolute", "abs", false, "NumPy"),
    spelling("dot", "matmul", false, "Triton"),
];

/// The alias `name`, if it is one.
pub fn alias(name: &str) -> Option<&'static Alias> {
    ALIASES.iter().find(|a| a.name == name)
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
