//! The kernels of a file checked for `ascend_npu`, against what `wsp emit` can make of them:
//! - WSP506 (docs/diagnostics/WSP506.md): the tiles do not fit an Ascend AICore's on-chip
//!   buffers (UB, L1, L0A/B/C), placed by the plan emit places them with (`wsp_ir::buffers`),
//!   bf16 math widened to f32 (`wsp_ir::widen`) and mixed kernels split as emit does;
//! - WSP507 (docs/diagnostics/WSP507.md): an op has no AICore form (`wsp_ir::instructions`);
//! - WSP509 (docs/diagnostics/WSP509.md): a kernel mixing cube and vector work cannot be
//!   split between the 910B's cores (`wsp_ir::split`);
//! - WSP508 (docs/diagnostics/WSP508.md): a view (`X.transpose(...)`) whose tiles have neither
//!   their rows nor their columns contiguous in its base, which no A2/A3 load reads; or a view
//!   given to a kernel that cannot read it so (`wsp_ir::layout`).

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
    let kernel = lower_kernel(db, item);
    let wsp_ir::kernel::KernelBody::Ops(ir_ops) = &kernel.body else {
        return Vec::new();
    };
    let mut out: Vec<Diag<'db>> = body
        .ops
        .iter()
        .zip(ir_ops)
        .filter_map(|(op, ir)| {
            let why = wsp_ir::instructions::no_form(ir, |o| {
                wsp_ir::buffers::tile_of(&kernel, ir_ops, o)
            })?;
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
    let name_range = match item.stmt(db) {
        Some(Stmt::FunctionDef(f)) => f.name().map(|n| n.text_range()),
        _ => None,
    };
    let arch = &wsp_ir::arch::A2A3;
    // The kernels `wsp emit` writes: the kernel with its bf16 math in f32, or its parts for
    // the 910B's separate cube and vector cores, each op with the kernel's op it comes from.
    let (lowered, widened_from) = match wsp_ir::widen::widen_bf16(&kernel) {
        Some((k, from)) => (k, Some(from)),
        None => (kernel.clone(), None),
    };
    let pieces: Vec<(wsp_ir::Kernel, Option<Vec<u32>>)> = match wsp_ir::split::split_kernel(
        &lowered, arch,
    ) {
        Ok(None) => vec![(lowered.clone(), None)],
        Ok(Some(s)) => s
            .parts
            .into_iter()
            .map(|p| (p.kernel, Some(p.origin)))
            .collect(),
        Err(why) => {
            out.push(Diag::new(
                    Code::Unsplittable,
                    Span {
                        item,
                        range: name_range.unwrap_or_default(),
                    },
                    format!(
                        "kernel `{}` mixes cube and vector work, which an Ascend 910B runs on separate cores, and cannot be split between them: {why}",
                        kernel.name
                    ),
                ));
            return out;
        }
    };
    let Some((piece, over, origin)) = pieces.iter().find_map(|(k, origin)| {
        let over = wsp_ir::buffers::plan(k, &arch.on_chip).err()?;
        let op = match origin {
            Some(o) => *o.get(over.op as usize)?,
            None => over.op,
        };
        let op = match &widened_from {
            Some(from) => *from.get(op as usize)?,
            None => op,
        };
        Some((k, over, op))
    }) else {
        return out;
    };
    let range = body
        .ops
        .get(origin as usize)
        .map(|op| op.range)
        .or(name_range)
        .unwrap_or_default();
    let memory = over.memory.name();
    let part = if piece.name == kernel.name {
        String::new()
    } else {
        format!(" (in `{}`, its part for one core)", piece.name)
    };
    let mut d = Diag::new(
        Code::OnChipOverflow,
        Span { item, range },
        format!(
            "kernel `{}` needs {} of {memory} at this op{part}; an Ascend 910B AICore has {} for tiles",
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
    let crate::values::TensorOrigin::View { base, dims } = &t.origin else {
        return Vec::new();
    };
    if t.name != *item.name(db) || !checked_for_npu(db, item.file(db)) {
        return Vec::new();
    }
    // A tile is the view's last two dimensions: the tree reads it row by row (columns one
    // element apart) or column by column (rows one element apart), in the base's bytes.
    let mut base_strides = vec![1u64; base.shape.len()];
    for d in (0..base.shape.len().saturating_sub(1)).rev() {
        base_strides[d] = base_strides[d + 1].saturating_mul(base.shape[d + 1]);
    }
    let strides: Vec<u64> = dims
        .iter()
        .map(|d| {
            base_strides
                .get(d.base_dim as usize)
                .map_or(0, |s| s.saturating_mul(d.step))
        })
        .collect();
    let [.., rows, cols] = strides[..] else {
        return Vec::new();
    };
    if rows == 1 || cols == 1 {
        return Vec::new();
    }
    vec![Diag::new(
        Code::NpuView,
        t.def,
        format!(
            "`{}` is a view of `{}` whose tiles have rows {rows} and columns {cols} elements apart in `{}`'s bytes: an Ascend 910B (A2/A3) loads a tile whose rows or columns are contiguous, and `wsp emit` cannot lay this one out; keep the last dimension (or, for a matmul's right operand, the one before it) contiguous, or declare the tensor in the order the kernels read",
            t.name, base.name, base.name
        ),
    )
    .with_related(base.def, format!("`{}` is declared here", base.name))]
}

/// WSP508 for how a program gives views to its kernels, decided as `wsp emit` decides it
/// (`wsp_ir::layout`, over the program split for the 910B): a transposed view read by vector
/// work, a column view whose rows are not contiguous, or a parameter given both kinds. At the
/// program's `compile(...)`; the message names the kernel, the parameter and the view.
pub fn npu_program_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let Value::Program(schedule) = &item_value(db, item).value else {
        return Vec::new();
    };
    let Some(target) = &schedule.target else {
        return Vec::new();
    };
    if !checked_for_npu(db, item.file(db)) {
        return Vec::new();
    }
    let Some(program) = crate::lower::lower_program(db, item) else {
        return Vec::new();
    };
    // A kernel that cannot be split is WSP509 at the kernel.
    let Ok(split) = wsp_ir::split::split_program(program, &wsp_ir::arch::A2A3) else {
        return Vec::new();
    };
    match wsp_ir::layout::layouts(std::slice::from_ref(&split)) {
        // A view no load reads is WSP508 at the view already.
        Err(e) if !e.unreadable_view => vec![Diag::new(Code::NpuView, target.span, e.message)],
        _ => Vec::new(),
    }
}
