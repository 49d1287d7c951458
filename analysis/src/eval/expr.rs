//! Expressions: names, literals, operators, comparisons, attributes, subscripts and calls.

use super::tensors::axis;
use super::{Eval, describe_syntax};
use wsp_syntax::ast::{self, AstNode, Expr, LiteralKind};
use wsp_syntax::{SyntaxKind, TextRange};

use crate::diagnostics::{Code, Diag};
use crate::names::suggest;
use crate::types::DType;
use crate::values::{AxisKind, F64, Policy, Value, WindowMode};
use crate::vocabulary::Builtin;
use wsp_ir::{Affine, ScalarExpr, ScalarOp};

/// The most items `seq * n` builds.
const MAX_REPEATED: u64 = 1 << 16;

impl<'db> Eval<'db> {
    pub(crate) fn expr(&mut self, e: &Expr) -> Value<'db> {
        let value = wsp_syntax::grow_stack(|| self.expr_here(e));
        match value {
            Value::Runtime(r) => self
                .shallow(*r, e.syntax().text_range())
                .map_or(Value::Unknown, |r| Value::Runtime(Box::new(r))),
            v => v,
        }
    }

    /// `e`, unless it nests more operators than a run-time expression may.
    pub(crate) fn shallow(&mut self, e: ScalarExpr, range: TextRange) -> Option<ScalarExpr> {
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

    pub(crate) fn expr_here(&mut self, e: &Expr) -> Value<'db> {
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
                Some(LiteralKind::String {
                    bytes: false,
                    fstring: true,
                    ..
                }) => self.fstring(l, false),
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
            Expr::CondExpr(c) => self.conditional(c),
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

    pub(crate) fn unary(
        &mut self,
        op: Option<SyntaxKind>,
        v: Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
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
            (Some(SyntaxKind::TILDE), Value::Int(i)) => Value::Int(!i),
            (Some(SyntaxKind::TILDE), v) if self.to_scalar(&v).is_some() => {
                // `~x` is `-x - 1` on two's complement integers.
                let x = self.to_scalar(&v).unwrap_or(ScalarExpr::Const(0));
                Value::Runtime(Box::new(ScalarExpr::Binary(
                    ScalarOp::Sub,
                    Box::new(ScalarExpr::Neg(Box::new(x))),
                    Box::new(ScalarExpr::Const(1)),
                )))
            }
            (Some(SyntaxKind::NOT_KW), Value::Bool(b)) => Value::Bool(!b),
            (Some(SyntaxKind::NOT_KW), Value::Int(i)) => Value::Bool(i == 0),
            (Some(SyntaxKind::NOT_KW), v) if self.to_scalar(&v).is_some() => {
                Value::Runtime(Box::new(ScalarExpr::Not(Box::new(
                    self.to_scalar(&v).unwrap_or(ScalarExpr::Const(0)),
                ))))
            }
            (Some(SyntaxKind::MINUS), v) if self.to_scalar(&v).is_some() => {
                Value::Runtime(Box::new(ScalarExpr::Neg(Box::new(
                    self.to_scalar(&v).unwrap_or(ScalarExpr::Const(0)),
                ))))
            }
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

    pub(crate) fn binary(
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
            (Some(op @ (K::AMP | K::PIPE | K::CARET)), Value::Bool(a), Value::Bool(b)) => {
                Value::Bool(match op {
                    K::AMP => a & b,
                    K::PIPE => a | b,
                    _ => a ^ b,
                })
            }
            // `(TensorReplicate(),) * 3`, `[0] * n`: a sequence repeated, as Python does, up to
            // a bound (the list is built when the file is checked).
            (Some(K::STAR), Value::Tuple(items) | Value::List(items), Value::Int(n))
            | (Some(K::STAR), Value::Int(n), Value::Tuple(items) | Value::List(items)) => {
                let n = (*n).max(0) as u64;
                let total = (items.len() as u64).saturating_mul(n);
                if total > MAX_REPEATED {
                    let message = format!(
                        "a repeated sequence of {total} items is more than the {MAX_REPEATED} a file may build"
                    );
                    self.error(Code::OutsideSubset, range, message);
                    return Value::Unknown;
                }
                let out: Vec<Value<'db>> = (0..n).flat_map(|_| items.iter().cloned()).collect();
                match (&l, &r) {
                    (Value::List(_), _) | (_, Value::List(_)) => Value::List(out),
                    _ => Value::Tuple(out),
                }
            }
            (Some(op), Value::Int(a), Value::Int(b)) => {
                let (a, b) = (*a, *b);
                let v = match op {
                    K::PLUS => a.checked_add(b),
                    K::MINUS => a.checked_sub(b),
                    K::STAR => a.checked_mul(b),
                    K::DOUBLE_SLASH | K::PERCENT | K::SLASH if b == 0 => {
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
                    K::AMP => Some(a & b),
                    K::PIPE => Some(a | b),
                    K::CARET => Some(a ^ b),
                    _ => return self.bad_operands(&l, &r, range),
                };
                v.map_or_else(|| overflow(self), Value::Int)
            }
            (Some(op), Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let (a, b) = (num(&l), num(&r));
                if op == K::SLASH && b == 0.0 {
                    // Python raises ZeroDivisionError rather than giving an infinity.
                    self.error(
                        Code::OutsideSubset,
                        range,
                        "division by zero in a constant expression (write `math.inf` for an infinity)",
                    );
                    return Value::Unknown;
                }
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

    pub(crate) fn runtime_binary(
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
            SyntaxKind::AMP => ScalarOp::BitAnd,
            SyntaxKind::PIPE => ScalarOp::BitOr,
            SyntaxKind::CARET => ScalarOp::BitXor,
            SyntaxKind::SHL => ScalarOp::Shl,
            SyntaxKind::SHR => ScalarOp::Shr,
            _ => return self.bad_operands(&l, &r, range),
        };
        self.scalar_binary(op, l, r, range)
    }

    pub(crate) fn scalar_binary(
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
            (Some(a), Some(b)) => {
                Value::Runtime(Box::new(ScalarExpr::Binary(op, Box::new(a), Box::new(b))))
            }
            _ => self.bad_operands(&l, &r, range),
        }
    }

    pub(crate) fn bad_operands(
        &mut self,
        l: &Value<'db>,
        r: &Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
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
    pub(crate) fn to_scalar(&self, v: &Value<'db>) -> Option<ScalarExpr> {
        match v {
            Value::Int(i) => Some(ScalarExpr::Const(*i)),
            Value::Bool(b) => Some(ScalarExpr::Const(*b as i64)),
            Value::Runtime(e) => Some((**e).clone()),
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
                        crate::values::ViewIndex::Range(..)
                        | crate::values::ViewIndex::Slice(..) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(ScalarExpr::Element(view.tensor.name.clone(), idx))
            }
            _ => None,
        }
    }

    /// `a if c else b`: the branch, when `c` is known now; else a run-time select.
    pub(crate) fn conditional(&mut self, c: &ast::CondExpr) -> Value<'db> {
        let range = c.syntax().text_range();
        let cond = c.condition().map_or(Value::Unknown, |e| self.expr(&e));
        let a = c.then_branch().map_or(Value::Unknown, |e| self.expr(&e));
        let b = c.else_branch().map_or(Value::Unknown, |e| self.expr(&e));
        self.select(cond, a, b, range)
    }

    /// `c ? a : b` as the values allow: picked now when `c` is known, a run-time select of
    /// two scalars otherwise.
    pub(crate) fn select(
        &mut self,
        cond: Value<'db>,
        a: Value<'db>,
        b: Value<'db>,
        range: TextRange,
    ) -> Value<'db> {
        match cond {
            Value::Unknown => Value::Unknown,
            Value::Bool(c) => {
                if c {
                    a
                } else {
                    b
                }
            }
            Value::Int(c) => {
                if c != 0 {
                    a
                } else {
                    b
                }
            }
            c => match (self.to_scalar(&c), self.to_scalar(&a), self.to_scalar(&b)) {
                (Some(c), Some(a), Some(b)) => {
                    Value::Runtime(Box::new(ScalarExpr::Select(Box::new([c, a, b]))))
                }
                _ if a == Value::Unknown || b == Value::Unknown => Value::Unknown,
                _ => {
                    let message = format!(
                        "a choice made at run time is between integers, not {} and {}",
                        a.describe(),
                        b.describe()
                    );
                    self.error(Code::WrongKind, range, message);
                    Value::Unknown
                }
            },
        }
    }

    /// The original's scalar-expression methods: `c.where(a, b)`, `x.cast_u64()`,
    /// `x.cast_i64()`, `x.cast_bool()`. Values are 64-bit integers; a cast keeps the value
    /// (`cast_bool` makes it 0 or 1).
    pub(crate) fn scalar_method(
        &mut self,
        v: Value<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        match method {
            "where" => {
                let Some(args) = self.bind(c, "`.where`", &["then", "otherwise"]) else {
                    return Value::Unknown;
                };
                let a = args.get(0).map_or(Value::Unknown, |(v, _)| v.clone());
                let b = args.get(1).map_or(Value::Unknown, |(v, _)| v.clone());
                self.select(v, a, b, c.syntax().text_range())
            }
            "cast_u64" | "cast_i64" => {
                self.bind(c, &format!("`.{method}`"), &[]);
                v
            }
            "cast_bool" => {
                self.bind(c, "`.cast_bool`", &[]);
                match v {
                    Value::Bool(b) => Value::Bool(b),
                    Value::Int(i) => Value::Bool(i != 0),
                    v => self.scalar_binary(ScalarOp::Ne, v, Value::Int(0), range),
                }
            }
            _ => self.unknown_member(
                "Expr",
                method,
                range,
                ["where", "cast_u64", "cast_i64", "cast_bool"].into_iter(),
            ),
        }
    }

    pub(crate) fn compare(&mut self, c: &ast::CompareExpr) -> Value<'db> {
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

    pub(crate) fn attribute(&mut self, a: &ast::AttributeExpr) -> Value<'db> {
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
                Value::Policy(Box::new(Policy::Immediate))
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
            Value::Builtin(Builtin::Math) if let Some(v) = super::pymath::math_constant(&name) => {
                Value::Float(F64(v))
            }
            Value::Builtin(b) => match b.members().iter().find(|m| m.name == name) {
                Some(m) => Value::Member(*b, m.name),
                None => {
                    let b = *b;
                    let names = b.members().iter().map(|m| m.name);
                    self.unknown_member(b.name(), &name, attr_range, names)
                }
            },
            Value::Tensor(t) => self.tensor_attribute((**t).clone(), &name, attr_range),
            Value::KernelIr(k, crate::values::IrPart::Whole) => {
                self.kernel_ir_attribute(*k, &name, attr_range)
            }
            Value::Program(_) if name == "stats" => Value::Stats,
            Value::Program(_) if name == "using_cpp_backend" => Value::Bool(true),
            Value::Program(_) if name == "trace" => self.program_trace(a.receiver(), range),
            // The spec's folder of a codegen-only target's emitted tree.
            Value::Program(p) if name == "codegen_artifact_dir" => {
                match p.target.as_ref().map(|t| t.target) {
                    Some(wsp_ir::schedule::Target::AscendNpu) => {
                        self.error(
                            Code::UnknownMember,
                            attr_range,
                            "an `ascend_npu` program's tree is written by `wsp emit FILE -o DIR`, to the folder you name: the program has no folder of its own",
                        );
                        Value::Unknown
                    }
                    _ => Value::None,
                }
            }
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
            Value::Trace(_)
                if crate::vocabulary::method(crate::vocabulary::TRACE_METHODS, &name).is_some() =>
            {
                self.error(
                    Code::UnknownMember,
                    attr_range,
                    format!(
                        "`.{name}` of {} is only usable as a call: `.{name}()`",
                        receiver.describe()
                    ),
                );
                Value::Unknown
            }
            Value::Explored(e) => self.explored_attribute((**e).clone(), &name, attr_range),
            // The original's `SearchSpace.size`: known when the file is checked.
            Value::Space(s) if name == "size" => match s.size() {
                Some(n) => Value::Int(i64::try_from(n).unwrap_or(i64::MAX)),
                None => Value::Unknown,
            },
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

    pub(crate) fn unknown_member<'a>(
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
            d = d.with_guess(
                format!("replace with `{best}`"),
                vec![(self.span(range), best.to_string())],
            );
        }
        self.push(d);
        Value::Unknown
    }

    pub(crate) fn subscript(&mut self, s: &ast::SubscriptExpr) -> Value<'db> {
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
                    Some(n) => Value::Axis(Box::new(axis(self.span(range), AxisKind::Dense, n))),
                    None => Value::Unknown,
                }
            }
            // The spec's typed channel, `Channel[Tile](depth=2)`: a channel carries tasks' completions
            // here, so the element type says nothing more.
            Value::Builtin(Builtin::Channel) => {
                for index in &indices {
                    self.expr(index);
                }
                Value::Builtin(Builtin::Channel)
            }
            base => self.subscript_value(base, s),
        }
    }

    /// Subscripts of values other than `Dense`: overridden in workload bodies (views).
    pub(crate) fn subscript_value(
        &mut self,
        base: Value<'db>,
        s: &ast::SubscriptExpr,
    ) -> Value<'db> {
        if let Value::Trace(t) = base {
            return self.trace_subscript(*t, s);
        }
        if let Value::List(items) | Value::Tuple(items) = base {
            return self.sequence_subscript(items, s);
        }
        if let Some(view) = self.view_subscript(base.clone(), s) {
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

    /// `LIST[i]` of a list or tuple known when the file is checked, as Python indexes it: a
    /// constant index (negative from the end) or a constant slice `lo:hi` gives the item or
    /// items now. An index of loop variables whose every value the call's extents keep inside
    /// the list gives a run-time lookup of its integers (the spec's `seq_lens[b] <= 2048`),
    /// a balanced tree of selects, so its depth grows as the log of the length.
    fn sequence_subscript(&mut self, items: Vec<Value<'db>>, s: &ast::SubscriptExpr) -> Value<'db> {
        let range = s.syntax().text_range();
        let n = items.len() as i64;
        let indices = s.indices();
        let [index] = indices.as_slice() else {
            self.error(Code::WrongArguments, range, "a list takes one index");
            return Value::Unknown;
        };
        let r = index.syntax().text_range();
        if let Expr::Slice(sl) = index {
            let [lo, hi, step] = sl.parts();
            let mut bound = |e: Option<Expr>, default: i64| -> Option<i64> {
                match e.map(|e| self.expr(&e)) {
                    None => Some(default),
                    Some(Value::Int(i)) => Some(if i < 0 { (n + i).max(0) } else { i.min(n) }),
                    Some(Value::Unknown) => None,
                    Some(v) => {
                        let m = format!(
                            "a list's slice bounds are integers known when the file is checked, not {}",
                            v.describe()
                        );
                        self.error(Code::WrongKind, r, m);
                        None
                    }
                }
            };
            let (Some(lo), Some(hi)) = (bound(lo, 0), bound(hi, n)) else {
                return Value::Unknown;
            };
            if step.is_some() {
                self.error(
                    Code::OutsideSubset,
                    r,
                    "a list slice has no step here: `lo:hi`",
                );
                return Value::Unknown;
            }
            return Value::List(items[lo.min(hi) as usize..hi as usize].to_vec());
        }
        match self.expr(index) {
            Value::Unknown => Value::Unknown,
            Value::Int(i) => {
                let at = if i < 0 { n + i } else { i };
                if at < 0 || at >= n {
                    let m = format!("index {i} is out of range for a list of {n} items");
                    self.error(Code::IndexOutOfRange, r, m);
                    return Value::Unknown;
                }
                items[at as usize].clone()
            }
            Value::Index(a) => {
                let Some(ints) = items
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => Some(*i),
                        Value::Bool(b) => Some(*b as i64),
                        _ => None,
                    })
                    .collect::<Option<Vec<i64>>>()
                else {
                    let m = "a list indexed by a loop variable holds integers (its item is read when the task runs)";
                    self.error(Code::WrongKind, r, m);
                    return Value::Unknown;
                };
                match a.bounds(|v| self.extent_of(v)) {
                    Some((lo, hi)) if lo >= 0 && hi < n => {}
                    Some((lo, hi)) => {
                        let shown = if lo < 0 { lo } else { hi };
                        let m =
                            format!("`{a}` reaches {shown}, out of range for a list of {n} items");
                        self.error(Code::IndexOutOfRange, r, m);
                        return Value::Unknown;
                    }
                    None => {
                        let m = format!(
                            "`{a}` indexes a list, so its values must be known when the file is checked (a static axis, `Dense[n]`); for lengths bound at run time, read an integer tensor (`SeqLens[b]`)"
                        );
                        self.error(Code::WrongKind, r, m);
                        return Value::Unknown;
                    }
                }
                let Some(key) = self.to_scalar(&Value::Index(a)) else {
                    return Value::Unknown;
                };
                fn lookup(key: &ScalarExpr, ints: &[i64], lo: usize) -> ScalarExpr {
                    if ints.len() == 1 {
                        return ScalarExpr::Const(ints[0]);
                    }
                    let mid = ints.len() / 2;
                    let below = ScalarExpr::Binary(
                        ScalarOp::Lt,
                        Box::new(key.clone()),
                        Box::new(ScalarExpr::Const((lo + mid) as i64)),
                    );
                    ScalarExpr::Select(Box::new([
                        below,
                        lookup(key, &ints[..mid], lo),
                        lookup(key, &ints[mid..], lo + mid),
                    ]))
                }
                Value::Runtime(Box::new(lookup(&key, &ints, 0)))
            }
            v => {
                let m = format!(
                    "a list index is an integer or an expression of loop variables, not {}",
                    v.describe()
                );
                self.error(Code::WrongKind, r, m);
                Value::Unknown
            }
        }
    }

    pub(crate) fn call(&mut self, c: &ast::CallExpr) -> Value<'db> {
        let range = c.syntax().text_range();
        let Some(callee) = c.callee() else {
            return Value::Unknown;
        };
        // Methods of schedules, programs and processes.
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
            Value::Workload(w) => self.call_workload(w, c),
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

    /// The receiver of a method call when it is a schedule, program or process (else `None`, and the
    /// call is evaluated as an ordinary one).
    pub(crate) fn expr_quiet_method(&mut self, receiver: &Expr) -> Option<Value<'db>> {
        let before = self.diags.len();
        let v = self.expr(receiver);
        match v {
            Value::Schedule(_)
            | Value::Program(_)
            | Value::Process(_)
            | Value::Tensor(_)
            | Value::Trace(_)
            | Value::Kernel(_)
            | Value::Runtime(_)
            | Value::Index(_)
            | Value::Space(_)
            | Value::Scheduler(_)
            | Value::Explored(_)
            | Value::Bool(_) => Some(v),
            _ => {
                self.diags.truncate(before);
                None
            }
        }
    }
}

/// The scalar op of a comparison WSP allows (not `in`, `is`, ...).
pub(crate) fn compare_op(op: &ast::CompareOp) -> Option<ScalarOp> {
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

pub(crate) fn as_affine(v: &Value) -> Option<Affine> {
    match v {
        Value::Int(i) => Some(Affine::constant(*i)),
        Value::Index(a) => Some(a.clone()),
        _ => None,
    }
}
