//! The CSP builder form of a pipeline: `connect([processes], [channels])` walked as a
//! `with P.pipe():` whose stages are the processes' bodies, each an expression of work:
//! `for_each(axis, lambda t: ...)` (a `P.seq` loop), `consume(ch, lambda t: ...)` (a
//! `with consume(ch) as t:`), `send(ch, task)` and tasks, `task(kernel, [i], {"p": X[i]})`
//! among them. The same plan nodes as the statement form, so the same checks apply.

use super::{TaskKernel, Walker};
use crate::diagnostics::{Code, Span};
use crate::eval::Eval;
use crate::items::Item;
use crate::kernels::kernel_signature;
use crate::values::{Process, Value};
use crate::vocabulary::Builtin;
use crate::workloads::{LoopKind, PlanNode, plan_nodes};
use wsp_ir::Affine;
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr};

impl<'db> Walker<'db> {
    /// `connect`'s processes as one pipeline, each body a stage in the order given (a
    /// consumer listed after its producer knows the extent of what it receives). What a stage
    /// reports for any pipeline its process's item reports already (`process_generic`).
    pub(in crate::workloads) fn pipeline(
        &mut self,
        processes: &[Value<'db>],
        site: Span<'db>,
    ) -> Vec<PlanNode<'db>> {
        let db = self.eval.db;
        let mut stages = Vec::new();
        for p in processes {
            let Value::Process(p) = p else { continue };
            let before = self.eval.diags.len();
            stages.extend(self.stage(p));
            let Some(body) = p.body else { continue };
            if body.item != self.eval.item {
                let generic = &super::super::process_generic(db, body.item).diags;
                let mut found = self.eval.diags.split_off(before);
                found.retain(|d| !super::super::reported_in(d, generic));
                self.eval.diags.extend(found);
            }
        }
        vec![PlanNode::Pipeline { stages, span: site }]
    }

    /// One process's body as a pipeline stage, walked in the item that wrote it, with the
    /// channels it uses checked against those it declares.
    pub(in crate::workloads) fn stage(&mut self, p: &Process<'db>) -> Vec<PlanNode<'db>> {
        let db = self.eval.db;
        let Some(body) = p.body else {
            return Vec::new();
        };
        let Some(e) = expr_at(db, body.item, body.range) else {
            return Vec::new();
        };
        let here = self.eval.item;
        let outer = std::mem::replace(&mut self.eval, Eval::new(db, body.item));
        let nodes = self.work(&e);
        self.declared_channels(p, &nodes);
        let inner = std::mem::replace(&mut self.eval, outer);
        self.eval.diags.extend(inner.diags);
        if body.item == here {
            self.eval.uses.extend(inner.uses);
        }
        nodes
    }

    /// WSP303: a stage sends or consumes only on the channels its process declares.
    fn declared_channels(&mut self, p: &Process<'db>, nodes: &[PlanNode<'db>]) {
        let mut reported: Vec<&str> = Vec::new();
        for n in plan_nodes(nodes) {
            let (channel, span, declared, method) = match n {
                PlanNode::Send { channel, span, .. } => (channel, span, &p.produces, "produces"),
                PlanNode::Consume { channel, span, .. } => (channel, span, &p.consumes, "consumes"),
                _ => continue,
            };
            if declared.iter().any(|c| c.name == *channel) || reported.contains(&channel.as_str()) {
                continue;
            }
            reported.push(channel);
            let verb = if method == "produces" {
                "sends on"
            } else {
                "consumes"
            };
            let d = crate::diagnostics::Diag::new(
                Code::UnmatchedChannel,
                *span,
                format!(
                    "the process `{}` {verb} `{channel}` but does not declare it: add `.{method}({channel})`",
                    p.name
                ),
            )
            .with_related(p.def, "the process is made here");
            self.eval.push(d);
        }
    }

    /// An expression of process work: a loop, a consume, a send or a task.
    pub(in crate::workloads) fn work(&mut self, e: &Expr) -> Vec<PlanNode<'db>> {
        let range = e.syntax().text_range();
        let Expr::CallExpr(c) = e else {
            if let Expr::ParenExpr(p) = e
                && let Some(inner) = p.expr()
            {
                return self.work(&inner);
            }
            self.eval.error(Code::WrongKind, range, WORK);
            return Vec::new();
        };
        if let Some(task) = self.task(c) {
            return task.into_iter().collect();
        }
        let callee = c.callee().map_or(Value::Unknown, |e| self.eval.expr(&e));
        match callee {
            Value::Builtin(Builtin::ForEach) => self.for_each(c).into_iter().collect(),
            Value::Builtin(Builtin::Consume) => self.consume_work(c).into_iter().collect(),
            Value::Builtin(Builtin::Send) => self.send(c),
            Value::Builtin(Builtin::SlotLoadU64) => self.slot_load(c),
            Value::Unknown => Vec::new(),
            v => {
                self.eval.error(
                    Code::WrongKind,
                    range,
                    format!("{WORK}, not a call of {}", v.describe()),
                );
                Vec::new()
            }
        }
    }

    /// `for_each(axis, lambda t: work)`: each iteration after the one before (`P.seq`).
    fn for_each(&mut self, c: &ast::CallExpr) -> Option<PlanNode<'db>> {
        let params = [("axis", false), ("body", false)];
        let bound = self
            .eval
            .bind_syntax(c, "`for_each`", &params, &String::new);
        let (Some(axis), Some(body)) = (bound.slots[0].clone(), bound.slots[1].clone()) else {
            return None;
        };
        if !bound.ok {
            return None;
        }
        let (name, def, body) = self.lambda(&body, "for_each(axis, lambda t: ...)")?;
        let v = self.eval.expr(&axis);
        let kind = LoopKind::Sequential;
        let var = match v {
            Value::Unknown => None,
            v => self.axis_var(kind, &name, &axis, v),
        }?;
        let depth = (self.eval.locals.len(), self.eval.extents.len());
        self.eval
            .bind_local(name.clone(), Value::Index(Affine::var(&name)), def);
        self.eval.extents.push((name, var.extent));
        let nodes = self.work(&body);
        self.eval.locals.truncate(depth.0);
        self.eval.extents.truncate(depth.1);
        let span = self.eval.span(c.syntax().text_range());
        let callee = self.eval.span(c.callee()?.syntax().text_range());
        Some(PlanNode::Loop {
            kind,
            vars: vec![var],
            body: nodes,
            span,
            callee,
        })
    }

    /// `consume(ch, lambda t: work)`: the work once per task received on `ch`.
    fn consume_work(&mut self, c: &ast::CallExpr) -> Option<PlanNode<'db>> {
        let [channel, body] = self.consume_args(c)?;
        let Some(body) = body else {
            self.eval.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                "in a process, `consume` takes the work to do per task: `consume(ch, lambda t: ...)`",
            );
            return None;
        };
        let channel = self.channel_name(&channel?, "consume")?;
        let (var, def, body) = self.lambda(&body, "consume(ch, lambda t: ...)")?;
        let span = self.eval.span(c.syntax().text_range());
        Some(self.consume_scope(channel, var, def, span, |walker, _| walker.work(&body)))
    }

    /// `lambda t: work`: the parameter's name and where, and the work.
    fn lambda(&mut self, e: &Expr, form: &str) -> Option<(String, TextRange, Expr)> {
        let bad = |walker: &mut Self| {
            walker.eval.error(
                Code::WrongKind,
                e.syntax().text_range(),
                format!("the work is a lambda of one index: `{form}`"),
            );
            None
        };
        let Expr::LambdaExpr(l) = e else {
            return bad(self);
        };
        let params: Vec<ast::Param> = l
            .param_list()
            .map(|p| p.params().collect())
            .unwrap_or_default();
        let ([p], Some(body)) = (params.as_slice(), l.body()) else {
            return bad(self);
        };
        match (p.kind(), p.name(), p.default()) {
            (ast::ParamKind::Normal, Some(n), None) => {
                Some((n.text().to_string(), n.text_range(), body))
            }
            _ => bad(self),
        }
    }

    /// Whether a call is of the builtin `task`, or of `Workload` (the original's
    /// `Workload("task", ...)`); a module name may shadow either.
    pub(super) fn is_task_builtin(&mut self, c: &ast::CallExpr) -> bool {
        self.task_builtin_kind(c).is_some()
    }

    fn task_builtin_kind(&mut self, c: &ast::CallExpr) -> Option<Builtin> {
        let Some(Expr::NameExpr(n)) = c.callee() else {
            return None;
        };
        if n.text() != "task" && n.text() != "Workload" {
            return None;
        }
        let before = self.eval.diags.len();
        let callee = self.eval.expr(&Expr::NameExpr(n));
        self.eval.diags.truncate(before);
        match callee {
            Value::Builtin(b @ (Builtin::Task | Builtin::WorkloadNode)) => Some(b),
            _ => None,
        }
    }

    /// `task(kernel, [i, j], {"param": view, ...})`, the original's spelling of
    /// `kernel[i, j](param=view, ...)`; resources may also be a list in parameter order. The
    /// original's `Workload("task", kernel=..., params=..., resources=...)` is the same task.
    pub(super) fn task_builtin(&mut self, c: &ast::CallExpr) -> Option<PlanNode<'db>> {
        let constructor = self.task_builtin_kind(c) == Some(Builtin::WorkloadNode);
        let (what, params): (_, &[(&str, bool)]) = if constructor {
            let params = &[
                ("kind", false),
                ("kernel", false),
                ("params", false),
                ("resources", false),
            ];
            ("`Workload`", params)
        } else {
            (
                "`task`",
                &[("kernel", false), ("params", false), ("resources", false)],
            )
        };
        let bound = self.eval.bind_syntax(c, what, params, &String::new);
        if !bound.ok {
            return None;
        }
        let first = usize::from(constructor);
        if constructor {
            let kind = bound.slots[0].clone()?;
            if self.eval.expr(&kind) != Value::Str("task".into()) {
                let message = "`Workload(...)` here builds a task: `Workload(\"task\", kernel=k, params=[i], resources={...})`";
                self.eval
                    .error(Code::WrongKind, kind.syntax().text_range(), message);
                return None;
            }
        }
        let [Some(k), Some(ix), Some(res)] =
            [first, first + 1, first + 2].map(|i| bound.slots[i].clone())
        else {
            return None;
        };
        let item = match self.eval.expr(&k) {
            Value::Kernel(item) => item,
            Value::Unknown => return None,
            Value::Str(_) => {
                self.eval.error(Code::WrongKind, k.syntax().text_range(), "`task` takes the kernel itself, `task(my_kernel, [i], {...})`: a kernel named by a string is the original's enumerate-only mode, which runs nothing");
                return None;
            }
            v => {
                self.eval.error(
                    Code::WrongKind,
                    k.syntax().text_range(),
                    format!("`task` takes a kernel, not {}", v.describe()),
                );
                return None;
            }
        };
        let index = match &ix {
            Expr::ListExpr(_) | Expr::TupleExpr(_) => {
                let elements: Vec<Expr> = match &ix {
                    Expr::ListExpr(l) => l.elements().collect(),
                    Expr::TupleExpr(t) => t.elements().collect(),
                    _ => Vec::new(),
                };
                let values = elements
                    .iter()
                    .map(|e| (self.eval.expr(e), e.syntax().text_range()))
                    .collect();
                self.index_of(values)
            }
            other => {
                self.eval.error(
                    Code::WrongKind,
                    other.syntax().text_range(),
                    "a task's index is a list of loop variables: `task(kernel, [i, j], {...})`",
                );
                None
            }
        }?;
        let db = self.eval.db;
        let kernel = TaskKernel {
            item,
            signature: kernel_signature(db, item),
            name: item.name(db).clone(),
        };
        let bound_args = self.resources(&res, &kernel)?;
        self.new_task(c, kernel, index, bound_args)
    }

    /// `task`'s resources: a dict from parameter names to values, or a list of values in
    /// parameter order, bound as a task call's keyword or positional arguments.
    #[allow(clippy::type_complexity)]
    fn resources(
        &mut self,
        res: &Expr,
        kernel: &TaskKernel<'db>,
    ) -> Option<(
        Vec<crate::workloads::TaskArg<'db>>,
        Vec<(String, TextRange)>,
    )> {
        let mut given = Vec::new();
        let mut args = Vec::new();
        match res {
            Expr::DictExpr(d) => {
                for entry in d.entries() {
                    let r = entry.syntax().text_range();
                    let key = entry.key();
                    let name = match key.as_ref().map(|k| (self.eval.expr(k), k)) {
                        Some((Value::Str(s), k)) => Some((s, string_inner(k))),
                        _ => None,
                    };
                    let Some((name, keyword)) = name else {
                        self.eval.error(
                            Code::WrongArguments,
                            r,
                            "a task's resources map parameter names to values: `{\"src\": X[i]}`",
                        );
                        continue;
                    };
                    let keyword = keyword.or(key.map(|k| k.syntax().text_range()));
                    let a = self.task_arg((entry.value(), r), &name, keyword, kernel, &mut given);
                    args.extend(a);
                }
            }
            Expr::ListExpr(l) => {
                let elements: Vec<Expr> = l.elements().collect();
                let n = kernel.signature.params.len();
                if elements.len() > n {
                    self.eval.error(
                        Code::WrongArguments,
                        res.syntax().text_range(),
                        format!(
                            "{} takes {n} argument{} but {} were given",
                            kernel.what(),
                            if n == 1 { "" } else { "s" },
                            elements.len()
                        ),
                    );
                    return None;
                }
                for (e, p) in elements.into_iter().zip(&kernel.signature.params) {
                    let r = e.syntax().text_range();
                    let name = p.name.clone();
                    let a = self.task_arg((Some(e), r), &name, None, kernel, &mut given);
                    args.extend(a);
                }
            }
            other => {
                self.eval.error(
                    Code::WrongKind,
                    other.syntax().text_range(),
                    "a task's resources are a dict `{\"param\": view}` or a list of views in parameter order",
                );
                return None;
            }
        }
        Some((args, given))
    }
}

/// What a process body may be.
const WORK: &str = "a process's work is `for_each(axis, lambda t: ...)`, `consume(ch, lambda t: ...)`, `send(ch, task)` or a task";

/// The expression an item's `range` covers.
fn expr_at(db: &dyn salsa::Database, item: Item<'_>, range: TextRange) -> Option<Expr> {
    item.syntax(db)
        .descendants()
        .filter(|n| n.text_range() == range)
        .find_map(Expr::cast)
}

/// The text of a plain string literal without its quotes (`"src"` → `src`), so a rename of
/// the parameter edits the name inside; `None` for other literals.
fn string_inner(e: &Expr) -> Option<TextRange> {
    let text = e.syntax().text().to_string();
    let r = e.syntax().text_range();
    let quoted = text.len() >= 2
        && (text.starts_with('"') && text.ends_with('"')
            || text.starts_with('\'') && text.ends_with('\''))
        && !text.starts_with("\"\"\"")
        && !text.starts_with("'''");
    let one = wsp_syntax::TextSize::from(1);
    quoted.then(|| TextRange::new(r.start() + one, r.end() - one))
}
