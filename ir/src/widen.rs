//! bf16 math on A2/A3, whose vector instructions take no bf16 (only data movement, `TCVT`,
//! `TGATHER` and the cube do). An op that computes on bf16 tiles
//! (`crate::instructions::computes_bf16`) computes in f32 instead: its bf16 operands are
//! converted to f32 (`TCVT`, exact), and its result stays f32. A value is converted back to
//! bf16 only where bf16 is needed: a store to a bf16 tensor, a cast, a matmul operand.
//!
//! These are the numbers the CPU kernels compute: they hold bf16 in f32 and round it only as
//! they store or cast it (`codegen/src/prelude.hpp`). The exception is a matmul reading bf16
//! math: the cube takes bf16, so its operand is rounded where the CPU kernel's is not.

use crate::DType;
use crate::buffers::tile_of;
use crate::instructions::computes_bf16;
use crate::kernel::{Kernel, KernelBody, Op, Operand, ValueType};

/// An op's value in the widened kernel.
#[derive(Clone, Copy)]
enum Val {
    /// As the op computed it.
    Same(u32),
    /// In f32, for a bf16 value.
    Wide(u32),
}

/// `k` with its bf16 math in f32, and for each of its ops the op of `k` it comes from; `None`
/// when no op computes on bf16.
pub fn widen_bf16(k: &Kernel) -> Option<(Kernel, Vec<u32>)> {
    let KernelBody::Ops(ops) = &k.body else {
        return None;
    };
    // Renumbering ops would move the loops' ranges; such kernels have no AICore form yet.
    if k.iterates() {
        return None;
    }
    if !ops
        .iter()
        .any(|op| computes_bf16(op, |o| tile_of(k, ops, o)))
    {
        return None;
    }
    let mut out: Vec<Op> = Vec::with_capacity(ops.len() * 2);
    let mut origin: Vec<u32> = Vec::with_capacity(ops.len() * 2);
    let mut map: Vec<Val> = Vec::with_capacity(ops.len());
    // Conversions made once: bf16 operands to f32 (a parameter the kernel stores is converted
    // where it is read), f32 values back to bf16.
    let mut f32_of: Vec<(Operand, u32)> = Vec::new();
    let mut bf16_of: Vec<(u32, u32)> = Vec::new();
    let stored = |p: &str| {
        ops.iter()
            .any(|o| o.op == "store" && matches!(o.args.first(), Some(Operand::Param(q)) if q == p))
    };
    let cast = |v: Operand, t: crate::TileType, to: DType| Op {
        op: "cast".into(),
        args: vec![v, Operand::DType(to)],
        ty: ValueType::Tile(t.with_dtype(to)),
    };
    for (i, op) in ops.iter().enumerate() {
        let mut push = |op: Op, out: &mut Vec<Op>| {
            out.push(op);
            origin.push(i as u32);
            out.len() as u32 - 1
        };
        let wide_arg = |a: &Operand| match a {
            Operand::Value(v) => match map[*v as usize] {
                Val::Wide(w) => Some(w),
                Val::Same(_) => None,
            },
            _ => None,
        };
        let same = |a: &Operand| match a {
            Operand::Value(v) => match map[*v as usize] {
                Val::Same(n) => Operand::Value(n),
                Val::Wide(_) => unreachable!("a widened operand is converted first"),
            },
            a => a.clone(),
        };
        let tile = |a: &Operand| tile_of(k, ops, a);
        let widen = match op.op.as_str() {
            "load" | "store" | "matmul" | "cast" | "constant" => false,
            _ => computes_bf16(op, tile) || op.args.iter().any(|a| wide_arg(a).is_some()),
        };
        if widen {
            let mut args = Vec::with_capacity(op.args.len());
            for a in &op.args {
                if let Some(w) = wide_arg(a) {
                    args.push(Operand::Value(w));
                    continue;
                }
                let Some(t) = tile(a).filter(|t| t.dtype == DType::BF16) else {
                    args.push(same(a));
                    continue;
                };
                let a2 = same(a);
                let f = match f32_of.iter().find(|(w, _)| *w == a2) {
                    Some(&(_, f)) => f,
                    None => {
                        let f = push(cast(a2.clone(), t, DType::F32), &mut out);
                        if !matches!(&a2, Operand::Param(p) if stored(p)) {
                            f32_of.push((a2, f));
                        }
                        f
                    }
                };
                args.push(Operand::Value(f));
            }
            let v = match op.ty {
                ValueType::Tile(t) if t.dtype == DType::BF16 => {
                    let ty = ValueType::Tile(t.with_dtype(DType::F32));
                    let (name, args) = (op.op.clone(), args);
                    Val::Wide(push(Op { op: name, args, ty }, &mut out))
                }
                ty => Val::Same(push(
                    Op {
                        op: op.op.clone(),
                        args,
                        ty,
                    },
                    &mut out,
                )),
            };
            map.push(v);
            continue;
        }
        // A cast of an f32-held value converts it from f32 (to f32: it is that value).
        if op.op == "cast"
            && let (Some(w), ValueType::Tile(t)) = (op.args.first().and_then(wide_arg), op.ty)
        {
            let v = if t.dtype == DType::F32 {
                w
            } else {
                push(cast(Operand::Value(w), t, t.dtype), &mut out)
            };
            map.push(Val::Same(v));
            continue;
        }
        // Everything else takes bf16 bits.
        let mut args = Vec::with_capacity(op.args.len());
        for a in &op.args {
            let Some(w) = wide_arg(a) else {
                args.push(same(a));
                continue;
            };
            let b = match bf16_of.iter().find(|(f, _)| *f == w) {
                Some(&(_, b)) => b,
                None => {
                    let t = match out[w as usize].ty {
                        ValueType::Tile(t) => t,
                        _ => unreachable!("a widened value is a tile"),
                    };
                    let b = push(cast(Operand::Value(w), t, DType::BF16), &mut out);
                    bf16_of.push((w, b));
                    b
                }
            };
            args.push(Operand::Value(b));
        }
        let v = push(
            Op {
                op: op.op.clone(),
                args,
                ty: op.ty,
            },
            &mut out,
        );
        map.push(Val::Same(v));
    }
    let widened = Kernel {
        name: k.name.clone(),
        params: k.params.clone(),
        body: KernelBody::Ops(out),
        loops: Vec::new(),
    };
    Some((widened, origin))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::DType::{BF16, F32};
    use crate::TileType;
    use crate::kernel::{Param, ParamType};
    use crate::plan::Direction;

    fn tile(name: &str, dir: Direction, rows: u64, cols: u64, dtype: DType) -> Param {
        Param {
            name: name.into(),
            ty: ParamType::Tile(dir, TileType::new(rows, cols, dtype)),
        }
    }

    #[test]
    fn bf16_math_runs_in_f32_between_conversions() {
        use Operand::{Param as P, Value as V};
        let t = |d| ValueType::Tile(TileType::new(16, 32, d));
        let k = Kernel {
            name: "norm".into(),
            params: vec![
                tile("x", Direction::In, 16, 32, BF16),
                tile("y", Direction::Out, 16, 32, BF16),
            ],
            body: KernelBody::Ops(vec![
                Op {
                    op: "load".into(),
                    args: vec![P("x".into())],
                    ty: t(BF16),
                },
                Op {
                    op: "exp".into(),
                    args: vec![V(0)],
                    ty: t(BF16),
                },
                Op {
                    op: "mul".into(),
                    args: vec![V(1), V(0)],
                    ty: t(BF16),
                },
                Op {
                    op: "cast".into(),
                    args: vec![V(2), Operand::DType(F32)],
                    ty: t(F32),
                },
                Op {
                    op: "cast".into(),
                    args: vec![V(3), Operand::DType(BF16)],
                    ty: t(BF16),
                },
                Op {
                    op: "store".into(),
                    args: vec![P("y".into()), V(4)],
                    ty: ValueType::Unit,
                },
            ]),
            loops: Vec::new(),
        };
        let (w, origin) = widen_bf16(&k).unwrap();
        expect![[r#"
            kernel norm(x: In Tile[16,32] BF16, y: Out Tile[16,32] BF16)
              %0 = load(x) : Tile[16,32] BF16
              %1 = cast(%0, F32) : Tile[16,32] F32
              %2 = exp(%1) : Tile[16,32] F32
              %3 = mul(%2, %1) : Tile[16,32] F32
              %4 = cast(%3, BF16) : Tile[16,32] BF16
              store(y, %4)
        "#]]
        .assert_eq(&w.to_string());
        assert_eq!(origin, [0, 1, 1, 2, 4, 5]);
        // The cube takes bf16: math it reads is rounded for it.
        let mut mm = k.clone();
        if let KernelBody::Ops(ops) = &mut mm.body {
            ops[2].op = "matmul".into();
            ops[2].ty = t(F32);
            ops.remove(3);
            ops[3].args[0] = V(2);
            ops[4].args[1] = V(3);
        }
        expect![[r#"
            kernel norm(x: In Tile[16,32] BF16, y: Out Tile[16,32] BF16)
              %0 = load(x) : Tile[16,32] BF16
              %1 = cast(%0, F32) : Tile[16,32] F32
              %2 = exp(%1) : Tile[16,32] F32
              %3 = cast(%2, BF16) : Tile[16,32] BF16
              %4 = matmul(%3, %0) : Tile[16,32] F32
              %5 = cast(%4, BF16) : Tile[16,32] BF16
              store(y, %5)
        "#]]
        .assert_eq(&widen_bf16(&mm).unwrap().0.to_string());
        // Nothing to widen in f32 math.
        let mut f = k.clone();
        f.params[0] = tile("x", Direction::In, 16, 32, F32);
        if let KernelBody::Ops(ops) = &mut f.body {
            ops.truncate(2);
            ops[0].ty = t(F32);
            ops[1].ty = t(F32);
        }
        assert_eq!(widen_bf16(&f), None);
    }
}
