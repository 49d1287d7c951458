//! Loops in a kernel body: `for k in range(...)` and `for k in pto.range(..., num_stages=)`
//! over a static range, with the values the body reassigns carried from one iteration to the
//! next (`acc = pto.matmul(a, b, acc=acc)`), as Python runs them.

use wsp_ir::Affine;
use wsp_ir::kernel::{CARRY, Loop};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

use super::{BodyChecker, BodyOp};
use crate::diagnostics::Code;
use crate::eval::IntRange;
use crate::types::KernelType;
use crate::values::Value;

/// The most iterations one loop may have: the CPU simulation runs every one, and a loop this
/// long in one task is a mistake in the range, not a kernel.
const MAX_TRIPS: u64 = 1 << 20;

/// The most iterations nested loops may run in all, in one task.
const MAX_NESTED: u64 = 1 << 24;

/// A static range, `start + step * t` for t in 0..trips.
struct Range {
    start: i64,
    step: i64,
    trips: u64,
    stages: Option<u32>,
}

impl BodyChecker<'_> {
    /// `for VAR in range(...):` with its body; an error points at the header alone.
    pub(super) fn for_loop(&mut self, f: &ast::ForStmt) {
        let header = stmt_range(&Stmt::ForStmt(f.clone()));
        if f.is_async() || f.else_clause().is_some() {
            let what = if f.is_async() {
                "`async for`"
            } else {
                "a `for` loop's `else`"
            };
            self.eval.error(
                Code::OutsideSubset,
                header,
                format!("{what} is not part of a kernel body; loop with `for k in range(n):`"),
            );
            return;
        }
        let (Some(target), Some(iterable), Some(body)) = (f.target(), f.iterable(), f.body())
        else {
            return;
        };
        let Expr::NameExpr(var) = &target else {
            self.eval.error(
                Code::OutsideSubset,
                target.syntax().text_range(),
                "a kernel loop binds one name: `for k in range(n):`",
            );
            return;
        };
        let (name, def) = (var.text(), var.syntax().text_range());
        if self.open_loops.contains(&name) {
            self.eval.error(
                Code::Duplicate,
                def,
                format!("`{name}` is already the variable of a loop around this one"),
            );
            return;
        }
        if self.signature.param(&name).is_some() || self.locals.iter().any(|(n, ..)| *n == name) {
            self.eval.error(
                Code::Duplicate,
                def,
                format!("`{name}` already names a value of the kernel; give the loop variable a name of its own"),
            );
            return;
        }
        let Some(range) = self.range(&iterable, header) else {
            return;
        };
        let nested = self.nested_trips.saturating_mul(range.trips);
        if nested > MAX_NESTED {
            self.eval.error(
                Code::IndexOutOfRange,
                header,
                format!("with the loops around it this loop runs {nested} iterations per task; a kernel's loops run at most {MAX_NESTED} in all"),
            );
            return;
        }
        // The loop variable is `start + step * t` over the IR's `t` = 0..trips, named as the
        // user's (loops around this one have other names).
        let index = Affine::var(&name)
            .scale(range.step)
            .and_then(|a| a.add(&Affine::constant(range.start)));
        let Some(index) = index else {
            self.eval.error(
                Code::IndexOutOfRange,
                header,
                "the range's values overflow a 64-bit integer",
            );
            return;
        };
        let (locals, extents) = (self.eval.locals.len(), self.eval.extents.len());
        self.eval.bind_local(name.clone(), Value::Index(index), def);
        self.eval.extents.push((name.clone(), Some(range.trips)));
        let at = self.loops.len();
        let first = self.ops.len() as u32;
        self.loops.push(Loop {
            var: name.clone(),
            trips: range.trips,
            first,
            end: first,
            stages: range.stages,
        });
        self.loop_headers.push(header);
        self.open_loops.push(name.clone());
        let outer = std::mem::replace(&mut self.nested_trips, nested);
        let carries = self.carry_in(&body, header);
        self.block(&body);
        self.carry_out(&carries);
        self.nested_trips = outer;
        self.open_loops.pop();
        self.loops[at].end = self.ops.len() as u32;
        self.eval.locals.truncate(locals);
        self.eval.extents.truncate(extents);
        self.ended_loops.push(name);
    }

    /// `range(stop)`, `range(start, stop[, step])`, or `pto.range(...)` with `num_stages=`,
    /// over integer constants; at least one iteration.
    fn range(&mut self, e: &Expr, header: TextRange) -> Option<Range> {
        let r = e.syntax().text_range();
        let wrong = "a kernel loop runs over `range(n)`, `range(start, stop[, step])` or `pto.range(n, num_stages=s)`, of integer constants";
        let Expr::CallExpr(c) = e else {
            self.eval.error(Code::OutsideSubset, r, wrong);
            return None;
        };
        let pipelined = match c.callee() {
            Some(Expr::NameExpr(n)) if n.text() == "range" => false,
            Some(Expr::AttributeExpr(_))
                if self.op_name(c).is_some_and(|(op, _)| op == "range") =>
            {
                self.deprecated_tl(c);
                true
            }
            _ => {
                self.eval.error(Code::OutsideSubset, r, wrong);
                return None;
            }
        };
        let mut bounds = Vec::new();
        let mut stages = None;
        for arg in c.args() {
            let ar = arg.syntax().text_range();
            let value = arg.value().map(|v| self.eval.expr(&v));
            let int = match value {
                Some(Value::Int(i)) => i,
                Some(Value::Unknown) | None => return None,
                Some(v) => {
                    let what = v.describe();
                    self.eval.error(
                        Code::WrongKind,
                        ar,
                        format!("a kernel loop's range is of integer constants, not {what}"),
                    );
                    return None;
                }
            };
            match arg.kind() {
                ast::ArgKind::Keyword
                    if pipelined && arg.keyword().is_some_and(|k| k.text() == "num_stages") =>
                {
                    if stages.is_some() {
                        self.eval
                            .error(Code::WrongArguments, ar, "`num_stages` is given twice");
                        return None;
                    }
                    match u32::try_from(int) {
                        Ok(s @ 1..=8) => stages = Some(s),
                        _ => {
                            self.eval.error(
                                Code::WrongArguments,
                                ar,
                                format!(
                                    "`num_stages` is a pipelining depth from 1 to 8, not {int}"
                                ),
                            );
                            return None;
                        }
                    }
                }
                ast::ArgKind::Positional if bounds.len() < 3 => bounds.push(int),
                _ => {
                    let takes = if pipelined {
                        "`pto.range` takes `(stop)` or `(start, stop[, step])`, and `num_stages=`"
                    } else {
                        "`range` takes `(stop)` or `(start, stop[, step])`"
                    };
                    self.eval.error(Code::WrongArguments, ar, takes);
                    return None;
                }
            }
        }
        let Some(IntRange { start, step, len }) = IntRange::of(&bounds) else {
            let message = if bounds.is_empty() {
                "a range takes its stop at least"
            } else {
                "a range's step is not 0"
            };
            self.eval.error(Code::WrongArguments, r, message);
            return None;
        };
        let trips = len;
        if trips == 0 {
            self.eval.error(
                Code::IndexOutOfRange,
                header,
                format!(
                    "this loop runs no iteration (`{}` is empty): a kernel loop runs at least once",
                    self.text(r)
                ),
            );
            return None;
        }
        if trips > i128::from(MAX_TRIPS) {
            self.eval.error(
                Code::IndexOutOfRange,
                header,
                format!(
                    "this loop runs {trips} iterations; a kernel loop runs at most {MAX_TRIPS}"
                ),
            );
            return None;
        }
        Some(Range {
            start,
            step,
            trips: trips as u64,
            stages,
        })
    }

    /// The locals the body reassigns that hold a tile or a scalar before the loop: each
    /// becomes a `carry` op at the loop's start, which the body's uses read.
    fn carry_in(&mut self, body: &ast::Block, header: TextRange) -> Vec<(String, u32)> {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        let mut carries = Vec::new();
        for name in assigned {
            let Some((_, value, def)) = self.locals.iter().rev().find(|(n, ..)| *n == name) else {
                continue;
            };
            let (value, def) = (value.clone(), *def);
            match value {
                Some((init, ty @ (KernelType::Tile(_) | KernelType::Scalar(_)))) => {
                    let c = self.ops.len() as u32;
                    self.ops.push(BodyOp {
                        op: CARRY,
                        args: vec![init],
                        ty: Some(ty),
                        range: header,
                    });
                    self.locals
                        .push((name.clone(), Some((super::Operand::Value(c), ty)), def));
                    carries.push((name, c));
                }
                Some(_) => self.eval.error(
                    Code::OutsideSubset,
                    header,
                    format!("the loop reassigns `{name}`, a number: a kernel loop carries tiles and scalars from one iteration to the next, not numbers"),
                ),
                None => {}
            }
        }
        carries
    }

    /// Each carried local's value at the end of an iteration becomes its `carry`'s next
    /// value; it must keep the type it had before the loop.
    fn carry_out(&mut self, carries: &[(String, u32)]) {
        for (name, c) in carries {
            let Some(carried) = self.ops[*c as usize].ty else {
                continue;
            };
            let Some((_, value, def)) = self.locals.iter().rev().find(|(n, ..)| n == name) else {
                continue;
            };
            let (value, def) = (value.clone(), *def);
            let Some((next, ty)) = value else {
                continue;
            };
            if ty != carried {
                let code = match (ty, carried) {
                    (KernelType::Tile(a), KernelType::Tile(b)) if a.shape() == b.shape() => {
                        Code::DtypeMismatch
                    }
                    _ => Code::ShapeMismatch,
                };
                self.eval.error(
                    code,
                    def,
                    format!("`{name}` is {carried} before the loop but {ty} after an iteration: a value carried across a loop's iterations keeps its type"),
                );
                continue;
            }
            self.ops[*c as usize].args.push(next);
        }
    }

    /// A name used as a value: a loop variable (bound in the evaluator) says where it may go.
    pub(super) fn loop_variable_as_value(&mut self, name: &str, range: TextRange) -> bool {
        let ended = self.ended_loops.iter().any(|n| n == name);
        if !self.open_loops.iter().any(|n| n == name) && !ended {
            return false;
        }
        let message = if self.open_loops.iter().any(|n| n == name) {
            format!(
                "`{name}` is a loop variable: a kernel uses it in the bounds of a slice of a tile parameter (`x[{name}*64:({name}+1)*64, :]`), not as a tile value"
            )
        } else {
            format!("`{name}` is the variable of a loop that has ended; use it inside its loop")
        };
        self.eval.error(Code::WrongKind, range, message);
        true
    }
}

/// Every name a block assigns, nested loops included, in order, once each.
fn assigned_names(block: &ast::Block, out: &mut Vec<String>) {
    for stmt in block.statements() {
        match &stmt {
            Stmt::AssignStmt(a) => {
                for t in a.targets() {
                    if let Expr::NameExpr(n) = t {
                        let name = n.text();
                        if !out.contains(&name) {
                            out.push(name);
                        }
                    }
                }
            }
            Stmt::ForStmt(f) => {
                if let Some(b) = f.body() {
                    assigned_names(&b, out);
                }
            }
            _ => {}
        }
    }
}

/// Where a statement of the body is reported: a compound one by its header.
pub(super) fn stmt_range(stmt: &Stmt) -> TextRange {
    crate::eval::statement_range(stmt.syntax())
}
