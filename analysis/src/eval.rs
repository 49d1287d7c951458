//! Evaluation of module-level expressions (constants, axes, tensors, channels, layouts,
//! policies, schedules) to `Value`s, with their diagnostics. Workload bodies reuse it with
//! local names (`workloads.rs`).

use wsp_syntax::ast::{self, AstNode, Expr, LiteralKind};
use wsp_syntax::{SyntaxKind, SyntaxNode, TextRange};

use crate::diagnostics::{Code, Diag, Span};
use crate::items::{Item, ItemKind};
use crate::names::{ModuleScope, module_scope, name_index, name_range, suggest};
use crate::schedules::{Directive, DirectiveDetail, DirectiveKind, Target};
use crate::symbols::{Symbol, Use};
use crate::types::{DType, shape_text};
use crate::values::{
    Axis, AxisKind, Channel, CompileTarget, Composite, DimLayout, F64, Init, IntSource, Key,
    Layout, Policy, Schedule, Tensor, TensorOrigin, Value, Window, WindowMode,
};
use crate::vocabulary::Builtin;
use wsp_ir::{Affine, ScalarExpr, ScalarOp};

/// The value a module-level item binds, and what evaluating it found.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct ItemValue<'db> {
    pub value: Value<'db>,
    pub diags: Vec<Diag<'db>>,
    pub uses: Vec<Use<'db>>,
}

/// A name bound inside a def.
pub(crate) struct Local<'db> {
    pub name: String,
    pub value: Value<'db>,
    pub def: TextRange,
}

/// The value of an assignment (or a def) at module level.
#[salsa::tracked(returns(ref))]
pub fn item_value<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> ItemValue<'db> {
    match item.kind(db) {
        ItemKind::Kernel => {
            return ItemValue {
                value: Value::Kernel(item),
                diags: Vec::new(),
                uses: Vec::new(),
            };
        }
        ItemKind::Workload => {
            return ItemValue {
                value: Value::Workload(item),
                diags: Vec::new(),
                uses: Vec::new(),
            };
        }
        _ => {}
    }
    let mut eval = Eval::new(db, item);
    let value = match item.stmt(db) {
        Some(ast::Stmt::AssignStmt(a)) => match a.value() {
            Some(e) => eval.expr(&e),
            None => Value::Unknown,
        },
        Some(ast::Stmt::ExprStmt(s)) => match s.expr() {
            Some(e) => {
                let v = eval.expr(&e);
                eval.check_statement_value(&e, &v);
                v
            }
            None => Value::Unknown,
        },
        _ => Value::Unknown,
    };
    // A name's value carries its name: tensors, axes and channels are named by what binds them.
    let value = name_value(db, item, value);
    ItemValue {
        value,
        diags: eval.diags,
        uses: eval.uses,
    }
}

fn name_value<'db>(db: &'db dyn salsa::Database, item: Item<'db>, value: Value<'db>) -> Value<'db> {
    let name = item.name(db);
    if name.is_empty() {
        return value;
    }
    let def = Span {
        item,
        range: name_range(db, item).unwrap_or_default(),
    };
    match value {
        Value::Tensor(mut t) if t.name.is_empty() => {
            t.name = name.clone();
            t.def = def;
            Value::Tensor(t)
        }
        Value::Axis(mut a) if a.name.is_empty() => {
            a.name = name.clone();
            a.def = def;
            Value::Axis(a)
        }
        Value::Channel(mut c) if c.name.is_empty() => {
            c.name = name.clone();
            c.def = def;
            Value::Channel(c)
        }
        v => v,
    }
}

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

pub(crate) struct Eval<'db> {
    pub db: &'db dyn salsa::Database,
    pub item: Item<'db>,
    pub scope: &'db ModuleScope<'db>,
    position: usize,
    pub diags: Vec<Diag<'db>>,
    /// Local names (workload parameters, loop variables), innermost last.
    pub locals: Vec<Local<'db>>,
    /// Every name resolved, where it was written (for navigation).
    pub uses: Vec<Use<'db>>,
    /// The extent of each loop variable in scope, when it is known.
    pub extents: Vec<(String, Option<u64>)>,
}

impl<'db> Eval<'db> {
    pub fn new(db: &'db dyn salsa::Database, item: Item<'db>) -> Eval<'db> {
        let scope = module_scope(db, item.file(db));
        Eval {
            db,
            item,
            scope,
            position: scope.position(item),
            diags: Vec::new(),
            locals: Vec::new(),
            uses: Vec::new(),
            extents: Vec::new(),
        }
    }

    /// Binds a local name at `def` (a parameter, a loop variable, an assignment's target).
    pub fn bind_local(&mut self, name: String, value: Value<'db>, def: TextRange) {
        self.use_local(def, def);
        self.locals.push(Local { name, value, def });
    }

    /// Records that the name at `range` refers to `symbol`.
    pub fn record(&mut self, range: TextRange, symbol: Symbol<'db>) {
        self.uses.push(Use::new(range, symbol));
    }

    /// Records that the name at `range` refers to this def's local bound at `def`.
    pub fn use_local(&mut self, range: TextRange, def: TextRange) {
        let item = self.item;
        self.record(range, Symbol::Local { item, def });
    }

    pub fn span(&self, range: TextRange) -> Span<'db> {
        Span {
            item: self.item,
            range,
        }
    }

    pub fn span_of(&self, node: &impl AstNode) -> Span<'db> {
        self.span(node.syntax().text_range())
    }

    pub fn error(&mut self, code: Code, range: TextRange, message: impl Into<String>) {
        let span = self.span(range);
        self.diags.push(Diag::new(code, span, message));
    }

    pub fn push(&mut self, diag: Diag<'db>) {
        self.diags.push(diag);
    }

    /// Resolves a name: locals, then module-level bindings made before this item, then the
    /// `pto_wsp` vocabulary.
    pub fn resolve(&mut self, name: &str, range: TextRange) -> Value<'db> {
        if let Some(l) = self.locals.iter().rev().find(|l| l.name == name) {
            let (def, value) = (l.def, l.value.clone());
            self.use_local(range, def);
            return value;
        }
        if let Some(b) = self.scope.lookup(name) {
            self.record(range, Symbol::Item(b.item));
            if b.index < self.position {
                return item_value(self.db, b.item).value.clone();
            }
            if b.item != self.item {
                let def = Span {
                    item: b.item,
                    range: name_range(self.db, b.item).unwrap_or_default(),
                };
                let d = Diag::new(
                    Code::UnknownName,
                    self.span(range),
                    format!(
                        "`{name}` is used before it is defined; move its definition above this use"
                    ),
                )
                .with_related(def, format!("`{name}` is defined here"));
                self.push(d);
                return Value::Unknown;
            }
        }
        if let Some(b) = Builtin::lookup(name) {
            return Value::Builtin(b);
        }
        let locals: Vec<&str> = self.locals.iter().map(|l| l.name.as_str()).collect();
        let candidates = locals
            .into_iter()
            .chain(
                self.scope
                    .names_near(name_index(self.db, self.item.file(self.db)), name),
            )
            .chain(Builtin::ALL.iter().map(|b| b.name()));
        let mut d = Diag::new(
            Code::UnknownName,
            self.span(range),
            format!("unknown name `{name}`"),
        );
        if let Some(best) = suggest(name, candidates) {
            d.message.push_str(&format!("; did you mean `{best}`?"));
            let span = self.span(range);
            d = d.with_fix(
                format!("replace with `{best}`"),
                vec![(span, best.to_string())],
            );
        }
        self.push(d);
        Value::Unknown
    }

    pub fn expr(&mut self, e: &Expr) -> Value<'db> {
        let value = wsp_syntax::grow_stack(|| self.expr_here(e));
        match value {
            Value::Runtime(r) => self
                .shallow(r, e.syntax().text_range())
                .map_or(Value::Unknown, Value::Runtime),
            v => v,
        }
    }

    /// `e`, unless it nests more operators than a run-time expression may.
    fn shallow(&mut self, e: ScalarExpr, range: TextRange) -> Option<ScalarExpr> {
        if e.depth() <= ScalarExpr::MAX_DEPTH {
            return Some(e);
        }
        self.error(
            Code::OutsideSubset,
            range,
            format!(
                "a run-time expression nests at most {} operators",
                ScalarExpr::MAX_DEPTH
            ),
        );
        None
    }

    fn expr_here(&mut self, e: &Expr) -> Value<'db> {
        let range = e.syntax().text_range();
        match e {
            Expr::NameExpr(n) => self.resolve(&n.text(), range),
            Expr::Literal(l) => match l.kind() {
                Some(LiteralKind::Int(Some(i))) => match i64::try_from(i) {
                    Ok(i) => Value::Int(i),
                    Err(_) => {
                        self.error(
                            Code::OutsideSubset,
                            range,
                            "integer too large (WSP integers are 64-bit)",
                        );
                        Value::Unknown
                    }
                },
                Some(LiteralKind::Int(None)) => Value::Unknown,
                Some(LiteralKind::Float(Some(f))) => Value::Float(F64(f)),
                Some(LiteralKind::String {
                    value,
                    bytes: false,
                    fstring: false,
                }) => Value::Str(value),
                Some(LiteralKind::True) => Value::Bool(true),
                Some(LiteralKind::False) => Value::Bool(false),
                Some(LiteralKind::None) => Value::None,
                _ => {
                    self.error(Code::OutsideSubset, range, "this literal is not part of WSP (numbers, strings, True, False and None are)");
                    Value::Unknown
                }
            },
            Expr::ParenExpr(p) => match p.expr() {
                Some(e) => self.expr(&e),
                None => Value::Unknown,
            },
            Expr::TupleExpr(t) => Value::Tuple(t.elements().map(|e| self.expr(&e)).collect()),
            Expr::ListExpr(l) => Value::List(l.elements().map(|e| self.expr(&e)).collect()),
            Expr::UnaryExpr(u) => {
                let v = u.operand().map_or(Value::Unknown, |o| self.expr(&o));
                self.unary(u.op_kind(), v, range)
            }
            Expr::BinExpr(b) => {
                let l = b.lhs().map_or(Value::Unknown, |e| self.expr(&e));
                let r = b.rhs().map_or(Value::Unknown, |e| self.expr(&e));
                self.binary(b.op_kind(), l, r, range)
            }
            Expr::CompareExpr(c) => self.compare(c),
            Expr::BoolExpr(b) => {
                let l = b.lhs().map_or(Value::Unknown, |e| self.expr(&e));
                let r = b.rhs().map_or(Value::Unknown, |e| self.expr(&e));
                let op = if b.op_kind() == Some(SyntaxKind::AND_KW) {
                    ScalarOp::And
                } else {
                    ScalarOp::Or
                };
                self.scalar_binary(op, l, r, range)
            }
            Expr::AttributeExpr(a) => self.attribute(a),
            Expr::SubscriptExpr(s) => self.subscript(s),
            Expr::CallExpr(c) => self.call(c),
            Expr::LambdaExpr(l) => self.key(l),
            _ => {
                self.error(
                    Code::OutsideSubset,
                    range,
                    format!("{} is not part of WSP", describe_syntax(e.syntax())),
                );
                Value::Unknown
            }
        }
    }

    fn unary(&mut self, op: Option<SyntaxKind>, v: Value<'db>, range: TextRange) -> Value<'db> {
        match (op, v) {
            (_, Value::Unknown) => Value::Unknown,
            (Some(SyntaxKind::MINUS), Value::Int(i)) => {
                i.checked_neg().map_or(Value::Unknown, Value::Int)
            }
            (Some(SyntaxKind::MINUS), Value::Float(f)) => Value::Float(F64(-f.0)),
            (Some(SyntaxKind::PLUS), v @ (Value::Int(_) | Value::Float(_))) => v,
            (Some(SyntaxKind::MINUS), Value::Index(a)) => {
                a.neg().map_or(Value::Unknown, Value::Index)
            }
            (Some(SyntaxKind::NOT_KW), Value::Bool(b)) => Value::Bool(!b),
            (Some(SyntaxKind::NOT_KW), Value::Int(i)) => Value::Bool(i == 0),
            (Some(SyntaxKind::NOT_KW), v) if self.to_scalar(&v).is_some() => Value::Runtime(
                ScalarExpr::Not(Box::new(self.to_scalar(&v).unwrap_or(ScalarExpr::Const(0)))),
            ),
            (Some(SyntaxKind::MINUS), v) if self.to_scalar(&v).is_some() => Value::Runtime(
                ScalarExpr::Neg(Box::new(self.to_scalar(&v).unwrap_or(ScalarExpr::Const(0)))),
            ),
            (_, v) => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("this operator does not apply to {}", v.describe()),
                );
                Value::Unknown
            }
        }
    }

    pub fn binary(
        &mut self,
        op: Option<SyntaxKind>,
        l: Value<'db>,
        r: Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
        use SyntaxKind as K;
        if matches!(l, Value::Unknown) || matches!(r, Value::Unknown) {
            return Value::Unknown;
        }
        let overflow = |eval: &mut Self| {
            eval.error(
                Code::OutsideSubset,
                range,
                "integer overflow in a constant expression",
            );
            Value::Unknown
        };
        match (op, &l, &r) {
            (Some(op), Value::Int(a), Value::Int(b)) => {
                let (a, b) = (*a, *b);
                let v = match op {
                    K::PLUS => a.checked_add(b),
                    K::MINUS => a.checked_sub(b),
                    K::STAR => a.checked_mul(b),
                    K::DOUBLE_SLASH | K::PERCENT if b == 0 => {
                        self.error(
                            Code::OutsideSubset,
                            range,
                            "division by zero in a constant expression",
                        );
                        return Value::Unknown;
                    }
                    K::DOUBLE_SLASH => Some(a.div_euclid(b)),
                    K::PERCENT => Some(a.rem_euclid(b)),
                    K::SLASH => return Value::Float(F64(a as f64 / b as f64)),
                    K::DOUBLE_STAR if (0..64).contains(&b) => a.checked_pow(b as u32),
                    K::SHL if (0..63).contains(&b) => a.checked_shl(b as u32),
                    K::SHR if (0..63).contains(&b) => Some(a >> b),
                    _ => return self.bad_operands(&l, &r, range),
                };
                v.map_or_else(|| overflow(self), Value::Int)
            }
            (Some(op), Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let (a, b) = (num(&l), num(&r));
                let v = match op {
                    K::PLUS => a + b,
                    K::MINUS => a - b,
                    K::STAR => a * b,
                    K::SLASH => a / b,
                    K::DOUBLE_STAR => a.powf(b),
                    _ => return self.bad_operands(&l, &r, range),
                };
                Value::Float(F64(v))
            }
            (Some(op), Value::Index(_) | Value::Int(_), Value::Index(_) | Value::Int(_)) => {
                let (a, b) = (as_affine(&l), as_affine(&r));
                let (Some(a), Some(b)) = (a, b) else {
                    return Value::Unknown;
                };
                let v = match op {
                    K::PLUS => a.add(&b),
                    K::MINUS => b.neg().and_then(|b| a.add(&b)),
                    K::STAR => match (a.as_constant(), b.as_constant()) {
                        (Some(k), _) => b.scale(k),
                        (_, Some(k)) => a.scale(k),
                        _ => {
                            self.error(Code::OutsideSubset, range, format!("`{a} * {b}` is not affine: index expressions multiply loop variables only by constants"));
                            return Value::Unknown;
                        }
                    },
                    _ => {
                        return self.runtime_binary(op, l, r, range);
                    }
                };
                v.map_or_else(|| overflow(self), Value::Index)
            }
            (Some(op), _, _) => self.runtime_binary(op, l, r, range),
            (None, _, _) => Value::Unknown,
        }
    }

    fn runtime_binary(
        &mut self,
        op: SyntaxKind,
        l: Value<'db>,
        r: Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
        let op = match op {
            SyntaxKind::PLUS => ScalarOp::Add,
            SyntaxKind::MINUS => ScalarOp::Sub,
            SyntaxKind::STAR => ScalarOp::Mul,
            SyntaxKind::DOUBLE_SLASH => ScalarOp::FloorDiv,
            SyntaxKind::PERCENT => ScalarOp::Mod,
            _ => return self.bad_operands(&l, &r, range),
        };
        self.scalar_binary(op, l, r, range)
    }

    fn scalar_binary(
        &mut self,
        op: ScalarOp,
        l: Value<'db>,
        r: Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
        if matches!(l, Value::Unknown) || matches!(r, Value::Unknown) {
            return Value::Unknown;
        }
        if let (Value::Bool(a), Value::Bool(b)) = (&l, &r) {
            match op {
                ScalarOp::And => return Value::Bool(*a && *b),
                ScalarOp::Or => return Value::Bool(*a || *b),
                _ => {}
            }
        }
        match (self.to_scalar(&l), self.to_scalar(&r)) {
            (Some(a), Some(b)) => Value::Runtime(ScalarExpr::Binary(op, Box::new(a), Box::new(b))),
            _ => self.bad_operands(&l, &r, range),
        }
    }

    fn bad_operands(&mut self, l: &Value<'db>, r: &Value<'db>, range: TextRange) -> Value<'db> {
        self.error(
            Code::WrongKind,
            range,
            format!(
                "this operator does not apply to {} and {}",
                l.describe(),
                r.describe()
            ),
        );
        Value::Unknown
    }

    /// A value as a run-time scalar expression, if it can be one.
    pub fn to_scalar(&self, v: &Value<'db>) -> Option<ScalarExpr> {
        match v {
            Value::Int(i) => Some(ScalarExpr::Const(*i)),
            Value::Bool(b) => Some(ScalarExpr::Const(*b as i64)),
            Value::Runtime(e) => Some(e.clone()),
            Value::Index(a) => {
                let mut e = ScalarExpr::Const(a.constant);
                for (var, c) in &a.terms {
                    let term = if *c == 1 {
                        ScalarExpr::Var(var.clone())
                    } else {
                        ScalarExpr::Binary(
                            ScalarOp::Mul,
                            Box::new(ScalarExpr::Const(*c)),
                            Box::new(ScalarExpr::Var(var.clone())),
                        )
                    };
                    e = if matches!(e, ScalarExpr::Const(0)) {
                        term
                    } else {
                        ScalarExpr::Binary(ScalarOp::Add, Box::new(e), Box::new(term))
                    };
                }
                Some(e)
            }
            Value::View(view) if view.tensor.dtype.is_integer() && view.shape().is_empty() => {
                let idx = view
                    .indices
                    .iter()
                    .map(|i| match i {
                        crate::values::ViewIndex::At(a) => self.to_scalar(&Value::Index(a.clone())),
                        crate::values::ViewIndex::Range(..) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(ScalarExpr::Element(view.tensor.name.clone(), idx))
            }
            _ => None,
        }
    }

    fn compare(&mut self, c: &ast::CompareExpr) -> Value<'db> {
        let range = c.syntax().text_range();
        let operands: Vec<Value<'db>> = c.operands().map(|e| self.expr(&e)).collect();
        let ops = c.ops();
        if operands.iter().any(|v| matches!(v, Value::Unknown)) {
            return Value::Unknown;
        }
        let mut result: Option<Value<'db>> = None;
        for (i, op) in ops.iter().enumerate() {
            let (Some(l), Some(r)) = (operands.get(i), operands.get(i + 1)) else {
                return Value::Unknown;
            };
            let sop = match compare_op(op) {
                Some(sop) => sop,
                None => {
                    self.error(
                        Code::OutsideSubset,
                        range,
                        "only <, <=, >, >=, == and != compare in WSP",
                    );
                    return Value::Unknown;
                }
            };
            let v = match (l, r) {
                (Value::Int(a), Value::Int(b)) => Value::Bool(match sop {
                    ScalarOp::Lt => a < b,
                    ScalarOp::Le => a <= b,
                    ScalarOp::Gt => a > b,
                    ScalarOp::Ge => a >= b,
                    ScalarOp::Eq => a == b,
                    _ => a != b,
                }),
                _ => self.scalar_binary(sop, l.clone(), r.clone(), range),
            };
            result = Some(match result {
                None => v,
                Some(prev) => self.scalar_binary(ScalarOp::And, prev, v, range),
            });
        }
        result.unwrap_or(Value::Unknown)
    }

    fn attribute(&mut self, a: &ast::AttributeExpr) -> Value<'db> {
        let range = a.syntax().text_range();
        let Some(attr) = a.attr() else {
            return Value::Unknown;
        };
        let attr_range = attr.text_range();
        let name = attr.text().to_string();
        let receiver = a.receiver().map_or(Value::Unknown, |r| self.expr(&r));
        match &receiver {
            Value::Unknown => Value::Unknown,
            Value::Builtin(Builtin::DType) => match DType::from_name(&name) {
                Some(d) => Value::DType(d),
                None => self.unknown_member(
                    "DType",
                    &name,
                    attr_range,
                    DType::ALL.iter().map(|d| d.name()),
                ),
            },
            Value::Builtin(Builtin::TimingPolicy) if name == "immediate" => {
                Value::Policy(Policy::Immediate)
            }
            Value::Builtin(Builtin::WindowMode) => {
                match WindowMode::MEMBERS.iter().find(|(n, _)| *n == name) {
                    Some((n, _)) => Value::Member(Builtin::WindowMode, n),
                    None => self.unknown_member(
                        "WindowMode",
                        &name,
                        attr_range,
                        WindowMode::MEMBERS.iter().map(|(n, _)| *n),
                    ),
                }
            }
            Value::Builtin(b) => match members(*b).iter().find(|m| **m == name) {
                Some(m) => Value::Member(*b, m),
                None => {
                    let b = *b;
                    self.unknown_member(b.name(), &name, attr_range, members(b).iter().copied())
                }
            },
            Value::Program(_) if name == "stats" => Value::Stats,
            Value::Program(_) | Value::Schedule(_) => {
                // Methods are handled by `call`; a bare method is not a value.
                self.error(
                    Code::UnknownMember,
                    attr_range,
                    format!(
                        "`.{name}` of {} is only usable as a call",
                        receiver.describe()
                    ),
                );
                Value::Unknown
            }
            Value::Stats => {
                if wsp_ir::STATS_FIELDS.contains(&name.as_str()) {
                    Value::Stats
                } else {
                    self.unknown_member(
                        "program.stats",
                        &name,
                        attr_range,
                        wsp_ir::STATS_FIELDS.iter().copied(),
                    )
                }
            }
            _ => {
                self.error(
                    Code::UnknownMember,
                    range,
                    format!("{} has no attribute `{name}`", receiver.describe()),
                );
                Value::Unknown
            }
        }
    }

    fn unknown_member<'a>(
        &mut self,
        owner: &str,
        name: &str,
        range: TextRange,
        candidates: impl Iterator<Item = &'a str>,
    ) -> Value<'db> {
        let mut d = Diag::new(
            Code::UnknownMember,
            self.span(range),
            format!("`{owner}` has no member `{name}`"),
        );
        if let Some(best) = suggest(name, candidates) {
            d.message.push_str(&format!("; did you mean `{best}`?"));
            d = d.with_fix(
                format!("replace with `{best}`"),
                vec![(self.span(range), best.to_string())],
            );
        }
        self.push(d);
        Value::Unknown
    }

    fn subscript(&mut self, s: &ast::SubscriptExpr) -> Value<'db> {
        let range = s.syntax().text_range();
        let base = s.base().map_or(Value::Unknown, |b| self.expr(&b));
        let indices = s.indices();
        match base {
            Value::Unknown => Value::Unknown,
            Value::Builtin(Builtin::Dense) => {
                let [index] = indices.as_slice() else {
                    self.error(Code::WrongArguments, range, "`Dense[n]` takes one size");
                    return Value::Unknown;
                };
                let v = self.expr(index);
                match self.positive(&v, index.syntax().text_range(), "an axis size") {
                    Some(n) => Value::Axis(axis(self.span(range), AxisKind::Dense, n)),
                    None => Value::Unknown,
                }
            }
            base => self.subscript_value(base, s),
        }
    }

    /// Subscripts of values other than `Dense`: overridden in workload bodies (views).
    fn subscript_value(&mut self, base: Value<'db>, s: &ast::SubscriptExpr) -> Value<'db> {
        if let Some(view) = crate::workloads::subscript(self, base.clone(), s) {
            return view;
        }
        let range = s.syntax().text_range();
        self.error(
            Code::WrongKind,
            range,
            format!("{} cannot be indexed here", base.describe()),
        );
        Value::Unknown
    }

    /// Checks that `v` is a positive integer; reports otherwise.
    pub fn positive(&mut self, v: &Value<'db>, range: TextRange, what: &str) -> Option<u64> {
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

    fn non_negative(&mut self, v: &Value<'db>, range: TextRange, what: &str) -> Option<i64> {
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
    pub fn bind(&mut self, call: &ast::CallExpr, what: &str, params: &[&str]) -> Option<Args<'db>> {
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
    pub fn bind_syntax(
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

    fn call(&mut self, c: &ast::CallExpr) -> Value<'db> {
        let range = c.syntax().text_range();
        let Some(callee) = c.callee() else {
            return Value::Unknown;
        };
        // Methods of schedules and programs.
        if let Expr::AttributeExpr(a) = &callee
            && let Some(receiver) = a.receiver()
        {
            let rv = self.expr_quiet_method(&receiver);
            if let Some(rv) = rv {
                let method = a.attr().map(|t| t.text().to_string()).unwrap_or_default();
                let method_range = a.attr().map_or(range, |t| t.text_range());
                return self.method(rv, &method, method_range, c);
            }
        }
        let f = self.expr(&callee);
        match f {
            Value::Unknown => {
                c.args().filter_map(|a| a.value()).for_each(|v| {
                    self.expr(&v);
                });
                Value::Unknown
            }
            Value::Builtin(b) => self.builtin_call(b, c),
            Value::Member(b, m) => self.member_call(b, m, c),
            Value::Axis(a) if c.args().next().is_none() => Value::Axis(a),
            Value::Workload(w) => crate::workloads::call_workload(self, w, c),
            Value::Kernel(_) => {
                self.error(
                    Code::WrongKind,
                    range,
                    "a kernel runs as a task inside a workload: `kernel[i](param=view, ...)`",
                );
                Value::Unknown
            }
            other => {
                self.error(
                    Code::WrongKind,
                    callee.syntax().text_range(),
                    format!("{} is not callable", other.describe()),
                );
                Value::Unknown
            }
        }
    }

    /// The receiver of a method call when it is a schedule or program (else `None`, and the
    /// call is evaluated as an ordinary one).
    fn expr_quiet_method(&mut self, receiver: &Expr) -> Option<Value<'db>> {
        let before = self.diags.len();
        let v = self.expr(receiver);
        match v {
            Value::Schedule(_) | Value::Program(_) => Some(v),
            _ => {
                self.diags.truncate(before);
                None
            }
        }
    }

    fn builtin_call(&mut self, b: Builtin, c: &ast::CallExpr) -> Value<'db> {
        self.builtin_call_inner(b, c).unwrap_or(Value::Unknown)
    }

    fn builtin_call_inner(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let what = format!("`{}`", b.name());
        let what = what.as_str();
        match b {
            Builtin::Tensor => self.tensor(c),
            Builtin::Dense | Builtin::DenseDyn => {
                let args = self.bind(c, what, &["size"])?;
                let (v, r) = args.get(0)?.clone();
                let n = self.positive(&v, r, "an axis size")?;
                let kind = if b == Builtin::Dense {
                    AxisKind::Dense
                } else {
                    AxisKind::DenseDyn
                };
                Some(Value::Axis(axis(self.span(range), kind, n)))
            }
            Builtin::Ragged => self.ragged(c),
            Builtin::Sparse => self.sparse(c),
            Builtin::Channel => {
                let args = self.bind(c, what, &["name", "depth?"])?;
                let label = self.string_arg(&args, 0)?;
                let depth = match args.get(1) {
                    Some((v, r)) => self.non_negative(&v.clone(), *r, "a channel depth")? as u64,
                    None => 1,
                };
                Some(Value::Channel(Channel {
                    name: String::new(),
                    label,
                    depth,
                    def: self.span(range),
                }))
            }
            Builtin::Event => {
                let args = self.bind(c, what, &["name"])?;
                let label = self.string_arg(&args, 0)?;
                Some(Value::Channel(Channel {
                    name: String::new(),
                    label,
                    depth: 0,
                    def: self.span(range),
                }))
            }
            Builtin::Zeros | Builtin::Ones | Builtin::Arange => {
                self.bind(c, what, &[])?;
                Some(Value::Init(match b {
                    Builtin::Zeros => Init::Zeros,
                    Builtin::Ones => Init::Ones,
                    _ => Init::Arange,
                }))
            }
            Builtin::Full => {
                let args = self.bind(c, what, &["value"])?;
                let (v, r) = args.get(0)?.clone();
                match v {
                    Value::Int(_) | Value::Float(_) => Some(Value::Init(Init::Full(F64(num(&v))))),
                    v => {
                        self.error(
                            Code::WrongKind,
                            r,
                            format!("`full` takes a number, not {}", v.describe()),
                        );
                        None
                    }
                }
            }
            Builtin::Randn => {
                let args = self.bind(c, what, &["seed?", "std?"])?;
                let seed = match args.get(0) {
                    Some((Value::Int(s), _)) => *s,
                    Some((v, r)) => {
                        let (v, r) = (v.clone(), *r);
                        if !matches!(v, Value::Unknown) {
                            self.error(
                                Code::WrongKind,
                                r,
                                format!("`seed` must be an integer, not {}", v.describe()),
                            );
                        }
                        return None;
                    }
                    None => 0,
                };
                let std = match args.get(1) {
                    Some((v @ (Value::Int(_) | Value::Float(_)), _)) if num(v) > 0.0 => num(v),
                    Some((v, r)) => {
                        let (v, r) = (v.clone(), *r);
                        if !matches!(v, Value::Unknown) {
                            self.error(
                                Code::WrongKind,
                                r,
                                format!("`std` must be a positive number, not {}", v.describe()),
                            );
                        }
                        return None;
                    }
                    None => 1.0,
                };
                Some(Value::Init(Init::Randn {
                    seed,
                    std: F64(std),
                }))
            }
            Builtin::LoadNpy => {
                let args = self.bind(c, what, &["path"])?;
                let path = self.string_arg(&args, 0)?;
                Some(Value::Init(Init::LoadNpy(path)))
            }
            Builtin::Relayout
            | Builtin::Allreduce
            | Builtin::Allgather
            | Builtin::ReduceScatter => crate::layouts::collective(self, b, c),
            Builtin::TensorLayout => {
                let args = self.bind(c, what, &["dims"])?;
                let (v, r) = args.get(0)?.clone();
                let dims = match v {
                    Value::List(items) | Value::Tuple(items) => items,
                    v => {
                        self.error(Code::WrongKind, r, format!("`TensorLayout` takes a list of TensorShard/TensorReplicate, not {}", v.describe()));
                        return Some(Value::Unknown);
                    }
                };
                let mut out = Vec::new();
                for d in dims {
                    match d {
                        Value::Layout(l) if l.dims.len() == 1 => out.push(l.dims[0]),
                        Value::Unknown => return Some(Value::Unknown),
                        d => {
                            self.error(Code::WrongKind, r, format!("a layout dimension is TensorShard(m) or TensorReplicate(), not {}", d.describe()));
                            return Some(Value::Unknown);
                        }
                    }
                }
                Some(Value::Layout(Layout { dims: out }))
            }
            Builtin::TensorShard => {
                let args = self.bind(c, what, &["mesh_axis"])?;
                let (v, r) = args.get(0)?.clone();
                let m = self.non_negative(&v, r, "a mesh axis")?;
                Some(Value::Layout(Layout {
                    dims: vec![DimLayout::Shard(m as u32)],
                }))
            }
            Builtin::TensorReplicate => {
                self.bind(c, what, &[])?;
                Some(Value::Layout(Layout {
                    dims: vec![DimLayout::Replicate],
                }))
            }
            Builtin::TaskWindow => {
                let args = self.bind(c, what, &["size", "unit?", "mode?"])?;
                let (v, r) = args.get(0)?.clone();
                let size = match v {
                    Value::Int(n) if n > 0 => n,
                    Value::Unknown => return None,
                    v => {
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!(
                                "a task window holds at least one task; the size is {}",
                                v.describe()
                            ),
                        );
                        return None;
                    }
                };
                let unit = match args.get(1) {
                    Some(_) => self.string_arg(&args, 1)?,
                    None => "tasks".to_string(),
                };
                if unit != "tasks" {
                    let r = args.get(1).map_or(range, |a| a.1);
                    self.error(
                        Code::ScheduleArgument,
                        r,
                        format!("the task window's unit is \"tasks\", not \"{unit}\""),
                    );
                    return None;
                }
                let mode = match args.get(2) {
                    Some((Value::Member(Builtin::WindowMode, m), _)) => WindowMode::MEMBERS
                        .iter()
                        .find(|(n, _)| n == m)
                        .map(|(_, w)| *w)?,
                    Some((Value::Unknown, _)) => return None,
                    Some((v, r)) => {
                        let (v, r) = (v.clone(), *r);
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!("the window mode is a `WindowMode`, not {}", v.describe()),
                        );
                        return None;
                    }
                    None => WindowMode::Stall,
                };
                Some(Value::Window(Window { size, unit, mode }))
            }
            Builtin::Deps => {
                let args = self.bind(c, what, &["mode?"])?;
                let mode = match args.get(0) {
                    Some((Value::Member(Builtin::DepsMode, m), _)) => m.to_string(),
                    Some((Value::Unknown, _)) => return None,
                    Some((v, r)) => {
                        let (v, r) = (v.clone(), *r);
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!("`Deps(mode=...)` takes a `DepsMode`, not {}", v.describe()),
                        );
                        return None;
                    }
                    None => "tensor_map_exact".to_string(),
                };
                Some(Value::Policy(Policy::TaskGraph("Deps", mode)))
            }
            Builtin::Sequential | Builtin::Combine => {
                let mut parts = Vec::new();
                let mut ok = true;
                for arg in c.args() {
                    let v = arg.value().map_or(Value::Unknown, |e| self.expr(&e));
                    match v {
                        Value::Schedule(s) if s.directives.is_empty() => parts.push(s.root),
                        Value::Unknown => ok = false,
                        v => {
                            self.error(
                                Code::WrongKind,
                                arg.syntax().text_range(),
                                format!(
                                    "`{}` takes workload calls, not {}",
                                    b.name(),
                                    v.describe()
                                ),
                            );
                            ok = false;
                        }
                    }
                }
                if parts.is_empty() && ok {
                    self.error(
                        Code::WrongArguments,
                        range,
                        format!("`{}` needs at least one workload", b.name()),
                    );
                    return Some(Value::Unknown);
                }
                let root = if b == Builtin::Sequential {
                    Composite::Sequential(parts)
                } else {
                    Composite::Combine(parts)
                };
                Some(if ok {
                    Value::Schedule(Schedule {
                        root,
                        directives: Vec::new(),
                        target: None,
                    })
                } else {
                    Value::Unknown
                })
            }
            Builtin::Print => {
                for arg in c.args() {
                    if let Some(v) = arg.value() {
                        self.expr(&v);
                    }
                }
                Some(Value::None)
            }
            Builtin::SaveNpy => {
                let args = self.bind(c, what, &["tensor", "path"])?;
                let (t, r) = args.get(0)?.clone();
                if !matches!(t, Value::Tensor(_) | Value::Unknown) {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("`save_npy` saves a tensor, not {}", t.describe()),
                    );
                }
                self.string_arg(&args, 1)?;
                Some(Value::None)
            }
            Builtin::Min | Builtin::Max => {
                let vals: Vec<Value<'db>> = c
                    .args()
                    .filter_map(|a| a.value())
                    .map(|v| self.expr(&v))
                    .collect();
                let op = if b == Builtin::Min {
                    ScalarOp::Min
                } else {
                    ScalarOp::Max
                };
                let mut it = vals.into_iter();
                let first = it.next()?;
                Some(it.fold(first, |acc, v| match (&acc, &v) {
                    (Value::Int(a), Value::Int(b)) => Value::Int(if op == ScalarOp::Min {
                        *a.min(b)
                    } else {
                        *a.max(b)
                    }),
                    _ => self.scalar_binary(op, acc, v, range),
                }))
            }
            _ => {
                self.error(
                    Code::WrongKind,
                    c.callee().map_or(range, |e| e.syntax().text_range()),
                    format!("`{}` is not called here: {}", b.name(), b.doc()),
                );
                None
            }
        }
    }

    fn member_call(&mut self, b: Builtin, m: &'static str, c: &ast::CallExpr) -> Value<'db> {
        self.member_call_inner(b, m, c).unwrap_or(Value::Unknown)
    }

    fn member_call_inner(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let what = format!("`{}.{m}`", b.name());
        let what = what.as_str();
        let result: Option<Value<'db>> = match (b, m) {
            (Builtin::DispatchPolicy, "round_robin") => {
                let args = self.bind(c, what, &["num_aicpus"])?;
                let (v, r) = args.get(0)?.clone();
                match v {
                    Value::Int(n) if n > 0 => Some(Value::Policy(Policy::RoundRobin(n))),
                    Value::Unknown => None,
                    v => {
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!(
                                "`round_robin` needs at least one AICPU, not {}",
                                v.describe()
                            ),
                        );
                        None
                    }
                }
            }
            (Builtin::DispatchPolicy, "affinity" | "hash" | "dispatch_by") => {
                let args = self.bind(c, what, &["key"])?;
                let key = self.key_arg(&args, 0)?;
                Some(Value::Policy(match m {
                    "affinity" => Policy::Affinity(key),
                    "hash" => Policy::Hash(key),
                    _ => Policy::DispatchBy(key),
                }))
            }
            (Builtin::DispatchPolicy, "work_steal") => {
                self.bind(c, what, &[])?;
                Some(Value::Policy(Policy::WorkSteal))
            }
            (Builtin::TimingPolicy, "batched" | "interleaved") => {
                let args = self.bind(c, what, &["n"])?;
                let (v, r) = args.get(0)?.clone();
                match v {
                    Value::Int(n) if n > 0 => Some(Value::Policy(if m == "batched" {
                        Policy::Batched(n)
                    } else {
                        Policy::Interleaved(n)
                    })),
                    Value::Unknown => None,
                    v => {
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!("`{m}` needs a positive count, not {}", v.describe()),
                        );
                        None
                    }
                }
            }
            (Builtin::TimingPolicy, "rate_limit") => {
                let args = self.bind(c, what, &["tasks_per_ms"])?;
                let (v, r) = args.get(0)?.clone();
                match v {
                    Value::Int(_) | Value::Float(_) if num(&v) > 0.0 => {
                        Some(Value::Policy(Policy::RateLimit(F64(num(&v)))))
                    }
                    Value::Unknown => None,
                    v => {
                        self.error(
                            Code::ScheduleArgument,
                            r,
                            format!("`rate_limit` needs a positive rate, not {}", v.describe()),
                        );
                        None
                    }
                }
            }
            (Builtin::ReadyPolicy | Builtin::Pools, _) => {
                self.bind(c, what, &[])?;
                Some(Value::Policy(Policy::TaskGraph(
                    if b == Builtin::Pools {
                        "Pools"
                    } else {
                        "ReadyPolicy"
                    },
                    m.to_string(),
                )))
            }
            (Builtin::TensorLayout, "default") => {
                let args = self.bind(c, what, &["rank"])?;
                let (v, r) = args.get(0)?.clone();
                let rank = self.positive(&v, r, "a rank")?;
                Some(Value::Layout(Layout::replicated(rank as usize)))
            }
            (Builtin::TensorLayout, "sharded") => {
                let args = self.bind(c, what, &["dim", "rank", "mesh_axis?"])?;
                let (dv, dr) = args.get(0)?.clone();
                let (rv, rr) = args.get(1)?.clone();
                let dim = self.non_negative(&dv, dr, "a dimension")?;
                let rank = self.positive(&rv, rr, "a rank")?;
                let mesh = match args.get(2) {
                    Some((v, r)) => self.non_negative(&v.clone(), *r, "a mesh axis")?,
                    None => 0,
                };
                if dim as u64 >= rank {
                    self.error(
                        Code::IndexOutOfRange,
                        dr,
                        format!("dimension {dim} is out of range for rank {rank}"),
                    );
                    return None;
                }
                let mut l = Layout::replicated(rank as usize);
                l.dims[dim as usize] = DimLayout::Shard(mesh as u32);
                Some(Value::Layout(l))
            }
            (Builtin::P, _) => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("`P.{m}(...)` is a loop or block inside a workload body"),
                );
                None
            }
            _ => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("`{}.{m}` is not callable", b.name()),
                );
                None
            }
        };
        result
    }

    fn key_arg(&mut self, args: &Args<'db>, i: usize) -> Option<Key> {
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

    pub fn string_arg(&mut self, args: &Args<'db>, i: usize) -> Option<String> {
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
    fn key(&mut self, l: &ast::LambdaExpr) -> Value<'db> {
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

    fn key_expr(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
        let key = wsp_syntax::grow_stack(|| self.key_expr_here(task, e))?;
        self.shallow(key, e.syntax().text_range())
    }

    fn key_expr_here(&mut self, task: &str, e: &Expr) -> Option<ScalarExpr> {
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

    fn ragged(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind(c, "`Ragged`", &["rows", "lengths"])?;
        let (v, r) = args.get(0)?.clone();
        let rows = self.positive(&v, r, "the number of rows")?;
        let mut a = axis(self.span(range), AxisKind::Ragged, rows);
        let (lv, lr) = args.get(1)?.clone();
        match self.int_data(&lv, lr, "`lengths`")? {
            IntSource::List(lengths) => {
                if lengths.len() as u64 != rows {
                    self.error(
                        Code::WrongArguments,
                        lr,
                        format!("`lengths` has {} entries for {rows} rows", lengths.len()),
                    );
                    return None;
                }
                a.row_extent = lengths.iter().copied().max();
                a.lengths = Some(IntSource::List(lengths));
            }
            tensor => a.lengths = Some(tensor),
        }
        Some(Value::Axis(a))
    }

    fn sparse(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind(c, "`Sparse`", &["rows", "indptr", "indices"])?;
        let (v, r) = args.get(0)?.clone();
        let rows = self.positive(&v, r, "the number of rows")?;
        let mut a = axis(self.span(range), AxisKind::Sparse, rows);
        let (pv, pr) = args.get(1)?.clone();
        let (iv, ir) = args.get(2)?.clone();
        let indptr = self.int_data(&pv, pr, "`indptr`")?;
        let indices = self.int_data(&iv, ir, "`indices`")?;
        match (&indptr, &indices) {
            (IntSource::List(p), IntSource::List(ix)) => {
                let monotone = p.windows(2).all(|w| w[0] <= w[1]);
                if p.len() as u64 != rows + 1
                    || p.first() != Some(&0)
                    || !monotone
                    || p.last() != Some(&(ix.len() as u64))
                {
                    self.error(
                        Code::WrongArguments,
                        pr,
                        format!("`indptr` must rise from 0 to len(indices) = {} in {} entries (rows + 1)", ix.len(), rows + 1),
                    );
                    return None;
                }
                a.row_extent = Some(ix.iter().copied().max().map_or(0, |m| m + 1));
            }
            _ => {}
        }
        a.indptr = Some(indptr);
        a.indices = Some(indices);
        Some(Value::Axis(a))
    }

    fn int_data(&mut self, v: &Value<'db>, r: TextRange, what: &str) -> Option<IntSource> {
        match v {
            Value::List(items) | Value::Tuple(items) => {
                let mut out = Vec::new();
                for i in items {
                    match i {
                        Value::Int(n) if *n >= 0 => out.push(*n as u64),
                        Value::Unknown => return None,
                        other => {
                            self.error(
                                Code::WrongKind,
                                r,
                                format!(
                                    "{what} holds non-negative integers, not {}",
                                    other.describe()
                                ),
                            );
                            return None;
                        }
                    }
                }
                Some(IntSource::List(out))
            }
            Value::Tensor(t) if t.dtype.is_integer() && t.shape.len() == 1 => {
                Some(IntSource::Tensor(t.name.clone()))
            }
            Value::Unknown => None,
            other => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "{what} is a list of integers or a 1-D integer tensor, not {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn tensor(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind(c, "`Tensor`", &["shape", "dtype", "init?", "layout?"])?;
        let (sv, sr) = args.get(0)?.clone();
        let shape = self.shape(&sv, sr)?;
        let (dv, dr) = args.get(1)?.clone();
        let dtype = self.dtype(&dv, dr)?;
        let init = match args.get(2) {
            Some((Value::Init(i), _)) => Some(i.clone()),
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(Code::WrongKind, r, format!("`init` is zeros(), ones(), full(v), arange(), randn(...) or load_npy(path), not {}", v.describe()));
                return None;
            }
            None => None,
        };
        let layout = match args.get(3) {
            Some((Value::Layout(l), r)) => {
                if l.dims.len() != shape.len() {
                    let r = *r;
                    self.error(
                        Code::LayoutConflict,
                        r,
                        format!(
                            "the layout has rank {} but the tensor {} has rank {}",
                            l.dims.len(),
                            shape_text(&shape),
                            shape.len()
                        ),
                    );
                    return None;
                }
                l.clone()
            }
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`layout` is a TensorLayout, not {}", v.describe()),
                );
                return None;
            }
            None => Layout::replicated(shape.len()),
        };
        Some(Value::Tensor(Tensor {
            name: String::new(),
            def: self.span(range),
            shape,
            dtype,
            layout,
            init,
            origin: TensorOrigin::Declared,
        }))
    }

    pub fn shape(&mut self, v: &Value<'db>, r: TextRange) -> Option<Vec<u64>> {
        match v {
            Value::Tuple(items) | Value::List(items) if !items.is_empty() => {
                let mut out = Vec::new();
                for i in items {
                    out.push(self.positive(i, r, "a dimension")?);
                }
                Some(out)
            }
            Value::Int(_) => Some(vec![self.positive(v, r, "a dimension")?]),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "a shape is a tuple of positive integers, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    pub fn dtype(&mut self, v: &Value<'db>, r: TextRange) -> Option<DType> {
        match v {
            Value::DType(d) => Some(*d),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("expected a dtype (`DType.F32`, ...), not {}", v.describe()),
                );
                None
            }
        }
    }

    /// Methods of workloads (schedule directives) and programs.
    fn method(
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
                        let Some(args) = self.bind(c, what, &["policy"]) else {
                            return Value::Unknown;
                        };
                        match args.get(0).cloned() {
                            Some((Value::Policy(p), r)) => {
                                let kind = crate::schedules::kind_of_policy(&p);
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
                        let Some(args) = self.bind(c, what, &["n"]) else {
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
                        let Some(args) = self.bind(c, what, &["key"]) else {
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
                        let Some(args) = self.bind(c, what, &["policy"]) else {
                            return Value::Unknown;
                        };
                        match args.get(0).cloned() {
                            Some((Value::Policy(p), r)) => {
                                let kind = crate::schedules::kind_of_policy(&p);
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
                        let Some(args) =
                            self.bind(c, what, &["window?", "deps?", "ready?", "pools?"])
                        else {
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
                                        crate::schedules::kind_of_policy(&p),
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
                        let Some(args) = self.bind(c, what, &["grid"]) else {
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
                        let Some(args) = self.bind(c, what, &["target?"]) else {
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
                            SCHEDULE_METHODS.iter().copied(),
                        );
                    }
                }
                Value::Schedule(s)
            }
            Value::Program(p) => match method {
                "execute" => {
                    crate::programs::check_execute(self, &p, c);
                    Value::None
                }
                "synchronize" => {
                    self.bind(c, what, &[]);
                    Value::None
                }
                "enable_tracing" => {
                    if let Some(args) = self.bind(c, what, &["level?"])
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
                _ => self.unknown_member("program", method, range, PROGRAM_MEMBERS.iter().copied()),
            },
            _ => Value::Unknown,
        }
    }

    /// A top-level expression statement must do something: run, print or save.
    pub fn check_statement_value(&mut self, e: &Expr, v: &Value<'db>) {
        if matches!(v, Value::Schedule(_) | Value::Program(_)) {
            self.error(
                Code::OutsideSubset,
                e.syntax().text_range(),
                "this expression has no effect; bind it (`program = ...`) and run it with `.execute()`",
            );
        }
    }
}

const SCHEDULE_METHODS: &[&str] = &[
    "dispatch",
    "streams",
    "stream_by",
    "timing",
    "task_graph",
    "spatial_map",
    "compile",
];
const PROGRAM_MEMBERS: &[&str] = &["execute", "synchronize", "enable_tracing", "stats"];

/// What may follow `v.`: the members `attribute` and `method` accept (for completion).
pub(crate) fn member_names(v: &Value) -> Vec<&'static str> {
    match v {
        Value::Builtin(Builtin::DType) => DType::ALL.iter().map(|d| d.name()).collect(),
        Value::Builtin(Builtin::WindowMode) => {
            WindowMode::MEMBERS.iter().map(|(n, _)| *n).collect()
        }
        Value::Builtin(b) => members(*b).to_vec(),
        Value::Schedule(_) => SCHEDULE_METHODS.to_vec(),
        Value::Program(_) => PROGRAM_MEMBERS.to_vec(),
        Value::Stats => wsp_ir::STATS_FIELDS.to_vec(),
        _ => Vec::new(),
    }
}

/// The members of a namespace builtin.
pub(crate) fn members(b: Builtin) -> &'static [&'static str] {
    match b {
        Builtin::P => &["seq", "sel", "when", "otherwise", "pipe"],
        Builtin::DispatchPolicy => &[
            "round_robin",
            "affinity",
            "hash",
            "dispatch_by",
            "work_steal",
        ],
        Builtin::TimingPolicy => &["immediate", "batched", "interleaved", "rate_limit"],
        Builtin::TensorLayout => &["default", "sharded"],
        Builtin::DepsMode => &["tensor_map_exact", "tensor_map_coarse", "explicit"],
        Builtin::ReadyPolicy => &["fifo", "work_steal", "priority"],
        Builtin::Pools => &["single", "by_exec_unit"],
        Builtin::TraceLevel => &["NONE", "SUMMARY", "TIMING", "FULL"],
        _ => &[],
    }
}

fn axis<'db>(def: Span<'db>, kind: AxisKind, size: u64) -> Axis<'db> {
    Axis {
        name: String::new(),
        def,
        kind,
        size,
        row_extent: None,
        lengths: None,
        indptr: None,
        indices: None,
    }
}

/// The scalar op of a comparison WSP allows (not `in`, `is`, ...).
fn compare_op(op: &ast::CompareOp) -> Option<ScalarOp> {
    use ast::CompareOp as C;
    Some(match op {
        C::Lt => ScalarOp::Lt,
        C::LtEq => ScalarOp::Le,
        C::Gt => ScalarOp::Gt,
        C::GtEq => ScalarOp::Ge,
        C::Eq => ScalarOp::Eq,
        C::NotEq => ScalarOp::Ne,
        _ => return None,
    })
}

pub(crate) fn num(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => f.0,
        _ => 0.0,
    }
}

fn as_affine(v: &Value) -> Option<Affine> {
    match v {
        Value::Int(i) => Some(Affine::constant(*i)),
        Value::Index(a) => Some(a.clone()),
        _ => None,
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// "a list comprehension", for WSP002 messages.
pub(crate) fn describe_syntax(node: &SyntaxNode) -> String {
    use SyntaxKind as K;
    match node.kind() {
        K::LIST_COMP => "a list comprehension",
        K::SET_COMP => "a set comprehension",
        K::DICT_COMP => "a dict comprehension",
        K::GENERATOR_EXPR => "a generator expression",
        K::DICT_EXPR => "a dict display",
        K::SET_EXPR => "a set display",
        K::NAMED_EXPR => "`:=`",
        K::YIELD_EXPR => "`yield`",
        K::AWAIT_EXPR => "`await`",
        K::STARRED_EXPR => "a starred expression",
        K::COND_EXPR => "a conditional expression",
        K::LAMBDA_EXPR => "`lambda` here",
        K::SLICE => "a slice here",
        K::CLASS_DEF => "a class definition",
        K::IF_STMT => "an `if` statement",
        K::WHILE_STMT => "a `while` loop",
        K::TRY_STMT => "a `try` statement",
        K::MATCH_STMT => "a `match` statement",
        K::RETURN_STMT => "`return`",
        K::GLOBAL_STMT => "`global`",
        K::NONLOCAL_STMT => "`nonlocal`",
        K::DEL_STMT => "`del`",
        K::ASSERT_STMT => "`assert`",
        K::RAISE_STMT => "`raise`",
        K::BREAK_STMT => "`break`",
        K::CONTINUE_STMT => "`continue`",
        K::AUG_ASSIGN_STMT => "an augmented assignment",
        K::ANN_ASSIGN_STMT => "an annotated assignment",
        K::FUNCTION_DEF => "a `def` without `@kernel` or `@workload`",
        _ => "this construct",
    }
    .to_string()
}
