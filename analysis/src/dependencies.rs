//! Dependencies: what each task reads and writes (affine regions of tensors), races between
//! iterations of parallel loops (WSP301/302, decided from the affine indices by `races`, by
//! enumeration when the search gives up on a small loop, WSP306 otherwise), CSP channel
//! pairing (WSP303) and deadlock (WSP304), and tensors read but never written (WSP305).

use std::collections::{HashMap, HashSet};

use crate::diagnostics::{Code, Diag, Span};
use crate::eval::Eval;
use crate::races::{self, Coord, Overlap, Side};
use crate::values::{AxisKind, TensorOrigin, View, ViewIndex};
use crate::workloads::{LoopKind, LoopVar, PlanNode, TaskArg, plan_nodes};
use wsp_ir::Affine;

/// The most iteration points enumeration decides a race over, when the search cannot.
pub const RACE_BUDGET: u64 = 1 << 20;

/// The extent a race is decided for over a `DenseDyn` axis, whose size is whatever a run binds
/// (its default is one binding of many). Races only grow with a loop's size, and the search
/// tries small iterations first, so no race under it means none at any binding, and a witness
/// is a race at every binding that reaches those iterations.
const RUN_TIME_EXTENT: u64 = 1 << 31;

/// The extent `v` is checked over; `None` for a row whose length is data read at run time (a
/// ragged or sparse row from a tensor): the data bounds it, and only the run knows how.
fn race_extent(v: &LoopVar) -> Option<u64> {
    if v.axis_kind == AxisKind::DenseDyn {
        return Some(RUN_TIME_EXTENT);
    }
    v.extent
}

/// One access of a task to a tensor region, with the loops around it (inside the loop being
/// checked).
struct Access<'p, 'db> {
    view: &'p View<'db>,
    write: bool,
    /// Loop variables between the checked loop and the task, with extents.
    inner: Vec<(&'p str, u64)>,
}

/// WSP303: every channel a workload sends on is consumed in it, and the reverse.
pub(crate) fn check_channels<'db>(eval: &mut Eval<'db>, body: &[PlanNode<'db>]) {
    let mut sends: Vec<(String, Span<'db>)> = Vec::new();
    let mut consumes: Vec<(String, Span<'db>)> = Vec::new();
    collect_channels(body, &mut sends, &mut consumes);
    for (ch, span) in &sends {
        if !consumes.iter().any(|(c, _)| c == ch) {
            eval.push(Diag::new(Code::UnmatchedChannel, *span, format!("channel `{ch}` is sent on but never consumed: add `with consume({ch}) as t:` in the pipeline")));
        }
    }
    for (ch, span) in &consumes {
        if !sends.iter().any(|(c, _)| c == ch) {
            eval.push(Diag::new(Code::UnmatchedChannel, *span, format!("channel `{ch}` is consumed but nothing is sent on it: add `send({ch}, task)` to a stage")));
        }
    }
}

fn collect_channels<'db>(
    nodes: &[PlanNode<'db>],
    sends: &mut Vec<(String, Span<'db>)>,
    consumes: &mut Vec<(String, Span<'db>)>,
) {
    for n in plan_nodes(nodes) {
        let (list, channel, span) = match n {
            PlanNode::Send { channel, span, .. } => (&mut *sends, channel, span),
            PlanNode::Consume { channel, span, .. } => (&mut *consumes, channel, span),
            _ => continue,
        };
        if !list.iter().any(|(c, _)| c == channel) {
            list.push((channel.clone(), *span));
        }
    }
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
                            *kind,
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
                    LoopKind::Independent,
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
                                write: false,
                                inner: inner.clone(),
                            });
                        }
                        if direction.writes() {
                            out.push(Access {
                                view,
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
                write: false,
                inner: inner.clone(),
            }),
            PlanNode::Send { .. } => {}
        }
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn check_loop<'p, 'db>(
    kind: LoopKind,
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
            if !(a.write || b.write) || a.view.tensor.name != b.view.tensor.name {
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
            let dims = a.view.indices.len().min(b.view.indices.len());
            let mut found = races::overlap(outer, own, &side(a), &side(b), dims);
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
                    out.push(undecided(kind, a, b, points, loop_span, call_site));
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
            let region_text = region_text(&write.view.tensor.name, &region);
            let loop_name = match kind {
                LoopKind::Selected => "P.sel",
                _ => "P",
            };
            let message = if code == Code::WriteWriteRace {
                format!(
                    "`{}` is written by parallel iterations {} and {} of this `{loop_name}` loop, which both write {region_text}",
                    write.view.text(),
                    show(pw),
                    show(po)
                )
            } else {
                format!(
                    "`{}` is written by iteration {} of this `{loop_name}` loop and read as `{}` by iteration {}: both touch {region_text}, with no order between them",
                    write.view.text(),
                    show(pw),
                    other.view.text(),
                    show(po)
                )
            };
            let mut message = message;
            for (k, v) in vars.iter().enumerate() {
                let bound_at_run_time = v.axis_kind == AxisKind::DenseDyn;
                if let (true, Some(a), Some(b)) = (bound_at_run_time, pw.get(k), po.get(k)) {
                    message.push_str(&format!(
                        "; `{}` runs over `{}`, a `DenseDyn` axis: this happens at every binding of at least {} iterations",
                        v.name,
                        v.axis,
                        a.max(b) + 1
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
            d = d.with_related(loop_span, "the parallel loop");
            if let Some(site) = call_site {
                d = d.with_related(site, "for this call");
            }
            if kind == LoopKind::Independent
                && vars.len() == 1
                && let Some(callee) = callee
            {
                d = d.with_fix(
                    "make the loop sequential: `P` → `P.seq`",
                    vec![(callee, "P.seq".to_string())],
                );
            }
            out.push(d);
        }
    }
}

/// The overlap by enumerating both accesses' iteration spaces (each at most `RACE_BUDGET`
/// points): what `races::overlap` decides without enumerating, and the proof of it in the
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

fn side<'x>(a: &'x Access) -> Side<'x> {
    Side {
        indices: &a.view.indices,
        inner: &a.inner,
    }
}

/// WSP306: a pair of accesses whose race neither the search nor enumeration decided.
fn undecided<'db>(
    kind: LoopKind,
    a: &Access<'_, 'db>,
    b: &Access<'_, 'db>,
    points: Option<u64>,
    loop_span: Span<'db>,
    call_site: Option<Span<'db>>,
) -> Diag<'db> {
    let (write, other) = if a.write { (a, b) } else { (b, a) };
    let loop_name = match kind {
        LoopKind::Selected => "P.sel",
        _ => "P",
    };
    let points = points.map_or("more than 2^64".to_string(), |n| n.to_string());
    let message = format!(
        "whether parallel iterations of this `{loop_name}` loop race on `{}` through `{}` and `{}` is not decided: the search for two iterations touching a common element gave up after {} tries, and the {points} iteration points of the loops around them are too many to enumerate; check the indices by hand or make the loop sequential",
        write.view.tensor.name,
        write.view.text(),
        other.view.text(),
        races::SEARCH_BUDGET
    );
    let mut d = Diag::new(Code::RaceUndecided, write.view.span, message);
    if !std::ptr::eq(write.view, other.view) {
        d = d.with_related(other.view.span, "the other access is here");
    }
    d = d.with_related(loop_span, "the parallel loop");
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
                return Some((pa.clone(), pb.clone(), ra[..dims].to_vec()));
            }
        }
    }
    None
}

/// Whether two accesses index their tensor the same way, with every variable of the checked
/// loop alone in some index (`X[b, 2*h + 1]`): then equal regions mean equal iterations, so
/// no two iterations conflict, and nothing needs enumerating.
fn pinned(a: &Access, b: &Access, own: &[(&str, u64)]) -> bool {
    a.view.indices == b.view.indices
        && own.iter().all(|(v, _)| {
            a.view.indices.iter().any(
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

/// WSP305 over a set of plans: tensors read, never written by any task, and without `init`.
pub fn read_never_written<'db>(plans: &[&[PlanNode<'db>]]) -> Vec<Diag<'db>> {
    let mut reads: Vec<&View<'db>> = Vec::new();
    let mut written: HashSet<&str> = HashSet::new();
    for n in plans.iter().flat_map(|p| plan_nodes(p)) {
        crate::work::step(1);
        match n {
            PlanNode::Task(t) => {
                for a in &t.args {
                    if let TaskArg::Tile {
                        direction, view, ..
                    } = a
                    {
                        if direction.writes() {
                            written.insert(&view.tensor.name);
                        } else {
                            reads.push(view);
                        }
                    }
                }
            }
            PlanNode::SlotLoad { view, .. } => reads.push(view),
            _ => {}
        }
    }
    let mut out: Vec<Diag<'db>> = Vec::new();
    let mut done: HashSet<&str> = HashSet::new();
    for v in reads {
        crate::work::step(1);
        let t = &v.tensor;
        if t.init.is_some()
            || t.origin != TensorOrigin::Declared
            || written.contains(t.name.as_str())
            || !done.insert(t.name.as_str())
        {
            continue;
        }
        out.push(
            Diag::new(
                Code::ReadNeverWritten,
                v.span,
                format!("`{}` is read here but no task writes it and it has no `init`, so it is all zeros; give it an `init=` or write it first", t.name),
            )
            .with_related(t.def, format!("`{}` is declared here", t.name)),
        );
    }
    out
}

/// A stage's channel operations, loops unrolled.
enum Action<'p, 'db> {
    Send(&'p str, Span<'db>),
    Consume(&'p str, Vec<Action<'p, 'db>>, Span<'db>),
}

/// Steps simulated before giving up on a pipeline (no diagnostic then).
const DEADLOCK_BUDGET: usize = 1 << 20;

fn actions<'p, 'db>(
    nodes: &'p [PlanNode<'db>],
    out: &mut Vec<Action<'p, 'db>>,
    budget: &mut usize,
) -> Option<()> {
    for n in nodes {
        *budget = budget.checked_sub(1)?;
        match n {
            PlanNode::Send { channel, span, .. } => out.push(Action::Send(channel, *span)),
            PlanNode::Consume {
                channel,
                body,
                span,
                ..
            } => {
                let mut inner = Vec::new();
                actions(body, &mut inner, budget)?;
                out.push(Action::Consume(channel, inner, *span));
            }
            PlanNode::Loop { vars, body, .. } => {
                let mut count = 1u64;
                for v in vars {
                    count = count.checked_mul(v.extent?)?;
                }
                let mut once = Vec::new();
                actions(body, &mut once, budget)?;
                if once.is_empty() {
                    continue;
                }
                for _ in 1..count {
                    actions(body, out, budget)?;
                }
                out.extend(once);
            }
            // What a predicate selects is known only at run time; a pipeline that sends or
            // consumes inside one is not simulated.
            PlanNode::Conditional { branches, .. } => {
                let mut probe = Vec::new();
                for b in branches {
                    actions(&b.body, &mut probe, budget)?;
                }
                if !probe.is_empty() {
                    return None;
                }
            }
            PlanNode::Pipeline { .. } => return None,
            PlanNode::Task(_) | PlanNode::SlotLoad { .. } => {}
        }
    }
    Some(())
}

enum Frame<'a, 'p, 'db> {
    Seq(&'a [Action<'p, 'db>], usize),
    /// Receiving on a channel until it is empty and every sender has finished.
    Receive(&'p str, &'a [Action<'p, 'db>], Span<'db>),
    /// A rendezvous send waiting for its receiver.
    Handoff(&'p str, Span<'db>),
}

/// WSP304: simulates each pipeline's stages over bounded channels; a state where no stage can
/// move and some have not finished is a deadlock.
pub fn deadlocks<'db>(
    body: &[PlanNode<'db>],
    depth_of: &dyn Fn(&str) -> Option<u64>,
) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    let pipelines = plan_nodes(body).filter_map(|n| match n {
        PlanNode::Pipeline { stages, span } => Some((stages, *span)),
        _ => None,
    });
    'pipelines: for (stages, span) in pipelines {
        let mut budget = DEADLOCK_BUDGET;
        let mut programs = Vec::new();
        for stage in stages {
            let mut acts = Vec::new();
            if actions(std::slice::from_ref(stage), &mut acts, &mut budget).is_none() {
                continue 'pipelines;
            }
            programs.push(acts);
        }
        if let Some(d) = simulate(&programs, span, depth_of) {
            out.push(d);
        }
    }
    out
}

fn sends_on(actions: &[Action], ch: &str) -> bool {
    actions.iter().any(|a| match a {
        Action::Send(c, _) => *c == ch,
        Action::Consume(_, body, _) => sends_on(body, ch),
    })
}

fn simulate<'db>(
    programs: &[Vec<Action<'_, 'db>>],
    span: Span<'db>,
    depth_of: &dyn Fn(&str) -> Option<u64>,
) -> Option<Diag<'db>> {
    let mut stacks: Vec<Vec<Frame>> = programs
        .iter()
        .map(|p| vec![Frame::Seq(p.as_slice(), 0)])
        .collect();
    let mut queued: HashMap<&str, u64> = HashMap::new();
    let mut steps = 0usize;
    loop {
        let mut progress = false;
        for i in 0..stacks.len() {
            // Run stage i until it blocks or finishes.
            loop {
                steps += 1;
                if steps > DEADLOCK_BUDGET {
                    return None;
                }
                let finished: Vec<bool> = stacks.iter().map(Vec::is_empty).collect();
                let Some(top) = stacks[i].last_mut() else {
                    break;
                };
                match top {
                    Frame::Seq(acts, pc) => {
                        let Some(action) = acts.get(*pc) else {
                            stacks[i].pop();
                            progress = true;
                            continue;
                        };
                        match action {
                            Action::Send(ch, s) => {
                                let depth = depth_of(ch)?;
                                let q = queued.entry(ch).or_default();
                                if *q >= depth.max(1) {
                                    break;
                                }
                                *q += 1;
                                *pc += 1;
                                if depth == 0 {
                                    stacks[i].push(Frame::Handoff(ch, *s));
                                }
                            }
                            Action::Consume(ch, body, s) => {
                                *pc += 1;
                                stacks[i].push(Frame::Receive(ch, body.as_slice(), *s));
                            }
                        }
                        progress = true;
                    }
                    Frame::Receive(ch, body, _) => {
                        let q = queued.entry(ch).or_default();
                        if *q > 0 {
                            *q -= 1;
                            let body = *body;
                            stacks[i].push(Frame::Seq(body, 0));
                            progress = true;
                        } else {
                            let ch = *ch;
                            let open = programs.iter().enumerate().any(|(j, p)| !finished[j] && j != i && sends_on(p, ch))
                                || stacks[i].iter().any(|f| matches!(f, Frame::Seq(a, pc) if sends_on(&a[(*pc).min(a.len())..], ch)));
                            if open {
                                break;
                            }
                            stacks[i].pop();
                            progress = true;
                        }
                    }
                    Frame::Handoff(ch, _) => {
                        if queued.get(*ch).copied().unwrap_or(0) > 0 {
                            break;
                        }
                        stacks[i].pop();
                        progress = true;
                    }
                }
            }
        }
        if stacks.iter().all(Vec::is_empty) {
            return None;
        }
        if !progress {
            break;
        }
    }
    // Deadlock: say where each unfinished stage waits.
    let mut d = Diag::new(Code::Deadlock, span, String::new());
    let mut waits = Vec::new();
    for (i, stack) in stacks.iter().enumerate() {
        let Some(top) = stack.last() else { continue };
        let (what, at) = match top {
            Frame::Receive(ch, _, s) => (
                format!("stage {} waits to receive on `{ch}`, which is empty", i + 1),
                *s,
            ),
            Frame::Handoff(ch, s) => (
                format!(
                    "stage {} waits for a receiver of `{ch}` (a rendezvous)",
                    i + 1
                ),
                *s,
            ),
            Frame::Seq(acts, pc) => match acts.get(*pc) {
                Some(Action::Send(ch, s)) => (
                    format!("stage {} waits to send on `{ch}`, which is full", i + 1),
                    *s,
                ),
                _ => continue,
            },
        };
        waits.push(what.clone());
        d = d.with_related(at, what);
    }
    d.message = format!("this pipeline deadlocks: {}", waits.join("; "));
    Some(d)
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
        prop_oneof![
            3 => (proptest::collection::vec(-3i64..=3, n), -3i64..=3).prop_map(move |(cs, k)| {
                let mut terms: Vec<(String, i64)> = names
                    .iter()
                    .zip(cs)
                    .filter(|(_, c)| *c != 0)
                    .map(|(v, c)| (v.to_string(), c))
                    .collect();
                terms.sort();
                ViewIndex::At(Affine { constant: k, terms })
            }),
            1 => (0i64..5, 1i64..4).prop_map(|(lo, w)| ViewIndex::Range(lo, lo + w)),
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
            let searched = races::overlap(&outer, &own, &a, &b, dims);
            let enumerated = enumerated_overlap(&outer, &own, &a, &b, dims);
            prop_assert_eq!(searched, enumerated);
        }
    }
}
