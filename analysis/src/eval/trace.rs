//! `program.trace`, the original's `ExecutionTrace`: its methods, `summary()["KEY"]` and `len`
//! of its event lists, as values read when the statement runs (`wsp_ir::TraceQuery`); and
//! `KERNEL.trace()`, the original's `KernelIR`.

use super::Eval;
use crate::diagnostics::Code;
use crate::items::Item;
use crate::names::suggest;
use crate::values::{IrPart, Value};
use crate::vocabulary::{Builtin, TRACE_METHODS};
use wsp_ir::{TRACE_SUMMARY_FIELDS, TraceQuery};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr};

/// `program.trace.get_kernel_events("NAME")`: a kernel name a statement reads events of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct KernelName<'db> {
    pub program: crate::values::Schedule<'db>,
    pub name: String,
    pub range: TextRange,
}

impl<'db> Eval<'db> {
    /// `program.trace`: the program is named as the statement writes it, since the run keeps
    /// each program's trace by its name.
    pub(crate) fn program_trace(&mut self, receiver: Option<Expr>, range: TextRange) -> Value<'db> {
        match receiver {
            Some(Expr::NameExpr(n)) => Value::Trace(Box::new((n.text(), TraceQuery::Trace))),
            _ => {
                self.error(
                    Code::WrongKind,
                    range,
                    "read a trace through the program's name: `program.trace`",
                );
                Value::Unknown
            }
        }
    }

    /// A method of `program.trace`.
    pub(crate) fn trace_method(
        &mut self,
        (program, query): (String, TraceQuery),
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        if query != TraceQuery::Trace {
            let what = Value::Trace(Box::new((program, query))).describe();
            self.error(
                Code::UnknownMember,
                range,
                format!("{what} has no method `{method}`; it is read whole, printed or written with `json.dump`"),
            );
            return Value::Unknown;
        }
        if !TRACE_METHODS.iter().any(|m| m.name == method) {
            return self.unknown_member(
                "program.trace",
                method,
                range,
                TRACE_METHODS.iter().map(|m| m.name),
            );
        }
        let what = format!("`.{method}`");
        let Some(args) = self.bind_method(c, &what, TRACE_METHODS, method) else {
            return Value::Unknown;
        };
        let query = match method {
            "print_summary" => TraceQuery::PrintSummary,
            "summary" => TraceQuery::Summary,
            "get_task_events" => TraceQuery::TaskEvents,
            "get_kernel_events" => match args.get(0) {
                None | Some((Value::None, _)) => TraceQuery::KernelEvents(None),
                Some((Value::Str(name), r)) => {
                    let (r, name) = (*r, name.clone());
                    self.kernel_name(&program, &name, r);
                    TraceQuery::KernelEvents(Some(name))
                }
                Some((Value::Unknown, _)) => return Value::Unknown,
                Some((v, r)) => {
                    let message = format!("a kernel's name is a string, not {}", v.describe());
                    self.error(Code::WrongKind, *r, message);
                    return Value::Unknown;
                }
            },
            "to_chrome_trace" => TraceQuery::ChromeTrace,
            "total_time_ms" => TraceQuery::TotalTimeMs,
            _ => TraceQuery::KernelTimeMs,
        };
        Value::Trace(Box::new((program, query)))
    }

    /// `get_kernel_events(name)`: recorded for `checks::programs`, which knows the kernels
    /// the program runs.
    fn kernel_name(&mut self, program: &str, name: &str, range: TextRange) {
        if let Some(b) = self.scope.lookup(program)
            && b.item != self.item
            && let Value::Program(p) = &crate::eval::item_value(self.db, b.item).value
        {
            self.kernel_names.push(KernelName {
                program: (**p).clone(),
                name: name.to_string(),
                range,
            });
        }
    }

    /// `summary["KEY"]` of `program.trace.summary()`.
    pub(crate) fn trace_subscript(
        &mut self,
        (program, query): (String, TraceQuery),
        s: &ast::SubscriptExpr,
    ) -> Value<'db> {
        let range = s.syntax().text_range();
        let indices = s.indices();
        if query != TraceQuery::Summary {
            let what = Value::Trace(Box::new((program, query))).describe();
            self.error(
                Code::WrongKind,
                range,
                format!("{what} cannot be indexed here; `summary()[\"KEY\"]` reads one figure"),
            );
            return Value::Unknown;
        }
        let [index] = indices.as_slice() else {
            self.error(
                Code::WrongArguments,
                range,
                "a summary is read one key at a time",
            );
            return Value::Unknown;
        };
        let key_range = index.syntax().text_range();
        match self.expr(index) {
            Value::Str(key) if TRACE_SUMMARY_FIELDS.contains(&key.as_str()) => {
                Value::Trace(Box::new((program, TraceQuery::SummaryField(key))))
            }
            Value::Str(key) => {
                let mut message = format!("a trace summary has no key '{key}'");
                let mut d = crate::diagnostics::Diag::new(
                    Code::UnknownMember,
                    self.span(key_range),
                    String::new(),
                );
                if let Some(best) = suggest(&key, TRACE_SUMMARY_FIELDS.iter().copied()) {
                    message.push_str(&format!("; did you mean '{best}'?"));
                    let quote = if index.syntax().text().to_string().starts_with('"') {
                        '"'
                    } else {
                        '\''
                    };
                    d = d.with_guess(
                        format!("replace with '{best}'"),
                        vec![(self.span(key_range), format!("{quote}{best}{quote}"))],
                    );
                }
                d.message = message;
                self.push(d);
                Value::Unknown
            }
            Value::Unknown => Value::Unknown,
            v => {
                let message = format!("a summary's keys are strings, not {}", v.describe());
                self.error(Code::WrongKind, key_range, message);
                Value::Unknown
            }
        }
    }

    /// `KERNEL.trace()`: the kernel's IR.
    pub(crate) fn kernel_method(
        &mut self,
        k: Item<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        if method != "trace" {
            return self.unknown_member("kernel", method, range, ["trace"].into_iter());
        }
        match self.bind(c, "`.trace`", &[]) {
            Some(_) => Value::KernelIr(k, IrPart::Whole),
            None => Value::Unknown,
        }
    }

    /// `ir.name`, `ir.ops`, `ir.params`, `ir.tiles` of `KERNEL.trace()`.
    pub(crate) fn kernel_ir_attribute(
        &mut self,
        k: Item<'db>,
        name: &str,
        range: TextRange,
    ) -> Value<'db> {
        match name {
            "name" => Value::Str(k.name(self.db).clone()),
            "ops" => Value::KernelIr(k, IrPart::Ops),
            "params" => Value::KernelIr(k, IrPart::Params),
            "tiles" => Value::KernelIr(k, IrPart::Tiles),
            _ => self.unknown_member(
                "KernelIR",
                name,
                range,
                ["name", "ops", "params", "tiles"].into_iter(),
            ),
        }
    }

    /// `len(x)`: of a list, tuple or string known now, or of a trace's events when they are read.
    pub(crate) fn len_call(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::Len)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::List(vs) | Value::Tuple(vs) => Some(Value::Int(vs.len() as i64)),
            Value::Str(s) => Some(Value::Int(s.chars().count() as i64)),
            Value::KernelIr(k, part)
                if part != IrPart::Whole && !matches!(part, IrPart::Len(_)) =>
            {
                Some(Value::KernelIr(k, IrPart::Len(Box::new(part))))
            }
            Value::Trace(t)
                if matches!(t.1, TraceQuery::TaskEvents | TraceQuery::KernelEvents(_)) =>
            {
                Some(Value::Trace(Box::new((
                    t.0,
                    TraceQuery::Len(Box::new(t.1)),
                ))))
            }
            Value::Explored(mut e)
                if matches!(
                    e.query,
                    wsp_ir::explore::ExploreQuery::Results
                        | wsp_ir::explore::ExploreQuery::TopConfigs(_)
                ) =>
            {
                e.query = wsp_ir::explore::ExploreQuery::Len(Box::new(e.query));
                Some(Value::Explored(e))
            }
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`len` takes a list, a tuple, a string or a trace's events, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }
}
