//! WSP207 (value computed in a kernel and never used): an op whose result no other op reads
//! and no `pto.store` writes is work the kernel does for nothing, and usually a store or an
//! operand that was meant and left out. Page: docs/diagnostics/WSP207.md.

use crate::diagnostics::{Code, Diag, Severity, Span};
use crate::kernels::{KernelInstance, instance_body, kernel_signature};
use wsp_ir::kernel::Operand;

/// A kernel instance's unused values. A JIT-style kernel (`In[Tensor]`) is checked per binding
/// only: untyped, its body lacks the ops that read its parameters, and with them the uses of
/// values those ops read.
pub fn check<'db>(db: &'db dyn salsa::Database, inst: KernelInstance<'db>) -> Vec<Diag<'db>> {
    let item = inst.item(db);
    let signature = kernel_signature(db, item);
    if signature.is_jit() && inst.tiles(db).is_empty() {
        return Vec::new();
    }
    let body = instance_body(db, inst);
    // A `cpp_src` kernel has no ops of ours; a body with errors has ops missing.
    let errors = signature.diags.iter().chain(&body.diags);
    if signature.cpp.is_some() || errors.clone().any(|d| d.severity() == Severity::Error) {
        return Vec::new();
    }
    let mut used = vec![false; body.ops.len()];
    for op in &body.ops {
        for a in &op.args {
            if let Operand::Value(v) = a
                && let Some(u) = used.get_mut(*v as usize)
            {
                *u = true;
            }
        }
    }
    body.ops
        .iter()
        .zip(&used)
        // A carried value the loop overwrites before reading is no work.
        .filter(|(op, used)| !**used && op.ty.is_some() && op.op != wsp_ir::kernel::CARRY)
        .map(|(op, _)| {
            Diag::new(
                Code::UnusedValue,
                Span {
                    item,
                    range: op.range,
                },
                format!(
                    "the value of `pto.{}` is never used: store it (`pto.store(out, ...)`), use it in another op, or remove it",
                    op.op
                ),
            )
        })
        .collect()
}
