//! Python's numbers known at check time: the `math` module (after `import math`) and the
//! `float(...)`/`int(...)` builtins, computed as CPython computes them, with its errors
//! ("math domain error") located at the call.

use super::Eval;
use super::expr::num;
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode};

use crate::diagnostics::Code;
use crate::values::{F64, Value};
use crate::vocabulary::Builtin;

/// The value of the constant `math.NAME`, if it is one.
pub(crate) fn math_constant(name: &str) -> Option<f64> {
    Some(match name {
        "pi" => std::f64::consts::PI,
        "e" => std::f64::consts::E,
        "tau" => std::f64::consts::TAU,
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => return None,
    })
}

impl<'db> Eval<'db> {
    /// `math.sqrt(x)`, `math.log(x, base)`, ...: a float (an int for `floor`, `ceil`, `isqrt`).
    pub(crate) fn math_call(&mut self, m: &'static str, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_member(c, Builtin::Math, m)?;
        let mut xs = Vec::new();
        for (v, r) in args.values.iter().flatten() {
            match v {
                Value::Int(_) | Value::Float(_) => xs.push((num(v), *r)),
                Value::Unknown => return None,
                v => {
                    let what = v.describe();
                    self.error(
                        Code::WrongKind,
                        *r,
                        format!("`math.{m}` takes numbers, not {what}"),
                    );
                    return None;
                }
            }
        }
        let (x, at) = *xs.first()?;
        let range = c.syntax().text_range();
        let domain = |eval: &mut Self| {
            eval.error(
                Code::WrongArguments,
                at,
                format!("`math.{m}` of {x}: math domain error (Python raises ValueError)"),
            );
            None
        };
        let v = match m {
            "sqrt" if x < 0.0 => return domain(self),
            "sqrt" => x.sqrt(),
            "exp" => x.exp(),
            "log" | "log2" | "log10" if x <= 0.0 => return domain(self),
            "log" => match xs.get(1) {
                Some(&(base, _)) if base <= 0.0 || base == 1.0 => return domain(self),
                Some(&(base, _)) => x.ln() / base.ln(),
                None => x.ln(),
            },
            "log2" => x.log2(),
            "log10" => x.log10(),
            "sin" | "cos" | "tan" if x.is_infinite() => return domain(self),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "tanh" => x.tanh(),
            "fabs" => x.abs(),
            "pow" => x.powf(xs.get(1)?.0),
            "floor" | "ceil" | "isqrt" => return self.math_int(m, x, at, range),
            _ => return None,
        };
        if v.is_infinite() && x.is_finite() && xs.iter().all(|(y, _)| y.is_finite()) {
            self.error(
                Code::WrongArguments,
                range,
                format!("`math.{m}` overflows a float here (Python raises OverflowError)"),
            );
            return None;
        }
        Some(Value::Float(F64(v)))
    }

    /// `math.floor`, `math.ceil` and `math.isqrt`, which give ints.
    fn math_int(&mut self, m: &str, x: f64, at: TextRange, range: TextRange) -> Option<Value<'db>> {
        if m == "isqrt" && (x < 0.0 || x.fract() != 0.0) {
            let what = if x < 0.0 {
                "a negative number"
            } else {
                "a float"
            };
            self.error(
                Code::WrongArguments,
                at,
                format!("`math.isqrt` takes a non-negative int, not {what}"),
            );
            return None;
        }
        let v = match m {
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            _ => x.sqrt().floor(),
        };
        self.float_to_int(v, range, &format!("`math.{m}`"))
    }

    /// An integral float as an int, or Python's error for infinities and NaN.
    fn float_to_int(&mut self, v: f64, range: TextRange, what: &str) -> Option<Value<'db>> {
        if v.is_nan() || v.is_infinite() {
            let kind = if v.is_nan() {
                "ValueError: cannot convert float NaN to integer"
            } else {
                "OverflowError: cannot convert float infinity to integer"
            };
            self.error(
                Code::WrongArguments,
                range,
                format!("{what} of {v}: {kind}"),
            );
            return None;
        }
        // Python's ints are unbounded; WSP's are 64-bit.
        if v.abs() >= 9.223_372_036_854_776e18 {
            self.error(
                Code::OutsideSubset,
                range,
                "integer too large (WSP integers are 64-bit)",
            );
            return None;
        }
        Some(Value::Int(v as i64))
    }

    /// `float(x)`: a number, or a string as Python's `float` reads it (`"inf"`, `"-inf"`,
    /// `"nan"`, `"1e-6"`).
    pub(crate) fn float_call(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::Float)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(_) | Value::Float(_) => Some(Value::Float(F64(num(&v)))),
            Value::Bool(b) => Some(Value::Float(F64(f64::from(u8::from(b))))),
            Value::Str(s) => match python_float(&s) {
                Some(f) => Some(Value::Float(F64(f))),
                None => {
                    self.error(
                        Code::WrongArguments,
                        r,
                        format!("could not convert string to float: {s:?}"),
                    );
                    None
                }
            },
            Value::Unknown => None,
            v => {
                let what = v.describe();
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`float` takes a number or a string, not {what}"),
                );
                None
            }
        }
    }

    /// `int(x)`: an int, or a float truncated toward zero.
    pub(crate) fn int_call(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, Builtin::Int)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(i) => Some(Value::Int(i)),
            Value::Bool(b) => Some(Value::Int(i64::from(b))),
            Value::Float(f) => self.float_to_int(f.0.trunc(), r, "`int`"),
            Value::Unknown => None,
            v => {
                let what = v.describe();
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`int` takes a number, not {what}"),
                );
                None
            }
        }
    }
}

/// A string as Python's `float()` reads it: surrounding whitespace, a sign, `inf`/`infinity`/
/// `nan` in any case, underscores between digits, or a decimal literal.
fn python_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let (sign, body) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, t),
    };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(sign * f64::INFINITY);
    }
    if lower == "nan" {
        return Some(f64::NAN);
    }
    // Rust's parser accepts the words above in other spellings (and no underscores): only
    // digits, one point, an exponent and single underscores between digits pass here.
    let bytes = body.as_bytes();
    let ok = !body.is_empty()
        && bytes.iter().enumerate().all(|(i, &b)| match b {
            b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' => true,
            b'_' => {
                i > 0
                    && bytes[i - 1].is_ascii_digit()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
            }
            _ => false,
        });
    if !ok {
        return None;
    }
    body.replace('_', "").parse::<f64>().ok().map(|v| sign * v)
}

#[cfg(test)]
mod tests {
    use super::python_float;

    #[test]
    fn strings_read_as_pythons_float_reads_them() {
        assert_eq!(python_float("inf"), Some(f64::INFINITY));
        assert_eq!(python_float(" -Infinity "), Some(f64::NEG_INFINITY));
        assert!(python_float("NaN").is_some_and(f64::is_nan));
        assert_eq!(python_float("1_000.5"), Some(1000.5));
        assert_eq!(python_float("-1e-6"), Some(-1e-6));
        assert_eq!(python_float("1__0"), None);
        assert_eq!(python_float("infinit"), None);
        assert_eq!(python_float(""), None);
        assert_eq!(python_float("0x10"), None);
    }
}
