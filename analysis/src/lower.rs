//! Lowering: each compiled program of a file (`NAME = ... .compile(target=...)`) to the plain
//! data of `wsp_ir`, which is all codegen and the runtime know of it. A file is lowered only
//! when it has no errors; the facts come from the same queries the checker ran.

use wsp_ir::plan::{self as ir_plan, Node};
use wsp_ir::schedule::{Dispatch, Timing};
use wsp_ir::{
    Action, Directive as IrDirective, FormatPiece, Program, Shown, Symbol, TraceLevel, TraceQuery,
};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

use crate::eval::{Eval, item_value};
use crate::files::File;
use crate::items::{Item, ItemKind, item_offsets, module_items};
use crate::kernels::{KernelInstance, lower_instance, lower_kernel};
use crate::values::schedule::{DirectiveDetail, DirectiveKind};
use crate::values::{AxisKind, Composite, IrPart, Policy, Schedule, Value, View, WorkloadCall};
use crate::workloads::{PlanNode, TaskArg, plan_nodes, workload_instance};

/// A file's programs and its top-level actions, ready for codegen and the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct LoweredFile {
    pub programs: Vec<Program>,
    /// `program.execute(seq=16)`, `print(...)`, `save_npy(Y, "y.npy")` and bare expressions, in
    /// file order, each with its statement's range (a notebook runs one cell's).
    pub actions: Vec<(TextRange, Action)>,
    /// Every tensor the file declares or derives, as each program carries them.
    pub tensors: Vec<ir_plan::Tensor>,
    /// Each task call of a compiled program (`attn[b, h](...)`): its kernel's name and where it
    /// is, so that a fault in a task (WSP602) can point at the call that made it.
    pub task_calls: Vec<(String, TextRange)>,
}

/// The run-time symbols of a schedule, by name, with their defaults: its DenseDyn axes, then
/// the named symbols its predicates and keys read (`symbol_u64("cut")`, default 0).
pub fn runtime_symbols(db: &dyn salsa::Database, s: &Schedule<'_>) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    let mut named: Vec<String> = Vec::new();
    for call in s.calls() {
        let plan = &workload_instance(db, call).0;
        for n in plan_nodes(&plan.body) {
            match n {
                PlanNode::Loop { vars, .. } => {
                    for v in vars {
                        if v.axis_kind == AxisKind::DenseDyn
                            && !out.iter().any(|(n, _)| *n == v.axis)
                        {
                            out.push((v.axis.clone(), v.extent.unwrap_or(0)));
                        }
                    }
                }
                PlanNode::Conditional { branches, .. } => {
                    for p in branches.iter().filter_map(|b| b.predicate.as_ref()) {
                        p.symbols(&mut named);
                    }
                }
                PlanNode::Task(t) => {
                    for a in &t.args {
                        if let TaskArg::Scalar {
                            symbol: Some(s), ..
                        } = a
                            && !named.contains(s)
                        {
                            named.push(s.clone());
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (k, _) in s.directives.iter().filter_map(|d| d.key()) {
        k.expr.symbols(&mut named);
    }
    for name in named {
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, 0));
        }
    }
    out
}

/// The file lowered to IR, whatever its diagnostics: `crate::check::lower_file` gives it only
/// to a file without errors.
#[salsa::tracked(returns(ref))]
pub fn lower_file_as_is(db: &dyn salsa::Database, file: File) -> Option<LoweredFile> {
    let mut programs = Vec::new();
    let mut actions = Vec::new();
    let offsets = item_offsets(db, file);
    // Symbols bound by `set_symbol_u64`/`set_axis_sizes`, by program, for its later runs.
    let mut symbols: Vec<(String, Vec<(String, u64)>)> = Vec::new();
    let started = started_pipelines(db, file);
    let mut explored: Vec<u32> = Vec::new();
    for (&item, &start) in module_items(db, file).iter().zip(offsets) {
        // An exploration runs where its statement stands, before what the statement does.
        if matches!(item.kind(db), ItemKind::Assign | ItemKind::Expr) {
            for e in item_value(db, item).explores.iter() {
                if explored.contains(&e.id) {
                    continue;
                }
                explored.push(e.id);
                if let Some((program, exploration)) = lower_exploration(db, item, e) {
                    programs.push(program);
                    let range = TextRange::at(start, item.syntax(db).text_range().len());
                    actions.push((range, Action::Explore(Box::new(exploration))));
                    if e.says_selected {
                        actions.push((range, selected(e.id)));
                    }
                }
            }
        }
        match item.kind(db) {
            ItemKind::Assign => {
                if let Some(p) = lower_program(db, item) {
                    programs.push(p.clone());
                } else if started.contains(item.name(db))
                    && let Some(p) = lower_started_pipeline(db, item)
                {
                    programs.push(p.clone());
                }
            }
            ItemKind::Expr => {
                if let Some((program, bound)) = bound_symbols(db, item) {
                    let at = match symbols.iter().position(|(p, _)| *p == program) {
                        Some(at) => at,
                        None => {
                            symbols.push((program, Vec::new()));
                            symbols.len() - 1
                        }
                    };
                    for (name, value) in bound {
                        let known = &mut symbols[at].1;
                        known.retain(|(n, _)| *n != name);
                        known.push((name, value));
                    }
                    continue;
                }
                for mut a in statement_actions(db, item) {
                    // An explicit `execute(seq=...)` wins over an earlier `set_symbol_u64`.
                    if let Action::Execute { program, bindings } = &mut a
                        && let Some((_, known)) = symbols.iter().find(|(p, _)| p == program)
                    {
                        for (name, value) in known {
                            if !bindings.iter().any(|(n, _)| n == name) {
                                bindings.push((name.clone(), *value));
                            }
                        }
                    }
                    let len = item.syntax(db).text_range().len();
                    actions.push((TextRange::at(start, len), a));
                }
            }
            _ => {}
        }
    }
    Some(LoweredFile {
        programs,
        actions,
        tensors: file_tensors(db, file),
        task_calls: task_calls(db, file),
    })
}

/// The task calls of the file's compiled programs, in file order, once each.
fn task_calls(db: &dyn salsa::Database, file: File) -> Vec<(String, TextRange)> {
    let items = module_items(db, file);
    let offsets: std::collections::HashMap<Item, wsp_syntax::TextSize> = items
        .iter()
        .copied()
        .zip(item_offsets(db, file).iter().copied())
        .collect();
    let mut out = Vec::new();
    for &item in items {
        let Value::Program(s) = &item_value(db, item).value else {
            continue;
        };
        for call in s.calls() {
            for n in crate::workloads::plan_nodes(&workload_instance(db, call).0.body) {
                if let PlanNode::Task(t) = n {
                    let at = offsets.get(&t.span.item).copied().unwrap_or_default();
                    out.push((t.instance.lowered_name(db), t.span.range + at));
                }
            }
        }
    }
    out.sort_by_key(|(_, r)| (r.start(), r.end()));
    out.dedup();
    out
}

/// The tensors a file binds, in file order; a tensor in another memory order after its
/// storage (`MemLayout`).
fn file_tensors(db: &dyn salsa::Database, file: File) -> Vec<ir_plan::Tensor> {
    module_items(db, file)
        .iter()
        .filter(|item| item.kind(db) == ItemKind::Assign)
        .flat_map(|&item| {
            let value = &item_value(db, item).value;
            let storage = match value {
                Value::Tensor(t) => match &t.origin {
                    crate::values::TensorOrigin::View { base, .. }
                        if base.name == ir_plan::storage_name(&t.name) =>
                    {
                        Some(ir_plan::Tensor {
                            name: base.name.clone(),
                            shape: base.shape.clone(),
                            dtype: base.dtype,
                            layout: base.layout.clone(),
                            init: base.init.clone(),
                            origin: ir_plan::TensorOrigin::Declared,
                        })
                    }
                    _ => None,
                },
                _ => None,
            };
            storage.into_iter().chain(lowered_tensor(db, item, value))
        })
        .collect()
}

fn lowered_tensor(
    db: &dyn salsa::Database,
    item: Item<'_>,
    value: &Value<'_>,
) -> Option<ir_plan::Tensor> {
    match value {
        Value::Tensor(t) if t.name == *item.name(db) => Some(ir_plan::Tensor {
            name: t.name.clone(),
            shape: t.shape.clone(),
            dtype: t.dtype,
            layout: t.layout.clone(),
            init: t.init.clone(),
            origin: match &t.origin {
                crate::values::TensorOrigin::Declared => ir_plan::TensorOrigin::Declared,
                crate::values::TensorOrigin::Derived { op, source } => {
                    ir_plan::TensorOrigin::Derived {
                        op: op.to_string(),
                        source: source.clone(),
                    }
                }
                crate::values::TensorOrigin::View { base, dims } => ir_plan::TensorOrigin::View {
                    base: base.name.clone(),
                    dims: dims.clone(),
                },
            },
        }),
        _ => None,
    }
}

/// The names `NAME.start()` statements start: `connect(...)` pipelines, each run as a
/// `cpu_sim` program of that name.
fn started_pipelines(db: &dyn salsa::Database, file: File) -> Vec<String> {
    let mut out = Vec::new();
    for &item in module_items(db, file) {
        if item.kind(db) != ItemKind::Expr {
            continue;
        }
        if let Some(Stmt::ExprStmt(s)) = item.stmt(db)
            && let Some(Expr::CallExpr(c)) = s.expr()
            && let Some(Expr::AttributeExpr(a)) = c.callee()
            && a.attr().is_some_and(|m| m.text() == "start")
            && let Some(Expr::NameExpr(n)) = a.receiver()
            && !out.contains(&n.text())
        {
            out.push(n.text());
        }
    }
    out
}

/// `pipeline = connect(...)` that a `pipeline.start()` runs: the program it is on `cpu_sim`.
#[salsa::tracked(returns(ref))]
fn lower_started_pipeline<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Option<Program> {
    let Value::Schedule(schedule) = &item_value(db, item).value else {
        return None;
    };
    let target = wsp_ir::Target::CpuSim;
    program_of(db, item, schedule, target)
}

/// The program an item binds, lowered: `NAME = workload(...).....compile(target=...)`.
#[salsa::tracked(returns(ref))]
pub fn lower_program<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Option<Program> {
    let Value::Program(schedule) = &item_value(db, item).value else {
        return None;
    };
    program_of(db, item, schedule, schedule.target?.target)
}

fn program_of<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    schedule: &Schedule<'db>,
    target: wsp_ir::Target,
) -> Option<Program> {
    let file = item.file(db);
    let call_list = schedule.calls();
    let mut kernels: Vec<KernelInstance<'db>> = Vec::new();
    let workloads = call_list
        .iter()
        .map(|&call| lower_workload(db, call, &mut kernels))
        .collect();
    let tensors = file_tensors(db, file);
    let mut axes = Vec::new();
    let mut channels = Vec::new();
    for &other in module_items(db, file) {
        if other.kind(db) != ItemKind::Assign {
            continue;
        }
        let name = other.name(db);
        match &item_value(db, other).value {
            Value::Axis(a) if a.name == *name => axes.push(ir_plan::Axis {
                name: a.name.clone(),
                kind: a.kind,
                size: a.size,
                lengths: a.lengths.clone(),
                indptr: a.indptr.clone(),
                indices: a.indices.clone(),
            }),
            Value::Channel(c) if c.name == *name => channels.push(ir_plan::Channel {
                name: c.name.clone(),
                label: c.label.clone(),
                depth: c.depth,
            }),
            _ => {}
        }
    }
    Some(Program {
        version: wsp_ir::VERSION,
        name: item.name(db).clone(),
        target,
        symbols: runtime_symbols(db, schedule)
            .into_iter()
            .map(|(name, default)| Symbol { name, default })
            .collect(),
        tensors,
        axes,
        channels,
        kernels: kernels.iter().map(|&k| lower_instance(db, k)).collect(),
        workloads,
        root: lower_composite(&schedule.root, &call_list),
        schedule: {
            let (schedule, _) = crate::workloads::resolve_task_params(db, schedule);
            lower_schedule(&schedule, &crate::workloads::field_extents(db, &schedule))
        },
        explored: schedule.explored.as_ref().map(|e| e.id),
    })
}

/// An exploration: the program it runs (the workload with its own schedule, on cpu_sim) and
/// its configurations, each lowered as a schedule is.
fn lower_exploration<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    e: &crate::values::Explore<'db>,
) -> Option<(Program, wsp_ir::explore::Exploration)> {
    use crate::eval::explore::default_affinity_key;
    let mut program = program_of(db, item, &e.schedule, wsp_ir::Target::CpuSim)?;
    // No Python name, so no program of the file's.
    program.name = format!("explore#{}", e.id);
    program.explored = None;
    let (resolved, _) = crate::workloads::resolve_task_params(db, &e.schedule);
    let extents = crate::workloads::field_extents(db, &resolved);
    let key = default_affinity_key(&crate::workloads::task_fields(db, &e.schedule));
    let lower = |choice: &crate::eval::explore::Choice<'_>| {
        let directives = Schedule {
            directives: choice.directives(e.span, &key),
            ..e.schedule.clone()
        };
        let mut config = choice.config(lower_schedule(&directives, &extents));
        config.rejected =
            directives.directives.iter().find_map(
                |d| match crate::values::schedule::applicability(e.target, d.kind) {
                    wsp_ir::schedule::Applicability::Rejected(why) => Some(format!(
                        "{} on {}: {why}",
                        d.kind.spelling(),
                        e.target.name()
                    )),
                    _ => None,
                },
            );
        config
    };
    // Configurations that set the same directives are one: `immediate` ignores its
    // parameter, `work_steal` its AICPU count.
    // (Directives hold floats, so they are told apart by their text.)
    let mut seen = std::collections::HashSet::new();
    let configs: Vec<wsp_ir::explore::Config> = e
        .space
        .choices()
        .iter()
        .map(lower)
        .filter(|c| seen.insert(format!("{:?}", c.directives)))
        .collect();
    let exploration = wsp_ir::explore::Exploration {
        id: e.id,
        label: e.label.clone(),
        program: program.name.clone(),
        configs,
        baseline: wsp_ir::explore::Config::as_written(&program.schedule),
        bindings: e.space.binding_sets(),
        metric: e.metric,
        trials: e.trials,
        warmup: e.warmup,
        verbose: e.verbose,
    };
    Some((program, exploration))
}

/// `auto_schedule(w, verbose=True)`'s line: `Auto-schedule selected: streams=2,
/// dispatch=work_steal`.
fn selected(id: u32) -> Action {
    use wsp_ir::explore::ExploreQuery;
    let field = |f: &str| FormatPiece::Explored {
        exploration: id,
        query: ExploreQuery::BestConfigField(f.into()),
        debug: None,
        conversion: None,
        spec: String::new(),
    };
    Action::Print(vec![Shown::Format(vec![
        FormatPiece::Text("Auto-schedule selected: streams=".into()),
        field("streams"),
        FormatPiece::Text(", dispatch=".into()),
        field("dispatch"),
    ])])
}

fn lower_composite(c: &Composite<'_>, call_list: &[WorkloadCall<'_>]) -> wsp_ir::Composite {
    match c {
        Composite::Call(call) => {
            wsp_ir::Composite::Call(call_list.iter().position(|c| c == call).unwrap_or(0) as u32)
        }
        Composite::Sequential(parts) => wsp_ir::Composite::Sequential(
            parts
                .iter()
                .map(|p| lower_composite(p, call_list))
                .collect(),
        ),
        Composite::Combine(parts) => wsp_ir::Composite::Combine(
            parts
                .iter()
                .map(|p| lower_composite(p, call_list))
                .collect(),
        ),
    }
}

fn lower_workload<'db>(
    db: &'db dyn salsa::Database,
    call: WorkloadCall<'db>,
    kernels: &mut Vec<KernelInstance<'db>>,
) -> wsp_ir::Workload {
    let workload = call.workload(db);
    let site = call.site(db);
    // The arguments as written: the call's text between its parentheses; for a `connect`
    // pipeline, the processes it connects.
    let processes = match call.args(db).first() {
        Some(Value::List(ps)) if workload.kind(db) != ItemKind::Workload => Some(
            ps.iter()
                .filter_map(|p| match p {
                    Value::Process(p) => Some(format!("process {:?}", p.name)),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    };
    let args = processes.unwrap_or_else(|| {
        site.item
            .syntax(db)
            .covering_element(site.range)
            .ancestors()
            .find_map(ast::CallExpr::cast)
            .map(|c| {
                c.args()
                    .map(|a| a.syntax().text().to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    });
    wsp_ir::Workload {
        name: workload.name(db).clone(),
        args,
        body: lower_nodes(db, &workload_instance(db, call).0.body, kernels),
    }
}

/// Where `span` lies in its file, as run-time errors point at it.
fn site_of(db: &dyn salsa::Database, span: crate::diagnostics::Span) -> ir_plan::Site {
    let file = span.item.file(db);
    let at = module_items(db, file)
        .iter()
        .position(|&i| i == span.item)
        .and_then(|k| item_offsets(db, file).get(k).copied())
        .unwrap_or_default();
    let r = span.range + at;
    ir_plan::Site {
        start: r.start().into(),
        end: r.end().into(),
    }
}

fn lower_nodes<'db>(
    db: &'db dyn salsa::Database,
    nodes: &[PlanNode<'db>],
    kernels: &mut Vec<KernelInstance<'db>>,
) -> Vec<Node> {
    nodes
        .iter()
        .map(|n| match n {
            PlanNode::Loop {
                kind,
                vars,
                body,
                span,
                ..
            } => Node::Loop {
                kind: *kind,
                vars: vars.clone(),
                body: lower_nodes(db, body, kernels),
                site: Some(site_of(db, *span)),
            },
            PlanNode::Conditional { branches, .. } => Node::Conditional {
                branches: branches
                    .iter()
                    .map(|b| ir_plan::Branch {
                        predicate: b.predicate.clone(),
                        body: lower_nodes(db, &b.body, kernels),
                        site: b.span.map(|s| site_of(db, s)),
                    })
                    .collect(),
            },
            PlanNode::Pipeline { stages, .. } => Node::Pipeline {
                stages: lower_nodes(db, stages, kernels),
            },
            PlanNode::Consume {
                channel, var, body, ..
            } => Node::Consume {
                channel: channel.clone(),
                var: var.clone(),
                body: lower_nodes(db, body, kernels),
            },
            PlanNode::Task(t) => {
                if !kernels.contains(&t.instance) {
                    kernels.push(t.instance);
                }
                Node::Task(ir_plan::Task {
                    site: Some(site_of(db, t.span)),
                    id: t.id,
                    kernel: t.instance.lowered_name(db),
                    index: t.index.clone(),
                    fields: t.fields.clone(),
                    args: t
                        .args
                        .iter()
                        .map(|a| match a {
                            TaskArg::Tile {
                                param,
                                direction,
                                view,
                            } => ir_plan::TaskArg::Tile {
                                param: param.clone(),
                                direction: *direction,
                                view: lower_view(view),
                            },
                            TaskArg::Scalar {
                                param,
                                value,
                                symbol,
                            } => ir_plan::TaskArg::Scalar {
                                param: param.clone(),
                                value: value.0,
                                symbol: symbol.clone(),
                            },
                        })
                        .collect(),
                })
            }
            PlanNode::Send { channel, task, .. } => Node::Send {
                channel: channel.clone(),
                task: *task,
            },
            PlanNode::SlotLoad {
                slot,
                view,
                row,
                col,
            } => Node::SlotLoad {
                slot: *slot,
                view: lower_view(view),
                row: *row,
                col: *col,
            },
        })
        .collect()
}

fn lower_view(v: &View<'_>) -> ir_plan::View {
    ir_plan::View {
        tensor: v.tensor.name.clone(),
        indices: v.indices.clone(),
    }
}

/// The directives, a tuple key of `affinity`, `dispatch_by` and `stream_by` combined row-major
/// over `extents` (checked by `program_checks`).
fn lower_schedule(
    s: &Schedule<'_>,
    extents: &std::collections::HashMap<String, u64>,
) -> Vec<IrDirective> {
    let row_major = |k: &crate::values::Key| {
        k.row_major(|f| extents.get(f).copied())
            .unwrap_or_else(|_| k.expr.clone())
    };
    s.directives
        .iter()
        .filter_map(|d| {
            Some(match (&d.detail, d.kind) {
                (DirectiveDetail::Policy(p), _) => match p {
                    Policy::RoundRobin(n) => {
                        IrDirective::Dispatch(Dispatch::RoundRobin(u32::try_from(*n).ok()?))
                    }
                    Policy::Affinity(k, n) => IrDirective::Dispatch(Dispatch::Affinity(
                        row_major(k),
                        u32::try_from(*n).ok()?,
                    )),
                    Policy::Hash(k, n) => IrDirective::Dispatch(Dispatch::Hash(
                        k.expr.clone(),
                        u32::try_from(*n).ok()?,
                    )),
                    Policy::DispatchBy(k, n) => IrDirective::Dispatch(Dispatch::DispatchBy(
                        row_major(k),
                        u32::try_from(*n).ok()?,
                    )),
                    Policy::WorkSteal => IrDirective::Dispatch(Dispatch::WorkSteal),
                    Policy::Immediate => IrDirective::Timing(Timing::Immediate),
                    Policy::Batched(n) => {
                        IrDirective::Timing(Timing::Batched(u32::try_from(*n).ok()?))
                    }
                    Policy::Interleaved(n) => {
                        IrDirective::Timing(Timing::Interleaved(u32::try_from(*n).ok()?))
                    }
                    Policy::RateLimit(r) => IrDirective::Timing(Timing::RateLimit(r.0)),
                    Policy::TaskGraph(_, value) => IrDirective::TaskGraph {
                        kind: d.kind,
                        value: value.clone(),
                    },
                },
                (DirectiveDetail::Count(n), DirectiveKind::Streams) => {
                    IrDirective::Streams(u32::try_from(*n).ok()?)
                }
                (DirectiveDetail::Key(k), DirectiveKind::StreamBy) => {
                    IrDirective::StreamBy(row_major(k))
                }
                (DirectiveDetail::Window(w), _) => IrDirective::Window {
                    size: u64::try_from(w.size).ok()?,
                    unit: w.unit.clone(),
                    mode: w.mode,
                },
                (DirectiveDetail::Grid(g), _) => IrDirective::SpatialMap(g.clone()),
                _ => return None,
            })
        })
        .collect()
}

/// `program.set_symbol_u64(name, value)` and `program.set_axis_sizes({...})`: the program's
/// name and the symbols bound (checked by `programs::execute_checks`).
fn bound_symbols(db: &dyn salsa::Database, item: Item<'_>) -> Option<(String, Vec<(String, u64)>)> {
    let Some(Stmt::ExprStmt(s)) = item.stmt(db) else {
        return None;
    };
    let Some(Expr::CallExpr(c)) = s.expr() else {
        return None;
    };
    let Some(Expr::AttributeExpr(a)) = c.callee() else {
        return None;
    };
    let Some(Expr::NameExpr(receiver)) = a.receiver() else {
        return None;
    };
    let bound = item_value(db, item)
        .executes
        .iter()
        .filter(|e| !e.runs)
        .flat_map(|e| &e.bindings)
        .filter_map(|b| match b.value {
            Value::Int(n) => Some((b.name.clone(), u64::try_from(n).ok()?)),
            _ => None,
        })
        .collect::<Vec<_>>();
    let setter = matches!(
        a.attr()?.text(),
        "set_symbol_u64" | "set_symbol_f32" | "set_axis_sizes"
    );
    setter.then(|| (receiver.text().to_string(), bound))
}

/// What a top-level statement does when the file runs: an expression statement's action, a
/// `with` block's `json.dump`, a `for` loop's prints unrolled.
fn statement_actions<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Action> {
    match item.stmt(db) {
        Some(Stmt::ExprStmt(s)) => s
            .expr()
            .and_then(|e| action(db, item, e))
            .into_iter()
            .collect(),
        Some(Stmt::WithStmt(w)) => Eval::new(db, item)
            .with_json(&w)
            .map(|j| Action::WriteJson {
                value: j.value,
                path: j.path,
                indent: j.indent,
            })
            .into_iter()
            .collect(),
        Some(Stmt::ForStmt(f)) => {
            let mut out = Vec::new();
            let mut budget = crate::eval::MAX_UNROLLED;
            let lists = |v: &Value<'db>| match kernel_ir(db, v) {
                Some(Value::List(vs)) => Some(vs),
                _ => None,
            };
            Eval::new(db, item).module_for(&f, &mut budget, &lists, &mut |eval, e| {
                if let Some(a) = print_action(eval, e) {
                    out.push(a);
                }
            });
            out
        }
        _ => Vec::new(),
    }
}

/// `print(...)`: its values, as the statement shows them.
fn print_action(eval: &mut Eval<'_>, e: &Expr) -> Option<Action> {
    let Expr::CallExpr(c) = e else { return None };
    let Some(Expr::NameExpr(callee)) = c.callee() else {
        return None;
    };
    if callee.text() != "print" {
        return None;
    }
    let args = c.args().filter_map(|a| a.value());
    Some(Action::Print(
        args.map(|a| shown(eval, &a, python_str)).collect(),
    ))
}

/// What a top-level expression statement does when the file runs: `program.execute(seq=16)`
/// (the program's name and the symbols bound), `save_npy(T, "path")`, `print(...)`, or, for
/// any other expression, its value to show.
fn action(db: &dyn salsa::Database, item: Item<'_>, expr: Expr) -> Option<Action> {
    let Expr::CallExpr(c) = &expr else {
        return Some(Action::Show(shown(
            &mut Eval::new(db, item),
            &expr,
            python_repr,
        )));
    };
    if let Some(print) = print_action(&mut Eval::new(db, item), &expr) {
        return Some(print);
    }
    if let Some(Expr::NameExpr(callee)) = c.callee()
        && callee.text() == "save_npy"
    {
        let mut eval = Eval::new(db, item);
        let mut args = c.args().filter_map(|a| a.value());
        let Value::Tensor(t) = eval.expr(&args.next()?) else {
            return None;
        };
        let Value::Str(path) = eval.expr(&args.next()?) else {
            return None;
        };
        return Some(Action::SaveNpy {
            tensor: t.name.clone(),
            path,
        });
    }
    if let Some(Expr::AttributeExpr(a)) = c.callee()
        && a.attr().is_some_and(|m| m.text() == "print_summary")
        && let Value::Trace(t) = Eval::new(db, item).expr(&expr)
        && let (program, TraceQuery::PrintSummary) = *t
    {
        let query = TraceQuery::PrintSummary;
        return Some(Action::Print(vec![Shown::Trace { program, query }]));
    }
    if let Some(Expr::AttributeExpr(a)) = c.callee()
        && a.attr().is_some_and(|m| m.text() == "print_summary")
        && let Value::Explored(e) = Eval::new(db, item).expr(&expr)
        && e.query == wsp_ir::explore::ExploreQuery::PrintSummary
    {
        return Some(Action::Print(vec![Shown::Explored {
            exploration: e.explore.id,
            query: e.query,
        }]));
    }
    let Some(Expr::AttributeExpr(a)) = c.callee() else {
        return None;
    };
    let Some(Expr::NameExpr(receiver)) = a.receiver() else {
        return None;
    };
    let method = a.attr()?.text().to_string();
    let mut eval = Eval::new(db, item);
    let program = receiver.text();
    match method.as_str() {
        "disable_tracing" => {
            return Some(Action::EnableTracing {
                program: program.to_string(),
                level: TraceLevel::None,
            });
        }
        "enable_tracing" => {
            let level = match c.args().find_map(|a| a.value()).map(|l| eval.expr(&l)) {
                Some(Value::Member(_, name)) => TraceLevel::from_name(name)?,
                _ => TraceLevel::Timing,
            };
            return Some(Action::EnableTracing {
                program: program.to_string(),
                level,
            });
        }
        "clear_trace" => {
            return Some(Action::ClearTrace {
                program: program.to_string(),
            });
        }
        _ => {}
    }
    if method == "start" {
        return match eval.resolve(&program, receiver.syntax().text_range()) {
            Value::Schedule(_) => Some(Action::Execute {
                program,
                bindings: Vec::new(),
            }),
            _ => None,
        };
    }
    if method != "execute" {
        return None;
    }
    if !matches!(
        eval.resolve(&program, receiver.syntax().text_range()),
        Value::Program(_)
    ) {
        return None;
    }
    let bindings = c
        .args()
        .filter_map(|arg| {
            let name = arg.keyword()?.text().to_string();
            match eval.expr(&arg.value()?) {
                Value::Int(n) => Some((name, u64::try_from(n).ok()?)),
                _ => None,
            }
        })
        .collect();
    Some(Action::Execute { program, bindings })
}

/// A printed or shown value: `program.stats` and its fields and tensors are read when the
/// statement runs; anything else is known now, and `text` gives it as Python would (`str()`
/// for `print`, `repr()` for a cell's value).
fn shown(eval: &mut Eval<'_>, e: &Expr, text: fn(&Value<'_>) -> String) -> Shown {
    if let Expr::Literal(l) = e
        && crate::eval::is_fstring(l)
    {
        return formatted(eval, l);
    }
    match eval.expr(e) {
        v @ Value::KernelIr(..) => Shown::Text(text(&kernel_ir(eval.db, &v).unwrap_or(v))),
        Value::Stats => match stats_field(e) {
            Some((program, None)) => Shown::Stats { program },
            Some((program, Some(field))) => Shown::StatsField { program, field },
            None => Shown::Text("<stats>".into()),
        },
        Value::Tensor(t) => Shown::Tensor(t.name.clone()),
        Value::Trace(t) => {
            let (program, query) = *t;
            Shown::Trace { program, query }
        }
        Value::Explored(e) => Shown::Explored {
            exploration: e.explore.id,
            query: e.query,
        },
        Value::Complete => match e {
            Expr::CallExpr(c) => match c.callee() {
                Some(Expr::AttributeExpr(a)) => match a.receiver() {
                    Some(Expr::NameExpr(p)) => Shown::Complete {
                        program: p.text().to_string(),
                    },
                    _ => Shown::Text("False".into()),
                },
                _ => Shown::Text("False".into()),
            },
            _ => Shown::Text("False".into()),
        },
        v => Shown::Text(text(&v)),
    }
}

/// `KERNEL.trace()` and its parts as the values Python would have: the kernel's text, its ops'
/// text lines, `(name, type)` per parameter, the tile parameters' texts, a length.
fn kernel_ir<'db>(db: &'db dyn salsa::Database, v: &Value<'db>) -> Option<Value<'db>> {
    let Value::KernelIr(k, part) = v else {
        return None;
    };
    let kernel = lower_kernel(db, *k);
    let texts = |list: Vec<String>| Value::List(list.into_iter().map(Value::Str).collect());
    let list = |part: &IrPart| match part {
        IrPart::Ops => texts(kernel.op_texts()),
        IrPart::Tiles => texts(
            kernel
                .param_texts()
                .into_iter()
                .zip(&kernel.params)
                .filter(|(_, p)| matches!(p.ty, wsp_ir::kernel::ParamType::Tile(..)))
                .map(|(t, _)| t)
                .collect(),
        ),
        IrPart::Params => Value::List(
            kernel
                .params
                .iter()
                .map(|p| {
                    let ty = wsp_ir::text::type_text(&p.ty);
                    Value::Tuple(vec![Value::Str(p.name.clone()), Value::Str(ty)])
                })
                .collect(),
        ),
        IrPart::Whole | IrPart::Len(_) => Value::Unknown,
    };
    Some(match part {
        IrPart::Whole => Value::Str(kernel.to_string().trim_end().to_string()),
        IrPart::Len(inner) => match list(inner) {
            Value::List(vs) => Value::Int(vs.len() as i64),
            _ => return None,
        },
        part => list(part),
    })
}

/// `program.stats` (the program, no field) or `program.stats.FIELD`, by their syntax once the
/// value is checked.
fn stats_field(e: &Expr) -> Option<(String, Option<String>)> {
    let stats_of = |e: &Expr| match e {
        Expr::AttributeExpr(a) if a.attr().is_some_and(|n| n.text() == "stats") => {
            match a.receiver() {
                Some(Expr::NameExpr(p)) => Some(p.text().to_string()),
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(program) = stats_of(e) {
        return Some((program, None));
    }
    if let Expr::AttributeExpr(a) = e
        && let (Some(inner), Some(field)) = (a.receiver(), a.attr())
        && let Some(program) = stats_of(&inner)
    {
        return Some((program, Some(field.text().to_string())));
    }
    None
}

/// A printed f-string: its text and known fields formatted now, its `program.stats` fields
/// when the statement runs.
fn formatted(eval: &mut Eval<'_>, l: &wsp_syntax::ast::Literal) -> Shown {
    use crate::eval::{FieldValue, Piece};
    let mut pieces: Vec<FormatPiece> = Vec::new();
    let push_text = |pieces: &mut Vec<FormatPiece>, t: String| match pieces.last_mut() {
        Some(FormatPiece::Text(last)) => last.push_str(&t),
        _ => pieces.push(FormatPiece::Text(t)),
    };
    for (piece, range) in eval.fstring_pieces(l).unwrap_or_default() {
        match piece {
            Piece::Text(t) => push_text(&mut pieces, t),
            Piece::Field(f, FieldValue::Known(v)) => {
                let t = eval.format_field(&f, &v, range).unwrap_or_default();
                push_text(&mut pieces, t);
            }
            Piece::Field(f, FieldValue::Runtime(e)) => match (stats_field(&e), eval.expr(&e)) {
                (_, v @ Value::KernelIr(..)) => {
                    let value = match kernel_ir(eval.db, &v) {
                        Some(Value::Int(n)) => wsp_ir::pyformat::PyValue::Int(n),
                        Some(v) => wsp_ir::pyformat::PyValue::Str(python_str(&v)),
                        None => wsp_ir::pyformat::PyValue::None,
                    };
                    let t = eval.format_field(&f, &value, range).unwrap_or_default();
                    push_text(&mut pieces, t);
                }
                (_, Value::Trace(t)) => {
                    let (program, query) = *t;
                    pieces.push(FormatPiece::Trace {
                        program,
                        query,
                        debug: f.debug.clone(),
                        conversion: f.conversion,
                        spec: f.spec.clone().unwrap_or_default(),
                    })
                }
                (_, Value::Explored(e)) => pieces.push(FormatPiece::Explored {
                    exploration: e.explore.id,
                    query: e.query,
                    debug: f.debug.clone(),
                    conversion: f.conversion,
                    spec: f.spec.clone().unwrap_or_default(),
                }),
                (Some((program, field)), _) => pieces.push(FormatPiece::Stats {
                    program,
                    field,
                    debug: f.debug.clone(),
                    conversion: f.conversion,
                    spec: f.spec.clone().unwrap_or_default(),
                }),
                (None, _) => push_text(&mut pieces, "<stats>".into()),
            },
            Piece::Field(_, FieldValue::Error) => {}
        }
    }
    Shown::Format(pieces)
}

/// Python's `str()` of a checked value; what has no Python text (a kernel, an axis) is shown
/// as Python shows an object, by what it is.
fn python_str(v: &Value<'_>) -> String {
    match v {
        Value::Str(s) => s.clone(),
        other => python_repr(other),
    }
}

fn python_repr(v: &Value<'_>) -> String {
    let items = |vs: &[Value<'_>]| vs.iter().map(python_repr).collect::<Vec<_>>().join(", ");
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => wsp_ir::pyformat::float_repr(f.0),
        Value::Str(s) => format!("{s:?}").replace('"', "'"),
        Value::Tuple(vs) if vs.len() == 1 => format!("({},)", items(vs)),
        Value::Tuple(vs) => format!("({})", items(vs)),
        Value::List(vs) => format!("[{}]", items(vs)),
        Value::DType(d) => format!("DType.{}", d.name().to_uppercase()),
        other => format!("<{}>", other.describe()),
    }
}
