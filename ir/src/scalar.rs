//! Scalar expressions: `P.when` predicates and schedule keys, evaluated at run time.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Min,
    Max,
    /// `&`, `|`, `^`, `<<`, `>>` on 64-bit two's complement integers; a shift count outside
    /// 0..=63 is a run-time error.
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl ScalarOp {
    pub fn symbol(self) -> &'static str {
        match self {
            ScalarOp::Add => "+",
            ScalarOp::Sub => "-",
            ScalarOp::Mul => "*",
            ScalarOp::FloorDiv => "//",
            ScalarOp::Mod => "%",
            ScalarOp::Lt => "<",
            ScalarOp::Le => "<=",
            ScalarOp::Gt => ">",
            ScalarOp::Ge => ">=",
            ScalarOp::Eq => "==",
            ScalarOp::Ne => "!=",
            ScalarOp::And => "and",
            ScalarOp::Or => "or",
            ScalarOp::Min => "min",
            ScalarOp::Max => "max",
            ScalarOp::BitAnd => "&",
            ScalarOp::BitOr => "|",
            ScalarOp::BitXor => "^",
            ScalarOp::Shl => "<<",
            ScalarOp::Shr => ">>",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarExpr {
    Const(i64),
    /// A loop variable, or a task field in a key (`t.b`).
    Var(String),
    /// `slot_u64(i)`
    Slot(i64),
    /// `T[i, j]`: an element of an integer tensor, read at run time.
    Element(String, Vec<ScalarExpr>),
    Not(Box<ScalarExpr>),
    Neg(Box<ScalarExpr>),
    Binary(ScalarOp, Box<ScalarExpr>, Box<ScalarExpr>),
    /// `symbol_u64("cut")`: a named run-time symbol, bound as a DenseDyn size is
    /// (`set_symbol_u64`, `execute(cut=2)`, `--bind`), 0 when unbound.
    Symbol(String),
    /// `a if c else b`, `c.where(a, b)`: only the branch taken is evaluated.
    Select(Box<[ScalarExpr; 3]>),
}

impl ScalarExpr {
    /// Most operators one run-time expression may nest. Everything that reads the IR (the
    /// runtime's evaluator, serde, `Clone`) recurses over it, so the analyzer keeps it shallow.
    pub const MAX_DEPTH: usize = 200;

    /// The expressions directly inside this one.
    pub fn children(&self) -> Vec<&ScalarExpr> {
        match self {
            ScalarExpr::Const(_)
            | ScalarExpr::Var(_)
            | ScalarExpr::Slot(_)
            | ScalarExpr::Symbol(_) => Vec::new(),
            ScalarExpr::Element(_, idx) => idx.iter().collect(),
            ScalarExpr::Not(x) | ScalarExpr::Neg(x) => vec![x],
            ScalarExpr::Binary(_, a, b) => vec![a, b],
            ScalarExpr::Select(abc) => abc.iter().collect(),
        }
    }

    /// The named run-time symbols the expression reads, each once, in order.
    pub fn symbols(&self, out: &mut Vec<String>) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            if let ScalarExpr::Symbol(s) = e
                && !out.contains(s)
            {
                out.push(s.clone());
            }
            stack.extend(e.children().into_iter().rev());
        }
    }

    /// Levels of the tree: 1 for a leaf. Iterative, so it is safe on any tree.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((e, d)) = stack.pop() {
            deepest = deepest.max(d);
            stack.extend(e.children().into_iter().map(|x| (x, d + 1)));
        }
        deepest
    }
}

impl ScalarExpr {
    /// The expression as an affine one of its variables, when it is one (`2*i + j - 1`).
    pub fn as_affine(&self) -> Option<crate::Affine> {
        use crate::Affine;
        Some(match self {
            ScalarExpr::Const(c) => Affine::constant(*c),
            ScalarExpr::Var(v) => Affine::var(v),
            ScalarExpr::Neg(e) => e.as_affine()?.neg()?,
            ScalarExpr::Binary(op, a, b) => {
                let (a, b) = (a.as_affine()?, b.as_affine()?);
                match op {
                    ScalarOp::Add => a.add(&b)?,
                    ScalarOp::Sub => a.add(&b.neg()?)?,
                    ScalarOp::Mul => match (a.as_constant(), b.as_constant()) {
                        (Some(k), _) => b.scale(k)?,
                        (_, Some(k)) => a.scale(k)?,
                        _ => return None,
                    },
                    _ => return None,
                }
            }
            _ => return None,
        })
    }
}

impl fmt::Display for ScalarExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarExpr::Const(c) => write!(f, "{c}"),
            ScalarExpr::Var(v) => f.write_str(v),
            ScalarExpr::Slot(s) => write!(f, "slot_u64({s})"),
            ScalarExpr::Symbol(s) => write!(f, "symbol_u64({s:?})"),
            ScalarExpr::Select(abc) => {
                let [c, a, b] = &**abc;
                write!(f, "({a} if {c} else {b})")
            }
            ScalarExpr::Element(t, idx) => {
                let idx: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
                write!(f, "{t}[{}]", idx.join(", "))
            }
            ScalarExpr::Not(e) => write!(f, "(not {e})"),
            ScalarExpr::Neg(e) => write!(f, "(-{e})"),
            ScalarExpr::Binary(op @ (ScalarOp::Min | ScalarOp::Max), a, b) => {
                write!(f, "{}({a}, {b})", op.symbol())
            }
            ScalarExpr::Binary(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
        }
    }
}
