//! Layouts: collectives and `relayout` at module level, and the join of the layouts a task's
//! views bring to each loop variable (WSP401).

use wsp_syntax::ast::{self, AstNode};

use crate::diagnostics::{Code, Diag, Span};
use crate::eval::Eval;
use crate::types::shape_text;
use crate::values::{DimLayout, Layout, Tensor, TensorOrigin, Value};
use crate::vocabulary::Builtin;
use crate::workloads::{PlanNode, TaskArg, plan_nodes};

const REDUCE_OPS: &[&str] = &["sum", "max", "min"];

/// `relayout`, `allreduce`, `allgather`, `reduce_scatter`: a new tensor from another.
pub(crate) fn collective<'db>(
    eval: &mut Eval<'db>,
    b: Builtin,
    c: &ast::CallExpr,
) -> Option<Value<'db>> {
    let range = c.syntax().text_range();
    let what = format!("`{}`", b.name());
    let params: &[&str] = match b {
        Builtin::Relayout => &["tensor", "layout"],
        Builtin::Allgather => &["tensor", "mesh_axis"],
        _ => &["tensor", "op?", "mesh_axis"],
    };
    let args = eval.bind(c, &what, params)?;
    let (tv, tr) = args.get(0)?.clone();
    let source = match tv {
        Value::Tensor(t) => t,
        Value::Unknown => return None,
        v => {
            eval.error(
                Code::WrongKind,
                tr,
                format!("{what} takes a tensor, not {}", v.describe()),
            );
            return None;
        }
    };
    let derived = |shape: Vec<u64>, layout: Layout| Tensor {
        name: String::new(),
        def: eval.span(range),
        shape,
        dtype: source.dtype,
        layout,
        init: None,
        origin: TensorOrigin::Derived {
            op: b.name(),
            source: source.name.clone(),
        },
    };
    if b == Builtin::Relayout {
        let (lv, lr) = args.get(1)?.clone();
        let layout = match lv {
            Value::Layout(l) => l,
            Value::Unknown => return None,
            v => {
                eval.error(
                    Code::WrongKind,
                    lr,
                    format!("`relayout` takes a TensorLayout, not {}", v.describe()),
                );
                return None;
            }
        };
        if layout.dims.len() != source.shape.len() {
            eval.error(
                Code::LayoutConflict,
                lr,
                format!(
                    "the layout has rank {} but `{}` {} has rank {}",
                    layout.dims.len(),
                    source.name,
                    shape_text(&source.shape),
                    source.shape.len()
                ),
            );
            return None;
        }
        return Some(Value::Tensor(derived(source.shape.clone(), layout)));
    }
    if let Some(i) = params.iter().position(|p| *p == "op?")
        && let Some((ov, or)) = args.get(i).cloned()
    {
        match ov {
            Value::Str(op) if REDUCE_OPS.contains(&op.as_str()) => {}
            Value::Unknown => return None,
            v => {
                eval.error(
                    Code::UnknownMember,
                    or,
                    format!(
                        "the reduction is \"sum\", \"max\" or \"min\", not {}",
                        v.describe()
                    ),
                );
                return None;
            }
        }
    }
    let mi = params.iter().position(|p| *p == "mesh_axis")?;
    let (mv, mr) = args.get(mi)?.clone();
    let mesh = match mv {
        Value::Int(m) if m >= 0 => m as u32,
        Value::Unknown => return None,
        v => {
            eval.error(
                Code::WrongKind,
                mr,
                format!(
                    "a mesh axis is a non-negative integer, not {}",
                    v.describe()
                ),
            );
            return None;
        }
    };
    let Some((dim, _)) = source.layout.mesh_axes().find(|(_, m)| *m == mesh) else {
        let d = Diag::new(
            Code::LayoutConflict,
            eval.span(tr),
            format!(
                "{what} over mesh axis {mesh}, but `{}` (layout {}) is not sharded on it",
                source.name, source.layout
            ),
        )
        .with_related(source.def, format!("`{}` is defined here", source.name));
        eval.push(d);
        return None;
    };
    let rank = source.shape.len();
    Some(Value::Tensor(match b {
        Builtin::Allgather => {
            let mut layout = source.layout.clone();
            layout.dims[dim] = DimLayout::Replicate;
            derived(source.shape.clone(), layout)
        }
        _ => {
            // The sharded dimension is summed away.
            let mut shape = source.shape.clone();
            shape.remove(dim);
            if shape.is_empty() {
                shape.push(1);
            }
            let mut layout = Layout::replicated(shape.len().max(1));
            if b == Builtin::ReduceScatter {
                layout.dims[0] = DimLayout::Shard(mesh);
            }
            let _ = rank;
            derived(shape, layout)
        }
    }))
}

/// WSP401: within one task, every view indexed by the same loop variable must agree on how
/// that dimension is sharded.
pub(crate) fn check_task_layouts<'db>(nodes: &[PlanNode<'db>], diags: &mut Vec<Diag<'db>>) {
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
}
