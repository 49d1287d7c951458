//! The kernels of a file checked for `ascend_npu`, against what `wsp emit` can make of them:
//! - WSP506 (docs/diagnostics/WSP506.md): the tiles do not fit an Ascend AICore's on-chip
//!   buffers (UB, L1, L0A/B/C), placed by the plan emit places them with (`wsp_ir::buffers`);
//! - WSP507 (docs/diagnostics/WSP507.md): an op has no AICore form (`wsp_ir::instructions`);
//! - WSP508 (docs/diagnostics/WSP508.md): a tensor is a view of another (`X.T`), which the
//!   emitted tree would hold as a tensor of its own.

use wsp_syntax::ast::Stmt;

use super::programs::program_targets;
use crate::diagnostics::{Code, Diag, Severity, Span};
use crate::eval::item_value;
use crate::files::File;
use crate::items::{Item, ItemKind, module_items};
use crate::kernels::lower_kernel;
use crate::kernels::{kernel_body, kernel_signature};
use crate::values::Value;
use crate::values::schedule::Target;
use wsp_ir::instructions::Lowering;

/// Whether the file is checked for `ascend_npu`: the workspace adds it (`wsp check --target
/// ascend_npu`, `wsp emit`), or one of its programs is checked for it.
#[salsa::tracked]
fn checked_for_npu(db: &dyn salsa::Database, file: File) -> bool {
    if file
        .workspace(db)
        .extra_targets(db)
        .contains(&Target::AscendNpu)
    {
        return true;
    }
    module_items(db, file).iter().any(|&item| {
        matches!(item.kind(db), ItemKind::Assign | ItemKind::Expr)
            && matches!(&item_value(db, item).value,
                Value::Program(s) if program_targets(db, item, s).contains(&Target::AscendNpu))
    })
}

#[salsa::tracked(returns(ref))]
pub fn npu_kernel_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    if !checked_for_npu(db, item.file(db)) {
        return Vec::new();
    }
    let signature = kernel_signature(db, item);
    let body = kernel_body(db, item);
    // A kernel with errors is not lowered; a custom C++ kernel has no tiles of ours to place.
    let mut diags = signature.diags.iter().chain(&body.diags);
    if signature.cpp.is_some() || diags.any(|d| d.code.severity() == Severity::Error) {
        return Vec::new();
    }
    let mut out: Vec<Diag<'db>> = body
        .ops
        .iter()
        .filter_map(|op| {
            let row = wsp_ir::instructions::lookup(op.op)?;
            let Lowering::Unsupported(why) = row.lowering else {
                return None;
            };
            Some(Diag::new(
                Code::NoAicoreForm,
                Span {
                    item,
                    range: op.range,
                },
                format!("`pto.{}` has no AICore form, so `wsp emit` cannot write this kernel for ascend_npu: {why}", op.op),
            ))
        })
        .collect();
    let kernel = lower_kernel(db, item);
    let Err(over) = wsp_ir::buffers::plan(&kernel, &wsp_ir::buffers::ASCEND_910B) else {
        return out;
    };
    let name_range = match item.stmt(db) {
        Some(Stmt::FunctionDef(f)) => f.name().map(|n| n.text_range()),
        _ => None,
    };
    let range = body
        .ops
        .get(over.op as usize)
        .map(|op| op.range)
        .or(name_range)
        .unwrap_or_default();
    let memory = over.memory.name();
    let mut d = Diag::new(
        Code::OnChipOverflow,
        Span { item, range },
        format!(
            "kernel `{}` needs {} of {memory} at this op; an Ascend 910B AICore has {}",
            kernel.name,
            kib(over.needed),
            kib(over.available)
        ),
    );
    if let Some(r) = name_range {
        d = d.with_related(
            Span { item, range: r },
            "split its tiles into smaller ones (more tasks over a finer view) or use a narrower dtype",
        );
    }
    out.push(d);
    out
}

/// `524288 bytes (512 KiB)`
fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{bytes} bytes ({} KiB)", bytes / 1024)
    } else {
        format!("{bytes} bytes ({:.1} KiB)", bytes as f64 / 1024.0)
    }
}

/// WSP508: a view (`Xt = X.T`) in a file checked for `ascend_npu`: the emitted tree gives
/// every tensor its own bytes, so a view would read and write a copy.
pub fn npu_view_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let Value::Tensor(t) = &item_value(db, item).value else {
        return Vec::new();
    };
    let crate::values::TensorOrigin::View { base, .. } = &t.origin else {
        return Vec::new();
    };
    if t.name != *item.name(db) || !checked_for_npu(db, item.file(db)) {
        return Vec::new();
    }
    vec![Diag::new(
        Code::NpuView,
        t.def,
        format!(
            "`{}` is a view of `{}`, and `wsp emit` does not lay out views for `ascend_npu` yet: the tree would give `{}` bytes of its own; run it on `cpu_sim`, or declare the tensor in the order the kernels read",
            t.name, base.name, t.name
        ),
    )
    .with_related(base.def, format!("`{}` is declared here", base.name))]
}
