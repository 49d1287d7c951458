//! The workload plan: tensors, axes and channels, and each workload call's body as loops,
//! blocks and tasks whose views are affine maps of loop variables.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::affine::Affine;
use crate::scalar::ScalarExpr;
use crate::types::DType;

/// The NumPy dtypes (`descr` without its byte-order mark) a `load_npy` file may hold: bool, int,
/// uint and float; the values are converted to the tensor's dtype as `astype` does. The
/// runtime reads exactly these (`runtime/src/tensors.rs`), and the checker reports any other.
pub const NPY_READABLE: &[&str] = &[
    "b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8",
];

/// An `f64` compared and hashed by its bits, so values can be salsa keys. JSON has no
/// infinities or NaN, so those travel as the strings `"inf"`, `"-inf"` and `"nan"` (what
/// Python's `float()` reads); finite values are plain numbers.
#[derive(Debug, Clone, Copy)]
pub struct F64(pub f64);

impl Serialize for F64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            v if v.is_finite() => s.serialize_f64(v),
            v if v.is_nan() => s.serialize_str("nan"),
            v if v > 0.0 => s.serialize_str("inf"),
            _ => s.serialize_str("-inf"),
        }
    }
}

impl<'de> Deserialize<'de> for F64 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<F64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Number(f64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Number(v) => Ok(F64(v)),
            Repr::Text(t) => match t.as_str() {
                "inf" => Ok(F64(f64::INFINITY)),
                "-inf" => Ok(F64(f64::NEG_INFINITY)),
                "nan" => Ok(F64(f64::NAN)),
                _ => Err(serde::de::Error::custom(format!(
                    "expected a number, \"inf\", \"-inf\" or \"nan\", not {t:?}"
                ))),
            },
        }
    }
}

impl PartialEq for F64 {
    fn eq(&self, other: &F64) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for F64 {}
impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AxisKind {
    Dense,
    DenseDyn,
    Ragged,
    Sparse,
}

impl AxisKind {
    pub fn name(self) -> &'static str {
        match self {
            AxisKind::Dense => "Dense",
            AxisKind::DenseDyn => "DenseDyn",
            AxisKind::Ragged => "Ragged",
            AxisKind::Sparse => "Sparse",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Init {
    Zeros,
    Ones,
    Full(F64),
    Arange,
    Randn {
        seed: i64,
        std: F64,
    },
    LoadNpy(String),
    /// The values `of` gives a tensor of shape `shape`, stored with its dimensions in `order`
    /// (storage dimension `k` is dimension `order[k]`): the storage of a tensor whose
    /// `MemLayout` is not row-major.
    Permuted {
        of: Box<Init>,
        shape: Vec<u64>,
        order: Vec<u32>,
    },
}

/// Per dimension: replicated, or sharded over a mesh axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DimLayout {
    Replicate,
    Shard(u32),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Layout {
    pub dims: Vec<DimLayout>,
    /// `TensorLayout(..., mem=MemLayout...)`: the element strides of the memory order; none
    /// is row-major.
    #[serde(default)]
    pub mem: Option<Vec<u64>>,
}

/// The storage tensor of a tensor `X` laid out in another memory order (`MemLayout`): `X.storage`,
/// a name no Python binding can take. `X` reads it as a view; a dump writes both.
pub fn storage_name(tensor: &str) -> String {
    format!("{tensor}.storage")
}

impl Layout {
    pub fn replicated(rank: usize) -> Layout {
        Layout {
            dims: vec![DimLayout::Replicate; rank],
            mem: None,
        }
    }

    /// The dimensions in memory order, outermost first, when `mem` lays a tensor of `shape`
    /// out densely (each stride the product of the extents of the dimensions inside it);
    /// `None` otherwise. Row-major is `0, 1, ...`.
    pub fn memory_order(&self, shape: &[u64]) -> Option<Vec<u32>> {
        let Some(strides) = &self.mem else {
            return Some((0..shape.len() as u32).collect());
        };
        if strides.len() != shape.len() {
            return None;
        }
        let mut order: Vec<u32> = (0..shape.len() as u32).collect();
        // Outermost first; equal strides (extent-1 dimensions) keep their order.
        order.sort_by(|&a, &b| {
            strides[b as usize]
                .cmp(&strides[a as usize])
                .then(a.cmp(&b))
        });
        let mut expect = 1u64;
        for &d in order.iter().rev() {
            let d = d as usize;
            if shape[d] > 1 && strides[d] != expect {
                return None;
            }
            expect = expect.checked_mul(shape[d])?;
        }
        Some(order)
    }

    pub fn is_replicated(&self) -> bool {
        self.dims.iter().all(|d| *d == DimLayout::Replicate)
    }

    /// The mesh axes the layout shards onto.
    pub fn mesh_axes(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.dims.iter().enumerate().filter_map(|(i, d)| match d {
            DimLayout::Shard(m) => Some((i, *m)),
            DimLayout::Replicate => None,
        })
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self
            .dims
            .iter()
            .map(|d| match d {
                DimLayout::Replicate => "R".to_string(),
                DimLayout::Shard(m) => format!("S({m})"),
            })
            .collect();
        write!(f, "[{}]", dims.join(", "))?;
        if let Some(m) = &self.mem {
            let m: Vec<String> = m.iter().map(u64::to_string).collect();
            write!(f, " mem strides ({})", m.join(", "))?;
        }
        Ok(())
    }
}

/// One index of a view.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ViewIndex {
    At(Affine),
    /// A constant slice `lo:hi`, keeping the dimension with extent `hi - lo`.
    Range(i64, i64),
    /// A slice `start:start + len` whose start is affine in loop variables (`c*CH:(c+1)*CH`),
    /// keeping the dimension with the constant extent `len`.
    Slice(Affine, u64),
}

impl fmt::Display for ViewIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewIndex::At(a) => write!(f, "{a}"),
            ViewIndex::Range(lo, hi) => write!(f, "{lo}:{hi}"),
            ViewIndex::Slice(start, len) => {
                let end = start
                    .add(&Affine::constant(*len as i64))
                    .unwrap_or_else(|| start.clone());
                write!(f, "{start}:{end}")
            }
        }
    }
}

/// How a kernel parameter is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    In,
    Out,
    InOut,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::In => "In",
            Direction::Out => "Out",
            Direction::InOut => "InOut",
        }
    }

    pub fn reads(self) -> bool {
        self != Direction::Out
    }

    pub fn writes(self) -> bool {
        self != Direction::In
    }
}

/// How a loop's iterations are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LoopKind {
    /// `P(...)`: no order between iterations.
    Independent,
    /// `P.seq(...)`: each iteration after the one before.
    Sequential,
    /// `P.sel(routing[b])`: the selected entries of one Sparse row, no order between them.
    Selected,
}

impl LoopKind {
    pub fn name(self) -> &'static str {
        match self {
            LoopKind::Independent => "Independent",
            LoopKind::Sequential => "Sequential",
            LoopKind::Selected => "Selected",
        }
    }
}

/// Integers an axis is built from: written in the program, or read from an integer tensor
/// when the program runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IntSource {
    List(Vec<u64>),
    Tensor(String),
}

/// A module-level axis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    pub kind: AxisKind,
    /// Dense: the size; DenseDyn: the default of its run-time symbol; Ragged, Sparse: rows.
    pub size: u64,
    /// Ragged: each row's length.
    pub lengths: Option<IntSource>,
    /// Sparse, CSR: row `r`'s entries are `indices[indptr[r]..indptr[r + 1]]`.
    pub indptr: Option<IntSource>,
    pub indices: Option<IntSource>,
}

/// How a tensor came to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TensorOrigin {
    Declared,
    /// `relayout(src, ...)`, `allreduce(src, ...)`, ...: computed from another tensor.
    Derived {
        op: String,
        source: String,
    },
    /// `X.T`, `X.transpose(...)`, `X.reshape(...)`: the bytes of the declared tensor `base`,
    /// read in another order; one entry per dimension of the view.
    View {
        base: String,
        dims: Vec<ViewDim>,
    },
    /// The rings a mixed launch of `kernel` hands tiles between its cores through
    /// (`crate::mixed`): global memory the host allocates for the launch, whose contents mean
    /// nothing after it.
    Ring {
        kernel: String,
    },
}

/// One dimension of a view: its index steps `step` along dimension `base_dim` of the base,
/// so a base index is the sum of `step * index` over the view dimensions on it (a transpose
/// permutes the dimensions; a reshape splits one into several, with steps of their products).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ViewDim {
    pub base_dim: u32,
    pub step: u64,
}

/// A region of a view as the region of its base it lies in: each base dimension's index from
/// the view dimensions on it (`None` for a view dimension's whole extent). Exact when each
/// base dimension's parts nest (the inner ones whole); otherwise the interval spanning them.
/// `None` if an index overflows.
pub fn region_in_base(
    dims: &[ViewDim],
    view_shape: &[u64],
    indices: &[ViewIndex],
    base_rank: usize,
) -> Option<Vec<ViewIndex>> {
    (0..base_rank)
        .map(|d| {
            let mut start = crate::Affine::constant(0);
            let mut len = 1u64;
            let mut point = true;
            for (j, vd) in dims.iter().enumerate() {
                if vd.base_dim as usize != d || vd.step == 0 {
                    continue;
                }
                let step = vd.step as i64;
                let (lo, n) = match indices.get(j) {
                    Some(ViewIndex::At(a)) => (a.clone(), 1),
                    Some(ViewIndex::Range(l, h)) => {
                        (crate::Affine::constant(*l), (h - l).max(0) as u64)
                    }
                    Some(ViewIndex::Slice(a, n)) => (a.clone(), *n),
                    None => (crate::Affine::constant(0), view_shape[j]),
                };
                point &= n == 1 && matches!(indices.get(j), Some(ViewIndex::At(_)));
                start = start.add(&lo.scale(step)?)?;
                len = len.checked_add(vd.step.checked_mul(n.saturating_sub(1))?)?;
            }
            Some(match (point, start.terms.is_empty()) {
                (true, _) => ViewIndex::At(start),
                (false, true) => {
                    ViewIndex::Range(start.constant, start.constant.checked_add(len as i64)?)
                }
                (false, false) => ViewIndex::Slice(start, len),
            })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<u64>,
    pub dtype: DType,
    pub layout: Layout,
    /// `None`: zeros.
    pub init: Option<Init>,
    pub origin: TensorOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    pub name: String,
    pub label: String,
    /// 0: a rendezvous.
    pub depth: u64,
}

/// One loop variable and what it ranges over.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LoopVar {
    pub name: String,
    /// The axis (by name), or empty for a literal extent.
    pub axis: String,
    pub axis_kind: AxisKind,
    /// The static number of iterations (DenseDyn: its default; a Ragged or Sparse row: the
    /// longest row; a whole Ragged axis: the sum of its lengths), when known.
    pub extent: Option<u64>,
    /// `P(tokens[b])`, `P.sel(routing[b])`: the row of the axis being enumerated. `None` on a
    /// Ragged axis: every element, row by row, the variable being the element's index.
    pub row: Option<Affine>,
}

/// `X[b, 0:128]`: the leading dimensions of a tensor indexed, the rest kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub tensor: String,
    pub indices: Vec<ViewIndex>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskArg {
    Tile {
        param: String,
        direction: Direction,
        view: View,
    },
    Scalar {
        param: String,
        value: f64,
        /// `Symbol("s")`: the run-time symbol whose bound value the task takes instead, read
        /// when the program executes (a float parameter its f32 bits, an integer one its value).
        #[serde(default)]
        symbol: Option<String>,
    },
}

impl TaskArg {
    /// The kernel parameter the argument is given for.
    pub fn param(&self) -> &str {
        match self {
            TaskArg::Tile { param, .. } | TaskArg::Scalar { param, .. } => param,
        }
    }
}

/// `kernel[b, h](x=X[b, h], ...)`: one task per iteration of the loops around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Unique within its workload; `send` names tasks by it.
    pub id: u32,
    pub kernel: String,
    /// The task's index (`[b, h]`) and the field names keys read (`t.b`).
    pub index: Vec<Affine>,
    pub fields: Vec<String>,
    pub args: Vec<TaskArg>,
    /// Where the task call is written, for run-time errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<Site>,
}

/// A byte range of the program's source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Site {
    pub start: u32,
    pub end: u32,
}

impl Task {
    /// The argument given for kernel parameter `param`.
    pub fn arg(&self, param: &str) -> Option<&TaskArg> {
        self.args.iter().find(|a| a.param() == param)
    }
}

/// One branch of a conditional: `None` is `P.otherwise()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    pub predicate: Option<ScalarExpr>,
    pub body: Vec<Node>,
    /// Where the predicate is written, for run-time errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<Site>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Node {
    Loop {
        kind: LoopKind,
        vars: Vec<LoopVar>,
        body: Vec<Node>,
        /// The `for` line, for run-time errors in its axis's data (a negative length).
        site: Option<Site>,
    },
    /// `P.when` / `P.otherwise` chains: the first branch whose predicate holds.
    Conditional {
        branches: Vec<Branch>,
    },
    /// `P.pipe()`: the stages run concurrently, connected by channels.
    Pipeline {
        stages: Vec<Node>,
    },
    /// `with consume(ch) as var:`: the body once per task received on the channel.
    Consume {
        channel: String,
        var: String,
        body: Vec<Node>,
    },
    Task(Task),
    /// `send(ch, task)`: the task (by id) is put on the channel when it finishes.
    Send {
        channel: String,
        task: u32,
    },
    /// `slot_load_u64(slot, X[i], row, col)`: a slot set from a tensor element at run time.
    SlotLoad {
        slot: i64,
        view: View,
        row: i64,
        col: i64,
    },
}

/// Every task of `nodes`, in plan order, appended to `out`.
pub fn tasks<'a>(nodes: &'a [Node], out: &mut Vec<&'a Task>) {
    for n in nodes {
        match n {
            Node::Loop { body, .. } | Node::Consume { body, .. } => tasks(body, out),
            Node::Conditional { branches } => branches.iter().for_each(|b| tasks(&b.body, out)),
            Node::Pipeline { stages } => tasks(stages, out),
            Node::Task(t) => out.push(t),
            Node::Send { .. } | Node::SlotLoad { .. } => {}
        }
    }
}

/// One call of a workload with its arguments bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    /// The arguments as written at the call (`batch`, `heads`).
    pub args: Vec<String>,
    pub body: Vec<Node>,
}

/// The program's composition of workload calls (indices into `Program::workloads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Composite {
    Call(u32),
    /// `sequential(a, b)`: b starts after a finished.
    Sequential(Vec<Composite>),
    /// `combine(a, b)`: no order between them.
    Combine(Vec<Composite>),
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.indices.is_empty() {
            return f.write_str(&self.tensor);
        }
        let idx: Vec<String> = self.indices.iter().map(|i| i.to_string()).collect();
        write!(f, "{}[{}]", self.tensor, idx.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::F64;

    #[test]
    fn non_finite_numbers_survive_json() {
        for v in [f64::NEG_INFINITY, f64::INFINITY, -1e300, 0.5] {
            let text = serde_json::to_string(&F64(v)).unwrap();
            assert_eq!(
                serde_json::from_str::<F64>(&text).unwrap(),
                F64(v),
                "{text}"
            );
        }
        assert_eq!(
            serde_json::to_string(&F64(f64::NEG_INFINITY)).unwrap(),
            "\"-inf\""
        );
        assert!(serde_json::from_str::<F64>("\"nan\"").unwrap().0.is_nan());
        assert!(serde_json::from_str::<F64>("\"infinity\"").is_err());
    }
}
