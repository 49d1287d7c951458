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
}

impl ScalarExpr {
    /// Most operators one run-time expression may nest. Everything that reads the IR (the
    /// runtime's evaluator, serde, `Clone`) recurses over it, so the analyzer keeps it shallow.
    pub const MAX_DEPTH: usize = 200;

    /// Levels of the tree: 1 for a leaf. Iterative, so it is safe on any tree.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((e, d)) = stack.pop() {
            deepest = deepest.max(d);
            match e {
                ScalarExpr::Const(_) | ScalarExpr::Var(_) | ScalarExpr::Slot(_) => {}
                ScalarExpr::Element(_, idx) => stack.extend(idx.iter().map(|i| (i, d + 1))),
                ScalarExpr::Not(x) | ScalarExpr::Neg(x) => stack.push((x, d + 1)),
                ScalarExpr::Binary(_, a, b) => {
                    stack.push((a, d + 1));
                    stack.push((b, d + 1));
                }
            }
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
