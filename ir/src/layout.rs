//! How each AICore kernel's tile parameters lie in global memory (for `wsp emit`), decided from
//! every task that calls the kernel. A tile is the last two dimensions a task's view keeps, of a
//! declared tensor or of a view of one (`X.T`, `X.reshape(...)`: the base's bytes read in
//! another order), so its row and column strides are known when the tree is emitted:
//!
//! - columns one element apart (every task): an ND tensor with a run-time row stride;
//! - else rows one element apart: a DN (column-major) tensor with a run-time column stride,
//!   which A2/A3 loads only into an L1 tile for the cube's right operand (as PTO-ISA's flash
//!   attention loads K transposed), or into a column (`[M,1]`) UB tile;
//! - else no A2/A3 load reads it: the emit is refused, naming the kernel, the parameter and
//!   the view.
//!
//! A column (`[M,1]`) parameter is DN whatever its column stride: its rows must be one element
//! apart, as A2/A3 loads and stores a column-major UB tile only as contiguous elements.

use std::collections::BTreeMap;

use crate::arch::GmLayout;
use crate::kernel::{KernelBody, Operand, ParamType};
use crate::plan::{TaskArg, TensorOrigin, ViewIndex};
use crate::{Kernel, Program};

/// Why a program's views cannot be laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError {
    /// Names the kernel, the parameter and the view.
    pub message: String,
    /// The view's tiles have neither their rows nor their columns contiguous, whatever reads
    /// them (the analyzer reports that at the view); else it is how a kernel reads it.
    pub unreadable_view: bool,
}

impl LayoutError {
    fn of_use(message: String) -> LayoutError {
        LayoutError {
            message,
            unreadable_view: false,
        }
    }
}

/// Per kernel and tile parameter, its layout (ND where absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layouts(BTreeMap<(String, String), GmLayout>);

impl Layouts {
    /// The layouts of one kernel's parameters, by name.
    pub fn of_kernel<'a>(
        &'a self,
        kernel: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a GmLayout)> + 'a {
        self.0
            .iter()
            .filter(move |((k, _), _)| k == kernel)
            .map(|((_, p), l)| (p.as_str(), l))
    }

    pub fn of(&self, kernel: &str, param: &str) -> GmLayout {
        self.0
            .get(&(kernel.to_string(), param.to_string()))
            .copied()
            .unwrap_or(GmLayout::Nd)
    }
}

/// The row and column strides, in elements of the memory it lies in, of the tile a view of
/// `tensor` keeps; `None` for a tensor the programs do not hold.
fn tile_strides(programs: &[Program], tensor: &str, indices: &[ViewIndex]) -> Option<(u64, u64)> {
    let t = programs
        .iter()
        .flat_map(|p| &p.tensors)
        .find(|t| t.name == tensor)?;
    let row_major = |shape: &[u64]| -> Vec<u64> {
        let mut s = vec![1u64; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            s[d] = s[d + 1] * shape[d + 1];
        }
        s
    };
    let strides = match &t.origin {
        TensorOrigin::View { base, dims } => {
            let b = programs
                .iter()
                .flat_map(|p| &p.tensors)
                .find(|x| x.name == *base)?;
            let bs = row_major(&b.shape);
            dims.iter()
                .map(|d| bs.get(d.base_dim as usize).map_or(0, |s| s * d.step))
                .collect()
        }
        _ => row_major(&t.shape),
    };
    // As the runtime and the expander: the last two dimensions the view keeps.
    let kept: Vec<u64> = (0..t.shape.len())
        .filter(|&d| !matches!(indices.get(d), Some(ViewIndex::At(_))))
        .map(|d| strides[d])
        .collect();
    Some(match kept.len() {
        0 => (0, 1),
        1 => (0, kept[0]),
        n => (kept[n - 2], kept[n - 1]),
    })
}

/// Whether every read of tile parameter `p` of `k` is as a matmul's right operand.
fn only_right_operand(k: &Kernel, p: &str) -> bool {
    let KernelBody::Ops(ops) = &k.body else {
        return false;
    };
    let me = Operand::Param(p.to_string());
    ops.iter().all(|o| {
        let uses: Vec<usize> = (0..o.args.len()).filter(|&n| o.args[n] == me).collect();
        uses.is_empty() || (o.op == "matmul" && uses == [1])
    })
}

/// The layouts of every kernel's tile parameters over `programs` (the file's, split for the
/// architecture). `Err` names a task whose view no A2/A3 load can read.
pub fn layouts(programs: &[Program]) -> Result<Layouts, LayoutError> {
    let mut out = Layouts::default();
    for program in programs {
        let mut tasks = Vec::new();
        for w in &program.workloads {
            crate::plan::tasks(&w.body, &mut tasks);
        }
        for t in tasks {
            let Some(k) = program.kernels.iter().find(|k| k.name == t.kernel) else {
                continue;
            };
            for p in &k.params {
                let ParamType::Tile(_, tile) = &p.ty else {
                    continue;
                };
                let Some(TaskArg::Tile { view, .. }) = t.arg(&p.name) else {
                    continue;
                };
                let Some((rows, cols)) = tile_strides(programs, &view.tensor, &view.indices) else {
                    continue;
                };
                let column = crate::buffers::is_column(*tile);
                let layout = if column {
                    if rows != 1 {
                        return Err(LayoutError::of_use(format!(
                            "kernel `{}`: its column `{}` ({tile}) is given `{view}`, whose rows are {rows} elements apart; an Ascend 910B (A2/A3) loads and stores a column tile only as contiguous elements: give it a tensor whose last dimension is 1, or a [1, {}] row",
                            k.name, p.name, tile.rows
                        )));
                    }
                    GmLayout::Dn
                } else if cols == 1 || tile.cols == 1 {
                    GmLayout::Nd
                } else if rows == 1 || tile.rows == 1 {
                    if !only_right_operand(k, &p.name) {
                        return Err(LayoutError::of_use(format!(
                            "kernel `{}`: `{}` is given `{view}`, whose columns are {cols} elements apart (a transposed view); an Ascend 910B (A2/A3) reads such a tile only as a matmul's right operand (`pto.matmul(a, {})`), which this kernel does not: declare the tensor in the order the kernel reads it",
                            k.name, p.name, p.name
                        )));
                    }
                    GmLayout::Dn
                } else {
                    return Err(LayoutError {
                        message: format!(
                            "kernel `{}`: `{}` is given `{view}`, whose rows are {rows} and columns {cols} elements apart; no A2/A3 load reads a tile with neither its rows nor its columns contiguous",
                            k.name, p.name
                        ),
                        unreadable_view: true,
                    });
                };
                let key = (k.name.clone(), p.name.clone());
                match out.0.get(&key) {
                    Some(l) if *l != layout => {
                        return Err(LayoutError::of_use(format!(
                            "kernel `{}`: `{}` is given both row-major and transposed views (`{view}` is {layout:?}); an AICore kernel reads a parameter one way: give it one kind of view",
                            k.name, p.name
                        )));
                    }
                    _ => {
                        out.0.insert(key, layout);
                    }
                }
            }
        }
    }
    Ok(out)
}
