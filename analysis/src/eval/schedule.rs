//! Schedules: methods of workloads and programs (directives, `compile`, `execute`) and task keys.

use super::bind::Args;
use super::expr::compare_op;
use super::{Binding, Eval, Execute};
use crate::diagnostics::{Code, Diag, Span};
use crate::names::suggest;
use crate::values::schedule::{Directive, DirectiveDetail, DirectiveKind, Target};
use crate::values::{CompileTarget, Key, Policy, Schedule, Value};
use crate::vocabulary::Builtin;
use crate::vocabulary::{PROGRAM_MEMBERS, SCHEDULE_METHODS};
use wsp_ir::{ScalarExpr, ScalarOp};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, TextRange};

impl<'db> Eval<'db> {
    pub(crate) fn key_arg(&mut self, args: &Args<'db>, i: usize) -> Option<Key> {
        match args.get(i)? {
            (Value::Key(k), _) => Some((**k).clone()),
            (Value::Unknown, _) => None,
            (v, r) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::KeyExpression,
                    r,
                    format!(
                        "a key is `lambda t: ...` over task fields, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    pub(crate) fn string_arg(&mut self, args: &Args<'db>, i: usize) -> Option<String> {
        match args.get(i)? {
            (Value::Str(s), _) => Some(s.clone()),
            (Value::Unknown, _) => None,
            (v, r) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("expected a string, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// `lambda t: expr` over task fields, constants and slots.
    pub(crate) fn key(&mut self, l: &ast::LambdaExpr) -> Value<'db> {
        let range = l.syntax().text_range();
        let params: Vec<String> = l
            .param_list()
            .map(|p| {
                p.params()
                    .filter_map(|p| p.name())
                    .map(|t| t.text().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let [task] = params.as_slice() else {
            self.error(
                Code::KeyExpression,
                range,
                format!(
                    "a key takes one parameter, the task (`lambda t: t.b`), not {}",
                    params.len()
                ),
            );
            return Value::Unknown;
        };
        let Some(body) = l.body() else {
            return Value::Unknown;
        };
        // `lambda t: (t.b, t.h)`: a tuple key.
        let inner = match &body {
            Expr::ParenExpr(p) => p.expr(),
            _ => None,
        };
        if let Some(Expr::TupleExpr(t)) = inner.as_ref().or(Some(&body)) {
            let parts: Option<Vec<ScalarExpr>> = t
                .elements()
                .map(|e| self.key_expr(task, &e))
                .collect::<Vec<_>>()
                .into_iter()
                .collect();
            return match parts {
                Some(parts) if !parts.is_empty() => Value::Key(Box::new(Key::tuple(parts))),
                Some(_) => {
                    self.not_in_key(task, range, "an empty tuple".into());
                    Value::Unknown
                }
                None => Value::Unknown,
            };
        }
        match self.key_expr(task, &body) {
            Some(expr) => Value::Key(Box::new(Key {
                expr,
                parts: Vec::new(),
            })),
            None => Value::Unknown,
        }
    }

    pub(crate) fn key_expr(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
        let key = wsp_syntax::grow_stack(|| self.key_expr_here(task, e))?;
        self.shallow(key, e.syntax().text_range())
    }

    /// One key expression, by its form; `None` after an error.
    pub(crate) fn key_expr_here(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
        let range = e.syntax().text_range();
        match e {
            Expr::ParenExpr(p) => self.key_expr(task, &p.expr()?),
            Expr::Literal(_) => match self.expr(e) {
                Value::Int(i) => Some(ScalarExpr::Const(i)),
                Value::Bool(b) => Some(ScalarExpr::Const(b as i64)),
                v => self.not_in_key(task, range, v.describe()),
            },
            Expr::AttributeExpr(a) => match a.receiver() {
                Some(Expr::NameExpr(n)) if n.text() == task => {
                    Some(ScalarExpr::Var(a.attr()?.text().to_string()))
                }
                _ => self.not_in_key(task, range, format!("`{}`", e.syntax().text())),
            },
            Expr::NameExpr(n) => {
                if n.text() == task {
                    return self.not_in_key(task, range, format!("the task `{task}` itself"));
                }
                match self.expr(e) {
                    Value::Int(i) => Some(ScalarExpr::Const(i)),
                    Value::Unknown => None,
                    v => self.not_in_key(task, range, v.describe()),
                }
            }
            Expr::CallExpr(c) => self.key_call(task, c),
            Expr::UnaryExpr(u) => self.key_unary(task, u),
            Expr::BinExpr(b) => self.key_arithmetic(task, b),
            Expr::BoolExpr(b) => {
                let op = if b.op_kind() == Some(SyntaxKind::AND_KW) {
                    ScalarOp::And
                } else {
                    ScalarOp::Or
                };
                let l = self.key_expr(task, &b.lhs()?)?;
                let r = self.key_expr(task, &b.rhs()?)?;
                Some(ScalarExpr::Binary(op, Box::new(l), Box::new(r)))
            }
            Expr::CompareExpr(c) => self.key_comparison(task, c),
            Expr::CondExpr(c) => {
                let cond = self.key_expr(task, &c.condition()?)?;
                let a = self.key_expr(task, &c.then_branch()?)?;
                let b = self.key_expr(task, &c.else_branch()?)?;
                Some(ScalarExpr::Select(Box::new([cond, a, b])))
            }
            // `t.params[k]`: the original's task parameters, its index in order; each task's k-th
            // field once the program's tasks are known (`workloads::resolve_task_params`).
            Expr::SubscriptExpr(s)
                if matches!(s.base(), Some(Expr::AttributeExpr(a))
                    if matches!(a.receiver(), Some(Expr::NameExpr(n)) if n.text() == task)
                        && a.attr().is_some_and(|t| t.text() == "params")) =>
            {
                match s.indices().as_slice() {
                    [i] => match self.expr(i) {
                        Value::Int(k) if k >= 0 => Some(ScalarExpr::Var(format!("params[{k}]"))),
                        v => self.not_in_key(
                            task,
                            range,
                            format!("a parameter numbered by {}", v.describe()),
                        ),
                    },
                    _ => self.not_in_key(task, range, "a parameter without one number".into()),
                }
            }
            // `t.tags["mask"]`: the original's task tags are named run-time symbols.
            Expr::SubscriptExpr(s)
                if matches!(s.base(), Some(Expr::AttributeExpr(a))
                    if matches!(a.receiver(), Some(Expr::NameExpr(n)) if n.text() == task)
                        && a.attr().is_some_and(|t| t.text() == "tags")) =>
            {
                match s.indices().as_slice() {
                    [i] => match self.expr(i) {
                        Value::Str(name) => Some(ScalarExpr::Symbol(name)),
                        v => {
                            self.not_in_key(task, range, format!("a tag named by {}", v.describe()))
                        }
                    },
                    _ => self.not_in_key(task, range, "a tag without one name".into()),
                }
            }
            _ => self.not_in_key(task, range, format!("`{}`", e.syntax().text())),
        }
    }

    /// Reports `what` (at `range`) as not allowed in a key, with what a key may use.
    fn not_in_key(&mut self, task: &str, range: TextRange, what: String) -> Option<ScalarExpr> {
        self.error(
            Code::KeyExpression,
            range,
            format!(
                "{what} in a key: a key may use task fields (`{task}.b`, `{task}.get(\"b\")`), integer constants and `slot_u64(i)`"
            ),
        );
        None
    }

    /// A call in a key: `t.get("b")`, `slot_u64(i)`, or `min`/`max` of keys.
    fn key_call(&mut self, task: &str, c: &ast::CallExpr) -> Option<ScalarExpr> {
        let range = c.syntax().text_range();
        let callee = c.callee()?;
        let args: Vec<Expr> = c.args().filter_map(|a| a.value()).collect();
        // `k.where(a, b)`, `k.cast_u64()`: the original's scalar-expression methods.
        if let Expr::AttributeExpr(a) = &callee
            && let Some(m) = a.attr().map(|t| t.text().to_string())
            && matches!(m.as_str(), "where" | "cast_u64" | "cast_i64" | "cast_bool")
            && let Some(receiver) = a.receiver()
            && !matches!(&receiver, Expr::NameExpr(n) if n.text() == task)
        {
            let k = self.key_expr(task, &receiver)?;
            return match (m.as_str(), args.as_slice()) {
                ("where", [x, y]) => {
                    let x = self.key_expr(task, x)?;
                    let y = self.key_expr(task, y)?;
                    Some(ScalarExpr::Select(Box::new([k, x, y])))
                }
                ("cast_bool", []) => Some(ScalarExpr::Binary(
                    ScalarOp::Ne,
                    Box::new(k),
                    Box::new(ScalarExpr::Const(0)),
                )),
                ("cast_u64" | "cast_i64", []) => Some(k),
                _ => self.not_in_key(task, range, format!("`.{m}` with these arguments")),
            };
        }
        if let Expr::AttributeExpr(a) = &callee
            && matches!(a.receiver(), Some(Expr::NameExpr(n)) if n.text() == task)
            && a.attr().is_some_and(|t| t.text() == "get")
        {
            if let [arg] = args.as_slice()
                && let Value::Str(field) = self.expr(arg)
            {
                return Some(ScalarExpr::Var(field));
            }
            return self.not_in_key(task, range, "`get` without a field name string".into());
        }
        match self.expr(&callee) {
            Value::Builtin(b @ (Builtin::SymbolU64 | Builtin::AxisVar)) => match args.as_slice() {
                [arg] => match self.expr(arg) {
                    Value::Str(name) if b == Builtin::SymbolU64 => Some(ScalarExpr::Symbol(name)),
                    // A task's field by name, as `t.get(name)`.
                    Value::Str(name) => Some(ScalarExpr::Var(name)),
                    v => self.not_in_key(task, range, format!("a name that is {}", v.describe())),
                },
                _ => self.not_in_key(task, range, "a name missing".into()),
            },
            Value::Builtin(Builtin::SlotU64 | Builtin::SlotI64) => match args.as_slice() {
                [arg] => match self.expr(arg) {
                    Value::Int(i) if i >= 0 => Some(ScalarExpr::Slot(i)),
                    v => self.not_in_key(task, range, format!("`slot_u64` of {}", v.describe())),
                },
                _ => self.not_in_key(task, range, "`slot_u64` without one slot number".into()),
            },
            Value::Builtin(b @ (Builtin::Min | Builtin::Max)) => {
                let op = if b == Builtin::Min {
                    ScalarOp::Min
                } else {
                    ScalarOp::Max
                };
                let mut parts = args
                    .iter()
                    .map(|a| self.key_expr(task, a))
                    .collect::<Option<Vec<_>>>()?
                    .into_iter();
                let first = parts.next()?;
                Some(parts.fold(first, |acc, p| {
                    ScalarExpr::Binary(op, Box::new(acc), Box::new(p))
                }))
            }
            Value::Unknown => None,
            v => self.not_in_key(task, range, format!("a call of {}", v.describe())),
        }
    }

    /// `-k`, `not k` and `+k` in a key.
    fn key_unary(&mut self, task: &str, u: &ast::UnaryExpr) -> Option<ScalarExpr> {
        let range = u.syntax().text_range();
        let inner = self.key_expr(task, &u.operand()?)?;
        match u.op_kind() {
            Some(SyntaxKind::MINUS) => Some(ScalarExpr::Neg(Box::new(inner))),
            Some(SyntaxKind::NOT_KW) => Some(ScalarExpr::Not(Box::new(inner))),
            Some(SyntaxKind::PLUS) => Some(inner),
            // `~k` is `-k - 1`.
            Some(SyntaxKind::TILDE) => Some(ScalarExpr::Binary(
                ScalarOp::Sub,
                Box::new(ScalarExpr::Neg(Box::new(inner))),
                Box::new(ScalarExpr::Const(1)),
            )),
            _ => self.not_in_key(task, range, "this operator".into()),
        }
    }

    /// `+`, `-`, `*`, `//` and `%` of two keys.
    fn key_arithmetic(&mut self, task: &str, b: &ast::BinExpr) -> Option<ScalarExpr> {
        let range = b.syntax().text_range();
        let op = match b.op_kind()? {
            SyntaxKind::PLUS => ScalarOp::Add,
            SyntaxKind::MINUS => ScalarOp::Sub,
            SyntaxKind::STAR => ScalarOp::Mul,
            SyntaxKind::DOUBLE_SLASH => ScalarOp::FloorDiv,
            SyntaxKind::PERCENT => ScalarOp::Mod,
            SyntaxKind::AMP => ScalarOp::BitAnd,
            SyntaxKind::PIPE => ScalarOp::BitOr,
            SyntaxKind::CARET => ScalarOp::BitXor,
            SyntaxKind::SHL => ScalarOp::Shl,
            SyntaxKind::SHR => ScalarOp::Shr,
            _ => return self.not_in_key(task, range, format!("`{}`", b.op()?.text())),
        };
        let l = self.key_expr(task, &b.lhs()?)?;
        let r = self.key_expr(task, &b.rhs()?)?;
        Some(ScalarExpr::Binary(op, Box::new(l), Box::new(r)))
    }

    /// A comparison chain in a key: `a < b < c` is `a < b and b < c`.
    fn key_comparison(&mut self, task: &str, c: &ast::CompareExpr) -> Option<ScalarExpr> {
        let range = c.syntax().text_range();
        let operands: Vec<Expr> = c.operands().collect();
        let ops = c.ops();
        let mut out: Option<ScalarExpr> = None;
        for (i, op) in ops.iter().enumerate() {
            let Some(sop) = compare_op(op) else {
                return self.not_in_key(task, range, "this comparison".into());
            };
            let l = self.key_expr(task, operands.get(i)?)?;
            let r = self.key_expr(task, operands.get(i + 1)?)?;
            let cmp = ScalarExpr::Binary(sop, Box::new(l), Box::new(r));
            out = Some(match out {
                None => cmp,
                Some(prev) => ScalarExpr::Binary(ScalarOp::And, Box::new(prev), Box::new(cmp)),
            });
        }
        out
    }

    /// Methods of workloads (schedule directives) and programs.
    pub(crate) fn method(
        &mut self,
        receiver: Value<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        match receiver {
            Value::Schedule(s) => self.schedule_method(*s, method, range, c),
            Value::Program(p) => self.program_method(*p, method, range, c),
            Value::Process(p) => self.process_method(*p, method, range, c),
            Value::Tensor(t) => self.tensor_method(*t, method, range, c),
            Value::Trace(t) => self.trace_method(*t, method, range, c),
            Value::Kernel(k) => self.kernel_method(k, method, range, c),
            Value::Space(s) => self.space_method(*s, method, range, c),
            Value::Scheduler(s) => self.scheduler_method(*s, method, range, c),
            Value::Explored(e) => self.explored_method(*e, method, range, c),
            v @ (Value::Runtime(_) | Value::Index(_) | Value::Bool(_)) => {
                self.scalar_method(v, method, range, c)
            }
            _ => Value::Unknown,
        }
    }

    /// A workload's method: the schedule with the directives it adds, or, for `compile`, the
    /// program; `Value::Unknown` after an error.
    fn schedule_method(
        &mut self,
        mut s: Schedule<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        let what = format!("`.{method}`");
        let what = what.as_str();
        // From the method name to the closing parenthesis, not the whole chain before it.
        let call_span = self.span(TextRange::new(range.start(), c.syntax().text_range().end()));
        let added = match method {
            "dispatch" => self.dispatch_directive(c, what).map(|d| vec![d]),
            "streams" => self.streams_directive(c, what).map(|d| vec![d]),
            "stream_by" => self.stream_by_directive(c, what).map(|d| vec![d]),
            "timing" => self.timing_directive(c, what).map(|d| vec![d]),
            "task_graph" => self.task_graph_directives(c, what),
            "spatial_map" => self.spatial_map_directive(c, what).map(|d| vec![d]),
            "layout" => {
                self.workload_layout(range, c);
                Some(Vec::new())
            }
            "compile" => return self.compile(s, c, what, call_span),
            "with_config" => {
                let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                    return Value::Unknown;
                };
                return self
                    .with_config(s, &args, call_span)
                    .unwrap_or(Value::Unknown);
            }
            "named" => {
                if let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) {
                    self.string_arg(&args, 0);
                }
                Some(Vec::new())
            }
            "start" | "join" => {
                if !self.is_connect(&s) {
                    self.error(
                        Code::UnknownMember,
                        range,
                        format!("`.{method}()` runs a `connect(...)` pipeline; a workload is compiled and run: `program = w(...).compile(target=\"cpu_sim\")`, then `program.execute()`"),
                    );
                    return Value::Unknown;
                }
                self.bind_method(c, what, SCHEDULE_METHODS, method);
                return Value::None;
            }
            _ => {
                return self.unknown_member(
                    "workload",
                    method,
                    range,
                    SCHEDULE_METHODS.iter().map(|m| m.name),
                );
            }
        };
        let Some(added) = added else {
            return Value::Unknown;
        };
        s.directives
            .extend(added.into_iter().map(|(kind, detail)| Directive {
                kind,
                span: call_span,
                detail,
            }));
        Value::Schedule(Box::new(s))
    }

    /// Whether a schedule is a `connect(...)` pipeline and nothing more.
    pub(crate) fn is_connect(&self, s: &Schedule<'db>) -> bool {
        matches!(&s.root, crate::values::Composite::Call(call)
            if call.workload(self.db).kind(self.db) != crate::items::ItemKind::Workload
                && matches!(call.args(self.db).first(), Some(Value::List(_))))
            && s.directives.is_empty()
    }

    /// `.dispatch(policy)`: a `DispatchPolicy`.
    fn dispatch_directive(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<(DirectiveKind, DirectiveDetail)> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "dispatch")?;
        match args.get(0).cloned() {
            Some((Value::Policy(p), r)) => {
                let kind = crate::values::schedule::kind_of_policy(&p);
                if !matches!(
                    kind,
                    DirectiveKind::RoundRobin
                        | DirectiveKind::Affinity
                        | DirectiveKind::HashKey
                        | DirectiveKind::DispatchBy
                        | DirectiveKind::WorkSteal
                ) {
                    self.error(
                        Code::ScheduleArgument,
                        r,
                        "`.dispatch` takes a DispatchPolicy",
                    );
                    return None;
                }
                Some((kind, DirectiveDetail::Policy(*p)))
            }
            Some((Value::Unknown, _)) => None,
            Some((v, r)) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`.dispatch` takes a DispatchPolicy, not {}", v.describe()),
                );
                None
            }
            None => None,
        }
    }

    /// `.streams(n)`: at least one stream.
    fn streams_directive(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<(DirectiveKind, DirectiveDetail)> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "streams")?;
        match args.get(0).cloned() {
            Some((Value::Int(n), _)) if n > 0 => {
                Some((DirectiveKind::Streams, DirectiveDetail::Count(n)))
            }
            Some((Value::Unknown, _)) | None => None,
            Some((v, r)) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`.streams` needs at least one stream, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// `.stream_by(key)`: a task key choosing the stream.
    fn stream_by_directive(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<(DirectiveKind, DirectiveDetail)> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "stream_by")?;
        let key = self.key_arg(&args, 0)?;
        Some((DirectiveKind::StreamBy, DirectiveDetail::Key(key)))
    }

    /// `.timing(policy)`: a `TimingPolicy`, called when it takes an argument.
    fn timing_directive(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<(DirectiveKind, DirectiveDetail)> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "timing")?;
        match args.get(0).cloned() {
            Some((Value::Policy(p), r)) => {
                let kind = crate::values::schedule::kind_of_policy(&p);
                if !matches!(
                    kind,
                    DirectiveKind::Immediate
                        | DirectiveKind::Batched
                        | DirectiveKind::Interleaved
                        | DirectiveKind::RateLimit
                ) {
                    self.error(Code::ScheduleArgument, r, "`.timing` takes a TimingPolicy");
                    return None;
                }
                Some((kind, DirectiveDetail::Policy(*p)))
            }
            Some((Value::Member(Builtin::TimingPolicy, m), r)) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`TimingPolicy.{m}` needs its argument: `TimingPolicy.{m}(n)`"),
                );
                None
            }
            Some((Value::Unknown, _)) | None => None,
            Some((v, r)) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`.timing` takes a TimingPolicy, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// `.task_graph(window, deps, ready, pools)`: one directive per argument given, each of
    /// its kind.
    fn task_graph_directives(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<Vec<(DirectiveKind, DirectiveDetail)>> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "task_graph")?;
        let mut added = Vec::new();
        let expected = [
            "TaskWindow",
            "Deps",
            "ReadyPolicy",
            "Pools",
            "StartPolicy",
            "TracePolicy",
        ];
        for (i, expected) in expected.iter().enumerate() {
            match args.get(i).cloned() {
                None => {}
                Some((Value::Window(w), _)) if i == 0 => {
                    added.push((w.mode.kind(), DirectiveDetail::Window(*w)))
                }
                Some((Value::Policy(p), _))
                    if i > 0 && matches!(*p, Policy::TaskGraph(kind, _) if kind == *expected) =>
                {
                    added.push((
                        crate::values::schedule::kind_of_policy(&p),
                        DirectiveDetail::Policy(*p),
                    ))
                }
                Some((Value::Unknown, _)) => return None,
                Some((v, r)) => {
                    self.error(
                        Code::ScheduleArgument,
                        r,
                        format!("this argument takes a {expected}, not {}", v.describe()),
                    );
                    return None;
                }
            }
        }
        Some(added)
    }

    /// `.spatial_map(grid)`: the grid's shape.
    fn spatial_map_directive(
        &mut self,
        c: &ast::CallExpr,
        what: &str,
    ) -> Option<(DirectiveKind, DirectiveDetail)> {
        let args = self.bind_method(c, what, SCHEDULE_METHODS, "spatial_map")?;
        let (v, r) = args.get(0).cloned()?;
        let grid = self.shape(&v, r)?;
        Some((DirectiveKind::SpatialMap, DirectiveDetail::Grid(grid)))
    }

    /// `.layout(...)` on a workload: deprecated and ignored; its arguments are still evaluated.
    fn workload_layout(&mut self, range: TextRange, c: &ast::CallExpr) {
        let d = Diag::new(
            Code::Deprecated,
            self.span(range),
            "`.layout(...)` on a workload is deprecated: a layout is part of a tensor's type; give `Tensor(..., layout=...)` or use `relayout(...)`",
        );
        self.push(d);
        c.args().filter_map(|a| a.value()).for_each(|v| {
            self.expr(&v);
        });
    }

    /// `.compile(target="cpu_sim")`: the schedule as a program for the target.
    fn compile(
        &mut self,
        mut s: Schedule<'db>,
        c: &ast::CallExpr,
        what: &str,
        call_span: Span<'db>,
    ) -> Value<'db> {
        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, "compile") else {
            return Value::Unknown;
        };
        let Some(target) = self.compile_target(&args) else {
            return Value::Unknown;
        };
        s.target = Some(CompileTarget {
            target,
            span: call_span,
        });
        Value::Program(Box::new(s))
    }

    /// The target argument of `.compile`: a target's name (with the nearest as a fix if it
    /// names none), `cpu_sim` when omitted.
    fn compile_target(&mut self, args: &Args<'db>) -> Option<Target> {
        match args.get(0).cloned() {
            None => Some(Target::CpuSim),
            Some((Value::Str(t), r)) => {
                let target = Target::from_name(&t);
                if target.is_none() {
                    let mut d = Diag::new(
                        Code::ScheduleArgument,
                        self.span(r),
                        format!(
                            "unknown target \"{t}\"; the targets are {}",
                            Target::names()
                        ),
                    );
                    if let Some(best) = suggest(&t, Target::ALL.iter().map(|t| t.name())) {
                        d = d.with_guess(
                            format!("use \"{best}\""),
                            vec![(self.span(r), format!("\"{best}\""))],
                        );
                    }
                    self.push(d);
                }
                target
            }
            Some((Value::Unknown, _)) => None,
            Some((v, r)) => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!(
                        "the target is a string such as \"cpu_sim\", not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// A program's method: `execute`, `synchronize` or `enable_tracing`.
    fn program_method(
        &mut self,
        p: Schedule<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        let what = format!("`.{method}`");
        let what = what.as_str();
        match method {
            "execute" => {
                self.execute(p, c);
                Value::None
            }
            "synchronize" | "disable_tracing" | "clear_trace" => {
                self.bind_method(c, what, PROGRAM_MEMBERS, method);
                Value::None
            }
            "is_complete" => {
                self.bind_method(c, what, PROGRAM_MEMBERS, method);
                Value::Complete
            }
            "set_symbol_u64" | "set_symbol_f32" | "set_axis_sizes" => {
                self.set_symbols(p, method, c);
                Value::None
            }
            "enable_tracing" => {
                if let Some(args) = self.bind_method(c, what, PROGRAM_MEMBERS, method)
                    && let Some((v, r)) = args.get(0)
                    && !matches!(v, Value::Member(Builtin::TraceLevel, _) | Value::Unknown)
                {
                    self.error(
                        Code::WrongKind,
                        *r,
                        format!("the trace level is a `TraceLevel`, not {}", v.describe()),
                    );
                }
                Value::None
            }
            _ => self.unknown_member(
                "program",
                method,
                range,
                PROGRAM_MEMBERS.iter().map(|m| m.name),
            ),
        }
    }

    /// A top-level expression statement must do something: run, print or save.
    pub(crate) fn check_statement_value(&mut self, e: &Expr, v: &Value<'db>) {
        if matches!(v, Value::Schedule(_) | Value::Program(_)) {
            self.error(
                Code::OutsideSubset,
                e.syntax().text_range(),
                "this expression has no effect; bind it (`program = ...`) and run it with `.execute()`",
            );
        }
    }

    /// `program.execute(name=value, ...)`: evaluates the bindings and records them for
    /// `programs::execute_checks`, which knows the program's run-time symbols.
    fn execute(&mut self, program: Schedule<'db>, c: &ast::CallExpr) {
        let mut bindings = Vec::new();
        for arg in c.args() {
            let r = arg.syntax().text_range();
            let value = arg.value().map_or(Value::Unknown, |v| self.expr(&v));
            if arg.kind() != ast::ArgKind::Keyword {
                self.error(
                    Code::WrongArguments,
                    r,
                    "`execute` binds run-time symbols by name: `program.execute(seq=16)`",
                );
                continue;
            }
            let Some(kw) = arg.keyword() else { continue };
            bindings.push(Binding {
                name: kw.text().to_string(),
                name_range: kw.text_range(),
                value,
                value_range: arg.value().map_or(r, |v| v.syntax().text_range()),
            });
        }
        self.executes.push(Execute {
            program,
            bindings,
            runs: true,
            range: c.syntax().text_range(),
        });
    }

    /// `program.set_symbol_u64("seq", 16)` and `program.set_axis_sizes({"seq": 16})`: bindings
    /// for this and later runs, checked as `execute`'s are.
    fn set_symbols(&mut self, program: Schedule<'db>, method: &str, c: &ast::CallExpr) {
        let what = format!("`.{method}`");
        // A dict literal is no value of WSP's: `set_axis_sizes` reads its one argument's
        // entries itself.
        let dict = match &c.args().collect::<Vec<_>>()[..] {
            [a] if a.keyword().is_none_or(|k| k.text() == "axis_sizes") => match a.value() {
                Some(Expr::DictExpr(d)) if method == "set_axis_sizes" => Some(d),
                _ => None,
            },
            _ => None,
        };
        let args = match dict {
            Some(_) => None,
            None => match self.bind_method(c, &what, PROGRAM_MEMBERS, method) {
                Some(args) => Some(args),
                None => return,
            },
        };
        let mut pairs = Vec::new();
        if let Some(d) = dict {
            for entry in d.entries() {
                let (Some(k), Some(v)) = (entry.key(), entry.value()) else {
                    let r = entry.syntax().text_range();
                    self.error(Code::OutsideSubset, r, "`**` is not part of WSP");
                    continue;
                };
                let (name, value) = (self.expr(&k), self.expr(&v));
                pairs.push((
                    name,
                    k.syntax().text_range(),
                    value,
                    v.syntax().text_range(),
                ));
            }
        } else if let Some(args) = &args
            && method == "set_symbol_u64"
        {
            let (Some((name, name_range)), Some((value, value_range))) = (args.get(0), args.get(1))
            else {
                return;
            };
            pairs.push((name.clone(), *name_range, value.clone(), *value_range));
        } else if let Some(args) = &args
            && method == "set_symbol_f32"
        {
            // The original's: the value's f32 bits, in the symbol's u64.
            let (Some((name, name_range)), Some((value, value_range))) = (args.get(0), args.get(1))
            else {
                return;
            };
            let bits = match value {
                Value::Int(_) | Value::Float(_) => {
                    Value::Int(i64::from((super::num(value) as f32).to_bits()))
                }
                Value::Unknown => Value::Unknown,
                v => {
                    let message = format!("`set_symbol_f32` binds a number, not {}", v.describe());
                    self.error(Code::WrongKind, *value_range, message);
                    return;
                }
            };
            pairs.push((name.clone(), *name_range, bits, *value_range));
        } else if let Some((v, r)) = args.as_ref().and_then(|a| a.get(0))
            && !matches!(v, Value::Unknown)
        {
            let v = v.describe();
            self.error(
                Code::WrongKind,
                *r,
                format!("`set_axis_sizes` takes a dict literal of names to sizes: `{{\"seq\": 16}}`, not {v}"),
            );
        }
        let mut bindings = Vec::new();
        for (name, name_range, value, value_range) in pairs {
            match name {
                Value::Str(name) => bindings.push(Binding {
                    name,
                    name_range,
                    value,
                    value_range,
                }),
                Value::Unknown => {}
                v => {
                    let v = v.describe();
                    self.error(
                        Code::WrongKind,
                        name_range,
                        format!("a run-time symbol is named by a string, not {v}"),
                    );
                }
            }
        }
        self.executes.push(Execute {
            program,
            bindings,
            runs: false,
            range: c.syntax().text_range(),
        });
    }
}
