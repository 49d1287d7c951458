//! Workloads: parameters, calls, and the body walked into a plan of loops, blocks and tasks,
//! with task arguments checked against kernel parameters and views against tensors.
//!
//! A body is analyzed once generically (unannotated parameters unknown), reporting what holds
//! for every call, and once per call with the call's arguments: what only the call reveals is
//! reported at the call with a note into the body.

use crate::diagnostics::{Diag, Span};
use crate::eval::{item_value, workload_params};
use crate::items::{Item, ItemKind, module_items};
use crate::kernels::Direction;
use crate::symbols::Use;
use crate::values::{AxisKind, Value, View, WorkloadCall};
use walker::analyze;
pub use wsp_ir::plan::{LoopKind, LoopVar};
use wsp_ir::{Affine, ScalarExpr};
use wsp_syntax::TextRange;

/// How a task uses one kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum TaskArg<'db> {
    Tile {
        param: String,
        direction: Direction,
        /// Boxed: a view holds its tensor, and plans hold many scalar arguments too.
        view: Box<View<'db>>,
    },
    Scalar {
        param: String,
        value: crate::values::F64,
        /// `Symbol("s")`: the run-time symbol whose bound value the task takes instead.
        symbol: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Task<'db> {
    pub id: u32,
    /// The kernel with the tile types this task binds (a JIT-style kernel's), which is what
    /// is lowered and run.
    pub instance: crate::kernels::KernelInstance<'db>,
    pub kernel: Item<'db>,
    pub kernel_name: String,
    /// `k[b, h]`: the index, and the field names keys use (`t.b`).
    pub index: Vec<Affine>,
    pub fields: Vec<String>,
    pub args: Vec<TaskArg<'db>>,
    pub span: Span<'db>,
}

/// A predicate (`None` for `P.otherwise()`) and the nodes it guards.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Branch<'db> {
    pub predicate: Option<ScalarExpr>,
    pub body: Vec<PlanNode<'db>>,
    /// The `P.when(...)` call, for run-time errors in its predicate.
    pub span: Option<Span<'db>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum PlanNode<'db> {
    Loop {
        kind: LoopKind,
        vars: Vec<LoopVar>,
        body: Vec<PlanNode<'db>>,
        span: Span<'db>,
        callee: Span<'db>,
    },
    /// `with P.when(...)` / `P.otherwise()` chains: the first branch whose predicate holds.
    Conditional {
        branches: Vec<Branch<'db>>,
        span: Span<'db>,
    },
    Pipeline {
        stages: Vec<PlanNode<'db>>,
        span: Span<'db>,
    },
    Consume {
        channel: String,
        var: String,
        extent: Option<u64>,
        body: Vec<PlanNode<'db>>,
        span: Span<'db>,
    },
    Task(Task<'db>),
    Send {
        channel: String,
        task: u32,
        span: Span<'db>,
    },
    SlotLoad {
        slot: i64,
        view: View<'db>,
        row: i64,
        col: i64,
    },
}

impl<'db> PlanNode<'db> {
    /// The nodes directly inside this one, in order.
    pub fn children(&self) -> impl Iterator<Item = &PlanNode<'db>> {
        let (blocks, branches): (&[PlanNode<'db>], &[Branch<'db>]) = match self {
            PlanNode::Loop { body, .. } | PlanNode::Consume { body, .. } => (body, &[]),
            PlanNode::Pipeline { stages, .. } => (stages, &[]),
            PlanNode::Conditional { branches, .. } => (&[], branches),
            PlanNode::Task(_) | PlanNode::Send { .. } | PlanNode::SlotLoad { .. } => (&[], &[]),
        };
        blocks.iter().chain(branches.iter().flat_map(|b| &b.body))
    }
}

/// Numbers a plan's tasks from `first` on, in order (and the sends that name them): a plan
/// taken into another one (a `cond` branch) keeps task ids unique in it. How many it has.
pub(crate) fn renumber_tasks(nodes: &mut [PlanNode<'_>], first: u32) -> u32 {
    let mut most = 0;
    for n in nodes.iter_mut() {
        match n {
            PlanNode::Task(t) => {
                most = most.max(t.id + 1);
                t.id += first;
            }
            PlanNode::Send { task, .. } => *task += first,
            PlanNode::Loop { body, .. } | PlanNode::Consume { body, .. } => {
                most = most.max(renumber_tasks(body, first));
            }
            PlanNode::Pipeline { stages, .. } => most = most.max(renumber_tasks(stages, first)),
            PlanNode::Conditional { branches, .. } => {
                for b in branches {
                    most = most.max(renumber_tasks(&mut b.body, first));
                }
            }
            PlanNode::SlotLoad { .. } => {}
        }
    }
    most
}

/// Every node of a plan, each before the nodes inside it.
pub fn plan_nodes<'p, 'db>(nodes: &'p [PlanNode<'db>]) -> impl Iterator<Item = &'p PlanNode<'db>> {
    let mut stack: Vec<&'p PlanNode<'db>> = nodes.iter().rev().collect();
    std::iter::from_fn(move || {
        let n = stack.pop()?;
        let start = stack.len();
        stack.extend(n.children());
        stack[start..].reverse();
        Some(n)
    })
}

/// The fields the tasks of a program have (`t.b` in a key), in the order first seen.
pub fn task_fields(db: &dyn salsa::Database, s: &crate::values::Schedule<'_>) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    for call in s.calls() {
        for n in plan_nodes(&workload_instance(db, call).0.body) {
            if let PlanNode::Task(t) = n {
                for f in &t.fields {
                    if !fields.contains(f) {
                        fields.push(f.clone());
                    }
                }
            }
        }
    }
    fields
}

/// The task fields of a program whose loops have a static extent (a Dense axis or a literal
/// one), each with the largest: what a tuple key combines row-major over. A run-time extent
/// (DenseDyn, Ragged, Sparse) has none.
pub fn field_extents(
    db: &dyn salsa::Database,
    s: &crate::values::Schedule<'_>,
) -> std::collections::HashMap<String, u64> {
    let mut out = std::collections::HashMap::new();
    for call in s.calls() {
        for n in plan_nodes(&workload_instance(db, call).0.body) {
            let PlanNode::Loop { vars, .. } = n else {
                continue;
            };
            for v in vars {
                if v.axis_kind == crate::values::AxisKind::Dense
                    && let Some(e) = v.extent
                {
                    let at = out.entry(v.name.clone()).or_insert(e);
                    *at = (*at).max(e);
                }
            }
        }
    }
    out
}

/// `s` with each key's `t.params[k]` (the original's task parameters: a task's index, in
/// order) made the field every task of the program has at position k, and where they differ
/// or a task has none there, what to report at the directive.
pub fn resolve_task_params<'db>(
    db: &'db dyn salsa::Database,
    s: &crate::values::Schedule<'db>,
) -> (
    crate::values::Schedule<'db>,
    Vec<(crate::diagnostics::Span<'db>, String)>,
) {
    use crate::values::schedule::DirectiveDetail;
    use crate::values::{Key, Policy};
    let mut tasks: Vec<(String, Vec<String>)> = Vec::new();
    for call in s.calls() {
        for n in plan_nodes(&workload_instance(db, call).0.body) {
            if let PlanNode::Task(t) = n {
                tasks.push((t.kernel.name(db).clone(), t.fields.clone()));
            }
        }
    }
    // The field at position k, or why there is none.
    let field = |k: usize| -> Result<String, String> {
        let mut seen: Vec<&str> = Vec::new();
        for (kernel, fields) in &tasks {
            let Some(f) = fields.get(k) else {
                return Err(format!(
                    "`t.params[{k}]` is a task's parameter {k} (counted from 0), and the tasks of `{kernel}` have {} parameter{}",
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                ));
            };
            if !seen.contains(&f.as_str()) {
                seen.push(f);
            }
        }
        match seen.as_slice() {
            [f] => Ok(f.to_string()),
            [] => Err(format!(
                "`t.params[{k}]` names no field: the program has no tasks"
            )),
            many => Err(format!(
                "`t.params[{k}]` is a different field in different tasks ({}); name the field (`t.{}`)",
                many.iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                many[0]
            )),
        }
    };
    fn substitute(
        e: &mut ScalarExpr,
        field: &dyn Fn(usize) -> Result<String, String>,
        errors: &mut Vec<String>,
    ) {
        if let ScalarExpr::Var(v) = e
            && let Some(k) = v
                .strip_prefix("params[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|k| k.parse::<usize>().ok())
        {
            match field(k) {
                Ok(f) => *v = f,
                Err(m) if !errors.contains(&m) => errors.push(m),
                Err(_) => {}
            }
            return;
        }
        match e {
            ScalarExpr::Const(_)
            | ScalarExpr::Var(_)
            | ScalarExpr::Slot(_)
            | ScalarExpr::Symbol(_) => {}
            ScalarExpr::Element(_, idx) => {
                idx.iter_mut().for_each(|i| substitute(i, field, errors))
            }
            ScalarExpr::Not(x) | ScalarExpr::Neg(x) => substitute(x, field, errors),
            ScalarExpr::Binary(_, a, b) => {
                substitute(a, field, errors);
                substitute(b, field, errors);
            }
            ScalarExpr::Select(abc) => abc.iter_mut().for_each(|x| substitute(x, field, errors)),
        }
    }
    let mut out = s.clone();
    let mut reports = Vec::new();
    for d in &mut out.directives {
        let key: Option<&mut Key> = match &mut d.detail {
            DirectiveDetail::Key(k)
            | DirectiveDetail::Policy(
                Policy::Affinity(k, _) | Policy::DispatchBy(k, _) | Policy::Hash(k, _),
            ) => Some(k),
            _ => None,
        };
        let Some(key) = key else { continue };
        let mut errors = Vec::new();
        substitute(&mut key.expr, &field, &mut errors);
        for p in &mut key.parts {
            substitute(p, &field, &mut errors);
        }
        reports.extend(errors.into_iter().map(|m| (d.span, m)));
    }
    (out, reports)
}

/// What orders the iterations or branches of a block: its dependency kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum BlockKind {
    Loop(LoopKind),
    Pipeline,
    Conditional,
    /// `with consume(ch) as t:`, on this channel.
    Consume(String),
}

impl BlockKind {
    pub fn name(&self) -> &'static str {
        match self {
            BlockKind::Loop(k) => k.name(),
            BlockKind::Pipeline => "Pipeline",
            BlockKind::Conditional => "Conditional",
            BlockKind::Consume(_) => "Consume",
        }
    }

    /// What the kind means for the order of the block's work.
    pub fn meaning(&self) -> &'static str {
        match self {
            BlockKind::Loop(LoopKind::Independent) => {
                "iterations have no order between them and may run in parallel"
            }
            BlockKind::Loop(LoopKind::Sequential) => "each iteration runs after the one before",
            BlockKind::Loop(LoopKind::Selected) => {
                "iterates the selected entries of one sparse row, in parallel"
            }
            BlockKind::Pipeline => "the stages run concurrently, connected by channels",
            BlockKind::Conditional => {
                "runs the first branch whose predicate holds, decided at run time"
            }
            BlockKind::Consume(_) => {
                "runs the body once per task received, after that task finished"
            }
        }
    }
}

/// A loop or `with` block of a workload body.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Block {
    /// `for b in P(batch)` / `with P.pipe()`, relative to the workload item.
    pub header: TextRange,
    /// The whole statement: where its variables are in scope.
    pub scope: TextRange,
    pub kind: BlockKind,
    pub vars: Vec<LoopVar>,
}

#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct WorkloadPlan<'db> {
    pub body: Vec<PlanNode<'db>>,
    /// The body's loops and `with` blocks, in source order, for hover.
    pub blocks: Vec<Block>,
    pub diags: Vec<Diag<'db>>,
    /// The names the body resolved (for navigation).
    pub uses: Vec<Use<'db>>,
}

/// The body analyzed for every call: parameters are unknown.
#[salsa::tracked(returns(ref))]
pub fn workload_generic<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> WorkloadPlan<'db> {
    let params = &workload_params(db, item).0;
    let args: Vec<Value<'db>> = params.iter().map(|_| Value::Unknown).collect();
    analyze(db, item, &args, None)
}

/// The body of the process an item binds (`loader = process("loader")...body(...)`),
/// walked alone: what holds in any pipeline it runs in (the extents of what it consumes
/// unknown). Its diagnostics and names belong to the item; `connect` reports only what its
/// pipeline adds.
#[salsa::tracked(returns(ref))]
pub fn process_generic<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> WorkloadPlan<'db> {
    walker::process_alone(db, item)
}

/// The body for one call's arguments. Its diagnostics are those the generic analysis did not
/// find, placed at the call with a note into the body.
#[salsa::tracked(returns(ref))]
pub fn workload_instance<'db>(
    db: &'db dyn salsa::Database,
    call: WorkloadCall<'db>,
) -> (WorkloadPlan<'db>, Vec<Diag<'db>>) {
    let item = call.workload(db);
    let mut plan = analyze(db, item, call.args(db), Some(call.site(db)));
    let found = std::mem::take(&mut plan.diags);
    let moved = at_call(db, call, found, &workload_generic(db, item).diags);
    (plan, moved)
}

/// The diagnostics found in a call's body that the generic body (`generic`) does not have,
/// placed at the call with a note into the body.
pub(crate) fn at_call<'db>(
    db: &'db dyn salsa::Database,
    call: WorkloadCall<'db>,
    found: Vec<Diag<'db>>,
    generic: &[Diag<'db>],
) -> Vec<Diag<'db>> {
    let workload = call.workload(db);
    if workload.kind(db) != ItemKind::Workload {
        // A `connect` pipeline: its processes' bodies are not a def the call instantiates,
        // so what they report stays where it is written.
        return found;
    }
    let name = workload.name(db);
    found
        .into_iter()
        .filter(|d| !reported_in(d, generic))
        .map(|d| {
            let mut moved = Diag::new(
                d.code,
                call.site(db),
                format!("in this call of `{name}`: {}", d.message),
            )
            .with_related(d.span, "here in the body");
            moved.related.extend(d.related);
            moved
        })
        .collect()
}

/// Whether `d` is among `reported` (the same code at the same place).
pub(crate) fn reported_in(d: &Diag<'_>, reported: &[Diag<'_>]) -> bool {
    reported
        .iter()
        .any(|g| g.code == d.code && g.span == d.span)
}

/// The plan of the workload's first call in its file (its axes and extents are known), or
/// the generic plan when nothing calls it.
pub fn first_call_plan<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
) -> &'db WorkloadPlan<'db> {
    match first_calls(db, item.file(db)).get(&item) {
        Some(&call) => &workload_instance(db, call).0,
        None => workload_generic(db, item),
    }
}

/// Each called workload's first call in the file, found in one pass over the items (inlay
/// hints ask for every workload: a pass per workload made them workloads × items).
#[salsa::tracked(returns(ref))]
fn first_calls(
    db: &dyn salsa::Database,
    file: crate::files::File,
) -> std::collections::HashMap<Item<'_>, WorkloadCall<'_>> {
    let mut first = std::collections::HashMap::new();
    for &other in module_items(db, file) {
        crate::work::step(1);
        if !matches!(other.kind(db), ItemKind::Assign | ItemKind::Expr) {
            continue;
        }
        if let Value::Schedule(s) | Value::Program(s) = &item_value(db, other).value {
            for call in s.calls() {
                first.entry(call.workload(db)).or_insert(call);
            }
        }
    }
    first
}

/// The number of tasks a plan makes when it is the same on every run: loops over static
/// `Dense` extents, conditionals whose every branch (an `otherwise` among them) makes as many.
pub fn static_task_count(nodes: &[PlanNode<'_>]) -> Option<u64> {
    nodes
        .iter()
        .try_fold(0u64, |sum, n| sum.checked_add(node_task_count(n)?))
}

fn node_task_count(node: &PlanNode<'_>) -> Option<u64> {
    match node {
        PlanNode::Task(_) => Some(1),
        PlanNode::Send { .. } | PlanNode::SlotLoad { .. } => Some(0),
        PlanNode::Loop { vars, body, .. } => {
            vars.iter().try_fold(static_task_count(body)?, |n, v| {
                let fixed = v.axis_kind == AxisKind::Dense && v.row.is_none();
                if fixed {
                    n.checked_mul(v.extent?)
                } else {
                    None
                }
            })
        }
        PlanNode::Pipeline { stages, .. } => static_task_count(stages),
        PlanNode::Consume { extent, body, .. } => {
            extent.as_ref()?.checked_mul(static_task_count(body)?)
        }
        PlanNode::Conditional { branches, .. } => {
            let counts: Option<Vec<u64>> = branches
                .iter()
                .map(|b| static_task_count(&b.body))
                .collect();
            let counts = counts?;
            let exhaustive = branches.last().is_some_and(|b| b.predicate.is_none());
            match counts.first() {
                None => Some(0),
                Some(&c) if counts.iter().all(|&n| n == c) && (exhaustive || c == 0) => Some(c),
                _ => None,
            }
        }
    }
}

mod walker;
