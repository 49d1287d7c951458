//! Slices of a kernel's tile parameters: `a[m*128:(m+1)*128, k*64:(k+1)*64]` is the tile of
//! `a` at those rows and columns, loaded (`pto.load(a[...])`, or `a[...]` used as a value) or
//! stored to (`pto.store(c[...], v)`). Its bounds are affine in the loops' variables with a
//! constant extent. It starts inside the parameter in every iteration and lies inside it,
//! unless it is a partial tile: loaded with `pad=` or stored, past the parameter's end.

use wsp_ir::Affine;
use wsp_syntax::ast::{self, AstNode, Expr};

use super::{BodyChecker, BodyOp, Operand, Typed};
use crate::diagnostics::Code;
use crate::kernels::ParamType;
use crate::ops::Op;
use crate::types::{KernelType, TileType};

/// The most rows or columns a slice may have, unless its tensor has more.
const MAX_PARTIAL: u64 = 1 << 14;

/// A checked slice: the parameter, the tile it is, and its first row and column.
struct Slice {
    param: String,
    tile: TileType,
    at: [Affine; 2],
}

impl BodyChecker<'_> {
    /// `load`'s or `store`'s first argument written as a slice.
    pub(super) fn slice_operand(&mut self, op: &Op, s: &ast::SubscriptExpr) -> Typed {
        let store = op.name == "store";
        // A store writes what lies inside; a load pads the rest with the value it names.
        let past_end = store || self.padded_load;
        let slice = self.slice(s, store, past_end)?;
        self.slices.insert(s.syntax().text_range(), slice.at);
        Some((Operand::Param(slice.param), KernelType::Tile(slice.tile)))
    }

    /// A slice used as a value: its loaded tile, as a tile parameter used as a value is.
    pub(super) fn slice_value(&mut self, s: &ast::SubscriptExpr) -> Typed {
        let slice = self.slice(s, false, false)?;
        let [row, col] = slice.at;
        self.ops.push(BodyOp {
            op: "load",
            args: vec![
                Operand::Param(slice.param),
                Operand::Index(row),
                Operand::Index(col),
            ],
            ty: Some(KernelType::Tile(slice.tile)),
            range: s.syntax().text_range(),
        });
        let v = self.ops.len() as u32 - 1;
        Some((Operand::Value(v), KernelType::Tile(slice.tile)))
    }

    fn slice(&mut self, s: &ast::SubscriptExpr, store: bool, past_end: bool) -> Option<Slice> {
        let r = s.syntax().text_range();
        let Some(Expr::NameExpr(base)) = s.base() else {
            self.eval.error(
                Code::WrongKind,
                r,
                "a kernel slices its tile parameters only: `x[i*64:(i+1)*64, :]`",
            );
            return None;
        };
        let (name, br) = (base.text(), base.syntax().text_range());
        let Some(p) = self.signature.param(&name) else {
            if let Some((.., def)) = self.locals.iter().rev().find(|(n, ..)| *n == name) {
                let def = *def;
                self.eval.use_local(br, def);
                self.eval.error(
                    Code::WrongKind,
                    br,
                    format!("`{name}` is a local tile; a kernel slices its tile parameters, which live in global memory"),
                );
            } else {
                self.eval.resolve(&name, br);
            }
            return None;
        };
        self.eval.use_local(br, p.range);
        let (dir, whole) = match p.ty {
            ParamType::Tile(dir, t) => (dir, Some(t)),
            ParamType::Jit(dir, _) => (dir, None),
            ParamType::Scalar(_) | ParamType::Constexpr => {
                self.eval.error(
                    Code::WrongKind,
                    br,
                    format!("`{name}` is a scalar; only tile parameters are sliced"),
                );
                return None;
            }
            ParamType::Unknown => return None,
        };
        if store && !dir.writes() {
            self.direction_error(br, &name, dir, "stored");
            return None;
        }
        if !store && !dir.reads() {
            self.direction_error(br, &name, dir, "loaded");
            return None;
        }
        if store {
            self.stored.push(name.clone());
        }
        // A JIT-style parameter's shape comes with each task's binding.
        let whole = whole?;
        let indices = s.indices();
        if indices.len() > 2 {
            self.eval.error(
                Code::TooManyIndices,
                r,
                format!("`{name}` is a 2-D tile ({whole}) and takes at most 2 slices"),
            );
            return None;
        }
        let extents = [whole.rows, whole.cols];
        let mut at = [Affine::constant(0), Affine::constant(0)];
        let mut shape = extents;
        for (dim, e) in indices.iter().enumerate() {
            let ir = e.syntax().text_range();
            let Expr::Slice(sl) = e else {
                self.eval.error(
                    Code::WrongKind,
                    ir,
                    format!(
                        "a tile keeps both its dimensions: slice this one (`{i}:{i} + 1`)",
                        i = self.text(ir)
                    ),
                );
                return None;
            };
            let [lo, hi, step] = sl.parts();
            if step.is_some() {
                self.eval
                    .error(Code::OutsideSubset, ir, "a tile slice has no step: `lo:hi`");
                return None;
            }
            let (start, end) = self.eval.slice_bounds(lo, hi, extents[dim])?;
            let len = self.eval.slice_len(&start, &end, ir)?;
            let Some((first, last)) = start.bounds(|v| self.eval.extent_of(v)) else {
                self.eval.error(
                    Code::IndexOutOfRange,
                    ir,
                    "this slice's bounds overflow a 64-bit integer",
                );
                return None;
            };
            // A partial tile may be taller than a small tensor (100 rows in 128-row tiles), not
            // arbitrarily large.
            if len > extents[dim].max(MAX_PARTIAL) {
                self.eval.error(
                    Code::IndexOutOfRange,
                    ir,
                    format!("a slice of {len} {} is larger than `{name}` ({} {0}) and than a tile of {MAX_PARTIAL}", ["rows", "columns"][dim], extents[dim]),
                );
                return None;
            }
            let end = last.saturating_add(len as i64);
            let extent = extents[dim] as i64;
            let what = ["rows", "columns"][dim];
            if first < 0 || last >= extent || (end > extent && !past_end) {
                let (from, to) = if first < 0 {
                    (first, first + len as i64)
                } else {
                    (last, end)
                };
                let mut message = format!(
                    "`{}` reaches {what} {from}:{to} of `{name}`, which has {extent} {what}",
                    self.text(ir)
                );
                if first >= 0 && last < extent {
                    message.push_str(&format!(
                        "; to load a partial tile, name what fills the rest: `pto.load({}, pad=0.0)`",
                        self.text(r)
                    ));
                }
                self.eval.error(Code::IndexOutOfRange, ir, message);
                return None;
            }
            at[dim] = start;
            shape[dim] = len;
        }
        Some(Slice {
            param: name,
            tile: whole.with_shape(shape),
            at,
        })
    }
}
