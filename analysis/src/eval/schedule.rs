//! Schedules: methods of workloads and programs (directives, `compile`, `execute`) and task keys.

use super::bind::Args;
use super::expr::compare_op;
use super::{Binding, Eval, Execute};
use crate::diagnostics::{Code, Diag};
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
            (Value::Key(k), _) => Some(k.clone()),
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
        match self.key_expr(task, &body) {
            Some(expr) => Value::Key(Key { expr }),
            None => Value::Unknown,
        }
    }

    pub(crate) fn key_expr(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
        let key = wsp_syntax::grow_stack(|| self.key_expr_here(task, e))?;
        self.shallow(key, e.syntax().text_range())
    }

    pub(crate) fn key_expr_here(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
        let range = e.syntax().text_range();
        let bad = |eval: &mut Self, what: String| {
            eval.error(Code::KeyExpression, range, format!("{what} in a key: a key may use task fields (`{task}.b`, `{task}.get(\"b\")`), integer constants and `slot_u64(i)`"));
            None
        };
        match e {
            Expr::ParenExpr(p) => self.key_expr(task, &p.expr()?),
            Expr::Literal(_) => match self.expr(e) {
                Value::Int(i) => Some(ScalarExpr::Const(i)),
                Value::Bool(b) => Some(ScalarExpr::Const(b as i64)),
                v => bad(self, v.describe()),
            },
            Expr::AttributeExpr(a) => match a.receiver() {
                Some(Expr::NameExpr(n)) if n.text() == task => {
                    Some(ScalarExpr::Var(a.attr()?.text().to_string()))
                }
                _ => bad(self, format!("`{}`", e.syntax().text())),
            },
            Expr::NameExpr(n) => {
                if n.text() == task {
                    return bad(self, format!("the task `{task}` itself"));
                }
                match self.expr(e) {
                    Value::Int(i) => Some(ScalarExpr::Const(i)),
                    Value::Unknown => None,
                    v => bad(self, v.describe()),
                }
            }
            Expr::CallExpr(c) => {
                let callee = c.callee()?;
                let args: Vec<Expr> = c.args().filter_map(|a| a.value()).collect();
                if let Expr::AttributeExpr(a) = &callee
                    && matches!(a.receiver(), Some(Expr::NameExpr(n)) if n.text() == task)
                    && a.attr().is_some_and(|t| t.text() == "get")
                {
                    if let [arg] = args.as_slice()
                        && let Value::Str(field) = self.expr(arg)
                    {
                        return Some(ScalarExpr::Var(field));
                    }
                    return bad(self, "`get` without a field name string".into());
                }
                match self.expr(&callee) {
                    Value::Builtin(Builtin::SlotU64) => match args.as_slice() {
                        [arg] => match self.expr(arg) {
                            Value::Int(i) if i >= 0 => Some(ScalarExpr::Slot(i)),
                            v => bad(self, format!("`slot_u64` of {}", v.describe())),
                        },
                        _ => bad(self, "`slot_u64` without one slot number".into()),
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
                    v => bad(self, format!("a call of {}", v.describe())),
                }
            }
            Expr::UnaryExpr(u) => {
                let inner = self.key_expr(task, &u.operand()?)?;
                match u.op_kind() {
                    Some(SyntaxKind::MINUS) => Some(ScalarExpr::Neg(Box::new(inner))),
                    Some(SyntaxKind::NOT_KW) => Some(ScalarExpr::Not(Box::new(inner))),
                    Some(SyntaxKind::PLUS) => Some(inner),
                    _ => bad(self, "this operator".into()),
                }
            }
            Expr::BinExpr(b) => {
                let op = match b.op_kind()? {
                    SyntaxKind::PLUS => ScalarOp::Add,
                    SyntaxKind::MINUS => ScalarOp::Sub,
                    SyntaxKind::STAR => ScalarOp::Mul,
                    SyntaxKind::DOUBLE_SLASH => ScalarOp::FloorDiv,
                    SyntaxKind::PERCENT => ScalarOp::Mod,
                    _ => return bad(self, format!("`{}`", b.op()?.text())),
                };
                let l = self.key_expr(task, &b.lhs()?)?;
                let r = self.key_expr(task, &b.rhs()?)?;
                Some(ScalarExpr::Binary(op, Box::new(l), Box::new(r)))
            }
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
            Expr::CompareExpr(c) => {
                let operands: Vec<Expr> = c.operands().collect();
                let ops = c.ops();
                let mut out: Option<ScalarExpr> = None;
                for (i, op) in ops.iter().enumerate() {
                    let Some(sop) = compare_op(op) else {
                        return bad(self, "this comparison".into());
                    };
                    let l = self.key_expr(task, operands.get(i)?)?;
                    let r = self.key_expr(task, operands.get(i + 1)?)?;
                    let cmp = ScalarExpr::Binary(sop, Box::new(l), Box::new(r));
                    out = Some(match out {
                        None => cmp,
                        Some(prev) => {
                            ScalarExpr::Binary(ScalarOp::And, Box::new(prev), Box::new(cmp))
                        }
                    });
                }
                out
            }
            _ => bad(self, format!("`{}`", e.syntax().text())),
        }
    }

    /// Methods of workloads (schedule directives) and programs.
    pub(crate) fn method(
        &mut self,
        receiver: Value<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        let what = format!("`.{method}`");
        let what = what.as_str();
        // From the method name to the closing parenthesis, not the whole chain before it.
        let call_span = self.span(TextRange::new(range.start(), c.syntax().text_range().end()));
        match receiver {
            Value::Schedule(mut s) => {
                let directive = |kind, detail| Directive {
                    kind,
                    span: call_span,
                    detail,
                };
                match method {
                    "dispatch" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
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
                                    return Value::Unknown;
                                }
                                s.directives
                                    .push(directive(kind, DirectiveDetail::Policy(p)));
                            }
                            Some((Value::Unknown, _)) => return Value::Unknown,
                            Some((v, r)) => {
                                self.error(
                                    Code::ScheduleArgument,
                                    r,
                                    format!(
                                        "`.dispatch` takes a DispatchPolicy, not {}",
                                        v.describe()
                                    ),
                                );
                                return Value::Unknown;
                            }
                            None => return Value::Unknown,
                        }
                    }
                    "streams" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
                        match args.get(0).cloned() {
                            Some((Value::Int(n), _)) if n > 0 => s
                                .directives
                                .push(directive(DirectiveKind::Streams, DirectiveDetail::Count(n))),
                            Some((Value::Unknown, _)) | None => return Value::Unknown,
                            Some((v, r)) => {
                                self.error(
                                    Code::ScheduleArgument,
                                    r,
                                    format!(
                                        "`.streams` needs at least one stream, not {}",
                                        v.describe()
                                    ),
                                );
                                return Value::Unknown;
                            }
                        }
                    }
                    "stream_by" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
                        let Some(key) = self.key_arg(&args, 0) else {
                            return Value::Unknown;
                        };
                        s.directives.push(directive(
                            DirectiveKind::StreamBy,
                            DirectiveDetail::Key(key),
                        ));
                    }
                    "timing" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
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
                                    self.error(
                                        Code::ScheduleArgument,
                                        r,
                                        "`.timing` takes a TimingPolicy",
                                    );
                                    return Value::Unknown;
                                }
                                s.directives
                                    .push(directive(kind, DirectiveDetail::Policy(p)));
                            }
                            Some((Value::Member(Builtin::TimingPolicy, m), r)) => {
                                self.error(Code::ScheduleArgument, r, format!("`TimingPolicy.{m}` needs its argument: `TimingPolicy.{m}(n)`"));
                                return Value::Unknown;
                            }
                            Some((Value::Unknown, _)) | None => return Value::Unknown,
                            Some((v, r)) => {
                                self.error(
                                    Code::ScheduleArgument,
                                    r,
                                    format!("`.timing` takes a TimingPolicy, not {}", v.describe()),
                                );
                                return Value::Unknown;
                            }
                        }
                    }
                    "task_graph" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
                        for (i, expected) in ["TaskWindow", "Deps", "ReadyPolicy", "Pools"]
                            .iter()
                            .enumerate()
                        {
                            match args.get(i).cloned() {
                                None => {}
                                Some((Value::Window(w), _)) if i == 0 => s
                                    .directives
                                    .push(directive(w.mode.kind(), DirectiveDetail::Window(w))),
                                Some((Value::Policy(p @ Policy::TaskGraph(kind, _)), _))
                                    if i > 0 && kind == *expected =>
                                {
                                    s.directives.push(directive(
                                        crate::values::schedule::kind_of_policy(&p),
                                        DirectiveDetail::Policy(p),
                                    ))
                                }
                                Some((Value::Unknown, _)) => return Value::Unknown,
                                Some((v, r)) => {
                                    self.error(
                                        Code::ScheduleArgument,
                                        r,
                                        format!(
                                            "this argument takes a {expected}, not {}",
                                            v.describe()
                                        ),
                                    );
                                    return Value::Unknown;
                                }
                            }
                        }
                    }
                    "spatial_map" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
                        let Some((v, r)) = args.get(0).cloned() else {
                            return Value::Unknown;
                        };
                        match self.shape(&v, r) {
                            Some(grid) => s.directives.push(directive(
                                DirectiveKind::SpatialMap,
                                DirectiveDetail::Grid(grid),
                            )),
                            None => return Value::Unknown,
                        }
                    }
                    "layout" => {
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
                    "compile" => {
                        let Some(args) = self.bind_method(c, what, SCHEDULE_METHODS, method) else {
                            return Value::Unknown;
                        };
                        let target = match args.get(0).cloned() {
                            None => Target::CpuSim,
                            Some((Value::Str(t), r)) => match Target::from_name(&t) {
                                Some(t) => t,
                                None => {
                                    let mut d = Diag::new(
                                        Code::ScheduleArgument,
                                        self.span(r),
                                        format!(
                                            "unknown target \"{t}\"; the targets are {}",
                                            Target::names()
                                        ),
                                    );
                                    if let Some(best) =
                                        suggest(&t, Target::ALL.iter().map(|t| t.name()))
                                    {
                                        d = d.with_fix(
                                            format!("use \"{best}\""),
                                            vec![(self.span(r), format!("\"{best}\""))],
                                        );
                                    }
                                    self.push(d);
                                    return Value::Unknown;
                                }
                            },
                            Some((Value::Unknown, _)) => return Value::Unknown,
                            Some((v, r)) => {
                                self.error(
                                    Code::ScheduleArgument,
                                    r,
                                    format!(
                                        "the target is a string such as \"cpu_sim\", not {}",
                                        v.describe()
                                    ),
                                );
                                return Value::Unknown;
                            }
                        };
                        s.target = Some(CompileTarget {
                            target,
                            span: call_span,
                        });
                        return Value::Program(s);
                    }
                    _ => {
                        return self.unknown_member(
                            "workload",
                            method,
                            range,
                            SCHEDULE_METHODS.iter().map(|m| m.name),
                        );
                    }
                }
                Value::Schedule(s)
            }
            Value::Program(p) => match method {
                "execute" => {
                    self.execute(p, c);
                    Value::None
                }
                "synchronize" => {
                    self.bind_method(c, what, PROGRAM_MEMBERS, method);
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
            },
            _ => Value::Unknown,
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
        self.executes.push(Execute { program, bindings });
    }
}
