//! Affine index expressions over loop variables: `2*i + j + 1`.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Affine {
    pub constant: i64,
    /// (variable, coefficient), sorted by variable, no zero coefficients.
    pub terms: Vec<(String, i64)>,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine {
            constant: c,
            terms: Vec::new(),
        }
    }

    pub fn var(name: &str) -> Affine {
        Affine {
            constant: 0,
            terms: vec![(name.to_string(), 1)],
        }
    }

    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    pub fn coefficient(&self, var: &str) -> i64 {
        self.terms
            .iter()
            .find(|(v, _)| v == var)
            .map_or(0, |(_, c)| *c)
    }

    pub fn add(&self, other: &Affine) -> Option<Affine> {
        let mut out = self.clone();
        out.constant = out.constant.checked_add(other.constant)?;
        for (v, c) in &other.terms {
            match out.terms.iter_mut().find(|(w, _)| w == v) {
                Some((_, k)) => *k = k.checked_add(*c)?,
                None => out.terms.push((v.clone(), *c)),
            }
        }
        out.normalize();
        Some(out)
    }

    pub fn scale(&self, k: i64) -> Option<Affine> {
        let mut out = Affine::constant(self.constant.checked_mul(k)?);
        for (v, c) in &self.terms {
            out.terms.push((v.clone(), c.checked_mul(k)?));
        }
        out.normalize();
        Some(out)
    }

    pub fn neg(&self) -> Option<Affine> {
        self.scale(-1)
    }

    fn normalize(&mut self) {
        self.terms.retain(|(_, c)| *c != 0);
        self.terms.sort();
    }

    /// The smallest and largest value over the box `0 <= var < extent(var)`; `None` when a
    /// variable's extent is unknown, or 0 (the box is empty: the expression takes no value).
    pub fn bounds(&self, extent: impl Fn(&str) -> Option<u64>) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (self.constant, self.constant);
        for (v, c) in &self.terms {
            let e = extent(v).filter(|&e| e > 0)?;
            let max = i64::try_from(e).ok()?.checked_sub(1)?;
            let term = c.checked_mul(max)?;
            if term < 0 {
                lo = lo.checked_add(term)?;
            } else {
                hi = hi.checked_add(term)?;
            }
        }
        Some((lo, hi))
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (v, c) in &self.terms {
            let sign = if *c < 0 {
                "-"
            } else if first {
                ""
            } else {
                "+"
            };
            let sep = if first { "" } else { " " };
            let abs = c.unsigned_abs();
            if first {
                write!(f, "{sign}")?;
            } else {
                write!(f, "{sep}{sign} ")?;
            }
            if abs == 1 {
                write!(f, "{v}")?;
            } else {
                write!(f, "{abs}*{v}")?;
            }
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant > 0 {
            write!(f, " + {}", self.constant)
        } else if self.constant < 0 {
            write!(f, " - {}", self.constant.unsigned_abs())
        } else {
            Ok(())
        }
    }
}
