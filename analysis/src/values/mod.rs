//! What module-level names and workload-body expressions evaluate to.

use crate::diagnostics::Span;
use crate::items::Item;
use wsp_ir::schedule::Target;

pub mod schedule;
use crate::types::{DType, shape_text};
use crate::vocabulary::Builtin;
pub use schedule::Directive;
use wsp_ir::Affine;
use wsp_ir::ScalarExpr;
pub use wsp_ir::plan::{AxisKind, DimLayout, F64, Init, IntSource, Layout, ViewIndex};
pub use wsp_ir::schedule::WindowMode;

/// The large variants are boxed: every module-level statement's value is kept (a memo per
/// statement), and a file may have millions of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Value<'db> {
    /// The value of something already reported: no further diagnostics follow from it.
    Unknown,
    None,
    Bool(bool),
    Int(i64),
    Float(F64),
    Str(String),
    Tuple(Vec<Value<'db>>),
    List(Vec<Value<'db>>),
    DType(DType),
    Builtin(Builtin),
    /// `P.seq`, `DispatchPolicy.round_robin`, `WindowMode.STALL`, ...: a member of a namespace.
    Member(Builtin, &'static str),
    Axis(Box<Axis<'db>>),
    /// `routing[b]`, `tokens[b]`: one row of a Sparse or Ragged axis, inside a workload.
    AxisRow(Box<Axis<'db>>),
    Tensor(Box<Tensor<'db>>),
    Channel(Box<Channel<'db>>),
    /// `process("loader").produces(ch).body(...)`: a CSP process, before and after `.body`.
    Process(Box<Process<'db>>),
    Kernel(Item<'db>),
    Workload(Item<'db>),
    /// A workload call, composition or schedule, before `.compile()`.
    Schedule(Box<Schedule<'db>>),
    /// After `.compile(target=...)`.
    Program(Box<Schedule<'db>>),
    Init(Init),
    Layout(Layout),
    /// `MemLayout.row_major(shape)`, `MemLayout(strides=...)`: element strides.
    MemLayout(Vec<u64>),
    Policy(Box<Policy>),
    Window(Box<Window>),
    /// `lambda t: ...` as a key.
    Key(Box<Key>),
    /// `program.stats`
    Stats,
    /// `program.is_complete()`: whether the program has run, known when the statement runs.
    Complete,
    /// `program.trace` and what its methods return: read when the statement runs. The program
    /// is named as the statement names it.
    Trace(Box<(String, wsp_ir::TraceQuery)>),
    /// `KERNEL.trace()` (the original's `KernelIR`) and its parts. Their values are the
    /// kernel's lowered IR, which lowering reads (`lower::kernel_ir`).
    KernelIr(Item<'db>, IrPart),
    /// Inside a workload: a loop variable or an affine expression of loop variables.
    Index(Affine),
    /// Inside a workload: `X[i, 0:128]`, a region of a tensor.
    View(Box<View<'db>>),
    /// Inside a workload: a value known only at run time (`SeqLens[b] <= 128`).
    Runtime(Box<ScalarExpr>),
    /// Inside a workload: a task (`send(ch, k[i](...))`), by its position in the body.
    Task(u32),
    /// `SearchSpace()` with what its `add_*` calls gave it.
    Space(Box<Space>),
    /// `ScheduleConfig(...)`: one configuration, known when the file is checked (a space of
    /// one).
    Config(Box<Space>),
    /// `AutoScheduler(workload)`: the workload it explores.
    Scheduler(Box<Schedule<'db>>),
    /// What an exploration found (`best_config`, `summary`, their fields): read when the
    /// statement runs.
    Explored(Box<Explored<'db>>),
}

impl<'db> Value<'db> {
    /// What the value is, for messages ("a tensor", "a Dense axis").
    pub fn describe(&self) -> String {
        match self {
            Value::Unknown => "an unknown value".into(),
            Value::None => "None".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Int(i) => format!("the integer {i}"),
            Value::Float(f) => format!("the number {}", f.0),
            Value::Str(_) => "a string".into(),
            Value::Tuple(_) => "a tuple".into(),
            Value::List(_) => "a list".into(),
            Value::DType(d) => format!("the dtype {d}"),
            Value::Builtin(b) => format!("`{}`", b.name()),
            Value::Member(b, m) => format!("`{}.{m}`", b.name()),
            Value::Axis(a) => format!("a {} axis", a.kind.name()),
            Value::AxisRow(a) => format!("a row of the {} axis `{}`", a.kind.name(), a.name),
            Value::Tensor(t) => format!(
                "the tensor `{}` {} {}",
                t.name,
                shape_text(&t.shape),
                t.dtype
            ),
            Value::Channel(c) => format!("the channel `{}`", c.name),
            Value::Process(p) => format!("the process `{}`", p.name),
            Value::Kernel(_) => "a kernel".into(),
            Value::Workload(_) => "a workload".into(),
            Value::Schedule(_) => "a workload".into(),
            Value::Program(_) => "a compiled program".into(),
            Value::Init(_) => "a tensor init".into(),
            Value::Layout(_) => "a layout".into(),
            Value::MemLayout(_) => "a memory layout".into(),
            Value::Policy(_) => "a policy".into(),
            Value::Window(_) => "a task window".into(),
            Value::Key(_) => "a key function".into(),
            Value::Stats => "program statistics".into(),
            Value::Complete => "whether a program has run".into(),
            Value::KernelIr(_, IrPart::Whole) => "a kernel's IR".into(),
            Value::KernelIr(_, IrPart::Len(_)) => "the length of a kernel's IR list".into(),
            Value::KernelIr(..) => "a list of a kernel's IR".into(),
            Value::Trace(t) => match &t.1 {
                wsp_ir::TraceQuery::Trace => format!("the trace of `{}`", t.0),
                wsp_ir::TraceQuery::Summary => "a trace summary".into(),
                wsp_ir::TraceQuery::TaskEvents | wsp_ir::TraceQuery::KernelEvents(_) => {
                    "a list of trace events".into()
                }
                wsp_ir::TraceQuery::ChromeTrace => "a Chrome trace".into(),
                _ => "a number read from a trace".into(),
            },
            Value::Index(a) => format!("the index `{a}`"),
            Value::View(v) => format!("the view `{}`", v.text()),
            Value::Runtime(e) => format!("the run-time value `{e}`"),
            Value::Task(_) => "a task".into(),
            Value::Space(_) => "a search space".into(),
            Value::Config(_) => "a schedule configuration".into(),
            Value::Scheduler(_) => "an auto-scheduler".into(),
            Value::Explored(e) => match &e.query {
                wsp_ir::explore::ExploreQuery::Summary => "an exploration summary".into(),
                wsp_ir::explore::ExploreQuery::BestConfig => {
                    "the best configuration an exploration found".into()
                }
                wsp_ir::explore::ExploreQuery::TopConfigs(_)
                | wsp_ir::explore::ExploreQuery::Results => "a list of exploration results".into(),
                _ => "a value an exploration found".into(),
            },
        }
    }
}

/// A part of `KERNEL.trace()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum IrPart {
    Whole,
    /// `.ops`: each op's text line.
    Ops,
    /// `.params`: `(name, type)` per parameter.
    Params,
    /// `.tiles`: the tile parameters' texts.
    Tiles,
    /// `len(...)` of a list part.
    Len(Box<IrPart>),
}

/// An iteration space.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Axis<'db> {
    /// The module-level name that defined it (run-time symbols are bound by this name).
    pub name: String,
    pub def: Span<'db>,
    pub kind: AxisKind,
    /// Rows: the static size, DenseDyn's default, Ragged's and Sparse's row count.
    pub size: u64,
    /// The range of a row's indices when it is known statically: Ragged's longest length,
    /// Sparse's largest column index + 1.
    pub row_extent: Option<u64>,
    /// Ragged `lengths`; Sparse `indptr` and `indices` (CSR).
    pub lengths: Option<IntSource>,
    pub indptr: Option<IntSource>,
    pub indices: Option<IntSource>,
}

/// How a tensor came to be.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum TensorOrigin<'db> {
    Declared,
    /// `relayout(src, ...)`, `allreduce(src, ...)`, ...: computed from another tensor.
    Derived {
        op: &'static str,
        source: String,
    },
    /// `X.T`, `X.transpose(...)`, `X.reshape(...)`: the same bytes as a declared tensor, read
    /// in another order. Index `j` of the view steps `dims[j].step` along dimension
    /// `dims[j].base_dim` of `base`.
    View {
        base: Box<Tensor<'db>>,
        dims: Vec<ViewDim>,
    },
}

/// How one dimension of a view walks its base (`wsp_ir::plan::ViewDim`).
pub use wsp_ir::plan::ViewDim;

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Tensor<'db> {
    pub name: String,
    pub def: Span<'db>,
    pub shape: Vec<u64>,
    pub dtype: DType,
    pub layout: Layout,
    /// `None` when declared without `init=` (zeros, but WSP305 if only read).
    pub init: Option<Init>,
    pub origin: TensorOrigin<'db>,
}

impl<'db> Tensor<'db> {
    /// The declared tensor whose bytes this is: its base if it is a view, else itself.
    pub fn base(&self) -> &Tensor<'db> {
        match &self.origin {
            TensorOrigin::View { base, .. } => base,
            _ => self,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Channel<'db> {
    pub name: String,
    pub label: String,
    pub depth: u64,
    pub def: Span<'db>,
}

/// A CSP process of the builder API. Its body is walked as a pipeline stage when `connect`
/// runs it (`workloads`), not evaluated here: it is work over loop variables.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Process<'db> {
    pub name: String,
    pub consumes: Vec<Channel<'db>>,
    pub produces: Vec<Channel<'db>>,
    /// The argument of `.body(...)`; `None` until it is given.
    pub body: Option<Span<'db>>,
    /// `replicate(p, n)`: workers sharing the consumed channels' tasks.
    pub workers: u64,
    /// The `process("name")` call.
    pub def: Span<'db>,
}

/// A call of a workload with its arguments: the key of one instantiation.
#[salsa::interned(debug)]
pub struct WorkloadCall<'db> {
    #[returns(copy)]
    pub workload: Item<'db>,
    #[returns(ref)]
    pub args: Vec<Value<'db>>,
    /// The call expression, for diagnostics reported at the call.
    #[returns(copy)]
    pub site: Span<'db>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Composite<'db> {
    Call(WorkloadCall<'db>),
    Sequential(Vec<Composite<'db>>),
    Combine(Vec<Composite<'db>>),
}

impl<'db> Composite<'db> {
    pub fn calls(&self, out: &mut Vec<WorkloadCall<'db>>) {
        match self {
            Composite::Call(c) => out.push(*c),
            Composite::Sequential(parts) | Composite::Combine(parts) => {
                parts.iter().for_each(|p| p.calls(out))
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Schedule<'db> {
    pub root: Composite<'db>,
    pub directives: Vec<Directive<'db>>,
    /// `.compile(target=...)`: the target and the span of the call.
    pub target: Option<CompileTarget<'db>>,
    /// `.with_config(best_config)`, `auto_schedule(w)`: the exploration whose best
    /// configuration applies when the program runs.
    pub explored: Option<Box<Explore<'db>>>,
}

/// A key of a search space, with its text for tables (`lambda t: t.b`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct SpaceKey {
    pub key: Key,
    pub text: String,
}

/// `SearchSpace()`: each dimension's options, in the order they are given. A configuration
/// takes one option of each; they are enumerated streams, stream keys, dispatch, timing,
/// windows (the original's order, ours nested inside).
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Space {
    /// `add_streams`: stream counts, or `None` for the program's own.
    pub streams: Vec<Option<i64>>,
    /// `add_stream_by`: a key, or `None` for streams in turn.
    pub stream_keys: Vec<Option<SpaceKey>>,
    /// The policy's name, its AICPU count, and a keyed policy's key.
    pub dispatch: Vec<(String, i64, Option<SpaceKey>)>,
    pub timing: Vec<(String, Option<i64>)>,
    /// `add_window`: a window's size and mode, or `None` for the workload's own.
    pub windows: Vec<Option<(i64, WindowMode)>>,
    /// `add_bindings(name=[...])`: each configuration is scored over every combination.
    pub bindings: Vec<(String, Vec<i64>)>,
}

impl Default for Space {
    /// The original's `SearchSpace()`: one stream, `round_robin(4)`, `immediate`.
    fn default() -> Space {
        Space {
            streams: vec![Some(1)],
            stream_keys: vec![None],
            dispatch: vec![("round_robin".into(), 4, None)],
            timing: vec![("immediate".into(), None)],
            windows: vec![None],
            bindings: Vec::new(),
        }
    }
}

impl Space {
    /// How many configurations the space has, if that fits a `u64`.
    pub fn size(&self) -> Option<u64> {
        [
            self.streams.len(),
            self.stream_keys.len(),
            self.dispatch.len(),
            self.timing.len(),
            self.windows.len(),
        ]
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64))
    }
}

/// `scheduler.explore(space, ...)`, `find_best()`, `auto_schedule(w)`: what to explore.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Explore<'db> {
    /// The position of the statement's first item in the file: one exploration per statement.
    pub id: u32,
    /// The call as written, for messages.
    pub label: String,
    pub span: Span<'db>,
    /// The workload explored, with its own schedule.
    pub schedule: Schedule<'db>,
    pub space: Space,
    pub metric: wsp_ir::explore::Metric,
    pub trials: u32,
    pub warmup: u32,
    pub verbose: bool,
    /// `auto_schedule(w, verbose=True)`: the original's line saying what was selected follows
    /// the exploration.
    pub says_selected: bool,
    /// The target whose applicability table decides what may run.
    pub target: Target,
}

/// What a statement reads of an exploration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Explored<'db> {
    pub explore: Explore<'db>,
    pub query: wsp_ir::explore::ExploreQuery,
}

impl<'db> Schedule<'db> {
    /// The workload calls of the schedule, in order.
    pub fn calls(&self) -> Vec<WorkloadCall<'db>> {
        let mut out = Vec::new();
        self.root.calls(&mut out);
        out
    }
}

/// `.compile(target=...)`: the target and where the call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct CompileTarget<'db> {
    pub target: Target,
    pub span: Span<'db>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Policy {
    RoundRobin(i64),
    /// A key and `num_aicpus` (0: every AICPU).
    Affinity(Key, i64),
    Hash(Key, i64),
    DispatchBy(Key, i64),
    WorkSteal,
    Immediate,
    Batched(i64),
    Interleaved(i64),
    RateLimit(F64),
    /// `Deps(...)`, `ReadyPolicy.x()`, `Pools.x()`: task-graph knobs, by name.
    TaskGraph(&'static str, String),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Window {
    pub size: i64,
    pub unit: String,
    pub mode: WindowMode,
}

/// `lambda t: ...`: the key as a scalar expression over task fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Key {
    /// For a tuple key (`lambda t: (t.b, t.h)`), its parts hashed as one key: each part in
    /// turn is `key * TUPLE_HASH + part` (what `hash` dispatches by).
    pub expr: ScalarExpr,
    /// A tuple key's parts (empty for any other key): `affinity`, `dispatch_by` and `stream_by`
    /// combine them row-major over the fields' extents, once the program's loops are known
    /// (`Key::row_major`).
    pub parts: Vec<ScalarExpr>,
}

/// The multiplier of a tuple key hashed as one key: a prime, so that parts below it map to
/// distinct keys.
pub const TUPLE_HASH: i64 = 1_000_003;

impl Key {
    /// A tuple key's parts hashed as one key.
    pub fn tuple(parts: Vec<ScalarExpr>) -> Key {
        let mut it = parts.iter().cloned();
        let first = it.next().unwrap_or(ScalarExpr::Const(0));
        let expr = it.fold(first, |acc, p| {
            let scaled = ScalarExpr::Binary(
                wsp_ir::ScalarOp::Mul,
                Box::new(acc),
                Box::new(ScalarExpr::Const(TUPLE_HASH)),
            );
            ScalarExpr::Binary(wsp_ir::ScalarOp::Add, Box::new(scaled), Box::new(p))
        });
        Key { expr, parts }
    }

    /// The key `affinity`, `dispatch_by` and `stream_by` use: a tuple key's parts row-major,
    /// `((p0 * E1 + p1) * E2 + p2)`, each part after the first a task field whose extent
    /// `extent` gives; else the key itself. `Err` names the part without one.
    pub fn row_major(
        &self,
        extent: impl Fn(&str) -> Option<u64>,
    ) -> Result<ScalarExpr, ScalarExpr> {
        let Some((first, rest)) = self.parts.split_first() else {
            return Ok(self.expr.clone());
        };
        let mut acc = first.clone();
        for p in rest {
            let e = match p {
                ScalarExpr::Var(f) => extent(f),
                _ => None,
            };
            let Some(e) = e.and_then(|e| i64::try_from(e).ok()) else {
                return Err(p.clone());
            };
            let scaled = ScalarExpr::Binary(
                wsp_ir::ScalarOp::Mul,
                Box::new(acc),
                Box::new(ScalarExpr::Const(e)),
            );
            acc = ScalarExpr::Binary(wsp_ir::ScalarOp::Add, Box::new(scaled), Box::new(p.clone()));
        }
        Ok(acc)
    }
}

/// `X[i, j]`: the leading dimensions of a tensor indexed, the rest kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct View<'db> {
    pub tensor: Tensor<'db>,
    pub indices: Vec<ViewIndex>,
    pub span: Span<'db>,
}

impl<'db> View<'db> {
    /// `X[b, 0:128]`
    pub fn text(&self) -> String {
        if self.indices.is_empty() {
            return self.tensor.name.clone();
        }
        let idx: Vec<String> = self.indices.iter().map(|i| i.to_string()).collect();
        format!("{}[{}]", self.tensor.name, idx.join(", "))
    }

    /// The same region as a region of the declared tensor a view reads (itself if it is not
    /// a view): races and reads are decided on the bytes, whatever tensor names them.
    pub fn in_base(&self) -> View<'db> {
        let TensorOrigin::View { base, dims } = &self.tensor.origin else {
            return self.clone();
        };
        let indices =
            wsp_ir::plan::region_in_base(dims, &self.tensor.shape, &self.indices, base.shape.len());
        match indices {
            Some(indices) => View {
                tensor: (**base).clone(),
                indices,
                span: self.span,
            },
            // Overflowing indices were reported where they were written.
            None => self.clone(),
        }
    }

    /// The shape left after indexing (a slice keeps its dimension).
    pub fn shape(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for (d, &extent) in self.tensor.shape.iter().enumerate() {
            match self.indices.get(d) {
                Some(ViewIndex::At(_)) => {}
                Some(ViewIndex::Range(lo, hi)) => out.push((hi - lo).max(0) as u64),
                Some(ViewIndex::Slice(_, len)) => out.push(*len),
                None => out.push(extent),
            }
        }
        out
    }
}
