//! Whether two accesses of a parallel loop touch a common element in two different iterations,
//! decided from their affine indices without enumerating the iteration space.
//!
//! The question is one of integers in a box: outer values `o`, the checked loop's values `p`
//! and `p'` (`p ≠ p'`), each access's inner loop values `ia`, `ib`, such that in every indexed
//! dimension the two coordinates overlap — `fa(o, p, ia) = fb(o, p', ib)` for two indices,
//! `lo ≤ f < hi` for an index against a slice. Writing `p' = p + d` makes the translation
//! (`X[4*i + k]` against itself: `4*d = ka - kb`, so `d = 0`) visible to bounds reasoning, and
//! `d ≠ 0` splits into cases (`d` is zero up to position `k`, then positive or negative). Each
//! case is searched depth first in the order `o, p, ia, d, ib`, smallest values first, with
//! bounds propagation and a divisibility test on each equation pruning: the first solution is
//! the same witness enumeration finds (the first access's first point, in loop order, that has
//! a partner, and its first partner). The search is exact; it counts the points it tries, and
//! past `SEARCH_BUDGET` it answers `Undecided` rather than guessing.

use wsp_ir::Affine;
use wsp_ir::plan::ViewIndex;

/// Points of the search (value choices) tried for one pair of accesses before giving up.
pub const SEARCH_BUDGET: u64 = 1 << 18;

/// Rounds of bounds propagation at one point of the search: propagation only prunes, the
/// search decides, so stopping early costs time, never exactness.
const PROPAGATION_ROUNDS: usize = 16;

/// One coordinate of a region: an index or a slice `lo:hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coord {
    At(i64),
    Range(i64, i64),
}

/// An access as the search sees it: its indices, and the loop variables in scope in the order
/// enumeration uses (outer loops, the checked loop, then the loops inside it).
pub struct Side<'a> {
    pub indices: &'a [ViewIndex],
    pub inner: &'a [(&'a str, u64)],
}

#[derive(Debug, PartialEq, Eq)]
pub enum Overlap {
    /// No two different iterations overlap.
    None,
    /// The first access's iteration, the second's, and the first access's region there.
    Witness(Vec<i64>, Vec<i64>, Vec<Coord>),
    /// An index names a variable that is not a loop variable, or the search ran out of budget.
    Undecided,
}

/// `lo ≤ Σ coeffs·x + constant ≤ hi`.
#[derive(Clone)]
struct Constraint {
    coeffs: Vec<(usize, i128)>,
    lo: i128,
    hi: i128,
}

/// Whether accesses `a` and `b`, inside the loops `outer` and the checked loop `own`, touch a
/// common element in two different iterations of the checked loop (in the same iteration of
/// the outer loops); only their first `dims` indices are compared, the rest being whole.
pub fn overlap(
    outer: &[(&str, u64)],
    own: &[(&str, u64)],
    a: &Side,
    b: &Side,
    dims: usize,
) -> Overlap {
    let all = || outer.iter().chain(own).chain(a.inner).chain(b.inner);
    if own.is_empty() || all().any(|(_, e)| *e == 0) {
        return Overlap::None;
    }
    // Variables: o, p, ia, d, ib.
    let (nu, no, na) = (outer.len(), own.len(), a.inner.len());
    let p0 = nu;
    let ia0 = nu + no;
    let d0 = ia0 + na;
    let ib0 = d0 + no;
    let n = ib0 + b.inner.len();
    let top = |e: u64| i128::from(e) - 1;
    let mut domains: Vec<(i128, i128)> = Vec::with_capacity(n);
    domains.extend(outer.iter().map(|(_, e)| (0, top(*e))));
    domains.extend(own.iter().map(|(_, e)| (0, top(*e))));
    domains.extend(a.inner.iter().map(|(_, e)| (0, top(*e))));
    domains.extend(own.iter().map(|(_, e)| (-top(*e), top(*e))));
    domains.extend(b.inner.iter().map(|(_, e)| (0, top(*e))));

    // A variable of side `a` (or `b`) as a sum of search variables, looked up as enumeration
    // does: the first loop variable of that name, outermost first.
    let place = |name: &str, inner: &[(&str, u64)], inner0: usize, own_is_shifted: bool| {
        if let Some(k) = outer.iter().position(|(v, _)| *v == name) {
            return Some(vec![k]);
        }
        if let Some(k) = own.iter().position(|(v, _)| *v == name) {
            return Some(if own_is_shifted {
                vec![p0 + k, d0 + k]
            } else {
                vec![p0 + k]
            });
        }
        inner
            .iter()
            .position(|(v, _)| *v == name)
            .map(|k| vec![inner0 + k])
    };
    let linear = |f: &Affine, side: &Side, inner0: usize, shifted: bool| {
        let mut coeffs: Vec<(usize, i128)> = Vec::new();
        for (name, c) in &f.terms {
            for v in place(name, side.inner, inner0, shifted)? {
                coeffs.push((v, i128::from(*c)));
            }
        }
        Some((coeffs, i128::from(f.constant)))
    };

    // Each index is an interval `[f, f + w)`: a point (`w = 1`), a constant slice, or a slice
    // with an affine start. `[fa, fa + wa)` and `[fb, fb + wb)` meet iff
    // `-(wa - 1) <= fa - fb <= wb - 1`.
    let interval = |i: &ViewIndex, side: &Side, inner0: usize, shifted: bool| match i {
        ViewIndex::At(f) => linear(f, side, inner0, shifted).map(|(c, k)| (c, k, 1i128)),
        ViewIndex::Range(lo, hi) => Some((Vec::new(), i128::from(*lo), i128::from(hi - lo))),
        ViewIndex::Slice(f, len) => {
            linear(f, side, inner0, shifted).map(|(c, k)| (c, k, i128::from(*len)))
        }
    };
    let mut constraints: Vec<Constraint> = Vec::new();
    for (x, y) in a.indices.iter().zip(b.indices).take(dims) {
        let (Some((mut ca, ka, wa)), Some((cb, kb, wb))) =
            (interval(x, a, ia0, false), interval(y, b, ib0, true))
        else {
            return Overlap::Undecided;
        };
        ca.extend(cb.into_iter().map(|(v, c)| (v, -c)));
        let (lo, hi) = (-(wa - 1) - ka + kb, wb - 1 - ka + kb);
        if ca.is_empty() {
            // Two constant intervals: they meet or they do not, whatever the iterations.
            if lo <= 0 && 0 <= hi {
                continue;
            }
            return Overlap::None;
        }
        constraints.push(merge(Constraint { coeffs: ca, lo, hi }));
    }
    // `p' = p + d` stays inside the checked loop.
    for (k, (_, e)) in own.iter().enumerate() {
        constraints.push(Constraint {
            coeffs: vec![(p0 + k, 1), (d0 + k, 1)],
            lo: 0,
            hi: top(*e),
        });
    }

    let mut search = Search {
        constraints,
        nodes: 0,
    };
    let mut best: Option<Vec<i128>> = None;
    let mut undecided = false;
    for k in 0..no {
        for positive in [true, false] {
            let mut case = domains.clone();
            for j in 0..k {
                case[d0 + j] = (0, 0);
            }
            let e = top(own[k].1);
            case[d0 + k] = if positive { (1, e) } else { (-e, -1) };
            match search.first(case) {
                Ok(Some(x)) => {
                    // The witness order: o, p, ia, then p' = p + d.
                    let key = |x: &[i128]| {
                        let mut key: Vec<i128> = x[..d0].to_vec();
                        key.extend((0..no).map(|j| x[p0 + j] + x[d0 + j]));
                        key
                    };
                    if best.as_ref().is_none_or(|b| key(&x) < key(b)) {
                        best = Some(x);
                    }
                }
                Ok(None) => {}
                Err(Budget) => undecided = true,
            }
        }
    }
    // A race found in one case is a race even when another case is undecided; then only the
    // witness may not be the first.
    let Some(x) = best else {
        return if undecided {
            Overlap::Undecided
        } else {
            Overlap::None
        };
    };
    let value = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
    let own_a: Vec<i64> = (0..no).map(|j| value(x[p0 + j])).collect();
    let own_b: Vec<i64> = (0..no).map(|j| value(x[p0 + j] + x[d0 + j])).collect();
    // The common region: each dimension's intervals on both sides, intersected.
    let at = |i: &ViewIndex, side: &Side, inner0: usize, shifted: bool| {
        let (coeffs, k, w) = interval(i, side, inner0, shifted).unwrap_or_default();
        let start = value(coeffs.iter().map(|(v, c)| c * x[*v]).sum::<i128>() + k);
        match i {
            ViewIndex::At(_) => Coord::At(start),
            _ => Coord::Range(start, start.saturating_add(w as i64)),
        }
    };
    let region = a
        .indices
        .iter()
        .zip(b.indices)
        .take(dims)
        .map(|(i, j)| common(at(i, a, ia0, false), at(j, b, ib0, true)))
        .collect();
    Overlap::Witness(own_a, own_b, region)
}

/// The part two overlapping coordinates share: a point either names, or the ranges'
/// intersection.
pub fn common(a: Coord, b: Coord) -> Coord {
    match (a, b) {
        (Coord::At(x), _) | (Coord::Range(..), Coord::At(x)) => Coord::At(x),
        (Coord::Range(a0, a1), Coord::Range(b0, b1)) => Coord::Range(a0.max(b0), a1.min(b1)),
    }
}

/// One term per variable (an outer variable may appear on both sides).
fn merge(mut c: Constraint) -> Constraint {
    c.coeffs.sort_by_key(|(v, _)| *v);
    let mut merged: Vec<(usize, i128)> = Vec::with_capacity(c.coeffs.len());
    for (v, k) in c.coeffs {
        match merged.last_mut() {
            Some((w, sum)) if *w == v => *sum += k,
            _ => merged.push((v, k)),
        }
    }
    merged.retain(|(_, k)| *k != 0);
    c.coeffs = merged;
    c
}

struct Budget;

struct Search {
    constraints: Vec<Constraint>,
    nodes: u64,
}

impl Search {
    /// The first solution in variable order, smallest values first.
    fn first(&mut self, mut domains: Vec<(i128, i128)>) -> Result<Option<Vec<i128>>, Budget> {
        self.nodes += 1;
        if self.nodes > SEARCH_BUDGET {
            return Err(Budget);
        }
        if !self.propagate(&mut domains) {
            return Ok(None);
        }
        let Some(v) = domains.iter().position(|(lo, hi)| lo < hi) else {
            return Ok(Some(domains.iter().map(|(lo, _)| *lo).collect()));
        };
        let (lo, hi) = domains[v];
        let mut value = lo;
        while value <= hi {
            let mut next = domains.clone();
            next[v] = (value, value);
            if let Some(x) = self.first(next)? {
                return Ok(Some(x));
            }
            value += 1;
        }
        Ok(None)
    }

    /// Narrows each variable to the values every constraint allows given the others' bounds;
    /// false when a constraint cannot hold.
    fn propagate(&self, domains: &mut [(i128, i128)]) -> bool {
        for _ in 0..PROPAGATION_ROUNDS {
            let mut changed = false;
            for c in &self.constraints {
                let term = |(v, k): &(usize, i128), d: &[(i128, i128)]| {
                    let (lo, hi) = d[*v];
                    (k * lo).min(k * hi)..=(k * lo).max(k * hi)
                };
                let (mut min, mut max) = (0i128, 0i128);
                for t in &c.coeffs {
                    let r = term(t, domains);
                    min += r.start();
                    max += r.end();
                }
                if max < c.lo || min > c.hi {
                    return false;
                }
                // An equation over integers needs the gcd of its free coefficients to divide
                // what the fixed ones leave.
                if c.lo == c.hi {
                    let mut g = 0i128;
                    let mut rest = c.lo;
                    for (v, k) in &c.coeffs {
                        let (lo, hi) = domains[*v];
                        if lo == hi {
                            rest -= k * lo;
                        } else {
                            g = gcd(g, *k);
                        }
                    }
                    if (g == 0 && rest != 0) || (g != 0 && rest % g != 0) {
                        return false;
                    }
                }
                for t @ (v, k) in &c.coeffs {
                    let r = term(t, domains);
                    // k·x lies in [c.lo − (max − own max), c.hi − (min − own min)].
                    let low = c.lo - (max - r.end());
                    let high = c.hi - (min - r.start());
                    let (new_lo, new_hi) = if *k > 0 {
                        (ceil_div(low, *k), floor_div(high, *k))
                    } else {
                        (ceil_div(high, *k), floor_div(low, *k))
                    };
                    let (lo, hi) = domains[*v];
                    let (lo2, hi2) = (lo.max(new_lo), hi.min(new_hi));
                    if lo2 > hi2 {
                        return false;
                    }
                    if (lo2, hi2) != (lo, hi) {
                        domains[*v] = (lo2, hi2);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        true
    }
}

/// ⌊a / b⌋ for b ≠ 0.
fn floor_div(a: i128, b: i128) -> i128 {
    if b < 0 {
        (-a).div_euclid(-b)
    } else {
        a.div_euclid(b)
    }
}

/// ⌈a / b⌉ for b ≠ 0.
fn ceil_div(a: i128, b: i128) -> i128 {
    -floor_div(-a, b)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
