//! The module-level blocks a file may run: `with open(PATH, "w") as f:` around
//! `json.dump(value, f)` (the tutorial's way to write a trace), and `for NAME in LIST:` over a
//! list known when the file is checked, whose body prints (unrolled).

use super::{Eval, IntRange, Local};
use crate::diagnostics::Code;
use crate::values::Value;
use crate::vocabulary::Builtin;
use wsp_ir::{JsonValue, KnownJson, TraceQuery};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

/// At most this many statements run by unrolled loops in one file's top-level `for`: a loop
/// is unrolled when the file is checked.
pub const MAX_UNROLLED: usize = 100_000;

/// The largest `indent` `json.dump` takes.
const MAX_INDENT: i64 = 1000;

/// `json.dump(value, f, indent=...)` inside `with open(path, "w") as f:`, checked.
pub struct JsonWrite {
    pub value: JsonValue,
    pub path: String,
    pub indent: Option<u32>,
}

const WITH_FORM: &str = "a module-level `with` is `with open(PATH, \"w\") as f:` whose body is `json.dump(value, f)` (optionally `indent=N`)";

impl<'db> Eval<'db> {
    /// `with open(path, "w") as f: json.dump(value, f)`: what it writes; reports anything else.
    pub(crate) fn with_json(&mut self, w: &ast::WithStmt) -> Option<JsonWrite> {
        let head = w
            .syntax()
            .first_token()
            .map_or(w.syntax().text_range(), |t| t.text_range());
        let items: Vec<ast::WithItem> = w.items().collect();
        if w.is_async() || items.len() != 1 {
            self.error(Code::OutsideSubset, head, WITH_FORM);
            return None;
        }
        let item = &items[0];
        let Some(Expr::CallExpr(open)) = item.expr() else {
            let r = item.syntax().text_range();
            self.error(Code::OutsideSubset, r, WITH_FORM);
            return None;
        };
        let callee = open.callee()?;
        let f = self.expr(&callee);
        if f != Value::Builtin(Builtin::Open) {
            if f != Value::Unknown {
                self.error(Code::OutsideSubset, callee.syntax().text_range(), WITH_FORM);
            }
            return None;
        }
        let args = self.bind_builtin(&open, Builtin::Open)?;
        let path = self.string_arg(&args, 0)?;
        let mode = self.string_arg(&args, 1)?;
        if mode != "w" {
            let r = args.get(1).map_or(head, |(_, r)| *r);
            let message =
                format!("a file is opened to be written whole (`\"w\"`), not with mode \"{mode}\"");
            self.error(Code::OutsideSubset, r, message);
            return None;
        }
        let Some(Expr::NameExpr(target)) = item.target() else {
            let r = item.syntax().text_range();
            self.error(
                Code::OutsideSubset,
                r,
                "name the file: `with open(PATH, \"w\") as f:`",
            );
            return None;
        };
        let statements: Vec<Stmt> = w
            .body()
            .map(|b| b.statements().collect())
            .unwrap_or_default();
        let dump = match statements.as_slice() {
            [Stmt::ExprStmt(s)] => match s.expr() {
                Some(Expr::CallExpr(c)) => Some(c),
                _ => None,
            },
            _ => None,
        };
        let Some(dump) = dump else {
            let r = statements.first().map_or(head, |s| s.syntax().text_range());
            self.error(
                Code::OutsideSubset,
                r,
                format!("{WITH_FORM}, and nothing else"),
            );
            return None;
        };
        let callee = dump.callee()?;
        match self.expr(&callee) {
            Value::Member(Builtin::Json, "dump") => {}
            Value::Unknown => return None,
            _ => {
                self.error(Code::OutsideSubset, callee.syntax().text_range(), WITH_FORM);
                return None;
            }
        }
        let params = [("obj", false), ("fp", false), ("indent", true)];
        let bound = self.bind_syntax(&dump, "`json.dump`", &params, &String::new);
        let [Some(value), Some(fp), indent] = &bound[..] else {
            return None;
        };
        if !matches!(fp, Expr::NameExpr(n) if n.text() == target.text()) {
            let message = format!(
                "`json.dump` writes to the file this `with` opened: `json.dump(value, {})`",
                target.text()
            );
            self.error(Code::WrongKind, fp.syntax().text_range(), message);
            return None;
        }
        let indent = match indent {
            None => None,
            Some(e) => match self.expr(e) {
                Value::None => None,
                v => {
                    let r = e.syntax().text_range();
                    let n = self.non_negative(&v, r, "`indent`")?;
                    // Every line of the file repeats it: a bound, so that no file is mostly spaces.
                    if n > MAX_INDENT {
                        let message = format!("`indent` is at most {MAX_INDENT} spaces, not {n}");
                        self.error(Code::WrongKind, r, message);
                        return None;
                    }
                    Some(n as u32)
                }
            },
        };
        let range = value.syntax().text_range();
        let v = self.expr(value);
        let value = self.json_value(&v, range)?;
        Some(JsonWrite {
            value,
            path,
            indent,
        })
    }

    /// A value `json.dump` can write: a constant, or a `program.trace` value.
    fn json_value(&mut self, v: &Value<'db>, range: TextRange) -> Option<JsonValue> {
        if let Value::Trace(t) = v {
            return match &t.1 {
                TraceQuery::Trace | TraceQuery::PrintSummary => {
                    let message = format!(
                        "{} is not JSON; write `{}.trace.to_chrome_trace()` or `{}.trace.summary()`",
                        v.describe(),
                        t.0,
                        t.0
                    );
                    self.error(Code::WrongKind, range, message);
                    None
                }
                query => Some(JsonValue::Trace {
                    program: t.0.clone(),
                    query: query.clone(),
                }),
            };
        }
        self.known_json(v, range).map(JsonValue::Known)
    }

    fn known_json(&mut self, v: &Value<'db>, range: TextRange) -> Option<KnownJson> {
        Some(match v {
            Value::None => KnownJson::Null,
            Value::Bool(b) => KnownJson::Bool(*b),
            Value::Int(i) => KnownJson::Int(*i),
            Value::Float(f) if f.0.is_finite() => KnownJson::Float(*f),
            Value::Str(s) => KnownJson::Str(s.clone()),
            Value::List(vs) | Value::Tuple(vs) => KnownJson::List(
                vs.iter()
                    .map(|v| self.known_json(v, range))
                    .collect::<Option<_>>()?,
            ),
            Value::Unknown => return None,
            Value::Float(_) => {
                self.error(
                    Code::WrongKind,
                    range,
                    "an infinite or NaN float is not JSON (Python writes `Infinity` or `NaN`, which JSON readers refuse)",
                );
                return None;
            }
            v => {
                let message = format!(
                    "`json.dump` writes constants and `program.trace` values, not {}",
                    v.describe()
                );
                self.error(Code::WrongKind, range, message);
                return None;
            }
        })
    }

    /// `for NAME in LIST:` at module level (`lists` gives the elements of a list only lowering
    /// knows, `KERNEL.trace().ops`): checks the body once per element, with `NAME`
    /// bound to it; `body` sees each binding (lowering collects the prints). Reports a loop
    /// over anything but a list or tuple known now, and a body of anything but `print(...)`
    /// and nested such loops.
    /// `range(stop)` or `range(start, stop[, step])` of integer constants, as Python's list of
    /// it; `None` after an error, or when it has more than `most` elements.
    fn int_range(&mut self, c: &ast::CallExpr, most: usize) -> Option<Value<'db>> {
        let r = c.syntax().text_range();
        let mut bounds = Vec::new();
        for arg in c.args() {
            let ar = arg.syntax().text_range();
            match (arg.kind(), arg.value().map(|v| self.expr(&v))) {
                (ast::ArgKind::Positional, Some(Value::Int(i))) if bounds.len() < 3 => {
                    bounds.push(i)
                }
                (_, Some(Value::Unknown)) => return None,
                _ => {
                    self.error(
                        Code::WrongArguments,
                        ar,
                        "`range` takes `(stop)` or `(start, stop[, step])` of integer constants",
                    );
                    return None;
                }
            }
        }
        let Some(range) = IntRange::of(&bounds) else {
            self.error(
                Code::WrongArguments,
                r,
                "`range` takes `(stop)` or `(start, stop[, step])`, with a step other than 0",
            );
            return None;
        };
        let len = range.len;
        if len > most as i128 {
            let message = format!(
                "this loop would run {len} iterations when unrolled, more than the {MAX_UNROLLED} a file's top-level loops may run"
            );
            self.error(Code::OutsideSubset, r, message);
            return None;
        }
        let values = (0..len).map(|t| Value::Int(range.at(t))).collect();
        Some(Value::List(values))
    }

    pub(crate) fn module_for(
        &mut self,
        f: &ast::ForStmt,
        budget: &mut usize,
        lists: &dyn Fn(&Value<'db>) -> Option<Vec<Value<'db>>>,
        each: &mut dyn FnMut(&mut Eval<'db>, &Expr),
    ) {
        let head = f
            .syntax()
            .first_token()
            .map_or(f.syntax().text_range(), |t| t.text_range());
        if f.is_async() || f.else_clause().is_some() {
            let message = "a module-level `for` is `for NAME in LIST:` with no `async` or `else`";
            self.error(Code::OutsideSubset, head, message);
            return;
        }
        // `for op in ...:` or `for name, ty in ...:`.
        let names: Option<Vec<ast::NameExpr>> = match f.target() {
            Some(Expr::NameExpr(n)) => Some(vec![n]),
            Some(Expr::TupleExpr(t)) => t
                .elements()
                .map(|e| match e {
                    Expr::NameExpr(n) => Some(n),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        let unpacks = !matches!(f.target(), Some(Expr::NameExpr(_)));
        let Some(names) = names.filter(|n| !n.is_empty()) else {
            let r = f.target().map_or(head, |t| t.syntax().text_range());
            self.error(Code::OutsideSubset, r, "a module-level `for` binds a name or a tuple of names: `for op in ir.ops:`, `for name, ty in ir.params:`");
            return;
        };
        let Some(iterable) = f.iterable() else { return };
        let value = match &iterable {
            Expr::CallExpr(c) if matches!(c.callee(), Some(Expr::NameExpr(n)) if n.text() == "range") => {
                match self.int_range(c, *budget) {
                    Some(v) => v,
                    None => return,
                }
            }
            e => self.expr(e),
        };
        let elements = match value {
            Value::List(vs) | Value::Tuple(vs) => vs,
            Value::Unknown => return,
            v if let Some(vs) = lists(&v) => vs,
            v => {
                let message = format!(
                    "a module-level `for` runs over a list known when the file is checked (it is unrolled), not {}",
                    v.describe()
                );
                self.error(Code::OutsideSubset, iterable.syntax().text_range(), message);
                return;
            }
        };
        let statements: Vec<Stmt> = f
            .body()
            .map(|b| b.statements().collect())
            .unwrap_or_default();
        for s in &statements {
            let printing = matches!(s, Stmt::ExprStmt(e) if matches!(e.expr(), Some(Expr::CallExpr(c)) if matches!(c.callee(), Some(Expr::NameExpr(n)) if n.text() == "print")));
            if !printing && !matches!(s, Stmt::ForStmt(_)) {
                let r = s
                    .syntax()
                    .first_token()
                    .map_or(s.syntax().text_range(), |t| t.text_range());
                self.error(
                    Code::OutsideSubset,
                    r,
                    "the body of a module-level `for` is `print(...)` statements and nested such loops: it is unrolled when the file is checked",
                );
                return;
            }
        }
        // Checked before anything is unrolled: the statements this loop alone would run.
        let per_element = statements.len().max(1);
        if elements.len().saturating_mul(per_element) > *budget {
            let message = format!(
                "this loop would run {} statements when unrolled, more than the {MAX_UNROLLED} a file's top-level loops may run",
                elements.len().saturating_mul(per_element)
            );
            self.error(Code::OutsideSubset, head, message);
            return;
        }
        for element in elements {
            let values = match element {
                Value::Tuple(vs) | Value::List(vs) if unpacks && vs.len() == names.len() => vs,
                v if !unpacks => vec![v],
                v => {
                    let message = format!(
                        "{} names cannot be unpacked from {}",
                        names.len(),
                        v.describe()
                    );
                    let r = f.target().map_or(head, |t| t.syntax().text_range());
                    self.error(Code::WrongKind, r, message);
                    return;
                }
            };
            let bound = names.len();
            for (n, value) in names.iter().zip(values) {
                self.locals.push(Local {
                    name: n.text(),
                    value,
                    def: n.syntax().text_range(),
                });
            }
            for s in &statements {
                if *budget == 0 {
                    break;
                }
                crate::work::step(1);
                match s {
                    Stmt::ForStmt(inner) => self.module_for(inner, budget, lists, each),
                    Stmt::ExprStmt(e) => {
                        *budget -= 1;
                        if let Some(e) = e.expr() {
                            each(self, &e);
                        }
                    }
                    _ => {}
                }
            }
            self.locals.truncate(self.locals.len() - bound);
        }
    }
}
