//! Arguments: binding a call's arguments to parameters, and checking counts.

use super::{Eval, plural};
use crate::diagnostics::{Code, Diag, Span};
use crate::items::Item;
use crate::names::suggest;
use crate::symbols::Symbol;
use crate::values::{AxisKind, Composite, Schedule, Value, WorkloadCall};
use crate::vocabulary::{Builtin, Member, Param, method};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

/// A call's arguments by parameter, unevaluated; `ok` when they matched without error.
pub(crate) struct Bound {
    pub slots: Vec<Option<Expr>>,
    pub ok: bool,
}

impl std::ops::Deref for Bound {
    type Target = [Option<Expr>];
    fn deref(&self) -> &[Option<Expr>] {
        &self.slots
    }
}

/// Bound arguments of a call: each parameter's value and where it was written.
pub(crate) struct Args<'db> {
    pub values: Vec<Option<(Value<'db>, TextRange)>>,
}

impl<'db> Args<'db> {
    pub fn get(&self, i: usize) -> Option<&(Value<'db>, TextRange)> {
        self.values.get(i).and_then(Option::as_ref)
    }
}

impl<'db> Eval<'db> {
    /// Checks that `v` is a positive integer; reports otherwise.
    pub(crate) fn positive(&mut self, v: &Value<'db>, range: TextRange, what: &str) -> Option<u64> {
        match v {
            Value::Int(i) if *i > 0 => Some(*i as u64),
            Value::Unknown => None,
            Value::Int(i) => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("{what} must be a positive integer, not {i}"),
                );
                None
            }
            v => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "{what} must be a positive integer constant, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    pub(crate) fn non_negative(
        &mut self,
        v: &Value<'db>,
        range: TextRange,
        what: &str,
    ) -> Option<i64> {
        match v {
            Value::Int(i) if *i >= 0 => Some(*i),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "{what} must be a non-negative integer, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// Binds a call of a builtin against its row of the table.
    pub(crate) fn bind_builtin(&mut self, call: &ast::CallExpr, b: Builtin) -> Option<Args<'db>> {
        let what = format!("`{}`", b.name());
        self.bind_params(call, &what, b.params().unwrap_or(&[]))
    }

    /// Binds a call of a namespace member (`DispatchPolicy.round_robin(4)`) against its row.
    pub(crate) fn bind_member(
        &mut self,
        call: &ast::CallExpr,
        b: Builtin,
        m: &str,
    ) -> Option<Args<'db>> {
        let what = format!("`{}.{m}`", b.name());
        let params = b.member(m).and_then(|m| m.params).unwrap_or(&[]);
        self.bind_params(call, &what, params)
    }

    /// Binds a call of a schedule's or program's method against its row.
    pub(crate) fn bind_method(
        &mut self,
        call: &ast::CallExpr,
        what: &str,
        rows: &'static [Member],
        name: &str,
    ) -> Option<Args<'db>> {
        let params = method(rows, name).and_then(|m| m.params).unwrap_or(&[]);
        self.bind_params(call, what, params)
    }

    /// Binds a call against a list of parameters from the table.
    pub(crate) fn bind_params(
        &mut self,
        call: &ast::CallExpr,
        what: &str,
        params: &[Param],
    ) -> Option<Args<'db>> {
        let names: Vec<String> = params.iter().map(Param::bind_name).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        self.bind(call, what, &refs)
    }

    /// Binds a call's arguments to named parameters (`?` marks optional ones) and evaluates
    /// them. Reports WSP203 for missing, unknown and repeated arguments.
    pub(crate) fn bind(
        &mut self,
        call: &ast::CallExpr,
        what: &str,
        params: &[&str],
    ) -> Option<Args<'db>> {
        let names: Vec<(&str, bool)> = params
            .iter()
            .map(|p| (p.trim_end_matches('?'), p.ends_with('?')))
            .collect();
        let bound = self.bind_syntax(call, what, &names, &String::new);
        let values = bound
            .iter()
            .map(|e| e.as_ref().map(|e| (self.expr(e), e.syntax().text_range())))
            .collect();
        bound.ok.then_some(Args { values })
    }

    /// Matches a call's arguments to parameters `(name, optional)` by position and keyword,
    /// without evaluating them. Reports WSP203 for missing, unknown and repeated arguments;
    /// `hint` ends each message (": pto.add(a, b)"), made only for one.
    pub(crate) fn bind_syntax(
        &mut self,
        call: &ast::CallExpr,
        what: &str,
        params: &[(&str, bool)],
        hint: &dyn Fn() -> String,
    ) -> Bound {
        let mut slots: Vec<Option<Expr>> = vec![None; params.len()];
        let mut ok = true;
        let mut positional = 0;
        for arg in call.args() {
            let range = arg.syntax().text_range();
            let slot = match arg.kind() {
                ast::ArgKind::Positional => {
                    positional += 1;
                    if positional > params.len() {
                        self.error(
                            Code::WrongArguments,
                            range,
                            format!(
                                "{what} takes at most {} argument{}{}",
                                params.len(),
                                plural(params.len()),
                                hint()
                            ),
                        );
                        ok = false;
                        continue;
                    }
                    positional - 1
                }
                ast::ArgKind::Keyword => {
                    let kw = arg
                        .keyword()
                        .map(|k| k.text().to_string())
                        .unwrap_or_default();
                    match params
                        .iter()
                        .position(|(n, _)| n.split('|').any(|a| a == kw))
                    {
                        Some(i) => i,
                        None => {
                            let mut d = Diag::new(
                                Code::WrongArguments,
                                self.span(range),
                                format!("{what} has no parameter `{kw}`"),
                            );
                            let names = params.iter().flat_map(|(n, _)| n.split('|'));
                            if let Some(best) = suggest(&kw, names) {
                                d.message.push_str(&format!("; did you mean `{best}`?"));
                                if let Some(k) = arg.keyword() {
                                    d = d.with_guess(
                                        format!("replace with `{best}`"),
                                        vec![(self.span(k.text_range()), best.to_string())],
                                    );
                                }
                            } else {
                                d.message.push_str(&hint());
                            }
                            self.push(d);
                            ok = false;
                            continue;
                        }
                    }
                }
                _ => {
                    self.error(
                        Code::OutsideSubset,
                        range,
                        "`*` and `**` arguments are not part of WSP",
                    );
                    ok = false;
                    continue;
                }
            };
            if slots[slot].is_some() {
                self.error(
                    Code::WrongArguments,
                    range,
                    format!("{what} got `{}` twice", first_name(params[slot].0)),
                );
                ok = false;
                continue;
            }
            slots[slot] = arg.value();
        }
        for (i, (name, optional)) in params.iter().enumerate() {
            if slots[i].is_none() && !optional {
                let at = call
                    .arg_list()
                    .map_or(call.syntax().text_range(), |a| a.syntax().text_range());
                self.error(
                    Code::WrongArguments,
                    at,
                    format!("{what} is missing `{}`{}", first_name(name), hint()),
                );
                ok = false;
            }
        }
        Bound { slots, ok }
    }
}

/// A parameter's own name, without the alias `bind_name` adds (`depth|capacity`).
fn first_name(name: &str) -> &str {
    name.split('|').next().unwrap_or(name)
}

/// A parameter of a workload and the kind of value its annotation asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct WorkloadParam {
    pub name: String,
    pub range: TextRange,
    pub annotation: Option<Annotation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Annotation {
    Axis(Option<AxisKind>),
    Tensor,
}

#[salsa::tracked(returns(ref))]
pub fn workload_params<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
) -> (Vec<WorkloadParam>, Vec<Diag<'db>>) {
    let mut eval = Eval::new(db, item);
    let mut params = Vec::new();
    if let Some(Stmt::FunctionDef(f)) = item.stmt(db) {
        if let Some(r) = f.return_type() {
            eval.error(
                Code::OutsideSubset,
                r.syntax().text_range(),
                "a workload returns nothing",
            );
        }
        for p in f.param_list().into_iter().flat_map(|l| l.params()) {
            let Some(name) = p.name() else { continue };
            if p.kind() != ast::ParamKind::Normal || p.default().is_some() {
                eval.error(
                    Code::OutsideSubset,
                    p.syntax().text_range(),
                    "workload parameters are plain names, optionally annotated (`batch: DenseDyn`)",
                );
                continue;
            }
            let annotation = p.annotation().and_then(|a| match eval.expr(&a) {
                Value::Builtin(Builtin::Dense) => Some(Annotation::Axis(Some(AxisKind::Dense))),
                Value::Builtin(Builtin::DenseDyn) => Some(Annotation::Axis(Some(AxisKind::DenseDyn))),
                Value::Builtin(Builtin::Ragged) => Some(Annotation::Axis(Some(AxisKind::Ragged))),
                Value::Builtin(Builtin::Sparse) => Some(Annotation::Axis(Some(AxisKind::Sparse))),
                Value::Builtin(Builtin::Tensor) => Some(Annotation::Tensor),
                Value::Unknown => None,
                v => {
                    eval.error(Code::WrongKind, a.syntax().text_range(), format!("a workload parameter is annotated with an axis kind (Dense, DenseDyn, Ragged, Sparse) or Tensor, not {}", v.describe()));
                    None
                }
            });
            params.push(WorkloadParam {
                name: name.text().to_string(),
                range: name.text_range(),
                annotation,
            });
        }
    }
    (params, eval.diags)
}

impl<'db> Eval<'db> {
    /// `w(a, b)` at module level: binds arguments and instantiates the body.
    pub(crate) fn call_workload(&mut self, w: Item<'db>, c: &ast::CallExpr) -> Value<'db> {
        let db = self.db;
        let params = &workload_params(db, w).0;
        let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        let what = format!("`{}`", w.name(db));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        for kw in c.args().filter_map(|a| a.keyword()) {
            if let Some(p) = params.iter().find(|p| p.name == kw.text()) {
                let symbol = Symbol::Local {
                    item: w,
                    def: p.range,
                };
                self.record(kw.text_range(), symbol);
            }
        }
        let Some(args) = self.bind(c, &what, &refs) else {
            return Value::Unknown;
        };
        let mut values = Vec::new();
        for (i, p) in params.iter().enumerate() {
            let Some((v, r)) = args.get(i).cloned() else {
                return Value::Unknown;
            };
            if matches!(v, Value::Unknown) {
                return Value::Unknown;
            }
            let ok = match (p.annotation, &v) {
                (None, _) => true,
                (Some(Annotation::Axis(None)), Value::Axis(_)) => true,
                (Some(Annotation::Axis(Some(k))), Value::Axis(a)) => a.kind == k,
                (Some(Annotation::Tensor), Value::Tensor(_)) => true,
                _ => false,
            };
            if !ok {
                let want = match p.annotation {
                    Some(Annotation::Axis(Some(k))) => format!("a {} axis", k.name()),
                    Some(Annotation::Tensor) => "a tensor".into(),
                    _ => "an axis".into(),
                };
                let d = Diag::new(
                    Code::WrongKind,
                    self.span(r),
                    format!(
                        "`{}` expects {want} for `{}`, not {}",
                        w.name(db),
                        p.name,
                        v.describe()
                    ),
                )
                .with_related(
                    Span {
                        item: w,
                        range: p.range,
                    },
                    format!("`{}` is declared here", p.name),
                );
                self.push(d);
                return Value::Unknown;
            }
            values.push(v);
        }
        self.call_schedule(w, values, c.syntax().text_range())
    }

    /// A call of `workload` with `args` at `range`, as a schedule of that one call. Its body is
    /// checked for these arguments by whoever owns this evaluation (`check`), so that the
    /// evaluator does not depend on the workload walker.
    pub(crate) fn call_schedule(
        &mut self,
        workload: Item<'db>,
        args: Vec<Value<'db>>,
        range: TextRange,
    ) -> Value<'db> {
        let call = WorkloadCall::new(self.db, workload, args, self.span(range));
        self.calls.push(call);
        Value::Schedule(Box::new(Schedule {
            root: Composite::Call(call),
            directives: Vec::new(),
            target: None,
            explored: None,
        }))
    }
}
