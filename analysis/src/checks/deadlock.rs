//! WSP304 (pipeline deadlock): each `P.pipe` pipeline's stages are simulated over bounded
//! channels; a state where no stage can move and some have not finished is a deadlock.
//! Page: docs/diagnostics/WSP304.md.

use std::collections::HashMap;

use crate::diagnostics::{Code, Diag, Span};
use crate::workloads::{PlanNode, plan_nodes};

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
