//! A kernel body checked op by op: each `pto.*` call against its row of the op table (tile
//! shapes, dtypes, operand kinds), locals, and the stores to parameters.

use std::collections::HashMap;

use super::{Direction, KernelInstance, KernelSignature, ParamType, bound_signature};
use crate::diagnostics::{Code, Diag};
use crate::eval::{Eval, num};
use crate::items::Item;
use crate::names::suggest;
use crate::ops::{self, DtypeRule, Op, OpParamKind, ShapeRule};
use crate::symbols::Use;
use crate::types::{DType, KernelType, TileType};
use crate::values::{F64, Value};
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};
use wsp_syntax::{SyntaxKind, TextRange};

pub use wsp_ir::kernel::Operand;

mod loops;
mod slices;

/// One op of the body: `%result = op(args)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct BodyOp {
    pub op: &'static str,
    pub args: Vec<Operand>,
    pub ty: Option<KernelType>,
    /// The call, in the kernel item: where a diagnostic about the op (WSP506, WSP507) points.
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct KernelBody<'db> {
    /// The ops in order; op `i` defines value `i`.
    pub ops: Vec<BodyOp>,
    /// The type of each expression that has one, by its range in the kernel item (for hover).
    pub types: Vec<(TextRange, KernelType)>,
    /// The parameters `pto.store` writes, by name.
    pub stored: Vec<String>,
    pub diags: Vec<Diag<'db>>,
    /// The names the body resolved (for navigation).
    pub uses: Vec<Use<'db>>,
    /// The body's loops over ranges of `ops`, outer before inner.
    pub loops: Vec<wsp_ir::kernel::Loop>,
    /// Each loop's header (`for k in range(4):`), in the kernel item.
    pub loop_headers: Vec<TextRange>,
}

/// The body of a kernel with fixed tile types; a JIT-style kernel's with its JIT parameters
/// untyped (what does not depend on their types: names, ops, directions).
pub fn kernel_body<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> &'db KernelBody<'db> {
    instance_body(db, KernelInstance::plain(db, item))
}

/// The body of a kernel instance, checked with the tile types it binds.
#[salsa::tracked(returns(ref))]
pub fn instance_body<'db>(
    db: &'db dyn salsa::Database,
    inst: KernelInstance<'db>,
) -> KernelBody<'db> {
    let item = inst.item(db);
    let signature = bound_signature(db, inst);
    let mut checker = BodyChecker {
        eval: Eval::new(db, item),
        signature,
        locals: Vec::new(),
        ops: Vec::new(),
        types: Vec::new(),
        stored: Vec::new(),
        shapeless: HashMap::new(),
        loops: Vec::new(),
        loop_headers: Vec::new(),
        padded_load: false,
        open_loops: Vec::new(),
        nested_trips: 1,
        ended_loops: Vec::new(),
        slices: HashMap::new(),
    };
    if let Some(Stmt::FunctionDef(f)) = item.stmt(db)
        && let Some(body) = f.body()
    {
        checker.block(&body);
    }
    checker.finish()
}

struct BodyChecker<'db> {
    eval: Eval<'db>,
    signature: &'db KernelSignature<'db>,
    /// Each local's name, value and where it is assigned, innermost last.
    locals: Vec<(String, Typed, TextRange)>,
    ops: Vec<BodyOp>,
    types: Vec<(TextRange, KernelType)>,
    stored: Vec<String>,
    /// Expressions and locals whose value has no type after an error in its shape, but a
    /// known dtype: their dtype is still checked, so a WSP201 hides no WSP202 after it.
    shapeless: HashMap<TextRange, DType>,
    /// Every loop met, outer before inner.
    loops: Vec<wsp_ir::kernel::Loop>,
    loop_headers: Vec<TextRange>,
    /// Whether the `pto.load` being checked names a `pad=`: its slice may run past the
    /// parameter's end.
    padded_load: bool,
    /// The variables of the loops around the statement being checked, outermost first.
    open_loops: Vec<String>,
    /// How many iterations those loops run in all.
    nested_trips: u64,
    /// The variables of loops that have ended.
    ended_loops: Vec<String>,
    /// The first row and column of each slice of a tile parameter given to `pto.load` or
    /// `pto.store`, by the slice's range.
    slices: HashMap<TextRange, [wsp_ir::Affine; 2]>,
}

/// A checked operand: what it is and its type (`None` after an error).
type Typed = Option<(Operand, KernelType)>;

impl<'db> BodyChecker<'db> {
    fn finish(self) -> KernelBody<'db> {
        KernelBody {
            ops: self.ops,
            types: self.types,
            stored: self.stored,
            diags: self.eval.diags,
            uses: self.eval.uses,
            loops: self.loops,
            loop_headers: self.loop_headers,
        }
    }

    fn block(&mut self, block: &ast::Block) {
        let cpp = self.signature.cpp.is_some();
        for stmt in block.statements() {
            // A compound statement is reported by its header; found only for a message.
            let range = || loops::stmt_range(&stmt);
            match &stmt {
                Stmt::PassStmt(_) => {}
                _ if crate::items::is_docstring(&stmt) => {}
                _ if cpp => {
                    self.eval.error(
                        Code::WrongKind,
                        range(),
                        "a `cpp_src` kernel's body is `pass`: its code is the C++ string",
                    );
                }
                Stmt::AssignStmt(a) => {
                    let targets: Vec<Expr> = a.targets().collect();
                    let value = a.value().map(|v| self.expr(&v));
                    match targets.as_slice() {
                        [Expr::NameExpr(n)] => {
                            let name = n.text();
                            if self.signature.param(&name).is_some() {
                                self.eval.error(Code::WrongKind, n.syntax().text_range(), format!("`{name}` is a parameter; write to it with `pto.store({name}, ...)`"));
                                continue;
                            }
                            let value = value.flatten();
                            let def = n.syntax().text_range();
                            if let Some((_, ty)) = &value {
                                self.types.push((def, *ty));
                            } else if let Some(d) = a
                                .value()
                                .and_then(|v| self.shapeless_at(v.syntax().text_range()))
                            {
                                self.shapeless.insert(def, d);
                            }
                            self.eval.use_local(def, def);
                            self.locals.push((name, value, def));
                        }
                        _ => self.eval.error(
                            Code::OutsideSubset,
                            range(),
                            "a kernel assigns one name at a time",
                        ),
                    }
                }
                Stmt::ExprStmt(s) => {
                    let Some(e) = s.expr() else { continue };
                    let is_store = matches!(&e, Expr::CallExpr(c) if self.op_name(c).is_some_and(|(n, _)| n == "store"));
                    if !is_store {
                        self.eval.error(Code::OutsideSubset, range(), "a kernel body statement is an assignment or `pto.store(...)`; this value is unused");
                    }
                    self.expr(&e);
                }
                Stmt::ForStmt(f) => self.for_loop(f),
                other => {
                    let what = crate::eval::describe_syntax(other.syntax());
                    self.eval.error(Code::OutsideSubset, range(), format!("{what} is not part of a kernel body (assignments of `pto.*` ops, `pto.store` and `for` loops over a range)"));
                }
            }
        }
    }

    /// `pto.add` → ("add", range of `pto`), with WSP104 for `tl.add`.
    fn op_name(&self, c: &ast::CallExpr) -> Option<(String, TextRange)> {
        let Some(Expr::AttributeExpr(a)) = c.callee() else {
            return None;
        };
        let Some(Expr::NameExpr(ns)) = a.receiver() else {
            return None;
        };
        let ns_text = ns.text();
        if ns_text != "pto" && ns_text != "tl" {
            return None;
        }
        Some((a.attr()?.text().to_string(), ns.syntax().text_range()))
    }

    fn expr(&mut self, e: &Expr) -> Typed {
        wsp_syntax::grow_stack(|| self.expr_here(e))
    }

    fn expr_here(&mut self, e: &Expr) -> Typed {
        let range = e.syntax().text_range();
        let result = match e {
            Expr::ParenExpr(p) => {
                let inner = p.expr()?;
                let typed = self.expr(&inner);
                if typed.is_none()
                    && let Some(d) = self.shapeless_at(inner.syntax().text_range())
                {
                    self.shapeless.insert(range, d);
                }
                return typed;
            }
            Expr::NameExpr(n) => self.name(&n.text(), range),
            Expr::Literal(_) | Expr::UnaryExpr(_) => match self.eval.expr(e) {
                v @ (Value::Int(_) | Value::Float(_)) => {
                    Some((Operand::Number(F64(num(&v))), KernelType::Number))
                }
                Value::Unknown => None,
                v => {
                    self.eval.error(
                        Code::WrongKind,
                        range,
                        format!("expected a tile or a number, not {}", v.describe()),
                    );
                    None
                }
            },
            Expr::CallExpr(c) => self.call(c),
            Expr::SubscriptExpr(s) => self.slice_value(s),
            Expr::BinExpr(b) => {
                let op = match b.op_kind() {
                    Some(SyntaxKind::PLUS) => "add",
                    Some(SyntaxKind::MINUS) => "sub",
                    Some(SyntaxKind::STAR) => "mul",
                    Some(SyntaxKind::SLASH) => "div",
                    Some(SyntaxKind::AT) => "matmul",
                    _ => "an op",
                };
                self.eval.error(
                    Code::OutsideSubset,
                    range,
                    format!("tile arithmetic is written with ops: use `pto.{op}(a, b)`"),
                );
                None
            }
            _ => {
                self.eval.error(
                    Code::OutsideSubset,
                    range,
                    format!(
                        "{} is not part of a kernel body",
                        crate::eval::describe_syntax(e.syntax())
                    ),
                );
                None
            }
        };
        if let Some((_, ty)) = &result {
            self.types.push((range, *ty));
        }
        result
    }

    fn name(&mut self, name: &str, range: TextRange) -> Typed {
        if let Some((_, v, def)) = self.locals.iter().rev().find(|(n, ..)| n == name) {
            let (v, def) = (v.clone(), *def);
            self.eval.use_local(range, def);
            if v.is_none()
                && let Some(d) = self.shapeless_at(def)
            {
                self.shapeless.insert(range, d);
            }
            return v;
        }
        if let Some(p) = self.signature.param(name) {
            self.eval.use_local(range, p.range);
            return match &p.ty {
                ParamType::Tile(dir, t) => {
                    if !dir.reads() {
                        self.direction_error(range, name, *dir, "read");
                        return None;
                    }
                    Some((Operand::Param(name.to_string()), KernelType::Tile(*t)))
                }
                ParamType::Scalar(d) => {
                    Some((Operand::Param(name.to_string()), KernelType::Scalar(*d)))
                }
                ParamType::Constexpr => {
                    Some((Operand::Param(name.to_string()), KernelType::Number))
                }
                // Its type comes with each task's binding.
                ParamType::Jit(dir, _) => {
                    if !dir.reads() {
                        self.direction_error(range, name, *dir, "read");
                    }
                    None
                }
                ParamType::Unknown => None,
            };
        }
        if self.loop_variable_as_value(name, range) {
            return None;
        }
        match self.eval.resolve(name, range) {
            v @ (Value::Int(_) | Value::Float(_)) => {
                Some((Operand::Number(F64(num(&v))), KernelType::Number))
            }
            Value::DType(d) => Some((Operand::DType(d), KernelType::Number)),
            Value::Unknown => None,
            v => {
                self.eval.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "a kernel body uses tiles, parameters and numbers, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    fn direction_error(&mut self, range: TextRange, name: &str, dir: Direction, what: &str) {
        let p_range = self
            .signature
            .param(name)
            .map(|p| p.range)
            .unwrap_or_default();
        let (fix_dir, verb) = if what == "read" || what == "loaded" {
            ("InOut", "reads")
        } else {
            ("InOut", "writes")
        };
        let d = Diag::new(
            Code::Direction,
            self.eval.span(range),
            format!("`{name}` is `{}` and cannot be {what} here; make it `{fix_dir}` if the kernel {verb} it", dir.name()),
        )
        .with_related(self.eval.span(p_range), format!("`{name}` is declared `{}` here", dir.name()));
        self.eval.push(d);
    }

    fn call(&mut self, c: &ast::CallExpr) -> Typed {
        let range = c.syntax().text_range();
        let Some((name, _)) = self.op_name(c) else {
            self.eval.error(
                Code::WrongKind,
                range,
                "a kernel body calls `pto.*` ops only",
            );
            return None;
        };
        self.deprecated_tl(c);
        let Some(op) = ops::lookup(&name) else {
            let attr_range = match c.callee() {
                Some(Expr::AttributeExpr(a)) => a.attr().map_or(range, |t| t.text_range()),
                _ => range,
            };
            let mut d = Diag::new(
                Code::UnknownMember,
                self.eval.span(attr_range),
                format!("`pto` has no op `{name}`"),
            );
            // A known alias first: replacing it keeps the meaning. A spelling guess may not.
            if let Some(a) = ops::alias(&name) {
                d.message
                    .push_str(&format!("; `{name}` is {}'s name for `{}`", a.from, a.op));
                d = d.with_fix(
                    format!("replace with `{}`", a.op),
                    vec![(self.eval.span(attr_range), a.op.to_string())],
                );
            } else if let Some(best) = suggest(
                &name,
                ops::all()
                    .map(|o| o.name)
                    .chain(ops::ALIASES.iter().filter(|a| a.accepted).map(|a| a.name)),
            ) {
                d.message.push_str(&format!("; did you mean `{best}`?"));
                d = d.with_guess(
                    format!("replace with `{best}`"),
                    vec![(self.eval.span(attr_range), best.to_string())],
                );
            }
            self.eval.push(d);
            return None;
        };
        self.padded_load = op.name == "load"
            && c.args()
                .any(|a| a.keyword().is_some_and(|k| k.text() == "pad"));
        let args = self.op_args(op, c);
        self.padded_load = false;
        match args? {
            Ok(args) => self.apply(op, c, args),
            Err(args) => {
                self.dtype_only(op, c, &args);
                None
            }
        }
    }

    /// WSP104 for `tl.NAME(...)`, with the fix to `pto.NAME`.
    fn deprecated_tl(&mut self, c: &ast::CallExpr) {
        let Some(Expr::AttributeExpr(a)) = c.callee() else {
            return;
        };
        let Some(Expr::NameExpr(ns)) = a.receiver() else {
            return;
        };
        if ns.text() == "tl" {
            let ns_range = ns.syntax().text_range();
            let d = Diag::new(
                Code::Deprecated,
                self.eval.span(ns_range),
                "`tl.*` is a deprecated spelling of `pto.*`",
            )
            .with_fix(
                "replace `tl` with `pto`",
                vec![(self.eval.span(ns_range), "pto".into())],
            );
            self.eval.push(d);
        }
    }

    /// The dtype of an expression or local that has none of its own after a shape error.
    fn shapeless_at(&self, r: TextRange) -> Option<DType> {
        self.shapeless.get(&r).copied()
    }

    /// An op some of whose operands have a dtype but no shape after an error: only its dtype
    /// rule is checked (a store's value against its destination), and its own result is
    /// shapeless in turn.
    fn dtype_only(&mut self, op: &'static Op, c: &ast::CallExpr, args: &[DtypeArg]) {
        let what = format!("`pto.{}`", op.name);
        let dtype_of = |a: &DtypeArg| match a {
            Some((ArgDtype::Typed(KernelType::Tile(t)), r)) => Some((t.dtype, *r)),
            Some((ArgDtype::Typed(KernelType::Scalar(d)) | ArgDtype::Shapeless(d), r)) => {
                Some((*d, *r))
            }
            _ => None,
        };
        let shown = |me: &Self, a: &DtypeArg| match a {
            Some((ArgDtype::Shapeless(d), r)) => format!("`{}` has dtype {d}", me.text(*r)),
            Some((ArgDtype::Typed(t), r)) => format!("`{}` is {t}", me.text(*r)),
            _ => String::new(),
        };
        if op.shape == ShapeRule::Store {
            let (Some(dst), Some(value)) = (args.first(), args.get(1)) else {
                return;
            };
            if let (Some((dd, _)), Some((vd, rv))) = (dtype_of(dst), dtype_of(value))
                && dd != vd
            {
                let text = self.text(rv);
                let d = Diag::new(
                    Code::DtypeMismatch,
                    self.eval.span(rv),
                    format!(
                        "`pto.store`: {} but {}",
                        shown(self, dst),
                        shown(self, value)
                    ),
                )
                .with_fix(
                    format!("convert with `pto.cast(..., {dd})`"),
                    vec![(self.eval.span(rv), format!("pto.cast({text}, DType.{dd})"))],
                );
                self.eval.push(d);
            }
            return;
        }
        let mut common: Option<DType> = None;
        if matches!(op.dtype, DtypeRule::Same | DtypeRule::Float) {
            let given: Vec<&DtypeArg> = args
                .iter()
                .zip(op.params)
                .filter(|(a, p)| {
                    matches!(p.kind, OpParamKind::Tile | OpParamKind::Param)
                        && dtype_of(a).is_some()
                })
                .map(|(a, _)| a)
                .collect();
            for a in &given {
                let (d, r) = dtype_of(a).expect("filtered");
                match common {
                    None => common = Some(d),
                    Some(first) if first != d => {
                        let message = format!(
                            "{what}: {} but {}; convert one with `pto.cast`",
                            shown(self, given[0]),
                            shown(self, a)
                        );
                        self.eval.error(Code::DtypeMismatch, r, message);
                        return;
                    }
                    _ => {}
                }
            }
            if op.dtype == DtypeRule::Float
                && let Some(d) = common
                && !d.is_float()
            {
                let r = dtype_of(given[0]).expect("filtered").1;
                self.eval.error(
                    Code::DtypeMismatch,
                    r,
                    format!("{what} needs a float tile, but {}", shown(self, given[0])),
                );
                return;
            }
        }
        let result = match op.dtype {
            DtypeRule::Same | DtypeRule::Float => common,
            DtypeRule::Fixed(d) => Some(d),
            DtypeRule::FromArgument => args.iter().find_map(|a| match a {
                Some((ArgDtype::Argument(d), _)) => Some(*d),
                _ => None,
            }),
            DtypeRule::MatmulAccumulate => {
                let operand = |i: usize| args.get(i).and_then(dtype_of);
                match (operand(0), operand(1)) {
                    (Some((a, _)), Some((b, _))) => matmul_dtype(a, b),
                    _ => None,
                }
            }
        };
        if let Some(d) = result {
            self.shapeless.insert(c.syntax().text_range(), d);
        }
    }

    /// Binds and types the arguments of an op call by the op table's parameter list.
    /// `Err` when a tile argument has a dtype but no shape after an error: the arguments as
    /// the dtype rule alone reads them. `None` after any other error.
    fn op_args(
        &mut self,
        op: &'static Op,
        c: &ast::CallExpr,
    ) -> Option<Result<Vec<OpArg>, Vec<DtypeArg>>> {
        let what = format!("`pto.{}`", op.name);
        let params: Vec<(&str, bool)> = op.params.iter().map(|p| (p.name, p.optional)).collect();
        let hint = || format!(": {}", op.signature());
        let bound = self.eval.bind_syntax(c, &what, &params, &hint);
        let mut ok = bound.ok;
        let mut shapeless = false;
        let mut out = Vec::new();
        let mut dtypes = Vec::new();
        for (i, e) in bound.iter().enumerate() {
            let Some(e) = e else {
                out.push(None);
                dtypes.push(None);
                continue;
            };
            let r = e.syntax().text_range();
            let typed = match op.params[i].kind {
                OpParamKind::Tile => self.expr(e),
                OpParamKind::Param => self.param_operand(op, e),
                OpParamKind::DType => {
                    let v = self.eval.expr(e);
                    self.eval
                        .dtype(&v, r)
                        .map(|d| (Operand::DType(d), KernelType::Number))
                }
                OpParamKind::Shape => {
                    let v = self.eval.expr(e);
                    match self.eval.shape(&v, r) {
                        Some(s) if s.len() == 2 => {
                            Some((Operand::Shape(s[0], s[1]), KernelType::Number))
                        }
                        Some(s) => {
                            self.eval.error(
                                Code::WrongKind,
                                r,
                                format!("a tile shape has 2 dimensions, not {}", s.len()),
                            );
                            None
                        }
                        None => None,
                    }
                }
                OpParamKind::Number => match self.eval.expr(e) {
                    v @ (Value::Int(_) | Value::Float(_)) => {
                        Some((Operand::Number(F64(num(&v))), KernelType::Number))
                    }
                    Value::Unknown => None,
                    v => {
                        self.eval.error(
                            Code::WrongKind,
                            r,
                            format!("expected a number, not {}", v.describe()),
                        );
                        None
                    }
                },
            };
            let tile = matches!(op.params[i].kind, OpParamKind::Tile | OpParamKind::Param);
            match typed {
                Some((o, t)) => {
                    let a = match &o {
                        _ if tile => ArgDtype::Typed(t),
                        Operand::DType(d) => ArgDtype::Argument(*d),
                        _ => ArgDtype::Other,
                    };
                    dtypes.push(Some((a, r)));
                    out.push(Some((o, t, r)));
                }
                None => match self.shapeless_at(r) {
                    Some(d) if tile => {
                        shapeless = true;
                        dtypes.push(Some((ArgDtype::Shapeless(d), r)));
                    }
                    _ => ok = false,
                },
            }
        }
        match (ok, shapeless) {
            (false, _) => None,
            (true, true) => Some(Err(dtypes)),
            (true, false) => Some(Ok(out)),
        }
    }

    /// `load`'s and `store`'s first argument: a tile parameter, with its direction checked.
    fn param_operand(&mut self, op: &Op, e: &Expr) -> Typed {
        let r = e.syntax().text_range();
        let name = match e {
            Expr::NameExpr(n) => n.text(),
            Expr::SubscriptExpr(s) => return self.slice_operand(op, s),
            _ => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!("`pto.{}` takes a tile parameter of the kernel", op.name),
                );
                return None;
            }
        };
        let Some(p) = self.signature.param(&name) else {
            if let Some((.., def)) = self.locals.iter().rev().find(|(n, ..)| *n == name) {
                let def = *def;
                self.eval.use_local(r, def);
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`{name}` is a local value; `pto.{}` takes a tile parameter of the kernel",
                        op.name
                    ),
                );
            } else {
                self.eval.resolve(&name, r);
            }
            return None;
        };
        self.eval.use_local(r, p.range);
        if let ParamType::Jit(dir, _) = p.ty {
            let store = op.name == "store";
            if store && !dir.writes() {
                self.direction_error(r, &name, dir, "stored");
            } else if !store && !dir.reads() {
                self.direction_error(r, &name, dir, "loaded");
            } else if store {
                self.stored.push(name.clone());
            }
            return None;
        }
        let ParamType::Tile(dir, t) = p.ty else {
            if p.ty != ParamType::Unknown {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`pto.{}` takes a tile parameter; `{name}` is a scalar",
                        op.name
                    ),
                );
            }
            return None;
        };
        let store = op.name == "store";
        if store && !dir.writes() {
            self.direction_error(r, &name, dir, "stored");
            return None;
        }
        if !store && !dir.reads() {
            self.direction_error(r, &name, dir, "loaded");
            return None;
        }
        if store {
            self.stored.push(name.clone());
        }
        Some((Operand::Param(name), KernelType::Tile(t)))
    }

    /// Checks an op call by its row of the op table and records it: the dtype rule, then the
    /// shape rule (`store` has its own), then the result's dtype.
    fn apply(&mut self, op: &'static Op, c: &ast::CallExpr, args: Vec<OpArg>) -> Typed {
        let call = OpCall::new(op, c, &args);
        if op.shape == ShapeRule::Store {
            if self.store_rule(&call).is_some() {
                self.push_op(&call, args, None);
            }
            return None;
        }
        let dtype = self.operand_dtype(&call)?;
        let Some(ty) = self.result_type(&call) else {
            // Its shape is wrong, not its dtype: what uses it is still checked for that.
            let d = match op.dtype {
                DtypeRule::Fixed(d) => Some(d),
                DtypeRule::FromArgument => call.dtype_arg,
                DtypeRule::Same | DtypeRule::Float => dtype,
                DtypeRule::MatmulAccumulate => match (call.tile(0), call.tile(1)) {
                    (Some((a, _)), Some((b, _))) => matmul_dtype(a.dtype, b.dtype),
                    _ => None,
                },
            };
            if let Some(d) = d {
                self.shapeless.insert(call.range, d);
            }
            return None;
        };
        let result = result_dtype(ty, dtype, op.dtype);
        let value = self.push_op(&call, args, Some(result));
        Some((Operand::Value(value), result))
    }

    /// Records the op with its operands and returns the value it defines.
    fn push_op(&mut self, call: &OpCall, args: Vec<OpArg>, ty: Option<KernelType>) -> u32 {
        // A slice of a parameter: where it starts, after the other operands.
        let slice = args
            .first()
            .and_then(|a| a.as_ref())
            .and_then(|(_, _, r)| self.slices.get(r).cloned());
        let mut operands: Vec<Operand> = args.into_iter().flatten().map(|(o, _, _)| o).collect();
        if let Some([row, col]) = slice {
            operands.extend([Operand::Index(row), Operand::Index(col)]);
        }
        self.ops.push(BodyOp {
            op: call.op.name,
            args: operands,
            ty,
            range: call.range,
        });
        self.ops.len() as u32 - 1
    }

    /// The `Same` and `Float` dtype rules: the dtype all tile operands share (scalars must agree
    /// too; numbers adapt), and a float one for `Float`. `None` after an error; `Some(None)` if no
    /// operand has a dtype or the op's rule is another.
    fn operand_dtype(&mut self, call: &OpCall) -> Option<Option<DType>> {
        let what = &call.what;
        let tiles = &call.tiles;
        let mut dtype: Option<DType> = None;
        if matches!(call.op.dtype, DtypeRule::Same | DtypeRule::Float) {
            for (t, r) in tiles {
                let d = match t {
                    KernelType::Tile(t) => t.dtype,
                    KernelType::Scalar(d) => *d,
                    KernelType::Number => continue,
                };
                match dtype {
                    None => dtype = Some(d),
                    Some(first) if first != d => {
                        let (first_ty, first_range) = tiles[0];
                        self.eval.error(
                            Code::DtypeMismatch,
                            *r,
                            format!(
                                "{what}: `{}` is {first_ty} but `{}` is {t}; convert one with `pto.cast`",
                                self.text(first_range),
                                self.text(*r)
                            ),
                        );
                        return None;
                    }
                    _ => {}
                }
            }
        }
        if call.op.dtype == DtypeRule::Float
            && let Some(d) = dtype
            && !d.is_float()
        {
            self.eval.error(
                Code::DtypeMismatch,
                tiles[0].1,
                format!(
                    "{what} needs a float tile, but `{}` is {d}",
                    self.text(tiles[0].1)
                ),
            );
            return None;
        }
        Some(dtype)
    }

    /// The result type by the op's shape rule; `None` after an error, and for `store`, which
    /// defines no value (`store_rule` checks it).
    fn result_type(&mut self, call: &OpCall) -> Option<KernelType> {
        match call.op.shape {
            ShapeRule::Same => same_rule(call),
            ShapeRule::Broadcast => self.broadcast_rule(call),
            ShapeRule::RowReduce
            | ShapeRule::ColReduce
            | ShapeRule::Transpose
            | ShapeRule::HalfCols => self.reshape_rule(call),
            ShapeRule::RowBroadcast | ShapeRule::ColBroadcast => self.row_col_broadcast_rule(call),
            ShapeRule::BroadcastTo => self.broadcast_to_rule(call),
            ShapeRule::Matmul => self.matmul_rule(call),
            ShapeRule::Interleave => self.interleave_rule(call),
            ShapeRule::Scalar => Some(KernelType::Scalar(call.dtype_arg?)),
            ShapeRule::Alloc => {
                let [m, n] = call.shape_arg?;
                Some(KernelType::Tile(TileType::new(m, n, call.dtype_arg?)))
            }
            ShapeRule::Store => None,
            ShapeRule::Iota | ShapeRule::TopK => self.count_rule(call),
            ShapeRule::Sort32 => self.sort32_rule(call),
        }
    }

    /// `Iota` and `TopK`: a [1, n] result from a count argument (`cols`, `k`), `TopK` from
    /// `tsort32`'s [1,64] F32 pairs.
    fn count_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let DtypeRule::Fixed(dtype) = call.op.dtype else {
            return None;
        };
        let (max, name) = match call.op.shape {
            ShapeRule::TopK => (32.0, "k"),
            _ => (4096.0, "cols"),
        };
        if call.op.shape == ShapeRule::TopK {
            let (pairs, r) = call.tile(0)?;
            if pairs.shape() != [1, 64] || pairs.dtype != DType::F32 {
                self.eval.error(
                    Code::ShapeMismatch,
                    r,
                    format!(
                        "{what} takes `tsort32`'s [1,64] F32 pairs, but `{}` is {pairs}",
                        self.text(r)
                    ),
                );
                return None;
            }
        }
        let &(n, r) = call.numbers.first()?;
        if n.fract() != 0.0 || !(1.0..=max).contains(&n) {
            self.eval.error(
                Code::WrongArguments,
                r,
                format!("{what}: `{name}` is an integer from 1 to {max}, not {n}"),
            );
            return None;
        }
        Some(KernelType::Tile(TileType::new(1, n as u64, dtype)))
    }

    /// `Sort32`: [1,32] F32 scores and [1,32] U32 indices give [1,64] F32 pairs.
    fn sort32_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        for (i, dtype, name) in [(0, DType::F32, "scores"), (1, DType::U32, "idx")] {
            let (t, r) = call.tile(i)?;
            if t.shape() != [1, 32] || t.dtype != dtype {
                self.eval.error(
                    if t.dtype != dtype {
                        Code::DtypeMismatch
                    } else {
                        Code::ShapeMismatch
                    },
                    r,
                    format!(
                        "{what}: `{name}` is a [1,32] {dtype} tile (TSORT32 sorts 32 elements), but `{}` is {t}",
                        self.text(r)
                    ),
                );
                return None;
            }
        }
        Some(KernelType::Tile(TileType::new(1, 64, DType::F32)))
    }

    /// `Broadcast`: NumPy broadcasting of two operands; a tile with a scalar or number keeps
    /// the tile's type.
    fn broadcast_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (a, ra) = *call.tiles.first()?;
        let (b, rb) = *call.tiles.get(1)?;
        Some(match (a, b) {
            (KernelType::Tile(x), KernelType::Tile(y)) => match broadcast(x.shape(), y.shape()) {
                Some(s) => KernelType::Tile(x.with_shape(s)),
                None => {
                    self.eval.error(
                        Code::ShapeMismatch,
                        call.range,
                        format!(
                            "{what}: `{}` is {x} and `{}` is {y}; the shapes do not broadcast",
                            self.text(ra),
                            self.text(rb)
                        ),
                    );
                    return None;
                }
            },
            (KernelType::Tile(x), _) => KernelType::Tile(x),
            (_, KernelType::Tile(y)) => KernelType::Tile(y),
            (KernelType::Scalar(d), _) | (_, KernelType::Scalar(d)) => KernelType::Scalar(d),
            _ => KernelType::Number,
        })
    }

    /// `RowReduce`, `ColReduce`, `Transpose` and `HalfCols`: one tile reshaped (`HalfCols`
    /// needs an even number of columns).
    fn reshape_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (a, ra) = *call.tiles.first()?;
        let Some((t, _)) = call.tile(0) else {
            self.eval
                .error(Code::WrongKind, ra, format!("{what} takes a tile, not {a}"));
            return None;
        };
        Some(KernelType::Tile(match call.op.shape {
            ShapeRule::RowReduce => t.with_shape([t.rows, 1]),
            ShapeRule::ColReduce => t.with_shape([1, t.cols]),
            ShapeRule::Transpose => t.with_shape([t.cols, t.rows]),
            _ => {
                if t.cols % 2 != 0 {
                    self.eval.error(
                        Code::ShapeMismatch,
                        ra,
                        format!(
                            "{what} needs an even number of columns, but `{}` is {t}",
                            self.text(ra)
                        ),
                    );
                    return None;
                }
                t.with_shape([t.rows, t.cols / 2])
            }
        }))
    }

    /// `RowBroadcast` and `ColBroadcast`: an [M,N] tile with an [M,1] (or [1,N]) one.
    fn row_col_broadcast_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (x, rx) = call.tile(0)?;
        let (other, ro) = *call.tiles.get(1)?;
        let row = call.op.shape == ShapeRule::RowBroadcast;
        let want = if row { [x.rows, 1] } else { [1, x.cols] };
        match other {
            KernelType::Tile(y) if y.shape() == want => {}
            KernelType::Tile(y) => {
                self.eval.error(
                    Code::ShapeMismatch,
                    ro,
                    format!(
                        "{what}: `{}` is {x}, so `{}` must be [{},{}], but it is {y}",
                        self.text(rx),
                        self.text(ro),
                        want[0],
                        want[1]
                    ),
                );
                return None;
            }
            _ => {}
        }
        Some(KernelType::Tile(x))
    }

    /// `BroadcastTo`: a tile whose dimensions are the shape argument's or 1, to that shape.
    fn broadcast_to_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (x, rx) = call.tile(0)?;
        let [m, n] = call.shape_arg?;
        if !((x.rows == m || x.rows == 1) && (x.cols == n || x.cols == 1)) {
            self.eval.error(
                Code::ShapeMismatch,
                rx,
                format!(
                    "{what}: `{}` is {x} and cannot broadcast to [{m},{n}]",
                    self.text(rx)
                ),
            );
            return None;
        }
        Some(KernelType::Tile(x.with_shape([m, n])))
    }

    /// `Matmul`: [M,K] × [K,N] of one float dtype gives [M,N] (F64 stays F64, the rest give
    /// F32), and the optional accumulator is of that type.
    fn matmul_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (a, ra) = call.tile(0)?;
        let (b, rb) = call.tile(1)?;
        if a.cols != b.rows {
            self.eval.error(
                Code::ShapeMismatch,
                call.range,
                format!(
                    "{what}: `{}` is {a} and `{}` is {b}; the inner dimensions {} and {} differ",
                    self.text(ra),
                    self.text(rb),
                    a.cols,
                    b.rows
                ),
            );
            return None;
        }
        if a.dtype != b.dtype {
            self.eval.error(
                Code::DtypeMismatch,
                rb,
                format!(
                    "{what}: `{}` is {} but `{}` is {}; convert one with `pto.cast`",
                    self.text(ra),
                    a.dtype,
                    self.text(rb),
                    b.dtype
                ),
            );
            return None;
        }
        if !a.dtype.is_float() {
            self.eval.error(
                Code::DtypeMismatch,
                ra,
                format!("{what} multiplies F16, BF16 or F32 tiles, not {}", a.dtype),
            );
            return None;
        }
        let out = TileType::new(
            a.rows,
            b.cols,
            if a.dtype == DType::F64 {
                DType::F64
            } else {
                DType::F32
            },
        );
        if let Some((acc, racc)) = call.tiles.get(2).copied() {
            match acc {
                KernelType::Tile(t) if t == out => {}
                _ => {
                    self.eval.error(
                        Code::ShapeMismatch,
                        racc,
                        format!("{what}: the accumulator must be {out} (the product's type), but `{}` is {acc}", self.text(racc)),
                    );
                    return None;
                }
            }
        }
        Some(KernelType::Tile(out))
    }

    /// `Interleave`: two tiles of one shape [M,N] give [M,2N].
    fn interleave_rule(&mut self, call: &OpCall) -> Option<KernelType> {
        let what = &call.what;
        let (a, ra) = call.tile(0)?;
        let (b, rb) = call.tile(1)?;
        if a.shape() != b.shape() {
            self.eval.error(
                Code::ShapeMismatch,
                call.range,
                format!(
                    "{what}: `{}` is {a} and `{}` is {b}; both must have one shape",
                    self.text(ra),
                    self.text(rb)
                ),
            );
            return None;
        }
        Some(KernelType::Tile(a.with_shape([a.rows, a.cols * 2])))
    }

    /// `Store`: the value has the destination's shape and dtype (a scalar, its dtype); `None`
    /// after an error.
    fn store_rule(&mut self, call: &OpCall) -> Option<()> {
        let (dst, rd) = call.tile(0)?;
        let (v, rv) = *call.tiles.get(1)?;
        match v {
            KernelType::Tile(t) if t.shape() != dst.shape() => {
                self.eval.error(
                    Code::ShapeMismatch,
                    rv,
                    format!(
                        "`pto.store`: `{}` is {dst} but the value `{}` is {t}",
                        self.text(rd),
                        self.text(rv)
                    ),
                );
                None
            }
            KernelType::Tile(t) if t.dtype != dst.dtype => {
                let text = self.text(rv);
                let d = Diag::new(
                    Code::DtypeMismatch,
                    self.eval.span(rv),
                    format!(
                        "`pto.store`: `{}` is {dst} but the value `{text}` is {t}",
                        self.text(rd)
                    ),
                )
                .with_fix(
                    format!("convert with `pto.cast(..., {})`", dst.dtype),
                    vec![(
                        self.eval.span(rv),
                        format!("pto.cast({text}, DType.{})", dst.dtype),
                    )],
                );
                self.eval.push(d);
                None
            }
            KernelType::Scalar(d) if d != dst.dtype => {
                self.eval.error(
                    Code::DtypeMismatch,
                    rv,
                    format!(
                        "`pto.store`: `{}` is {dst} but the value is Scalar {d}",
                        self.text(rd)
                    ),
                );
                None
            }
            _ => Some(()),
        }
    }

    fn text(&self, range: TextRange) -> String {
        let node = self.eval.item.syntax(self.eval.db);
        let text = node.text();
        if range.end() <= text.len() {
            let s = text.slice(range).to_string();
            if s.chars().count() > 40 {
                let short: String = s.chars().take(37).collect();
                return format!("{short}...");
            }
            s
        } else {
            String::new()
        }
    }
}

/// A bound op argument: its operand, type and where it is written (`None` where omitted).
type OpArg = Option<(Operand, KernelType, TextRange)>;

/// An op argument as the dtype rule alone reads it, when another argument has a dtype but no
/// shape after an error (`None` where omitted).
type DtypeArg = Option<(ArgDtype, TextRange)>;

enum ArgDtype {
    Typed(KernelType),
    /// A dtype but no shape, after an error in it.
    Shapeless(DType),
    /// A dtype argument.
    Argument(DType),
    /// A shape or a number argument.
    Other,
}

/// One op call as its dtype and shape rules read it.
struct OpCall {
    op: &'static Op,
    /// The op as messages name it: `` `pto.add` ``.
    what: String,
    /// The call.
    range: TextRange,
    /// The tile and parameter operands that were given, in order, with where each is written.
    tiles: Vec<(KernelType, TextRange)>,
    /// The dtype argument, if any.
    dtype_arg: Option<DType>,
    /// The shape argument, if any.
    shape_arg: Option<[u64; 2]>,
    /// The number arguments, in order, with where each is written.
    numbers: Vec<(f64, TextRange)>,
}

impl OpCall {
    /// Sorts the bound arguments into the operands each rule reads.
    fn new(op: &'static Op, c: &ast::CallExpr, args: &[OpArg]) -> Self {
        let tiles = args
            .iter()
            .zip(op.params)
            .filter(|(_, p)| matches!(p.kind, OpParamKind::Tile | OpParamKind::Param))
            .filter_map(|(a, _)| a.as_ref().map(|(_, t, r)| (*t, *r)))
            .collect();
        let dtype_arg = args.iter().flatten().find_map(|(o, _, _)| match o {
            Operand::DType(d) => Some(*d),
            _ => None,
        });
        let shape_arg = args.iter().flatten().find_map(|(o, _, _)| match o {
            Operand::Shape(m, n) => Some([*m, *n]),
            _ => None,
        });
        let numbers = args
            .iter()
            .zip(op.params)
            .filter(|(_, p)| p.kind == OpParamKind::Number)
            .filter_map(|(a, _)| match a {
                Some((Operand::Number(n), _, r)) => Some((n.0, *r)),
                _ => None,
            })
            .collect();
        OpCall {
            op,
            what: format!("`pto.{}`", op.name),
            range: c.syntax().text_range(),
            tiles,
            dtype_arg,
            shape_arg,
            numbers,
        }
    }

    /// Tile operand `i` and where it is written, if it is a tile.
    fn tile(&self, i: usize) -> Option<(TileType, TextRange)> {
        match self.tiles.get(i) {
            Some((KernelType::Tile(t), r)) => Some((*t, *r)),
            _ => None,
        }
    }
}

/// `Same`: the first operand's type; with a dtype argument (`FromArgument`), that dtype.
fn same_rule(call: &OpCall) -> Option<KernelType> {
    match (call.tiles.first(), call.op.dtype) {
        (Some((KernelType::Tile(t), _)), DtypeRule::FromArgument) => {
            Some(KernelType::Tile(t.with_dtype(call.dtype_arg?)))
        }
        (Some((t, _)), DtypeRule::FromArgument) => match t {
            KernelType::Scalar(_) | KernelType::Number => Some(KernelType::Scalar(call.dtype_arg?)),
            _ => Some(*t),
        },
        (Some((t, _)), _) => Some(*t),
        (None, _) => None,
    }
}

/// The result tile takes the operands' shared dtype, unless the op's dtype rule fixed it
/// (matmul's accumulator dtype, a dtype argument).
fn result_dtype(result: KernelType, dtype: Option<DType>, rule: DtypeRule) -> KernelType {
    match (result, dtype, rule) {
        (
            KernelType::Tile(t),
            _,
            DtypeRule::MatmulAccumulate | DtypeRule::FromArgument | DtypeRule::Fixed(_),
        ) => KernelType::Tile(t),
        (KernelType::Tile(t), Some(d), _) => KernelType::Tile(t.with_dtype(d)),
        (r, _, _) => r,
    }
}

/// A product's dtype, when its operands agree on a float one.
fn matmul_dtype(a: DType, b: DType) -> Option<DType> {
    match (a, b) {
        (DType::F64, DType::F64) => Some(DType::F64),
        _ if a == b && a.is_float() => Some(DType::F32),
        _ => None,
    }
}

/// NumPy broadcasting of two 2-D shapes.
fn broadcast(a: [u64; 2], b: [u64; 2]) -> Option<[u64; 2]> {
    let dim = |x: u64, y: u64| match (x, y) {
        _ if x == y => Some(x),
        (1, y) => Some(y),
        (x, 1) => Some(x),
        _ => None,
    };
    Some([dim(a[0], b[0])?, dim(a[1], b[1])?])
}
