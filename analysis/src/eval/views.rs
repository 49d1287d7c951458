//! Tensors over the bytes of others, as NumPy's views: `X.T`, `X.transpose(axes)` and
//! `X.reshape(shape)` (also spelled `X.view(shape)`). A view keeps, per dimension, the base
//! dimension it walks and its step there (`ViewDim`), so every view is a view of a declared
//! tensor and a region of it is a region of the base (`View::in_base`), where races and reads
//! are decided. A reshape splits a dimension into several or merges back dimensions split from
//! one; a reshape that needs a copy in NumPy, or mixes dimensions, is an error.

use super::Eval;
use crate::diagnostics::Code;
use crate::types::shape_text;
use crate::values::{Tensor, TensorOrigin, Value, ViewDim};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode};

/// The methods and attributes of a tensor, for completion and messages.
pub const TENSOR_MEMBERS: [&str; 4] = ["T", "transpose", "reshape", "view"];

impl<'db> Eval<'db> {
    /// `X.T`: the dimensions reversed.
    pub(crate) fn tensor_attribute(
        &mut self,
        t: Tensor<'db>,
        name: &str,
        range: TextRange,
    ) -> Value<'db> {
        if name == "T" {
            if !self.views_here(range) {
                return Value::Unknown;
            }
            let axes: Vec<usize> = (0..t.shape.len()).rev().collect();
            return self.permuted(t, &axes, range).unwrap_or(Value::Unknown);
        }
        let what = format!("the tensor `{}`", t.name);
        self.unknown_member(&what, name, range, TENSOR_MEMBERS.iter().copied())
    }

    /// `X.transpose(...)`, `X.reshape(...)` and `X.view(...)`.
    pub(crate) fn tensor_method(
        &mut self,
        t: Tensor<'db>,
        method: &str,
        range: TextRange,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        if TENSOR_MEMBERS.contains(&method) && !self.views_here(range) {
            return Value::Unknown;
        }
        let result = match method {
            "transpose" => self.transpose(t, c),
            "reshape" | "view" => self.reshape(t, c),
            _ => {
                let what = format!("the tensor `{}`", t.name);
                return self.unknown_member(&what, method, range, TENSOR_MEMBERS.iter().copied());
            }
        };
        result.unwrap_or(Value::Unknown)
    }

    /// Whether a view may be made here: in a module-level assignment, which names it (the
    /// program's tensors are named; a workload's views are regions, `Xt[b]`).
    fn views_here(&mut self, range: TextRange) -> bool {
        if self.item.kind(self.db) == crate::items::ItemKind::Assign {
            return true;
        }
        self.error(
            Code::WrongKind,
            range,
            "a view of a tensor is declared at module level, with a name: `Xt = X.T`, then `Xt[b]` here",
        );
        false
    }

    /// The integers of a method's arguments, given one by one or as one tuple or list.
    fn int_args(&mut self, c: &ast::CallExpr, what: &str) -> Option<Vec<(i64, TextRange)>> {
        let args: Vec<ast::Arg> = c.args().collect();
        if let Some(a) = args.iter().find(|a| a.kind() != ast::ArgKind::Positional) {
            self.error(
                Code::WrongArguments,
                a.syntax().text_range(),
                format!("{what} takes integers, one after another or as a tuple"),
            );
            return None;
        }
        let values: Vec<(Value<'db>, TextRange)> = args
            .iter()
            .filter_map(|a| a.value())
            .map(|e| (self.expr(&e), e.syntax().text_range()))
            .collect();
        let values = match values.as_slice() {
            [(Value::Tuple(vs) | Value::List(vs), r)] => {
                vs.iter().map(|v| (v.clone(), *r)).collect()
            }
            _ => values,
        };
        let mut out = Vec::new();
        for (v, r) in values {
            match v {
                Value::Int(i) => out.push((i, r)),
                Value::Unknown => return None,
                v => {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("{what} takes integers, not {}", v.describe()),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// `X.transpose(1, 0, 2)`: a permutation of the dimensions (none given: reversed).
    fn transpose(&mut self, t: Tensor<'db>, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let given = self.int_args(c, "`transpose`")?;
        let rank = t.shape.len();
        if given.is_empty() {
            let axes: Vec<usize> = (0..rank).rev().collect();
            return self.permuted(t, &axes, range);
        }
        let mut axes = Vec::new();
        for &(a, r) in &given {
            // NumPy counts negative axes from the end.
            let axis = if a < 0 { a + rank as i64 } else { a };
            if axis < 0 || axis >= rank as i64 || axes.contains(&(axis as usize)) {
                self.error(
                    Code::WrongArguments,
                    r,
                    format!(
                        "`transpose` takes a permutation of the {rank} dimensions of {}: each of 0..{rank} once",
                        shown_name(&t)
                    ),
                );
                return None;
            }
            axes.push(axis as usize);
        }
        if axes.len() != rank {
            self.error(
                Code::WrongArguments,
                range,
                format!(
                    "{} has {rank} dimensions but `transpose` orders {}",
                    shown_name(&t),
                    axes.len()
                ),
            );
            return None;
        }
        self.permuted(t, &axes, range)
    }

    /// The view of `t` whose dimension `j` is `t`'s dimension `axes[j]`.
    fn permuted(&mut self, t: Tensor<'db>, axes: &[usize], range: TextRange) -> Option<Value<'db>> {
        let (base, dims) = self.view_base(&t, range)?;
        let shape = axes.iter().map(|&a| t.shape[a]).collect();
        let dims = axes.iter().map(|&a| dims[a]).collect();
        Some(self.view_of(base, shape, dims, range))
    }

    /// `X.reshape(4, 8, 16)`: the same elements in another shape, one dimension may be `-1`.
    fn reshape(&mut self, t: Tensor<'db>, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let given = self.int_args(c, "`reshape`")?;
        let total: u64 = t.shape.iter().product();
        // 0 when the product overflows: then no shape fits.
        let known: i64 = given
            .iter()
            .filter(|(n, _)| *n != -1)
            .try_fold(1i64, |p, (n, _)| p.checked_mul(*n))
            .unwrap_or(0);
        let unknown = given.iter().filter(|(n, _)| *n == -1).count();
        if let Some(&(_, r)) = given.iter().find(|(n, _)| *n == 0 || *n < -1) {
            self.error(
                Code::WrongArguments,
                r,
                "a dimension is a positive integer (or one `-1`, for what the others leave)",
            );
            return None;
        }
        let shape: Vec<u64> = match unknown {
            0 => given.iter().map(|(n, _)| *n as u64).collect(),
            1 if known > 0 && total.is_multiple_of(known as u64) => given
                .iter()
                .map(|(n, _)| {
                    if *n == -1 {
                        total / known as u64
                    } else {
                        *n as u64
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        let elements = shape.iter().try_fold(1u64, |p, n| p.checked_mul(*n));
        if shape.is_empty() || elements != Some(total) {
            self.error(
                Code::WrongArguments,
                range,
                format!(
                    "cannot reshape {} {} ({total} elements) into ({})",
                    shown_name(&t),
                    shape_text(&t.shape),
                    given
                        .iter()
                        .map(|(n, _)| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return None;
        }
        let (base, dims) = self.view_base(&t, range)?;
        let Some(new_dims) = reshaped(&t.shape, &dims, &shape) else {
            self.error(
                Code::WrongArguments,
                range,
                format!(
                    "{} {} → {} is not a view of the same bytes: a reshape here splits a dimension into several or merges back dimensions split from one, in order",
                    shown_name(&t),
                    shape_text(&t.shape),
                    shape_text(&shape)
                ),
            );
            return None;
        };
        Some(self.view_of(base, shape, new_dims, range))
    }

    /// The declared tensor a view of `t` reads and how `t` walks it; an error for tensors
    /// that have no bytes of their own to view.
    fn view_base(
        &mut self,
        t: &Tensor<'db>,
        range: TextRange,
    ) -> Option<(Tensor<'db>, Vec<ViewDim>)> {
        match &t.origin {
            TensorOrigin::View { base, dims } => Some(((**base).clone(), dims.clone())),
            TensorOrigin::Declared if t.name.is_empty() => {
                self.error(
                    Code::WrongKind,
                    range,
                    "a view is of a named tensor: `X = Tensor(...)`, then `Xt = X.T`",
                );
                None
            }
            TensorOrigin::Declared
                if t.layout
                    .dims
                    .iter()
                    .any(|d| !matches!(d, crate::values::DimLayout::Replicate)) =>
            {
                self.error(
                    Code::LayoutConflict,
                    range,
                    format!("`{}` is sharded: a view reads a tensor's bytes on one device, so it is of a replicated tensor", t.name),
                );
                None
            }
            TensorOrigin::Declared => {
                let dims = (0..t.shape.len())
                    .map(|d| ViewDim {
                        base_dim: d as u32,
                        step: 1,
                    })
                    .collect();
                Some((t.clone(), dims))
            }
            TensorOrigin::Derived { op, .. } => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "`{}` is computed by `{op}`: a view is of a declared tensor",
                        t.name
                    ),
                );
                None
            }
        }
    }

    fn view_of(
        &self,
        base: Tensor<'db>,
        shape: Vec<u64>,
        dims: Vec<ViewDim>,
        range: TextRange,
    ) -> Value<'db> {
        Value::Tensor(Box::new(Tensor {
            name: String::new(),
            def: self.span(range),
            shape,
            dtype: base.dtype,
            layout: crate::values::Layout::replicated(dims.len()),
            init: None,
            origin: TensorOrigin::View {
                base: Box::new(base),
                dims,
            },
        }))
    }
}

/// A tensor as messages name it: `` `X` ``, or "the view" for one not named yet.
fn shown_name(t: &Tensor<'_>) -> String {
    if t.name.is_empty() {
        "the view".into()
    } else {
        format!("`{}`", t.name)
    }
}

/// The dimensions of `shape` → `new` as a view walking the same base as `dims`: each
/// dimension kept, split into several (steps the products of the parts after it) or merged
/// back from parts of one base dimension that follow each other; `None` otherwise.
fn reshaped(shape: &[u64], dims: &[ViewDim], new: &[u64]) -> Option<Vec<ViewDim>> {
    // Dimensions of one element stay or go freely: step 0 walks nothing.
    let old: Vec<(u64, ViewDim)> = shape
        .iter()
        .copied()
        .zip(dims.iter().copied())
        .filter(|(n, _)| *n != 1)
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut k = 0;
    while k < new.len() {
        if new[k] == 1 {
            out.push(ViewDim {
                base_dim: 0,
                step: 0,
            });
            k += 1;
            continue;
        }
        let (n, d) = *old.get(i)?;
        if new[k] == n {
            out.push(d);
            i += 1;
            k += 1;
        } else if new[k] < n {
            // A split: new[k..end] multiply to n.
            let mut end = k;
            let mut prod = 1u64;
            while prod < n && end < new.len() {
                prod = prod.checked_mul(new[end])?;
                end += 1;
            }
            if prod != n {
                return None;
            }
            let mut step = d.step;
            let mut parts = Vec::new();
            for &m in new[k..end].iter().rev() {
                parts.push(ViewDim {
                    base_dim: d.base_dim,
                    step: if m == 1 { 0 } else { step },
                });
                step = step.checked_mul(m)?;
            }
            parts.reverse();
            out.extend(parts);
            i += 1;
            k = end;
        } else {
            // A merge: old[i..end] multiply to new[k], parts of one base dimension in order.
            let mut end = i;
            let mut prod = 1u64;
            while prod < new[k] && end < old.len() {
                prod = prod.checked_mul(old[end].0)?;
                end += 1;
            }
            if prod != new[k] {
                return None;
            }
            let parts = &old[i..end];
            let contiguous = parts.windows(2).all(|w| {
                w[0].1.base_dim == w[1].1.base_dim
                    && Some(w[0].1.step) == w[1].1.step.checked_mul(w[1].0)
            });
            if !contiguous {
                return None;
            }
            out.push(parts[parts.len() - 1].1);
            i = end;
            k += 1;
        }
    }
    (i == old.len()).then_some(out)
}
