//! Arguments: binding a call's arguments to parameters, and checking counts.

use super::{Eval, plural};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::TextRange;

use crate::diagnostics::{Code, Diag};
use crate::names::suggest;
use crate::values::Value;


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

    pub(crate) fn non_negative(&mut self, v: &Value<'db>, range: TextRange, what: &str) -> Option<i64> {
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

    /// Binds a call's arguments to named parameters (`?` marks optional ones) and evaluates
    /// them. Reports WSP203 for missing, unknown and repeated arguments.
    pub(crate) fn bind(&mut self, call: &ast::CallExpr, what: &str, params: &[&str]) -> Option<Args<'db>> {
        let names: Vec<(&str, bool)> = params
            .iter()
            .map(|p| (p.trim_end_matches('?'), p.ends_with('?')))
            .collect();
        let bound = self.bind_syntax(call, what, &names, "");
        let values = bound
            .iter()
            .map(|e| e.as_ref().map(|e| (self.expr(e), e.syntax().text_range())))
            .collect();
        bound.ok.then_some(Args { values })
    }

    /// Matches a call's arguments to parameters `(name, optional)` by position and keyword,
    /// without evaluating them. Reports WSP203 for missing, unknown and repeated arguments;
    /// `hint` ends each message (": pto.add(a, b)").
    pub(crate) fn bind_syntax(
        &mut self,
        call: &ast::CallExpr,
        what: &str,
        params: &[(&str, bool)],
        hint: &str,
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
                                "{what} takes at most {} argument{}{hint}",
                                params.len(),
                                plural(params.len())
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
                    match params.iter().position(|(n, _)| *n == kw) {
                        Some(i) => i,
                        None => {
                            let mut d = Diag::new(
                                Code::WrongArguments,
                                self.span(range),
                                format!("{what} has no parameter `{kw}`"),
                            );
                            if let Some(best) = suggest(&kw, params.iter().map(|(n, _)| *n)) {
                                d.message.push_str(&format!("; did you mean `{best}`?"));
                                if let Some(k) = arg.keyword() {
                                    d = d.with_fix(
                                        format!("replace with `{best}`"),
                                        vec![(self.span(k.text_range()), best.to_string())],
                                    );
                                }
                            } else {
                                d.message.push_str(hint);
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
                    format!("{what} got `{}` twice", params[slot].0),
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
                    format!("{what} is missing `{name}`{hint}"),
                );
                ok = false;
            }
        }
        Bound { slots, ok }
    }

}
