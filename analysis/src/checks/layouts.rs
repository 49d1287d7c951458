//! WSP401 (conflicting layouts): the views of one task indexed by the same loop variable must
//! agree on how that dimension is sharded. Page: docs/diagnostics/WSP401.md.

use crate::diagnostics::{Code, Diag, Span};
use crate::values::{DimLayout, Tensor};
use crate::workloads::{PlanNode, TaskArg, plan_nodes};

/// WSP401: within one task, every view indexed by the same loop variable must agree on how
/// that dimension is sharded.
pub(crate) fn check<'db>(nodes: &[PlanNode<'db>]) -> Vec<Diag<'db>> {
    let mut diags = Vec::new();
    for node in plan_nodes(nodes) {
        let PlanNode::Task(task) = node else {
            continue;
        };
        // (loop variable, mesh axis, view span, tensor, dimension)
        let mut seen: Vec<(String, u32, Span<'db>, &Tensor<'db>, usize)> = Vec::new();
        for arg in &task.args {
            let TaskArg::Tile { view, .. } = arg else {
                continue;
            };
            for (dim, idx) in view.indices.iter().enumerate() {
                let crate::values::ViewIndex::At(a) = idx else {
                    continue;
                };
                let [(var, _)] = a.terms.as_slice() else {
                    continue;
                };
                let DimLayout::Shard(m) = view.tensor.layout.dims[dim] else {
                    continue;
                };
                if let Some((_, other_m, other_span, other_t, other_dim)) =
                    seen.iter().find(|(v, m2, ..)| v == var && *m2 != m)
                {
                    let t = &view.tensor;
                    let mut fixed = t.layout.clone();
                    fixed.dims[dim] = DimLayout::Shard(*other_m);
                    let new_name = format!("{}_m{other_m}", t.name);
                    let layout_text = format!(
                        "TensorLayout.sharded(dim={dim}, rank={}, mesh_axis={other_m})",
                        t.shape.len()
                    );
                    let decl = Span {
                        item: task.span.item,
                        range: Default::default(),
                    };
                    let name_range = view.span.range;
                    let name_range = wsp_syntax::TextRange::at(
                        name_range.start(),
                        wsp_syntax::TextSize::of(t.name.as_str()),
                    );
                    let d = Diag::new(
                                Code::LayoutConflict,
                                view.span,
                                format!(
                                    "`{var}` indexes dimension {dim} of `{}`, sharded on mesh axis {m}, and dimension {other_dim} of `{}`, sharded on mesh axis {other_m}; insert a `relayout`",
                                    t.name, other_t.name
                                ),
                            )
                            .with_related(*other_span, format!("`{}` is sharded on mesh axis {other_m} here", other_t.name))
                            .with_fix(
                                format!("relayout `{}` onto mesh axis {other_m}", t.name),
                                vec![
                                    (decl, format!("{new_name} = relayout({}, {layout_text})\n\n\n", t.name)),
                                    (Span { item: view.span.item, range: name_range }, new_name.clone()),
                                ],
                            );
                    diags.push(d);
                } else {
                    seen.push((var.clone(), m, view.span, &view.tensor, dim));
                }
            }
        }
    }
    diags
}
