//! f-strings, as the seeds print with them (`print(f"Tasks: {program.stats.task_count}")`):
//! each field is an expression of the file, checked where it is written, and formatted with
//! Python's format-spec language (`wsp_ir::pyformat`). Fields known when the file is checked
//! make a string; `program.stats` fields are known only when the program runs, so an f-string
//! with them is printed directly (`lower` hands the pieces to the run).

use super::Eval;
use crate::diagnostics::Code;
use crate::values::Value;
use wsp_ir::pyformat::{self, PyValue};
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};
use wsp_syntax::{FStringField, FStringPart, TextRange, TextSize};

/// A field's value: known now, read when the statement runs, or broken (reported).
pub(crate) enum FieldValue {
    Known(PyValue),
    /// `program.stats` or one of its fields: the expression, which `lower` reads.
    Runtime(Expr),
    Error,
}

impl<'db> Eval<'db> {
    /// The value of an f-string; `printed` when it is an argument of `print`, where fields of
    /// `program.stats` may be read when the statement runs (the value is then `None`).
    pub(crate) fn fstring(&mut self, l: &ast::Literal, printed: bool) -> Value<'db> {
        let Some(pieces) = self.fstring_pieces(l) else {
            return Value::Unknown;
        };
        let mut out = String::new();
        let mut runtime = false;
        for (piece, range) in pieces {
            match piece {
                Piece::Text(t) => out.push_str(&t),
                Piece::Field(f, FieldValue::Known(v)) => match self.format_field(&f, &v, range) {
                    Some(s) => out.push_str(&s),
                    None => return Value::Unknown,
                },
                Piece::Field(_, FieldValue::Runtime(_)) if printed => runtime = true,
                Piece::Field(_, FieldValue::Runtime(_)) => {
                    self.error(
                        Code::WrongKind,
                        range,
                        "`program.stats` is known when the program runs: an f-string of it is printed directly, `print(f\"...\")`",
                    );
                    return Value::Unknown;
                }
                Piece::Field(_, FieldValue::Error) => return Value::Unknown,
            }
        }
        if runtime {
            Value::None
        } else {
            Value::Str(out)
        }
    }

    /// The f-string's literal text and fields, each field evaluated, with where it is written.
    pub(crate) fn fstring_pieces(&mut self, l: &ast::Literal) -> Option<Vec<(Piece, TextRange)>> {
        let range = l.syntax().text_range();
        let Some(parts) = l.fstring_parts() else {
            self.error(
                Code::OutsideSubset,
                range,
                "this f-string is not part of WSP",
            );
            return None;
        };
        let mut out = Vec::new();
        for part in parts {
            match part {
                FStringPart::Text(t) => out.push((Piece::Text(t), range)),
                FStringPart::Field(f) => {
                    let at = range.start() + TextSize::from(f.expr_offset as u32);
                    let field_range = TextRange::at(at, TextSize::from(f.expr.len() as u32));
                    if f.spec.is_none() {
                        self.error(
                            Code::OutsideSubset,
                            field_range,
                            "a format spec with fields of its own (`{x:{width}}`) is not part of WSP; write the width out",
                        );
                        return None;
                    }
                    let value = self.field_value(&f, at, field_range);
                    out.push((Piece::Field(f, value), field_range));
                }
            }
        }
        Some(out)
    }

    /// A field's expression, parsed and evaluated in place: what it reports points into it.
    fn field_value(&mut self, f: &FStringField, at: TextSize, range: TextRange) -> FieldValue {
        // Parsed as `(expr)`, as CPython does; the syntax was checked with the file.
        let parse = wsp_syntax::parse(&format!("({})", f.expr));
        let expr = parse.tree().statements().next().and_then(|s| match s {
            Stmt::ExprStmt(e) => match e.expr()? {
                Expr::ParenExpr(p) => p.expr(),
                other => Some(other),
            },
            _ => None,
        });
        let Some(expr) = expr else {
            return FieldValue::Error;
        };
        let (diags, uses) = (self.diags.len(), self.uses.len());
        let value = self.expr(&expr);
        // From the parsed text (after its `(`) to the file.
        let shift = at - TextSize::from(1);
        let item = self.item;
        for d in &mut self.diags[diags..] {
            if d.span.item == item {
                d.span.range += shift;
            }
            for r in &mut d.related {
                if r.span.item == item {
                    r.span.range += shift;
                }
            }
            if let Some(fix) = &mut d.fix {
                for (span, _) in &mut fix.edits {
                    if span.item == item {
                        span.range += shift;
                    }
                }
            }
        }
        for u in &mut self.uses[uses..] {
            u.range += shift;
        }
        match value {
            Value::None => FieldValue::Known(PyValue::None),
            Value::Bool(b) => FieldValue::Known(PyValue::Bool(b)),
            Value::Int(i) => FieldValue::Known(PyValue::Int(i)),
            Value::Float(x) => FieldValue::Known(PyValue::Float(x.0)),
            Value::Str(s) => FieldValue::Known(PyValue::Str(s)),
            Value::Stats | Value::Trace(_) | Value::KernelIr(..) | Value::Explored(_) => {
                FieldValue::Runtime(expr)
            }
            Value::Unknown => FieldValue::Error,
            other => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "an f-string here formats numbers, strings, `program.stats` and `program.trace` values, not {}",
                        other.describe()
                    ),
                );
                FieldValue::Error
            }
        }
    }

    /// A known field as Python formats it; an error (Python's `ValueError`) at the field.
    pub(crate) fn format_field(
        &mut self,
        f: &FStringField,
        v: &PyValue,
        range: TextRange,
    ) -> Option<String> {
        let spec = f.spec.as_deref().unwrap_or("");
        match pyformat::format_field(v, f.debug.as_deref(), f.conversion, spec) {
            Ok(s) => Some(s),
            Err(m) => {
                self.error(Code::WrongKind, range, m);
                None
            }
        }
    }
}

/// A piece of an f-string, its fields evaluated.
pub(crate) enum Piece {
    Text(String),
    Field(FStringField, FieldValue),
}
