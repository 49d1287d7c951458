//! WSP303 (unmatched channel): every channel a workload sends on is consumed in it, and the
//! reverse. Page: docs/diagnostics/WSP303.md.

use crate::diagnostics::{Code, Diag, Span};
use crate::workloads::{PlanNode, plan_nodes};

/// WSP303: every channel a workload sends on is consumed in it, and the reverse.
pub(crate) fn check<'db>(body: &[PlanNode<'db>]) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    let mut sends: Vec<(String, Span<'db>)> = Vec::new();
    let mut consumes: Vec<(String, Span<'db>)> = Vec::new();
    collect_channels(body, &mut sends, &mut consumes);
    for (ch, span) in &sends {
        if !consumes.iter().any(|(c, _)| c == ch) {
            out.push(Diag::new(Code::UnmatchedChannel, *span, format!("channel `{ch}` is sent on but never consumed: add `with consume({ch}) as t:` in the pipeline")));
        }
    }
    for (ch, span) in &consumes {
        if !sends.iter().any(|(c, _)| c == ch) {
            out.push(Diag::new(Code::UnmatchedChannel, *span, format!("channel `{ch}` is consumed but nothing is sent on it: add `send({ch}, task)` to a stage")));
        }
    }
    out
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
