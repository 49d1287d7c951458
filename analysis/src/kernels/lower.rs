//! A checked kernel as `wsp_ir`: its parameters and its body's ops, for codegen (and for the
//! NPU checks, which look at what would be emitted).

use super::{KernelInstance, ParamType, bound_signature, instance_body};
use crate::items::{Item, item_offsets, module_items};
use crate::types::KernelType;
use wsp_ir::kernel::{self as ir_kernel, KernelBody as IrBody, ValueType};

/// A kernel with fixed tile types (a JIT-style one with its JIT parameters left out).
pub(crate) fn lower_kernel(db: &dyn salsa::Database, item: Item<'_>) -> wsp_ir::Kernel {
    lower_instance(db, KernelInstance::plain(db, item))
}

/// A kernel instance: its bound signature and body, under its lowered name.
pub(crate) fn lower_instance<'db>(
    db: &'db dyn salsa::Database,
    inst: KernelInstance<'db>,
) -> wsp_ir::Kernel {
    let item = inst.item(db);
    let signature = bound_signature(db, inst);
    let params = signature
        .params
        .iter()
        .filter_map(|p| {
            let ty = match &p.ty {
                ParamType::Tile(d, t) => ir_kernel::ParamType::Tile(*d, *t),
                ParamType::Scalar(d) => ir_kernel::ParamType::Scalar(*d, p.default),
                ParamType::Constexpr => ir_kernel::ParamType::Constexpr(p.default),
                // Reported (a file with errors is not lowered), or unbound.
                ParamType::Unknown | ParamType::Jit(..) => return None,
            };
            Some(ir_kernel::Param {
                name: p.name.clone(),
                ty,
            })
        })
        .collect();
    let checked = instance_body(db, inst);
    let body = match &signature.cpp {
        Some(cpp) => {
            let file = item.file(db);
            let items = module_items(db, file);
            let start = items
                .iter()
                .position(|&i| i == item)
                .and_then(|i| item_offsets(db, file).get(i).copied())
                .unwrap_or_default();
            let text = file.text(db);
            let index = wsp_syntax::LineIndex::new(text);
            let (first_line, _) = wsp_syntax::line_col(&index, start + cpp.range.start());
            IrBody::Cpp {
                code: cpp.code.clone(),
                includes: cpp.includes.clone(),
                first_line,
            }
        }
        None => IrBody::Ops(
            checked
                .ops
                .iter()
                .map(|op| ir_kernel::Op {
                    op: op.op.to_string(),
                    args: op.args.clone(),
                    ty: match op.ty {
                        Some(KernelType::Tile(t)) => ValueType::Tile(t),
                        Some(KernelType::Scalar(d)) => ValueType::Scalar(d),
                        Some(KernelType::Number) | None => ValueType::Unit,
                    },
                })
                .collect(),
        ),
    };
    wsp_ir::Kernel {
        name: inst.lowered_name(db),
        params,
        body,
        loops: checked.loops.clone(),
    }
}
