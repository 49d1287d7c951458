//! WSP301 (write-write race) and WSP302 (read-write race) between iterations of a parallel
//! loop: each task's reads and writes are affine regions of tensors; two iterations race when
//! their regions overlap, decided by the affine search in `overlap`, by enumeration when the
//! search gives up on a small loop, and reported as WSP306 (undecided) otherwise.
//! Pages: docs/diagnostics/WSP301.md, WSP302.md, WSP306.md.

use std::collections::{HashMap, HashSet};

use super::overlap::{self, Coord, Overlap, Side};
use crate::diagnostics::{Code, Diag, Span};
use crate::values::{AxisKind, View, ViewIndex};
use crate::workloads::{LoopKind, LoopVar, PlanNode, TaskArg};
use wsp_ir::Affine;

/// The most iteration points enumeration decides a race over, when the search cannot.
pub const RACE_BUDGET: u64 = 1 << 20;

/// The extent a race is decided for over a `DenseDyn` axis, whose size is whatever a run binds
/// (its default is one binding of many). Races only grow with a loop's size, and the search
/// tries small iterations first, so no race under it means none at any binding, and a witness
/// is a race at every binding that reaches those iterations.
const RUN_TIME_EXTENT: u64 = 1 << 31;

/// The extent `v` is checked over. A `DenseDyn` axis, and a sparse row whose entries are data
/// read at run time, are checked as `RUN_TIME_EXTENT` long: a race between iterations `i` and
/// `j` happens whenever the run gives the loop more than `max(i, j)` iterations. So is an axis
/// a workload's caller gives (in the body of a workload no call has bound yet), and a whole
/// ragged axis whose lengths are data (its elements number their sum). A ragged row whose
/// lengths are data is not checked: its indices are bounded by that data (`X[8*b + t]` with
/// every length at most 8), which only the run knows.
fn race_extent(v: &LoopVar) -> Option<u64> {
    if v.axis_kind == AxisKind::DenseDyn || data_row(v) || callers_axis(v) || data_total(v) {
        return Some(RUN_TIME_EXTENT);
    }
    v.extent
}

/// Whether `v` runs over an axis the workload's caller gives, not known in a generic body.
fn callers_axis(v: &LoopVar) -> bool {
    v.extent.is_none() && v.axis.is_empty()
}

/// Whether `v` runs over a sparse row whose entries are tensor data.
fn data_row(v: &LoopVar) -> bool {
    v.extent.is_none() && !v.axis.is_empty() && v.axis_kind == AxisKind::Sparse
}

/// Whether `v` runs over every element of a ragged axis whose lengths are tensor data.
fn data_total(v: &LoopVar) -> bool {
    v.extent.is_none() && v.axis_kind == AxisKind::Ragged && v.row.is_none()
}

/// One access of a task to a tensor region, with the loops around it (inside the loop being
/// checked).
struct Access<'p, 'db> {
    /// The view as written (its text and place in messages).
    view: &'p View<'db>,
    /// The same region of the declared tensor it reads: `Kt[b]` of `Kt = K.T` is a region
    /// of `K`, so accesses through views and their base are compared on the bytes.
    base: std::borrow::Cow<'p, View<'db>>,
    write: bool,
    /// Loop variables between the checked loop and the task, with extents.
    inner: Vec<(&'p str, u64)>,
}

/// WSP301/WSP302 for every parallel loop of a plan whose extents are known.
pub fn races<'db>(body: &[PlanNode<'db>], call_site: Option<Span<'db>>) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    walk_loops(body, &mut Vec::new(), call_site, &mut out);
    out
}

fn walk_loops<'p, 'db>(
    nodes: &'p [PlanNode<'db>],
    outer: &mut Vec<(&'p str, u64)>,
    call_site: Option<Span<'db>>,
    out: &mut Vec<Diag<'db>>,
) {
    for n in nodes {
        match n {
            PlanNode::Loop {
                kind,
                vars,
                body,
                span,
                callee,
            } => {
                let extents: Option<Vec<(&str, u64)>> = vars
                    .iter()
                    .map(|v| race_extent(v).map(|e| (v.name.as_str(), e)))
                    .collect();
                if let Some(own) = &extents {
                    if *kind != LoopKind::Sequential {
                        check_loop(
                            Scope::Loop(*kind),
                            vars,
                            own,
                            outer,
                            body,
                            (*span, Some(*callee)),
                            call_site,
                            out,
                        );
                    }
                    let depth = outer.len();
                    outer.extend(own.iter().copied());
                    walk_loops(body, outer, call_site, out);
                    outer.truncate(depth);
                }
            }
            PlanNode::Consume {
                var,
                extent: Some(e),
                body,
                span,
                ..
            } => {
                let own = vec![(var.as_str(), *e)];
                let lv = LoopVar {
                    name: var.clone(),
                    axis: String::new(),
                    axis_kind: AxisKind::Dense,
                    extent: Some(*e),
                    row: None,
                };
                check_loop(
                    Scope::Consume,
                    std::slice::from_ref(&lv),
                    &own,
                    outer,
                    body,
                    (*span, None),
                    call_site,
                    out,
                );
                let depth = outer.len();
                outer.extend(own);
                walk_loops(body, outer, call_site, out);
                outer.truncate(depth);
            }
            PlanNode::Pipeline { stages, .. } => walk_loops(stages, outer, call_site, out),
            PlanNode::Conditional { branches, .. } => branches
                .iter()
                .for_each(|b| walk_loops(&b.body, outer, call_site, out)),
            _ => {}
        }
    }
}

fn collect_accesses<'p, 'db>(
    nodes: &'p [PlanNode<'db>],
    inner: &mut Vec<(&'p str, u64)>,
    out: &mut Vec<Access<'p, 'db>>,
) -> bool {
    for n in nodes {
        match n {
            PlanNode::Task(t) => {
                for a in &t.args {
                    if let TaskArg::Tile {
                        direction, view, ..
                    } = a
                    {
                        if direction.reads() {
                            out.push(Access {
                                view,
                                base: in_base(view),
                                write: false,
                                inner: inner.clone(),
                            });
                        }
                        if direction.writes() {
                            out.push(Access {
                                view,
                                base: in_base(view),
                                write: true,
                                inner: inner.clone(),
                            });
                        }
                    }
                }
            }
            PlanNode::Loop { vars, body, .. } => {
                let depth = inner.len();
                for v in vars {
                    let Some(e) = race_extent(v) else {
                        return false;
                    };
                    inner.push((v.name.as_str(), e));
                }
                let ok = collect_accesses(body, inner, out);
                inner.truncate(depth);
                if !ok {
                    return false;
                }
            }
            PlanNode::Consume {
                var, extent, body, ..
            } => {
                let Some(e) = extent else { return false };
                inner.push((var.as_str(), *e));
                let ok = collect_accesses(body, inner, out);
                inner.pop();
                if !ok {
                    return false;
                }
            }
            PlanNode::Pipeline { stages, .. } => {
                if !collect_accesses(stages, inner, out) {
                    return false;
                }
            }
            PlanNode::Conditional { branches, .. } => {
                for b in branches {
                    if !collect_accesses(&b.body, inner, out) {
                        return false;
                    }
                }
            }
            PlanNode::SlotLoad { view, .. } => out.push(Access {
                view,
                base: in_base(view),
                write: false,
                inner: inner.clone(),
            }),
            PlanNode::Send { .. } => {}
        }
    }
    true
}

/// What runs the iterations that may race: a parallel loop, or a `consume` block (an
/// iteration per task received, in no order among themselves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Loop(LoopKind),
    Consume,
}

impl Scope {
    /// As the message names it: "this `P` loop".
    fn name(self) -> &'static str {
        match self {
            Scope::Loop(LoopKind::Selected) => "`P.sel` loop",
            Scope::Loop(_) => "`P` loop",
            Scope::Consume => "`consume` block",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Scope::Loop(_) => "the parallel loop",
            Scope::Consume => "the consume block: an iteration per task received, in no order",
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_loop<'p, 'db>(
    scope: Scope,
    vars: &[LoopVar],
    own: &[(&'p str, u64)],
    outer: &[(&'p str, u64)],
    body: &'p [PlanNode<'db>],
    (loop_span, callee): (Span<'db>, Option<Span<'db>>),
    call_site: Option<Span<'db>>,
    out: &mut Vec<Diag<'db>>,
) {
    let mut accesses = Vec::new();
    if !collect_accesses(body, &mut Vec::new(), &mut accesses) {
        return;
    }
    let space_size = |a: &Access<'p, 'db>| {
        outer
            .iter()
            .chain(own)
            .chain(&a.inner)
            .try_fold(1u64, |acc, (_, e)| acc.checked_mul(*e))
    };
    let mut reported: HashSet<(usize, usize)> = HashSet::new();
    for i in 0..accesses.len() {
        for j in i..accesses.len() {
            let (a, b) = (&accesses[i], &accesses[j]);
            if !(a.write || b.write) || a.base.tensor.name != b.base.tensor.name {
                continue;
            }
            // An `InOut` argument's read against its own write is the write-write race.
            if std::ptr::eq(a.view, b.view) && a.write != b.write {
                continue;
            }
            if reported.contains(&(i, j)) {
                continue;
            }
            if pinned(a, b, own) {
                continue;
            }
            let dims = a.base.indices.len().min(b.base.indices.len());
            let mut found = overlap::overlap(outer, own, &side(a), &side(b), dims);
            // What the search cannot decide, a small enough loop still can by enumeration.
            let small = |x| space_size(x).is_some_and(|t| t <= RACE_BUDGET);
            if found == Overlap::Undecided && small(a) && small(b) {
                found = enumerated_overlap(outer, own, &side(a), &side(b), dims);
            }
            let (pa, pb, region) = match found {
                Overlap::None => continue,
                Overlap::Witness(pa, pb, region) => (pa, pb, region),
                Overlap::Undecided => {
                    reported.insert((i, j));
                    let points = space_size(a).zip(space_size(b)).map(|(x, y)| x.max(y));
                    out.push(undecided(scope, a, b, points, loop_span, call_site));
                    continue;
                }
            };
            reported.insert((i, j));
            let (write, other) = if b.write { (b, a) } else { (a, b) };
            let (pw, po) = if b.write { (&pb, &pa) } else { (&pa, &pb) };
            let code = if a.write && b.write {
                Code::WriteWriteRace
            } else {
                Code::ReadWriteRace
            };
            let names: Vec<&str> = own.iter().map(|(n, _)| *n).collect();
            let show = |p: &Vec<i64>| {
                let parts: Vec<String> = names
                    .iter()
                    .zip(p)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                format!("({})", parts.join(", "))
            };
            let region_text = region_text(&write.base.tensor.name, &region);
            let scope_name = scope.name();
            let message = if code == Code::WriteWriteRace {
                // Two writes: the witnesses in order.
                let (first, second) = if pw <= po { (pw, po) } else { (po, pw) };
                format!(
                    "`{}` is written by parallel iterations {} and {} of this {scope_name}, which both write {region_text}",
                    write.view.text(),
                    show(first),
                    show(second)
                )
            } else {
                format!(
                    "`{}` is written by iteration {} of this {scope_name} and read as `{}` by iteration {}: both touch {region_text}, with no order between them",
                    write.view.text(),
                    show(pw),
                    other.view.text(),
                    show(po)
                )
            };
            let mut message = message;
            for (k, v) in vars.iter().enumerate() {
                let (Some(a), Some(b)) = (pw.get(k), po.get(k)) else {
                    continue;
                };
                let n = a.max(b) + 1;
                if v.axis_kind == AxisKind::DenseDyn {
                    message.push_str(&format!(
                        "; `{}` runs over `{}`, a `DenseDyn` axis: this happens at every binding of at least {n} iterations",
                        v.name, v.axis
                    ));
                } else if callers_axis(v) {
                    message.push_str(&format!(
                        "; `{}` runs over an axis the workload's caller gives: this happens in every call whose axis has {n} or more iterations",
                        v.name
                    ));
                } else if data_row(v) {
                    message.push_str(&format!(
                        "; `{}` runs over a row of `{}`, read from tensor data at run time: this happens whenever a row selects {n} or more entries",
                        v.name, v.axis
                    ));
                } else if data_total(v) {
                    message.push_str(&format!(
                        "; `{}` runs over every element of `{}`, whose lengths are tensor data read at run time: this happens whenever they add up to {n} or more",
                        v.name, v.axis
                    ));
                }
            }
            let mut d = Diag::new(code, write.view.span, message);
            if !std::ptr::eq(write.view, other.view) {
                d = d.with_related(
                    other.view.span,
                    if code == Code::WriteWriteRace {
                        "the other write is here"
                    } else {
                        "the read is here"
                    },
                );
            }
            d = d.with_related(loop_span, scope.label());
            if let Some(site) = call_site {
                d = d.with_related(site, "for this call");
            }
            if vars.len() == 1
                && let Some(callee) = callee
            {
                let from = if scope == Scope::Loop(LoopKind::Selected) {
                    "P.sel"
                } else {
                    "P"
                };
                d = d.with_fix(
                    format!("make the loop sequential: `{from}` → `P.seq`"),
                    vec![(callee, "P.seq".to_string())],
                );
            }
            out.push(d);
        }
    }
}

/// The overlap by enumerating both accesses' iteration spaces (each at most `RACE_BUDGET`
/// points): what `overlap::overlap` decides without enumerating, and the proof of it in the
/// property test.
fn enumerated_overlap(
    outer: &[(&str, u64)],
    own: &[(&str, u64)],
    a: &Side,
    b: &Side,
    dims: usize,
) -> Overlap {
    let points_of = |side: &Side| -> Vec<Point> {
        let mut space: Vec<(&str, u64)> = outer.to_vec();
        space.extend(own.iter().copied());
        space.extend(side.inner.iter().copied());
        let mut pts = Vec::new();
        enumerate(&space, &mut vec![0; space.len()], 0, &mut |values| {
            let env = |v: &str| space.iter().position(|(n, _)| *n == v).map(|i| values[i]);
            let region: Option<Vec<Coord>> = side
                .indices
                .iter()
                .map(|i| match i {
                    ViewIndex::At(aff) => eval_affine(aff, &env).map(Coord::At),
                    ViewIndex::Range(lo, hi) => Some(Coord::Range(*lo, *hi)),
                    ViewIndex::Slice(start, len) => eval_affine(start, &env)
                        .map(|s| Coord::Range(s, s.saturating_add(*len as i64))),
                })
                .collect();
            if let Some(region) = region {
                let o = values[..outer.len()].to_vec();
                let p = values[outer.len()..outer.len() + own.len()].to_vec();
                pts.push((o, p, region));
            }
        });
        pts.sort_unstable_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        pts.dedup();
        pts
    };
    match conflict(&points_of(a), &points_of(b), dims) {
        Some((pa, pb, region)) => Overlap::Witness(pa, pb, region),
        None => Overlap::None,
    }
}

/// A view's region in the declared tensor it reads, borrowed when it is that tensor.
fn in_base<'p, 'db>(view: &'p View<'db>) -> std::borrow::Cow<'p, View<'db>> {
    match view.tensor.origin {
        crate::values::TensorOrigin::View { .. } => std::borrow::Cow::Owned(view.in_base()),
        _ => std::borrow::Cow::Borrowed(view),
    }
}

fn side<'x>(a: &'x Access) -> Side<'x> {
    Side {
        indices: &a.base.indices,
        inner: &a.inner,
    }
}

/// WSP306: a pair of accesses whose race neither the search nor enumeration decided.
fn undecided<'db>(
    scope: Scope,
    a: &Access<'_, 'db>,
    b: &Access<'_, 'db>,
    points: Option<u64>,
    loop_span: Span<'db>,
    call_site: Option<Span<'db>>,
) -> Diag<'db> {
    let (write, other) = if a.write { (a, b) } else { (b, a) };
    let points = points.map_or("more than 2^64".to_string(), |n| n.to_string());
    let message = format!(
        "whether parallel iterations of this {} race on `{}` through `{}` and `{}` is not decided: the search for two iterations touching a common element gave up after {} tries, and the {points} iteration points of the loops around them are too many to enumerate; check the indices by hand or make the loop sequential",
        scope.name(),
        write.base.tensor.name,
        write.view.text(),
        other.view.text(),
        overlap::SEARCH_BUDGET
    );
    let mut d = Diag::new(Code::RaceUndecided, write.view.span, message);
    if !std::ptr::eq(write.view, other.view) {
        d = d.with_related(other.view.span, "the other access is here");
    }
    d = d.with_related(loop_span, scope.label());
    if let Some(site) = call_site {
        d = d.with_related(site, "for this call");
    }
    d
}

fn enumerate(space: &[(&str, u64)], values: &mut Vec<i64>, i: usize, f: &mut impl FnMut(&[i64])) {
    if i == space.len() {
        f(values);
        return;
    }
    for v in 0..space[i].1 {
        values[i] = v as i64;
        enumerate(space, values, i + 1, f);
    }
}

fn eval_affine(a: &Affine, env: &impl Fn(&str) -> Option<i64>) -> Option<i64> {
    let mut v = a.constant;
    for (var, c) in &a.terms {
        v = v.checked_add(c.checked_mul(env(var)?)?)?;
    }
    Some(v)
}

type Point = (Vec<i64>, Vec<i64>, Vec<Coord>);

/// Two points of the two accesses in the same outer iteration, different iterations of the
/// checked loop, whose regions overlap.
fn conflict(a: &[Point], b: &[Point], dims: usize) -> Option<(Vec<i64>, Vec<i64>, Vec<Coord>)> {
    // Fast path: all coordinates are points; hash b's regions.
    let all_at = |pts: &[Point]| {
        pts.iter()
            .all(|(_, _, r)| r.iter().all(|c| matches!(c, Coord::At(_))))
    };
    if all_at(a) && all_at(b) {
        type Iterations<'x> = Vec<&'x [i64]>;
        let mut seen: HashMap<(&[i64], &[Coord]), Iterations> = HashMap::new();
        for (o, p, r) in b {
            let e = seen.entry((o.as_slice(), &r[..dims])).or_default();
            if e.len() < 2 && !e.contains(&p.as_slice()) {
                e.push(p);
            }
        }
        for (o, p, r) in a {
            if let Some(ps) = seen.get(&(o.as_slice(), &r[..dims]))
                && let Some(q) = ps.iter().find(|q| **q != p.as_slice())
            {
                return Some((p.clone(), q.to_vec(), r[..dims].to_vec()));
            }
        }
        return None;
    }
    for (oa, pa, ra) in a {
        for (ob, pb, rb) in b {
            if oa == ob && pa != pb && ra.iter().zip(rb).all(|(x, y)| overlaps(*x, *y)) {
                let region = ra.iter().zip(rb).take(dims);
                let region = region.map(|(x, y)| overlap::common(*x, *y)).collect();
                return Some((pa.clone(), pb.clone(), region));
            }
        }
    }
    None
}

/// Whether two accesses index their tensor the same way, with every variable of the checked
/// loop alone in some index (`X[b, 2*h + 1]`): then equal regions mean equal iterations, so
/// no two iterations conflict, and nothing needs enumerating.
fn pinned(a: &Access, b: &Access, own: &[(&str, u64)]) -> bool {
    a.base.indices == b.base.indices
        && own.iter().all(|(v, _)| {
            a.base.indices.iter().any(
                |i| matches!(i, ViewIndex::At(aff) if matches!(aff.terms.as_slice(), [(w, _)] if w == v)),
            )
        })
}

fn overlaps(x: Coord, y: Coord) -> bool {
    match (x, y) {
        (Coord::At(a), Coord::At(b)) => a == b,
        (Coord::At(a), Coord::Range(lo, hi)) | (Coord::Range(lo, hi), Coord::At(a)) => {
            lo <= a && a < hi
        }
        (Coord::Range(a, b), Coord::Range(c, d)) => a < d && c < b,
    }
}

fn region_text(tensor: &str, region: &[Coord]) -> String {
    if region.is_empty() {
        return format!("all of `{tensor}`");
    }
    let parts: Vec<String> = region
        .iter()
        .map(|c| match c {
            Coord::At(i) => i.to_string(),
            Coord::Range(lo, hi) => format!("{lo}:{hi}"),
        })
        .collect();
    format!("`{tensor}[{}]`", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OUTER: [&str; 2] = ["o0", "o1"];
    const OWN: [&str; 2] = ["p0", "p1"];
    /// Both accesses name their inner loops alike: they are still different loops.
    const INNER: [&str; 2] = ["k0", "k1"];

    /// An index over the variables `names` a side sees.
    fn index(names: Vec<&'static str>) -> impl Strategy<Value = ViewIndex> {
        let n = names.len();
        let affine = move |(cs, k): (Vec<i64>, i64)| {
            let mut terms: Vec<(String, i64)> = names
                .iter()
                .zip(cs)
                .filter(|(_, c)| *c != 0)
                .map(|(v, c)| (v.to_string(), c))
                .collect();
            terms.sort();
            Affine { constant: k, terms }
        };
        let affine2 = affine.clone();
        let terms = move || (proptest::collection::vec(-3i64..=3, n), -3i64..=3);
        prop_oneof![
            3 => terms().prop_map(move |t| ViewIndex::At(affine(t))),
            1 => (0i64..5, 1i64..4).prop_map(|(lo, w)| ViewIndex::Range(lo, lo + w)),
            1 => (terms(), 1u64..4).prop_map(move |(t, w)| ViewIndex::Slice(affine2(t), w)),
        ]
    }

    type Case = (
        Vec<u64>,
        Vec<u64>,
        Vec<u64>,
        Vec<u64>,
        Vec<ViewIndex>,
        Vec<ViewIndex>,
    );

    /// Loops of up to two variables each (outer, checked, inner to each access), extents 0..4,
    /// and the two accesses' indices.
    fn case() -> impl Strategy<Value = Case> {
        let extents = |lo| proptest::collection::vec(0u64..4, lo..=2);
        (extents(0), extents(1), extents(0), extents(0)).prop_flat_map(|(o, p, ia, ib)| {
            let seen = |inner: usize| {
                let mut v: Vec<&'static str> = OUTER[..o.len()].to_vec();
                v.extend(&OWN[..p.len()]);
                v.extend(&INNER[..inner]);
                v
            };
            let a = proptest::collection::vec(index(seen(ia.len())), 0..=3);
            let b = proptest::collection::vec(index(seen(ib.len())), 0..=3);
            (
                Just(o.clone()),
                Just(p.clone()),
                Just(ia.clone()),
                Just(ib.clone()),
                a,
                b,
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The search decides every small loop, and as enumeration does: the same race, with
        /// the same witness, or none.
        #[test]
        fn search_agrees_with_enumeration((o, p, ia, ib, xa, xb) in case()) {
            let named = |names: &[&'static str], es: &[u64]| -> Vec<(&'static str, u64)> {
                names.iter().copied().zip(es.iter().copied()).collect()
            };
            let (outer, own) = (named(&OUTER, &o), named(&OWN, &p));
            let (inner_a, inner_b) = (named(&INNER, &ia), named(&INNER, &ib));
            let a = Side { indices: &xa, inner: &inner_a };
            let b = Side { indices: &xb, inner: &inner_b };
            let dims = xa.len().min(xb.len());
            let searched = overlap::overlap(&outer, &own, &a, &b, dims);
            let enumerated = enumerated_overlap(&outer, &own, &a, &b, dims);
            prop_assert_eq!(searched, enumerated);
        }
    }
}
