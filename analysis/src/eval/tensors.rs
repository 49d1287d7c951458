//! Tensors and axes: `Tensor(...)`, `Ragged`, `Sparse`, shapes and dtypes.

use super::Eval;
use super::bind::Args;
use crate::diagnostics::{Code, Diag, Span};
use crate::types::{DType, shape_text};
use crate::values::{
    Axis, AxisKind, DimLayout, IntSource, Layout, Tensor, TensorOrigin, Value, View, ViewIndex,
};
use crate::vocabulary::Builtin;
use wsp_ir::Affine;
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr};

impl<'db> Eval<'db> {
    pub(crate) fn ragged(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, Builtin::Ragged)?;
        let (v, r) = args.get(0)?.clone();
        let rows = self.positive(&v, r, "the number of rows")?;
        let mut a = axis(self.span(range), AxisKind::Ragged, rows);
        let (lv, lr) = args.get(1)?.clone();
        match self.int_data(&lv, lr, "`lengths`")? {
            IntSource::List(lengths) => {
                if lengths.len() as u64 != rows {
                    self.error(
                        Code::WrongArguments,
                        lr,
                        format!("`lengths` has {} entries for {rows} rows", lengths.len()),
                    );
                    return None;
                }
                a.row_extent = lengths.iter().copied().max();
                a.lengths = Some(IntSource::List(lengths));
            }
            tensor => {
                // Its values are the run's, but its length is known now.
                if let Value::Tensor(t) = &lv
                    && t.shape != [rows]
                {
                    self.error(
                        Code::WrongArguments,
                        lr,
                        format!("`lengths` has {} entries for {rows} rows", t.shape[0]),
                    );
                    return None;
                }
                a.lengths = Some(tensor);
            }
        }
        Some(Value::Axis(Box::new(a)))
    }

    pub(crate) fn sparse(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, Builtin::Sparse)?;
        let (v, r) = args.get(0)?.clone();
        let rows = self.positive(&v, r, "the number of rows")?;
        let mut a = axis(self.span(range), AxisKind::Sparse, rows);
        let (pv, pr) = args.get(1)?.clone();
        let (iv, ir) = args.get(2)?.clone();
        let indptr = self.int_data(&pv, pr, "`indptr`")?;
        let indices = self.int_data(&iv, ir, "`indices`")?;
        // Literal routing is checked here; routing read from tensors is checked by the run.
        if let (IntSource::List(p), IntSource::List(ix)) = (&indptr, &indices) {
            let monotone = p.windows(2).all(|w| w[0] <= w[1]);
            if p.len() as u64 != rows + 1
                || p.first() != Some(&0)
                || !monotone
                || p.last() != Some(&(ix.len() as u64))
            {
                self.error(
                    Code::WrongArguments,
                    pr,
                    format!(
                        "`indptr` must rise from 0 to len(indices) = {} in {} entries (rows + 1)",
                        ix.len(),
                        rows + 1
                    ),
                );
                return None;
            }
            a.row_extent = Some(ix.iter().copied().max().map_or(0, |m| m + 1));
        }
        if let (IntSource::Tensor(_), Value::Tensor(t)) = (&indptr, &pv)
            && t.shape != [rows + 1]
        {
            self.error(
                Code::WrongArguments,
                pr,
                format!(
                    "`indptr` has {} entries for {rows} rows (it takes rows + 1)",
                    t.shape[0]
                ),
            );
            return None;
        }
        a.indptr = Some(indptr);
        a.indices = Some(indices);
        Some(Value::Axis(Box::new(a)))
    }

    pub(crate) fn int_data(
        &mut self,
        v: &Value<'db>,
        r: TextRange,
        what: &str,
    ) -> Option<IntSource> {
        match v {
            Value::List(items) | Value::Tuple(items) => {
                let mut out = Vec::new();
                for i in items {
                    match i {
                        Value::Int(n) if *n >= 0 => out.push(*n as u64),
                        Value::Unknown => return None,
                        other => {
                            self.error(
                                Code::WrongKind,
                                r,
                                format!(
                                    "{what} holds non-negative integers, not {}",
                                    other.describe()
                                ),
                            );
                            return None;
                        }
                    }
                }
                Some(IntSource::List(out))
            }
            Value::Tensor(t) if t.dtype.is_integer() && t.shape.len() == 1 => {
                Some(IntSource::Tensor(t.name.clone()))
            }
            Value::Unknown => None,
            other => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "{what} is a list of integers or a 1-D integer tensor, not {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(crate) fn tensor(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, Builtin::Tensor)?;
        let (sv, sr) = args.get(0)?.clone();
        let shape = self.shape(&sv, sr)?;
        let (dv, dr) = args.get(1)?.clone();
        let dtype = self.dtype(&dv, dr)?;
        let init = match args.get(2) {
            Some((Value::Init(i), _)) => Some(i.clone()),
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(Code::WrongKind, r, format!("`init` is zeros(), ones(), full(v), arange(), randn(...) or load_npy(path), not {}", v.describe()));
                return None;
            }
            None => None,
        };
        let layout = match args.get(3) {
            Some((Value::Layout(l), r)) => {
                if l.dims.len() != shape.len() {
                    let r = *r;
                    self.error(
                        Code::LayoutConflict,
                        r,
                        format!(
                            "the layout has rank {} but the tensor {} has rank {}",
                            l.dims.len(),
                            shape_text(&shape),
                            shape.len()
                        ),
                    );
                    return None;
                }
                l.clone()
            }
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`layout` is a TensorLayout, not {}", v.describe()),
                );
                return None;
            }
            None => Layout::replicated(shape.len()),
        };
        let def = self.span(range);
        // A memory order other than row-major: the tensor reads a storage tensor of the
        // dimensions in that order, as `X.T` reads `X` (its name given with the tensor's).
        let order = layout.memory_order(&shape);
        let order = match (order, args.get(3)) {
            (Some(order), _) => order,
            (None, Some((_, r))) => {
                let tuple = |v: &[u64]| {
                    let items: Vec<String> = v.iter().map(u64::to_string).collect();
                    format!(
                        "({}{})",
                        items.join(", "),
                        if v.len() == 1 { "," } else { "" }
                    )
                };
                let strides = tuple(&layout.mem.clone().unwrap_or_default());
                let message = format!(
                    "the memory strides {strides} do not lay out a {} tensor densely: give its dimensions an order, `MemLayout.row_major({})` or `MemLayout.col_major({})`",
                    shape_text(&shape),
                    tuple(&shape),
                    tuple(&shape)
                );
                self.error(Code::LayoutConflict, *r, message);
                return None;
            }
            (None, None) => return None,
        };
        let row_major = order.iter().enumerate().all(|(i, &d)| i as u32 == d);
        if row_major {
            return Some(Value::Tensor(Box::new(Tensor {
                name: String::new(),
                def,
                shape,
                dtype,
                layout,
                init,
                origin: TensorOrigin::Declared,
            })));
        }
        if !layout.is_replicated() {
            let r = args.get(3).map_or(range, |(_, r)| *r);
            self.error(
                Code::LayoutConflict,
                r,
                "a memory order other than row-major is for a replicated tensor: each shard of a sharded one is laid out row-major",
            );
            return None;
        }
        let storage = Tensor {
            name: String::new(),
            def,
            shape: order.iter().map(|&d| shape[d as usize]).collect(),
            dtype,
            layout: Layout::replicated(shape.len()),
            init: init.clone().map(|of| crate::values::Init::Permuted {
                of: Box::new(of),
                shape: shape.clone(),
                order: order.clone(),
            }),
            origin: TensorOrigin::Declared,
        };
        let dims = (0..shape.len() as u32)
            .map(|d| crate::values::ViewDim {
                base_dim: order.iter().position(|&o| o == d).unwrap_or(0) as u32,
                step: 1,
            })
            .collect();
        Some(Value::Tensor(Box::new(Tensor {
            name: String::new(),
            def,
            shape,
            dtype,
            layout,
            init,
            origin: TensorOrigin::View {
                base: Box::new(storage),
                dims,
            },
        })))
    }

    pub(crate) fn shape(&mut self, v: &Value<'db>, r: TextRange) -> Option<Vec<u64>> {
        match v {
            Value::Tuple(items) | Value::List(items) if !items.is_empty() => {
                let mut out = Vec::new();
                for i in items {
                    out.push(self.positive(i, r, "a dimension")?);
                }
                Some(out)
            }
            Value::Int(_) => Some(vec![self.positive(v, r, "a dimension")?]),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "a shape is a tuple of positive integers, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    pub(crate) fn dtype(&mut self, v: &Value<'db>, r: TextRange) -> Option<DType> {
        match v {
            Value::DType(d) => Some(*d),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("expected a dtype (`DType.F32`, ...), not {}", v.describe()),
                );
                None
            }
        }
    }
}

pub(crate) fn axis<'db>(def: Span<'db>, kind: AxisKind, size: u64) -> Axis<'db> {
    Axis {
        name: String::new(),
        def,
        kind,
        size,
        row_extent: None,
        lengths: None,
        indptr: None,
        indices: None,
    }
}

impl<'db> Eval<'db> {
    /// `X[i, j]` (a view), `routing[b]` (an axis row) and `k[i]` misuse, for the evaluator.
    pub(crate) fn view_subscript(
        &mut self,
        base: Value<'db>,
        s: &ast::SubscriptExpr,
    ) -> Option<Value<'db>> {
        let range = s.syntax().text_range();
        let indices = s.indices();
        match base {
            Value::Tensor(t) => {
                let view = View {
                    tensor: *t,
                    indices: Vec::new(),
                    span: self.span(range),
                };
                Some(self.index_view(view, &indices, range))
            }
            Value::View(mut v) => {
                v.span = self.span(range);
                Some(self.index_view(*v, &indices, range))
            }
            Value::Axis(a) if matches!(a.kind, AxisKind::Sparse | AxisKind::Ragged) => {
                let [i] = indices.as_slice() else {
                    self.error(
                        Code::TooManyIndices,
                        range,
                        format!("a {} axis takes one row index", a.kind.name()),
                    );
                    return Some(Value::Unknown);
                };
                let v = self.expr(i);
                let ir = i.syntax().text_range();
                let rows = a.size;
                let out_of_range = |reach: i64| {
                    format!(
                        "reaches row {reach} of `{}`, which has {rows} row{}",
                        a.name,
                        if rows == 1 { "" } else { "s" }
                    )
                };
                match v {
                    Value::Int(i) if i < 0 || i >= rows as i64 => {
                        let message =
                            format!("row {i} is past the rows of `{}`, which has {rows}", a.name);
                        self.error(Code::IndexOutOfRange, ir, message);
                        Some(Value::Unknown)
                    }
                    Value::Index(ix) => match ix.bounds(|v| self.extent_of(v)) {
                        Some((lo, hi)) if lo < 0 || hi >= rows as i64 => {
                            let reach = if lo < 0 { lo } else { hi };
                            let message = format!("`{ix}` {}", out_of_range(reach));
                            self.error(Code::IndexOutOfRange, ir, message);
                            Some(Value::Unknown)
                        }
                        _ => Some(Value::AxisRow(a)),
                    },
                    Value::Int(_) => Some(Value::AxisRow(a)),
                    Value::Unknown => Some(Value::Unknown),
                    v => {
                        self.error(
                            Code::WrongKind,
                            i.syntax().text_range(),
                            format!(
                                "a row index is a loop variable or a constant, not {}",
                                v.describe()
                            ),
                        );
                        Some(Value::Unknown)
                    }
                }
            }
            Value::Axis(a) => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!(
                        "`{}` is a {} axis, which has no rows; only Sparse and Ragged axes are indexed (`routing[b]`)",
                        a.name,
                        a.kind.name()
                    ),
                );
                Some(Value::Unknown)
            }
            Value::Kernel(_) => {
                self.error(
                    Code::WrongKind,
                    range,
                    "a task is called with its arguments: `kernel[i](param=view, ...)`",
                );
                Some(Value::Unknown)
            }
            _ => None,
        }
    }

    fn index_view(
        &mut self,
        mut view: View<'db>,
        indices: &[Expr],
        range: TextRange,
    ) -> Value<'db> {
        let rank = view.tensor.shape.len();
        for e in indices {
            let r = e.syntax().text_range();
            let dim = view.indices.len();
            if dim >= rank {
                self.error(
                    Code::TooManyIndices,
                    r,
                    format!(
                        "`{}` has rank {rank} ({}) and takes at most {rank} indices",
                        view.tensor.name,
                        shape_text(&view.tensor.shape)
                    ),
                );
                return Value::Unknown;
            }
            let extent = view.tensor.shape[dim];
            let index = match e {
                Expr::Slice(sl) => {
                    let [lo, hi, step] = sl.parts();
                    if step.is_some() {
                        self.error(Code::OutsideSubset, r, "a view slice has no step: `lo:hi`");
                        return Value::Unknown;
                    }
                    match self.slice_index(lo, hi, extent, dim, &view.tensor.name, r) {
                        Some(index) => index,
                        None => return Value::Unknown,
                    }
                }
                _ => match self.expr(e) {
                    Value::Int(i) => {
                        if i < 0 || i >= extent as i64 {
                            self.error(Code::IndexOutOfRange, r, format!("index {i} is out of range for dimension {dim} of `{}`, which has extent {extent}", view.tensor.name));
                            return Value::Unknown;
                        }
                        ViewIndex::At(Affine::constant(i))
                    }
                    Value::Index(a) => {
                        if let Some((lo, hi)) = a.bounds(|v| self.extent_of(v))
                            && (lo < 0 || hi >= extent as i64)
                        {
                            let shown = if lo < 0 { lo } else { hi };
                            self.error(
                                Code::IndexOutOfRange,
                                r,
                                format!("`{a}` reaches {shown}, out of range for dimension {dim} of `{}`, which has extent {extent}", view.tensor.name),
                            );
                            return Value::Unknown;
                        }
                        ViewIndex::At(a)
                    }
                    Value::Unknown => return Value::Unknown,
                    v => {
                        self.error(Code::WrongKind, r, format!("a view index is an affine expression of loop variables and constants, not {}", v.describe()));
                        return Value::Unknown;
                    }
                },
            };
            view.indices.push(index);
        }
        view.span = self.span(range);
        Value::View(Box::new(view))
    }

    /// The bounds of a slice `lo:hi` of a dimension of `extent` (a missing one is the
    /// dimension's edge), each a constant or affine in the loop variables; `None` after an
    /// error. A view's slices and a kernel's tile slices are written alike.
    pub(crate) fn slice_bounds(
        &mut self,
        lo: Option<Expr>,
        hi: Option<Expr>,
        extent: u64,
    ) -> Option<(Affine, Affine)> {
        let mut bound = |part: Option<Expr>, default: i64| -> Option<Affine> {
            let Some(p) = part else {
                return Some(Affine::constant(default));
            };
            match self.expr(&p) {
                Value::Int(i) => Some(Affine::constant(i)),
                Value::Index(a) => Some(a),
                Value::Unknown => None,
                v => {
                    let what = v.describe();
                    self.error(
                        Code::WrongKind,
                        p.syntax().text_range(),
                        format!("a slice's bounds are constants or affine expressions of loop variables with a constant difference (`c*CH:(c+1)*CH`), not {what}"),
                    );
                    None
                }
            }
        };
        Some((bound(lo, 0)?, bound(hi, extent as i64)?))
    }

    /// The extent `hi - lo` of a slice at `r`, which must not depend on the loop variables
    /// and must be positive; `None` after an error.
    pub(crate) fn slice_len(&mut self, lo: &Affine, hi: &Affine, r: TextRange) -> Option<u64> {
        let Some(diff) = lo.neg().and_then(|n| hi.add(&n)) else {
            self.error(
                Code::IndexOutOfRange,
                r,
                "this slice's bounds overflow a 64-bit integer",
            );
            return None;
        };
        match diff.as_constant() {
            Some(len) if len > 0 => Some(len as u64),
            _ => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("the slice `{lo}:{hi}` must keep a constant, positive extent (its end minus its start is `{diff}`); write it as `start:start + N`"),
                );
                None
            }
        }
    }

    /// A slice `lo:hi` of dimension `dim` (extent `extent`): constant bounds (`0:128`), or an
    /// affine start and a constant extent (`c*CH:(c+1)*CH`, `i:i+4`) that stays inside the
    /// dimension for every value of the loop variables. `None` after an error.
    fn slice_index(
        &mut self,
        lo: Option<Expr>,
        hi: Option<Expr>,
        extent: u64,
        dim: usize,
        tensor: &str,
        r: TextRange,
    ) -> Option<ViewIndex> {
        let (lo, hi) = self.slice_bounds(lo, hi, extent)?;
        if let (Some(lo), Some(hi)) = (lo.as_constant(), hi.as_constant()) {
            if lo < 0 || hi > extent as i64 || lo >= hi {
                self.error(
                    Code::IndexOutOfRange,
                    r,
                    format!("the slice {lo}:{hi} is not a non-empty range inside dimension {dim} of `{tensor}`, which has extent {extent}"),
                );
                return None;
            }
            return Some(ViewIndex::Range(lo, hi));
        }
        // `hi - lo` must not depend on the loop variables: the view's shape is the tile's.
        let len = self.slice_len(&lo, &hi, r)?;
        if let Some((first, last)) = lo.bounds(|v| self.extent_of(v))
            && (first < 0 || last + len as i64 > extent as i64)
        {
            let (at, end) = if first < 0 {
                (first, first + len as i64)
            } else {
                (last, last + len as i64)
            };
            self.error(
                Code::IndexOutOfRange,
                r,
                format!("the slice `{lo}:{hi}` reaches {at}:{end}, outside dimension {dim} of `{tensor}`, which has extent {extent}"),
            );
            return None;
        }
        Some(ViewIndex::Slice(lo, len))
    }

    /// `relayout`, `allreduce`, `allgather` and `reduce_scatter`: a tensor derived from the
    /// source, with the shape and layout the collective gives it.
    pub(crate) fn collective(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        let (source, tr) = self.collective_source(b, &args)?;
        let (shape, layout) = if b == Builtin::Relayout {
            let layout = self.relayout_layout(&source, &args)?;
            (source.shape.clone(), layout)
        } else {
            let mesh = self.collective_mesh_axis(b, &args, &source, range)?;
            let dim = self.sharded_dim(b, &source, tr, mesh)?;
            collective_result(b, &source, dim, mesh)
        };
        Some(Value::Tensor(Box::new(Tensor {
            name: String::new(),
            def: self.span(range),
            shape,
            dtype: source.dtype,
            layout,
            init: None,
            origin: TensorOrigin::Derived {
                op: b.name(),
                source: source.name.clone(),
            },
        })))
    }

    /// A collective's first argument: the source tensor, and where it is written.
    fn collective_source(
        &mut self,
        b: Builtin,
        args: &Args<'db>,
    ) -> Option<(Tensor<'db>, TextRange)> {
        let (tv, tr) = args.get(0)?.clone();
        match tv {
            Value::Tensor(t) => Some((*t, tr)),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    tr,
                    format!("`{}` takes a tensor, not {}", b.name(), v.describe()),
                );
                None
            }
        }
    }

    /// `relayout`'s layout: a `TensorLayout` of the source's rank.
    fn relayout_layout(&mut self, source: &Tensor<'db>, args: &Args<'db>) -> Option<Layout> {
        let (lv, lr) = args.get(1)?.clone();
        let layout = match lv {
            Value::Layout(l) => l,
            Value::Unknown => return None,
            v => {
                self.error(
                    Code::WrongKind,
                    lr,
                    format!("`relayout` takes a TensorLayout, not {}", v.describe()),
                );
                return None;
            }
        };
        if layout.dims.len() != source.shape.len() {
            self.error(
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
        Some(layout)
    }

    /// A reducing collective's `op` (if it has one: "sum", "max" or "min") and its mesh axis,
    /// a non-negative integer; left out, the one mesh axis `source` is sharded on (as the
    /// tutorial's `allreduce(partial_sum)`), WSP203 at the call `range` when there is not one.
    fn collective_mesh_axis(
        &mut self,
        b: Builtin,
        args: &Args<'db>,
        source: &Tensor<'db>,
        range: TextRange,
    ) -> Option<u32> {
        let params = b.params().unwrap_or(&[]);
        if let Some(i) = params.iter().position(|p| p.name == "op")
            && let Some((ov, or)) = args.get(i).cloned()
        {
            match ov {
                Value::Str(op) if REDUCE_OPS.contains(&op.as_str()) => {}
                Value::Unknown => return None,
                v => {
                    self.error(
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
        let mi = params.iter().position(|p| p.name == "mesh_axis")?;
        let Some((mv, mr)) = args.get(mi).cloned() else {
            let mut axes: Vec<u32> = source.layout.mesh_axes().map(|(_, m)| m).collect();
            axes.sort_unstable();
            axes.dedup();
            if let [m] = axes[..] {
                return Some(m);
            }
            let why = if axes.is_empty() {
                format!("`{}` is not sharded", source.name)
            } else {
                let list: Vec<String> = axes.iter().map(|m| format!("mesh_axis={m}")).collect();
                format!(
                    "`{}` is sharded on several mesh axes: give one of {}",
                    source.name,
                    list.join(", ")
                )
            };
            self.error(
                Code::WrongArguments,
                range,
                format!("`{}` without `mesh_axis`: {why}", b.name()),
            );
            return None;
        };
        match mv {
            Value::Int(m) if m >= 0 => Some(m as u32),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::WrongKind,
                    mr,
                    format!(
                        "a mesh axis is a non-negative integer, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// The source's dimension sharded on the mesh axis; WSP401 (at the source argument `tr`)
    /// if none is.
    fn sharded_dim(
        &mut self,
        b: Builtin,
        source: &Tensor<'db>,
        tr: TextRange,
        mesh: u32,
    ) -> Option<usize> {
        let Some((dim, _)) = source.layout.mesh_axes().find(|(_, m)| *m == mesh) else {
            let d = Diag::new(
                Code::LayoutConflict,
                self.span(tr),
                format!(
                    "`{}` over mesh axis {mesh}, but `{}` (layout {}) is not sharded on it",
                    b.name(),
                    source.name,
                    source.layout
                ),
            )
            .with_related(source.def, format!("`{}` is defined here", source.name));
            self.push(d);
            return None;
        };
        Some(dim)
    }
}

/// The shape and layout of a reducing collective's result over the source's dimension `dim`
/// (sharded on mesh axis `mesh`): `allgather` replicates it; `allreduce` and `reduce_scatter`
/// sum it away, `reduce_scatter` sharding the result's first dimension on the mesh axis.
fn collective_result(b: Builtin, source: &Tensor<'_>, dim: usize, mesh: u32) -> (Vec<u64>, Layout) {
    if b == Builtin::Allgather {
        let mut layout = source.layout.clone();
        layout.dims[dim] = DimLayout::Replicate;
        return (source.shape.clone(), layout);
    }
    let mut shape = source.shape.clone();
    shape.remove(dim);
    if shape.is_empty() {
        shape.push(1);
    }
    let mut layout = Layout::replicated(shape.len().max(1));
    if b == Builtin::ReduceScatter {
        layout.dims[0] = DimLayout::Shard(mesh);
    }
    (shape, layout)
}

const REDUCE_OPS: &[&str] = &["sum", "max", "min"];
