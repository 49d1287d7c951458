//! The kernels of a file against what `wsp emit` can make of them for `ascend_npu`: errors
//! where the file is checked for it, warnings for every other program (each exists to run on
//! the 910B):
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
use crate::kernels::{KernelInstance, instance_body, kernel_signature, lower_instance};
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

/// A kernel with fixed tile types; a JIT-style kernel's instances are checked with the tasks
/// that bind them (`checks::file_plan_checks`).
pub fn npu_kernel_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> &'db [Diag<'db>] {
    if kernel_signature(db, item).is_jit() {
        return &[];
    }
    npu_instance_checks(db, KernelInstance::plain(db, item))
}

/// What the 910B would refuse, as a file reports it: errors where the file is checked for
/// `ascend_npu`, warnings elsewhere, since every program exists to run there
/// (`wsp check --target ascend_npu` makes them errors).
fn as_reported<'db>(db: &dyn salsa::Database, file: File, diags: Vec<Diag<'db>>) -> Vec<Diag<'db>> {
    if *checked_for_npu(db, file) {
        return diags;
    }
    diags
        .into_iter()
        .map(|d| Diag {
            advisory: true,
            ..d
        })
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn npu_instance_checks<'db>(
    db: &'db dyn salsa::Database,
    inst: KernelInstance<'db>,
) -> Vec<Diag<'db>> {
    let file = inst.item(db).file(db);
    as_reported(db, file, instance_checks(db, inst))
}

fn instance_checks<'db>(db: &'db dyn salsa::Database, inst: KernelInstance<'db>) -> Vec<Diag<'db>> {
    let item = inst.item(db);
    let signature = kernel_signature(db, item);
    let body = instance_body(db, inst);
    // A kernel with errors is not lowered; a custom C++ kernel has no tiles of ours to place.
    let mut diags = signature.diags.iter().chain(&body.diags);
    if signature.cpp.is_some() || diags.any(|d| d.severity() == Severity::Error) {
        return Vec::new();
    }
    let kernel = lower_instance(db, inst);
    let wsp_ir::kernel::KernelBody::Ops(ir_ops) = &kernel.body else {
        return Vec::new();
    };
    if kernel.iterates() {
        return loop_kernel_checks(db, item, &kernel, &body.ops, &body.loop_headers);
    }
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
    let pieces = match lowered_pieces(&kernel, arch) {
        Ok(p) => p,
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
    // Op `op` of a piece as where the user wrote the kernel's op it comes from.
    let range_of = |origin: &[u32], op: Option<u32>| {
        op.and_then(|op| origin.get(op as usize))
            .and_then(|&op| body.ops.get(op as usize))
            .map(|op| op.range)
            .or(name_range)
            .unwrap_or_default()
    };
    let part_of = |piece: &wsp_ir::Kernel| {
        if piece.name == kernel.name {
            String::new()
        } else {
            format!(" (in `{}`, its part for one core)", piece.name)
        }
    };
    if let Some((piece, origin, over)) = pieces.iter().find_map(|(k, origin)| {
        let over = wsp_ir::buffers::plan(k, &arch.on_chip).err()?;
        Some((k, origin, over))
    }) {
        let mut d = Diag::new(
            Code::OnChipOverflow,
            Span {
                item,
                range: range_of(origin, Some(over.op)),
            },
            format!(
                "kernel `{}` needs {} of {} at this op{}; an Ascend 910B AICore has {} for tiles",
                kernel.name,
                kib(over.needed),
                over.memory.name(),
                part_of(piece),
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
        return out;
    }
    // An op reported above would be refused again. What the emitter refuses beyond the
    // tables (its own limits) is said where the file is checked for the NPU.
    if out.is_empty()
        && *checked_for_npu(db, item.file(db))
        && let Some((piece, origin, refusal)) =
            refused_piece(&pieces, arch, &wsp_ir::layout::Layouts::default())
    {
        out.push(Diag::new(
            Code::NoAicoreForm,
            Span {
                item,
                range: range_of(origin, refusal.op),
            },
            format!(
                "`wsp emit` cannot write kernel `{}`{} for an Ascend 910B ({}): {}",
                kernel.name,
                part_of(piece),
                arch.name,
                refusal.message
            ),
        ));
    }
    out
}

/// A kernel over tensors against its pipelined AICore form (`wsp_ir::pipeline`): WSP506 where
/// its buffers in flight overflow a memory, and, where the file is checked for the NPU, WSP507
/// where it is not that form (the emitter's limit, not the program's).
fn loop_kernel_checks<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    kernel: &wsp_ir::Kernel,
    ops: &[crate::kernels::BodyOp],
    loop_headers: &[wsp_syntax::TextRange],
) -> Vec<Diag<'db>> {
    let arch = &wsp_ir::arch::A2A3;
    let name_range = match item.stmt(db) {
        Some(Stmt::FunctionDef(f)) => f.name().map(|n| n.text_range()),
        _ => None,
    };
    let range_of = |op: Option<u32>| {
        op.and_then(|o| ops.get(o as usize))
            .map(|o| o.range)
            .or_else(|| loop_headers.first().copied())
            .or(name_range)
            .unwrap_or_default()
    };
    // A loop mixing cube and vector work: one mixed launch (`wsp_ir::mixed`), or why not.
    if mixes_units(kernel) {
        return mixed_loop_checks(db, item, kernel, arch, &range_of);
    }
    let refusal = match wsp_ir::pipeline::plan(kernel, arch) {
        Err(wsp_ir::pipeline::NoForm::Overflow(over)) => {
            return vec![Diag::new(
                Code::OnChipOverflow,
                Span {
                    item,
                    range: range_of(Some(over.op)),
                },
                format!(
                    "kernel `{}` needs {} of {} at this op, counting the buffers in flight of its pipelined loop; an Ascend 910B AICore has {}",
                    kernel.name,
                    kib(over.needed),
                    over.memory.name(),
                    kib(over.available)
                ),
            )];
        }
        // The emitter's limits, not the program's: said where the file is checked for the NPU.
        _ if !*checked_for_npu(db, item.file(db)) => return Vec::new(),
        Err(wsp_ir::pipeline::NoForm::Op(op, message)) => wsp_aicore::Refusal { op, message },
        Ok(_) => match wsp_aicore::kernel_source(kernel, arch, &wsp_ir::layout::Layouts::default())
        {
            Ok(_) => return Vec::new(),
            Err(r) => r,
        },
    };
    vec![Diag::new(
        Code::NoAicoreForm,
        Span {
            item,
            range: range_of(refusal.op),
        },
        format!(
            "`wsp emit` cannot write kernel `{}` for an Ascend 910B ({}): {}",
            kernel.name, arch.name, refusal.message
        ),
    )]
}

/// The kernels `wsp emit` writes for `kernel` on `arch`: the kernel with its bf16 math in f32,
/// or its parts for separate cube and vector cores; each with, per op, the kernel's op it
/// comes from. `Err` says why the kernel cannot be split.
/// Whether a loop kernel has both cube and vector work (an `alloc` a matmul accumulates
/// into is neither).
fn mixes_units(kernel: &wsp_ir::Kernel) -> bool {
    let wsp_ir::kernel::KernelBody::Ops(ops) = &kernel.body else {
        return false;
    };
    let unit = |u| {
        ops.iter()
            .any(|o| o.op != "alloc" && wsp_ir::ops::lookup(&o.op).is_some_and(|r| r.unit == u))
    };
    unit(wsp_ir::ops::Unit::Cube) && unit(wsp_ir::ops::Unit::Vector)
}

/// A loop kernel mixing the units against its mixed launch: WSP506 where a core's buffers
/// overflow its memory (for every program), and, where the file is checked for the NPU,
/// WSP507 where it has no such form or the emitter refuses it.
fn mixed_loop_checks<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    kernel: &wsp_ir::Kernel,
    arch: &wsp_ir::arch::Arch,
    range_of: &dyn Fn(Option<u32>) -> wsp_syntax::TextRange,
) -> Vec<Diag<'db>> {
    let message = |why: &str| {
        format!(
            "`wsp emit` cannot write kernel `{}` as one mixed launch of an Ascend 910B ({}) cube core and its vector cores: {why}",
            kernel.name, arch.name
        )
    };
    let for_npu = *checked_for_npu(db, item.file(db));
    let refused = |op: Option<u32>, why: &str| {
        if !for_npu {
            return Vec::new();
        }
        vec![Diag::new(
            Code::NoAicoreForm,
            Span {
                item,
                range: range_of(op),
            },
            message(why),
        )]
    };
    let m = match wsp_ir::mixed::plan(kernel, arch) {
        Ok(m) => m,
        Err(no) => return refused(no.op, &no.message),
    };
    let programs = match wsp_ir::mixed::unroll(kernel, &m) {
        Ok(p) => p,
        Err(no) => return refused(no.op, &no.message),
    };
    for p in &programs {
        if let Err(over) = wsp_ir::buffers::plan(&p.kernel, &arch.on_chip) {
            let at = p.origin.get(over.op as usize).copied();
            return vec![Diag::new(
                Code::OnChipOverflow,
                Span {
                    item,
                    range: range_of(at),
                },
                format!(
                    "kernel `{}` needs {} of {} at this op on its {} core ({}), counting what one iteration holds and what it hands on; an Ascend 910B AICore has {}",
                    kernel.name,
                    kib(over.needed),
                    over.memory.name(),
                    match p.core {
                        wsp_ir::split::Core::Cube => "cube",
                        wsp_ir::split::Core::Vector => "vector",
                    },
                    match p.core {
                        wsp_ir::split::Core::Cube => "its loop unrolled".to_string(),
                        wsp_ir::split::Core::Vector =>
                            format!("half of the {} rows, its loop unrolled", m.rows),
                    },
                    kib(over.available)
                ),
            )];
        }
    }
    let part = match wsp_ir::split::split_kernel(kernel, arch) {
        Ok(Some(s)) => s.parts.into_iter().next(),
        _ => None,
    };
    match part
        .map(|p| wsp_aicore::kernel_source(&p.kernel, arch, &wsp_ir::layout::Layouts::default()))
    {
        Some(Ok(_)) => Vec::new(),
        Some(Err(r)) => refused(r.op, &r.message),
        None => refused(None, "it does not split"),
    }
}

fn lowered_pieces(
    kernel: &wsp_ir::Kernel,
    arch: &wsp_ir::arch::Arch,
) -> Result<Vec<(wsp_ir::Kernel, Vec<u32>)>, String> {
    let (lowered, widened_from) = match wsp_ir::widen::widen_bf16(kernel) {
        Some((k, from)) => (k, Some(from)),
        None => (kernel.clone(), None),
    };
    let to_kernel = |op: u32| widened_from.as_ref().map_or(op, |f| f[op as usize]);
    let all = |k: &wsp_ir::Kernel| match &k.body {
        wsp_ir::kernel::KernelBody::Ops(ops) => (0..ops.len() as u32).collect(),
        _ => Vec::new(),
    };
    Ok(match wsp_ir::split::split_kernel(&lowered, arch)? {
        None => {
            let origin = all(&lowered).into_iter().map(to_kernel).collect();
            vec![(lowered, origin)]
        }
        Some(s) => s
            .parts
            .into_iter()
            .map(|p| {
                let origin = p.origin.iter().map(|&o| to_kernel(o)).collect();
                (p.kernel, origin)
            })
            .collect(),
    })
}

/// The first piece whose AICore form `arch`'s lowering refuses, as `wsp emit` writes and
/// reads it back (`wsp_aicore::verify`): with its origin and why.
fn refused_piece<'a>(
    pieces: &'a [(wsp_ir::Kernel, Vec<u32>)],
    arch: &wsp_ir::arch::Arch,
    layouts: &wsp_ir::layout::Layouts,
) -> Option<(&'a wsp_ir::Kernel, &'a [u32], wsp_aicore::Refusal)> {
    pieces.iter().find_map(|(k, origin)| {
        let r = wsp_aicore::kernel_source(k, arch, layouts).err()?;
        Some((k, origin.as_slice(), r))
    })
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
    as_reported(db, item.file(db), view_checks(db, item))
}

fn view_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let Value::Tensor(t) = &item_value(db, item).value else {
        return Vec::new();
    };
    let crate::values::TensorOrigin::View { base, dims } = &t.origin else {
        return Vec::new();
    };
    if t.name != *item.name(db) {
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
    // How the emitter lays a program's views out is its own concern, not the program's.
    if !*checked_for_npu(db, item.file(db)) {
        return Vec::new();
    }
    program_checks(db, item)
}

fn program_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let Value::Program(schedule) = &item_value(db, item).value else {
        return Vec::new();
    };
    let Some(target) = &schedule.target else {
        return Vec::new();
    };
    let Some(program) = crate::lower::lower_program(db, item) else {
        return Vec::new();
    };
    // A kernel that cannot be split is WSP509 at the kernel.
    let Ok(split) = wsp_ir::split::split_program(program, &wsp_ir::arch::A2A3) else {
        return Vec::new();
    };
    let layouts = match wsp_ir::layout::layouts(std::slice::from_ref(&split)) {
        Ok(l) => l,
        // A view no load reads is WSP508 at the view already.
        Err(e) if !e.unreadable_view => {
            return vec![Diag::new(Code::NpuView, target.span, e.message)];
        }
        Err(_) => return Vec::new(),
    };
    // A kernel refused only as the program's views lay its parameters out (a column-major
    // tensor, say): the kernel itself passed `npu_kernel_checks`. One with every parameter
    // row-major is written as that check wrote it.
    let arch = &wsp_ir::arch::A2A3;
    let plain = wsp_ir::layout::Layouts::default();
    let laid_out = |k: &wsp_ir::Kernel| {
        k.params
            .iter()
            .any(|p| layouts.of(&k.name, &p.name) != wsp_ir::arch::GmLayout::Nd)
    };
    split
        .kernels
        .iter()
        .filter(|k| matches!(k.body, wsp_ir::kernel::KernelBody::Ops(_)) && laid_out(k))
        .filter(|k| wsp_aicore::kernel_source(k, arch, &plain).is_ok())
        .find_map(|k| wsp_aicore::kernel_source(k, arch, &layouts).err().map(|r| (k, r)))
        .map(|(k, r)| {
            Diag::new(
                Code::NoAicoreForm,
                target.span,
                format!(
                    "`wsp emit` cannot write kernel `{}` for an Ascend 910B ({}) as this program's views lay out its parameters: {}",
                    k.name, arch.name, r.message
                ),
            )
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use wsp_ir::DType::{BF16, F16, F32};
    use wsp_ir::arch::{A2A3, Arch, Rule};
    use wsp_ir::kernel::{Kernel, KernelBody, Op, Operand, Param, ParamType, ValueType};
    use wsp_ir::plan::Direction;
    use wsp_ir::{DType, TileType};

    use super::*;

    /// A2/A3 with one more rule, which every `TEXP` breaks.
    const NO_EXP: Arch = Arch {
        rules: &[Rule {
            id: "test-no-exp",
            doc: "no TEXP",
            check: |_, i, _| (i.name == "TEXP").then(|| "TEXP is refused".to_string()),
        }],
        ..A2A3
    };

    fn kernel(x: DType, ops: Vec<Op>) -> Kernel {
        let tile = |name: &str, dir, d| Param {
            name: name.into(),
            ty: ParamType::Tile(dir, TileType::new(16, 16, d)),
        };
        Kernel {
            name: "k".into(),
            params: vec![
                tile("x", Direction::In, x),
                tile("w", Direction::In, x),
                tile("y", Direction::Out, F32),
            ],
            body: KernelBody::Ops(ops),
            loops: Vec::new(),
        }
    }

    fn op(name: &str, args: Vec<Operand>, d: DType) -> Op {
        Op {
            op: name.into(),
            args,
            ty: ValueType::Tile(TileType::new(16, 16, d)),
        }
    }

    /// The piece a rule refuses, and the kernel's op it points at.
    fn refused(k: &Kernel, arch: &Arch) -> Option<(String, u32)> {
        let pieces = lowered_pieces(k, arch).unwrap();
        let (piece, origin, r) = refused_piece(&pieces, arch, &Default::default())?;
        Some((piece.name.clone(), origin[r.op? as usize]))
    }

    #[test]
    fn a_rule_broken_in_a_split_or_widened_kernel_points_at_the_users_op() {
        use Operand::{Param as P, Value as V};
        let store = |v| Op {
            op: "store".into(),
            args: vec![P("y".into()), V(v)],
            ty: ValueType::Unit,
        };
        // The exp runs in the split's vector part, after the product.
        let mixed = kernel(
            F16,
            vec![
                op("matmul", vec![P("x".into()), P("w".into())], F32),
                op("exp", vec![V(0)], F32),
                store(1),
            ],
        );
        assert_eq!(refused(&mixed, &A2A3), None);
        assert_eq!(refused(&mixed, &NO_EXP), Some(("k_aiv1".into(), 1)));
        // bf16 math: converted around, so the exp is the widened kernel's third op.
        let wide = kernel(
            BF16,
            vec![
                op("load", vec![P("x".into())], BF16),
                op("exp", vec![V(0)], BF16),
                op("cast", vec![V(1), Operand::DType(F32)], F32),
                store(2),
            ],
        );
        assert_eq!(refused(&wide, &A2A3), None);
        assert_eq!(refused(&wide, &NO_EXP), Some(("k".into(), 1)));
    }
}
