//! Splits kernels that mix cube and vector work into parts an architecture without on-core
//! L0C→UB and UB→L1 moves can run (A2/A3: separate AIC and AIV cores), and the program's tasks
//! with them.
//!
//! A kernel's ops are put in stages that alternate between the cube and the vector unit: each
//! op goes to the earliest stage of its unit after the stages of the values and memory it
//! depends on. Each stage becomes a kernel of its own (`attn_head_aic0`, `attn_head_aiv1`,
//! ...). A value one stage computes and a later one reads passes through global memory: the
//! producing part stores it into a workspace tensor the split adds to the program, and each
//! reading part loads it. Loads of parameters, constants and scalar arithmetic belong to no
//! unit and are repeated in every part that needs them.
//!
//! Each task of a split kernel becomes one task per part, in stage order and with the task's
//! index, so the runtime's region tracking orders them: a part reads the workspace its
//! predecessor wrote. A task's workspace is indexed by the static `P`/`P.seq` loop variables
//! around it, so instances of a parallel loop get their own; where a loop's extent is known
//! only at run time the instances share one, and the same region tracking orders them.
//! This is how hw-native-sys/simpler splits its paged attention (`aic_qk_matmul` →
//! `aiv_softmax_prepare` → `aic_pv_matmul` → `aiv_online_update`).

use std::collections::BTreeSet;

use crate::Program;
use crate::affine::Affine;
use crate::arch::Arch;
use crate::kernel::{Kernel, KernelBody, Op, Operand, Param, ParamType, ValueType};
use crate::plan::{AxisKind, Direction, LoopVar, Node, Task, TaskArg, Tensor, View, ViewIndex};
use crate::types::TileType;
pub use crate::units::Core;
use crate::units::{Place, is_tile_param, place};

/// The most bytes one workspace tensor takes; past it, loop variables stop indexing it
/// (innermost first) and their iterations share it.
pub const MAX_WORKSPACE_BYTES: u64 = 256 << 20;

/// One part of a split kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub kernel: Kernel,
    /// The core it runs on; `None`: one mixed launch of a cube core and its vector cores
    /// ([`crate::mixed`]).
    pub core: Option<Core>,
    /// What each tile or scalar parameter of the part is given, in the part's parameter order.
    pub args: Vec<PartArg>,
    /// For each op of the part, the op of the original kernel it computes or passes on (a
    /// workspace load or store: the op whose value it carries), for diagnostics.
    pub origin: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartArg {
    /// The original kernel's parameter of this name.
    Param(String),
    /// Workspace `n` of the split.
    Workspace(usize),
}

/// A kernel split into parts, with the workspace tiles they pass values through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSplit {
    pub parts: Vec<Part>,
    pub workspaces: Vec<TileType>,
}

/// `matmul(a, b, acc)` as `add(matmul(a, b), acc)` where the accumulator is not a load of
/// the stored parameter itself (which the cube adds in global memory with an atomic store):
/// the sum is vector work. Indices after each rewritten matmul move up by one; with each new
/// op, the original op it comes from.
fn separate_accumulators(ops: &[Op]) -> (Vec<Op>, Vec<u32>) {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len());
    let mut from: Vec<u32> = Vec::with_capacity(ops.len());
    let mut map: Vec<u32> = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let remap = |a: &Operand| match a {
            Operand::Value(v) => Operand::Value(map[*v as usize]),
            a => a.clone(),
        };
        let args: Vec<Operand> = op.args.iter().map(remap).collect();
        if op.op == "matmul"
            && args.len() > 2
            && crate::buffers::accumulates_in_place(ops, i).is_none()
        {
            out.push(Op {
                op: "matmul".into(),
                args: args[..2].to_vec(),
                ty: op.ty,
            });
            let product = Operand::Value(out.len() as u32 - 1);
            out.push(Op {
                op: "add".into(),
                args: vec![product, args[2].clone()],
                ty: op.ty,
            });
        } else {
            out.push(Op {
                op: op.op.clone(),
                args,
                ty: op.ty,
            });
        }
        from.resize(out.len(), i as u32);
        map.push(out.len() as u32 - 1);
    }
    (out, from)
}

/// The parameters op `i` reads, each with the op index the read happens at: a `load`'s
/// position for a loaded operand, `i` for a parameter read directly.
fn reads(k: &Kernel, ops: &[Op], i: usize) -> Vec<(String, usize)> {
    let op = &ops[i];
    let skip = usize::from(op.op == "store"); // a store's first operand is where it writes
    op.args
        .iter()
        .skip(skip)
        .filter_map(|a| match a {
            Operand::Param(p) if is_tile_param(k, a) => Some((p.clone(), i)),
            Operand::Value(v) => match &ops[*v as usize] {
                Op { op, args, .. } if op == "load" => match args.first() {
                    Some(Operand::Param(p)) => Some((p.clone(), *v as usize)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn writes(ops: &[Op], i: usize) -> Option<&str> {
    match (ops[i].op.as_str(), ops[i].args.first()) {
        ("store", Some(Operand::Param(p))) => Some(p),
        _ => None,
    }
}

/// The core stage `s` runs on when stage 0 runs on `first`.
fn core_of(first: Core, s: usize) -> Core {
    if s.is_multiple_of(2) {
        first
    } else {
        first.other()
    }
}

/// Each op's stage (`None`: it runs anywhere) when stage 0 runs on `first`: the earliest
/// stage of its unit after the stages of the values it reads, the stores before its reads,
/// and (for a store) the stores and reads of its parameter before it.
fn assign_stages(k: &Kernel, ops: &[Op], places: &[Place], first: Core) -> Vec<Option<usize>> {
    let mut stage: Vec<Option<usize>> = vec![None; ops.len()];
    for i in 0..ops.len() {
        let Place::On(core) = places[i] else { continue };
        let mut lb = 0;
        let mut after = |j: usize, stage: &[Option<usize>]| {
            if let (Some(s), Place::On(c)) = (stage[j], places[j]) {
                lb = lb.max(s + usize::from(c != core));
            }
        };
        for a in &ops[i].args {
            if let Operand::Value(v) = a {
                after(*v as usize, &stage);
            }
        }
        for (p, at) in reads(k, ops, i) {
            for s in 0..at {
                if writes(ops, s) == Some(p.as_str()) {
                    after(s, &stage);
                }
            }
        }
        if let Some(p) = writes(ops, i) {
            for j in 0..i {
                if writes(ops, j) == Some(p)
                    || reads(k, ops, j).iter().any(|(q, at)| q == p && *at < i)
                {
                    after(j, &stage);
                }
            }
        }
        let mut s = lb;
        while core_of(first, s) != core {
            s += 1;
        }
        stage[i] = Some(s);
    }
    stage
}

/// Splits `k` into parts for `arch`, or `None` when it runs as it is (one unit's work, a
/// C++ body, or an architecture whose cores mix units). `Err` says why it cannot be split.
pub fn split_kernel(k: &Kernel, arch: &Arch) -> Result<Option<KernelSplit>, String> {
    let KernelBody::Ops(original) = &k.body else {
        return Ok(None);
    };
    if arch.mixes_units() {
        return Ok(None);
    }
    // A loop mixing the units runs as one mixed launch, its hand-offs through a ring the
    // split adds as a workspace; any other loop kernel runs as it is (`wsp_aicore` writes a
    // GEMM, and says why it cannot write the rest).
    if k.iterates() {
        return Ok(crate::mixed::plan(k, arch).ok().map(|m| mixed_part(k, &m)));
    }
    let (ops, from) = separate_accumulators(original);
    let mut places: Vec<Place> = Vec::with_capacity(ops.len());
    for i in 0..ops.len() {
        let p = place(k, &ops, i, &places, arch);
        places.push(p);
    }
    // One unit's work runs as it is.
    if !places.contains(&Place::On(Core::Cube)) || !places.contains(&Place::On(Core::Vector)) {
        return Ok(None);
    }
    // Start with the unit that gives fewer stages; on a tie, the first op's.
    let first_op = places
        .iter()
        .find_map(|p| match p {
            Place::On(c) => Some(*c),
            Place::Anywhere => None,
        })
        .unwrap_or(Core::Vector);
    let count = |st: &[Option<usize>]| st.iter().flatten().max().map_or(0, |m| m + 1);
    let (first, stage) = [first_op, first_op.other()]
        .into_iter()
        .map(|f| (f, assign_stages(k, &ops, &places, f)))
        .min_by_key(|(_, st)| count(st))
        .expect("two candidates");
    let core_of = |s: usize| core_of(first, s);
    // A read placed before a store of the same parameter must not run after it.
    for j in 0..ops.len() {
        let Some(sj) = stage[j] else { continue };
        for (p, at) in reads(k, &ops, j) {
            for (s, ss) in stage.iter().enumerate().take(j).skip(at + 1) {
                if writes(&ops, s) == Some(p.as_str()) && ss.is_some_and(|ss| sj > ss) {
                    return Err(format!(
                        "a value of `{p}` loaded before a store to it is read on the other core, which runs after the store: read it on the store's core, or load `{p}` again after the store"
                    ));
                }
            }
        }
    }
    let stages = count(&stage);

    // Values a later stage reads: one workspace each.
    let mut crossing: Vec<usize> = Vec::new();
    for i in 0..ops.len() {
        let Some(si) = stage[i] else { continue };
        for a in &ops[i].args {
            if let Operand::Value(v) = a
                && stage[*v as usize].is_some_and(|sv| sv != si)
                && !crossing.contains(&(*v as usize))
            {
                crossing.push(*v as usize);
            }
        }
    }
    crossing.sort_unstable();
    let workspaces: Vec<TileType> = crossing
        .iter()
        .map(|&v| match ops[v].ty {
            ValueType::Tile(t) => Ok(t),
            _ => Err(format!("op %{v} passes a scalar between cores")),
        })
        .collect::<Result<_, _>>()?;
    let ws_param = |n: usize| {
        let mut name = format!("ws{n}");
        while k.params.iter().any(|p| p.name == name) {
            name.insert(0, '_');
        }
        name
    };

    let mut parts = Vec::with_capacity(stages);
    for s in 0..stages {
        // The ops of the stage, and what runs anywhere that they need.
        let mut needed = vec![false; ops.len()];
        for i in (0..ops.len()).rev() {
            if stage[i] == Some(s) {
                needed[i] = true;
            }
            if needed[i] && (stage[i] == Some(s) || places[i] == Place::Anywhere) {
                for a in &ops[i].args {
                    if let Operand::Value(v) = a {
                        needed[*v as usize] = true;
                    }
                }
            }
        }
        let mut body: Vec<Op> = Vec::new();
        let mut origin: Vec<u32> = Vec::new();
        let mut map: Vec<Option<u32>> = vec![None; ops.len()];
        let mut ws_reads = BTreeSet::new();
        let mut ws_writes = BTreeSet::new();
        for i in 0..ops.len() {
            if !needed[i] {
                continue;
            }
            let from_ws = stage[i].is_some_and(|si| si != s);
            if from_ws {
                let n = crossing
                    .iter()
                    .position(|&c| c == i)
                    .expect("a crossing value");
                ws_reads.insert(n);
                body.push(Op {
                    op: "load".into(),
                    args: vec![Operand::Param(ws_param(n))],
                    ty: ops[i].ty,
                });
            } else {
                let args = ops[i]
                    .args
                    .iter()
                    .map(|a| match a {
                        Operand::Value(v) => {
                            Operand::Value(map[*v as usize].expect("defined before"))
                        }
                        a => a.clone(),
                    })
                    .collect();
                body.push(Op {
                    op: ops[i].op.clone(),
                    args,
                    ty: ops[i].ty,
                });
            }
            let at = body.len() as u32 - 1;
            map[i] = Some(at);
            origin.push(from[i]);
            if !from_ws && let Some(n) = crossing.iter().position(|&c| c == i) {
                ws_writes.insert(n);
                body.push(Op {
                    op: "store".into(),
                    args: vec![Operand::Param(ws_param(n)), Operand::Value(at)],
                    ty: ValueType::Unit,
                });
                origin.push(from[i]);
            }
        }
        // The original parameters the part uses, in their order, with the part's direction.
        let mut params = Vec::new();
        let mut args = Vec::new();
        for p in &k.params {
            let used = |o: &Op| o.args.contains(&Operand::Param(p.name.clone()));
            if !body.iter().any(used) {
                continue;
            }
            let ty = match &p.ty {
                ParamType::Tile(_, t) => {
                    let stored = body.iter().any(|o| {
                        o.op == "store" && o.args.first() == Some(&Operand::Param(p.name.clone()))
                    });
                    let read = body.iter().any(|o| {
                        o.op != "store" && used(o)
                            || o.op == "store"
                                && o.args.get(1) == Some(&Operand::Param(p.name.clone()))
                    });
                    let dir = match (read, stored) {
                        (true, true) => Direction::InOut,
                        (false, true) => Direction::Out,
                        _ => Direction::In,
                    };
                    ParamType::Tile(dir, *t)
                }
                ty => ty.clone(),
            };
            params.push(Param {
                name: p.name.clone(),
                ty,
            });
            args.push(PartArg::Param(p.name.clone()));
        }
        for n in ws_reads.union(&ws_writes) {
            let dir = if ws_writes.contains(n) {
                Direction::Out
            } else {
                Direction::In
            };
            params.push(Param {
                name: ws_param(*n),
                ty: ParamType::Tile(dir, workspaces[*n]),
            });
            args.push(PartArg::Workspace(*n));
        }
        let core = core_of(s);
        parts.push(Part {
            kernel: Kernel {
                name: format!("{}_{}{s}", k.name, core.name()),
                params,
                body: KernelBody::Ops(body),
                loops: Vec::new(),
            },
            core: Some(core),
            args,
            origin,
        });
    }
    Ok(Some(KernelSplit { parts, workspaces }))
}

/// A mixed loop kernel as one part: the kernel with its ring workspace as a last parameter.
fn mixed_part(k: &Kernel, m: &crate::mixed::Mixed) -> KernelSplit {
    let mut kernel = k.clone();
    kernel.name = format!("{}_mix", k.name);
    kernel.params.push(Param {
        name: crate::mixed::RING_PARAM.into(),
        ty: ParamType::Tile(Direction::InOut, m.ring_tile()),
    });
    let mut args: Vec<PartArg> = k
        .params
        .iter()
        .map(|p| PartArg::Param(p.name.clone()))
        .collect();
    args.push(PartArg::Workspace(0));
    let ops = match &k.body {
        KernelBody::Ops(ops) => ops.len() as u32,
        KernelBody::Cpp { .. } => 0,
    };
    KernelSplit {
        parts: vec![Part {
            kernel,
            core: None,
            args,
            origin: (0..ops).collect(),
        }],
        workspaces: vec![m.ring_tile()],
    }
}

/// `p` as `arch` runs it: bf16 math in f32 (`crate::widen`), every kernel that mixes units
/// split into parts, and every task of one replaced by a task per part. `Err` names a kernel
/// that cannot be split.
pub fn split_program(p: &Program, arch: &Arch) -> Result<Program, String> {
    let mut splits: Vec<(String, KernelSplit)> = Vec::new();
    let mut kernels: Vec<Kernel> = Vec::new();
    // A part named like another kernel, or another part, gets a suffix.
    let mut names: BTreeSet<String> = p.kernels.iter().map(|k| k.name.clone()).collect();
    for k in &p.kernels {
        let wide = crate::widen::widen_bf16(k).map(|(w, _)| w);
        let k = wide.as_ref().unwrap_or(k);
        match split_kernel(k, arch).map_err(|e| format!("kernel `{}`: {e}", k.name))? {
            Some(mut s) => {
                for part in &mut s.parts {
                    while !names.insert(part.kernel.name.clone()) {
                        part.kernel.name.push('_');
                    }
                    kernels.push(part.kernel.clone());
                }
                splits.push((k.name.clone(), s));
            }
            None => kernels.push(k.clone()),
        }
    }
    let mut out = p.clone();
    out.kernels = kernels;
    if splits.is_empty() {
        return Ok(out);
    }
    let mut tensors = std::mem::take(&mut out.tensors);
    for w in &mut out.workloads {
        let mut all = Vec::new();
        crate::plan::tasks(&w.body, &mut all);
        let mut next_id = all.iter().map(|t| t.id).max().unwrap_or(0) + 1;
        let mut cx = Rewrite {
            splits: &splits,
            tensors: &mut tensors,
            next_id: &mut next_id,
            workload: &w.name,
        };
        w.body = cx.nodes(&w.body, &mut Vec::new())?;
    }
    out.tensors = tensors;
    Ok(out)
}

struct Rewrite<'a> {
    splits: &'a [(String, KernelSplit)],
    tensors: &'a mut Vec<Tensor>,
    next_id: &'a mut u32,
    workload: &'a str,
}

impl Rewrite<'_> {
    fn nodes(&mut self, nodes: &[Node], vars: &mut Vec<LoopVar>) -> Result<Vec<Node>, String> {
        let mut out = Vec::with_capacity(nodes.len());
        for n in nodes {
            match n {
                Node::Loop {
                    kind,
                    vars: v,
                    body,
                    site,
                } => {
                    let depth = vars.len();
                    vars.extend(v.iter().cloned());
                    let body = self.nodes(body, vars)?;
                    vars.truncate(depth);
                    out.push(Node::Loop {
                        kind: *kind,
                        vars: v.clone(),
                        body,
                        site: *site,
                    });
                }
                Node::Consume { channel, var, body } => out.push(Node::Consume {
                    channel: channel.clone(),
                    var: var.clone(),
                    body: self.nodes(body, vars)?,
                }),
                Node::Conditional { branches } => {
                    let mut bs = Vec::with_capacity(branches.len());
                    for b in branches {
                        bs.push(crate::plan::Branch {
                            predicate: b.predicate.clone(),
                            body: self.nodes(&b.body, vars)?,
                            site: b.site,
                        });
                    }
                    out.push(Node::Conditional { branches: bs });
                }
                Node::Pipeline { stages } => out.push(Node::Pipeline {
                    stages: self.nodes(stages, vars)?,
                }),
                Node::Task(t) => match self.splits.iter().find(|(k, _)| *k == t.kernel) {
                    Some((_, s)) => out.extend(self.task(t, s, vars)?.into_iter().map(Node::Task)),
                    None => out.push(n.clone()),
                },
                Node::Send { .. } | Node::SlotLoad { .. } => out.push(n.clone()),
            }
        }
        Ok(out)
    }

    /// One task per part; the last keeps the task's id, which `send` names.
    fn task(&mut self, t: &Task, s: &KernelSplit, vars: &[LoopVar]) -> Result<Vec<Task>, String> {
        let names: Vec<(String, Vec<ViewIndex>)> = s
            .workspaces
            .iter()
            .enumerate()
            .map(|(n, tile)| self.workspace(t, n, *tile, vars))
            .collect::<Result<_, _>>()?;
        let mut tasks = Vec::with_capacity(s.parts.len());
        for (i, part) in s.parts.iter().enumerate() {
            let mut args = Vec::with_capacity(part.args.len());
            for (param, a) in part.kernel.params.iter().zip(&part.args) {
                let dir = match param.ty {
                    ParamType::Tile(d, _) => Some(d),
                    _ => None,
                };
                match a {
                    PartArg::Param(name) => {
                        let Some(arg) = t.arg(name) else {
                            if dir.is_none() {
                                continue; // a scalar left at its default
                            }
                            return Err(format!(
                                "task of `{}` gives no argument for `{name}`",
                                t.kernel
                            ));
                        };
                        args.push(match (arg, dir) {
                            (TaskArg::Tile { param, view, .. }, Some(direction)) => TaskArg::Tile {
                                param: param.clone(),
                                direction,
                                view: view.clone(),
                            },
                            (a, _) => a.clone(),
                        });
                    }
                    PartArg::Workspace(n) => {
                        let (tensor, indices) = &names[*n];
                        args.push(TaskArg::Tile {
                            param: param.name.clone(),
                            direction: dir.unwrap_or(Direction::InOut),
                            view: View {
                                tensor: tensor.clone(),
                                indices: indices.clone(),
                            },
                        });
                    }
                }
            }
            let last = i + 1 == s.parts.len();
            let id = if last {
                t.id
            } else {
                *self.next_id += 1;
                *self.next_id - 1
            };
            tasks.push(Task {
                id,
                kernel: part.kernel.name.clone(),
                index: t.index.clone(),
                fields: t.fields.clone(),
                args,
                site: t.site,
            });
        }
        Ok(tasks)
    }

    /// Adds the tensor workspace `n` of task `t` lives in; its name and the task's view of it.
    fn workspace(
        &mut self,
        t: &Task,
        n: usize,
        tile: TileType,
        vars: &[LoopVar],
    ) -> Result<(String, Vec<ViewIndex>), String> {
        // Indexed by the loop variables with static extents, outermost first, while it fits.
        let mut indexed: Vec<&LoopVar> = vars
            .iter()
            .filter(|v| v.axis_kind == AxisKind::Dense && v.extent.is_some_and(|e| e > 0))
            .collect();
        let bytes = |vs: &[&LoopVar]| {
            vs.iter()
                .try_fold(tile.bytes(), |b, v| b.checked_mul(v.extent?))
        };
        while bytes(&indexed).is_none_or(|b| b > MAX_WORKSPACE_BYTES) {
            if indexed.pop().is_none() {
                return Err(format!(
                    "a workspace of kernel `{}` ({tile}) exceeds {MAX_WORKSPACE_BYTES} bytes",
                    t.kernel
                ));
            }
        }
        let base = format!("{}_{}_ws{n}", self.workload, t.kernel);
        let mut name = base.clone();
        let mut k = 1;
        while self.tensors.iter().any(|x| x.name == name) {
            k += 1;
            name = format!("{base}_{k}");
        }
        let mut shape: Vec<u64> = indexed.iter().filter_map(|v| v.extent).collect();
        shape.extend([tile.rows, tile.cols]);
        let ring = self
            .splits
            .iter()
            .find(|(k, _)| *k == t.kernel)
            .is_some_and(|(_, s)| s.parts.iter().any(|p| p.core.is_none()));
        self.tensors.push(Tensor {
            name: name.clone(),
            shape,
            dtype: tile.dtype,
            layout: crate::plan::Layout::replicated(indexed.len() + 2),
            init: None,
            origin: match ring {
                true => crate::plan::TensorOrigin::Ring {
                    kernel: t.kernel.clone(),
                },
                false => crate::plan::TensorOrigin::Declared,
            },
        });
        let indices = indexed
            .iter()
            .map(|v| ViewIndex::At(Affine::var(&v.name)))
            .collect();
        Ok((name, indices))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::arch::A2A3;
    use crate::plan::F64;
    use crate::types::DType::{self, F16, F32};

    fn tile(name: &str, dir: Direction, rows: u64, cols: u64, dtype: DType) -> Param {
        Param {
            name: name.into(),
            ty: ParamType::Tile(dir, TileType::new(rows, cols, dtype)),
        }
    }

    fn op(name: &str, args: Vec<Operand>, ty: ValueType) -> Op {
        Op {
            op: name.into(),
            args,
            ty,
        }
    }

    fn t(rows: u64, cols: u64, dtype: DType) -> ValueType {
        ValueType::Tile(TileType::new(rows, cols, dtype))
    }

    fn p(name: &str) -> Operand {
        Operand::Param(name.into())
    }

    fn v(i: u32) -> Operand {
        Operand::Value(i)
    }

    fn kernel(name: &str, params: Vec<Param>, ops: Vec<Op>) -> Kernel {
        Kernel {
            name: name.into(),
            params,
            body: KernelBody::Ops(ops),
            loops: Vec::new(),
        }
    }

    fn check(k: &Kernel, want: Expect) {
        let text = match split_kernel(k, &A2A3) {
            Ok(Some(s)) => s
                .parts
                .iter()
                .map(|p| format!("{:?} {:?}\n{}", p.core.expect("one core"), p.args, p.kernel))
                .collect::<String>(),
            Ok(None) => "runs as it is\n".into(),
            Err(e) => format!("error: {e}\n"),
        };
        want.assert_eq(&text);
    }

    /// `examples/transformer_layer.wsp`'s attention head.
    fn attn_head() -> Kernel {
        use Direction::{In, Out};
        kernel(
            "attn_head",
            vec![
                tile("q", In, 64, 32, F16),
                tile("k", In, 64, 32, F16),
                tile("v", In, 64, 32, F16),
                tile("o", Out, 64, 32, F16),
                Param {
                    name: "scale".into(),
                    ty: ParamType::Scalar(F32, Some(F64(0.125))),
                },
            ],
            vec![
                op("transpose", vec![p("k")], t(32, 64, F16)),
                op("matmul", vec![p("q"), v(0)], t(64, 64, F32)),
                op("mul", vec![v(1), p("scale")], t(64, 64, F32)),
                op("softmax", vec![v(2)], t(64, 64, F32)),
                op("cast", vec![v(3), Operand::DType(F16)], t(64, 64, F16)),
                op("matmul", vec![v(4), p("v")], t(64, 32, F32)),
                op("cast", vec![v(5), Operand::DType(F16)], t(64, 32, F16)),
                op("store", vec![p("o"), v(6)], ValueType::Unit),
            ],
        )
    }

    /// A matmul whose accumulator the vector unit computes.
    fn ffn() -> Kernel {
        use Direction::{In, Out};
        kernel(
            "ffn",
            vec![
                tile("x", In, 16, 16, F16),
                tile("w", In, 16, 16, F16),
                tile("r", In, 16, 16, F32),
                tile("y", Out, 16, 16, F32),
            ],
            vec![
                op("exp", vec![p("r")], t(16, 16, F32)),
                op("matmul", vec![p("x"), p("w"), v(0)], t(16, 16, F32)),
                op("store", vec![p("y"), v(1)], ValueType::Unit),
            ],
        )
    }

    #[test]
    fn cube_and_vector_work_alternate_through_workspaces() {
        // The transpose is the cube's transposed load, the casts after a matmul its fixpipe's.
        check(
            &attn_head(),
            expect![[r#"
                Cube [Param("q"), Param("k"), Workspace(0)]
                kernel attn_head_aic0(q: In Tile[64,32] F16, k: In Tile[64,32] F16, ws0: Out Tile[64,64] F32)
                  %0 = transpose(k) : Tile[32,64] F16
                  %1 = matmul(q, %0) : Tile[64,64] F32
                  store(ws0, %1)
                Vector [Param("scale"), Workspace(0), Workspace(1)]
                kernel attn_head_aiv1(scale: Scalar F32 = 0.125, ws0: In Tile[64,64] F32, ws1: Out Tile[64,64] F16)
                  %0 = load(ws0) : Tile[64,64] F32
                  %1 = mul(%0, scale) : Tile[64,64] F32
                  %2 = softmax(%1) : Tile[64,64] F32
                  %3 = cast(%2, F16) : Tile[64,64] F16
                  store(ws1, %3)
                Cube [Param("v"), Param("o"), Workspace(1)]
                kernel attn_head_aic2(v: In Tile[64,32] F16, o: Out Tile[64,32] F16, ws1: In Tile[64,64] F16)
                  %0 = load(ws1) : Tile[64,64] F16
                  %1 = matmul(%0, v) : Tile[64,32] F32
                  %2 = cast(%1, F16) : Tile[64,32] F16
                  store(o, %2)
            "#]],
        );
    }

    #[test]
    fn one_unit_kernels_run_as_they_are() {
        use Direction::{In, InOut, Out};
        // Vector work only.
        check(
            &kernel(
                "scale",
                vec![tile("x", In, 16, 16, F32), tile("y", Out, 16, 16, F32)],
                vec![
                    op("exp", vec![p("x")], t(16, 16, F32)),
                    op("store", vec![p("y"), v(0)], ValueType::Unit),
                ],
            ),
            expect!["runs as it is\n"],
        );
        // A matmul converted by the fixpipe, and one accumulated by an atomic store.
        check(
            &kernel(
                "proj",
                vec![
                    tile("x", In, 16, 16, F16),
                    tile("w", In, 16, 16, F16),
                    tile("y", Out, 16, 16, F16),
                    tile("h", InOut, 16, 16, F32),
                ],
                vec![
                    op("matmul", vec![p("x"), p("w")], t(16, 16, F32)),
                    op("cast", vec![v(0), Operand::DType(F16)], t(16, 16, F16)),
                    op("store", vec![p("y"), v(1)], ValueType::Unit),
                    op("load", vec![p("h")], t(16, 16, F32)),
                    op("matmul", vec![p("x"), p("w"), v(3)], t(16, 16, F32)),
                    op("store", vec![p("h"), v(4)], ValueType::Unit),
                ],
            ),
            expect!["runs as it is\n"],
        );
    }

    #[test]
    fn the_cube_converts_a_product_for_a_second_matmul_and_adds_a_bias_row_itself() {
        use Direction::{In, Out};
        let chain = |to: DType| {
            kernel(
                "chain",
                vec![
                    tile("x", In, 16, 16, F16),
                    tile("w", In, 16, 16, to),
                    tile("y", Out, 16, 16, F32),
                ],
                vec![
                    op("matmul", vec![p("x"), p("w")], t(16, 16, F32)),
                    op("cast", vec![v(0), Operand::DType(to)], t(16, 16, to)),
                    op("matmul", vec![v(1), p("w")], t(16, 16, F32)),
                    op("store", vec![p("y"), v(2)], ValueType::Unit),
                ],
            )
        };
        // L0C → L1 converts to f16 or bf16 only: an f32 product goes through the vector unit.
        check(&chain(F16), expect!["runs as it is\n"]);
        check(&chain(DType::BF16), expect!["runs as it is\n"]);
        assert!(split_kernel(&chain(F32), &A2A3).unwrap().is_some());
        let biased = |n: u64| {
            kernel(
                "biased",
                vec![
                    tile("x", In, 16, 16, F16),
                    tile("w", In, 16, n, F16),
                    tile("b", In, 1, n, F32),
                    tile("y", Out, 16, n, F32),
                ],
                vec![
                    op("load", vec![p("b")], t(1, n, F32)),
                    op("matmul", vec![p("x"), p("w")], t(16, n, F32)),
                    op("add", vec![v(0), v(1)], t(16, n, F32)),
                    op("store", vec![p("y"), v(2)], ValueType::Unit),
                ],
            )
        };
        check(&biased(256), expect!["runs as it is\n"]);
        // 272 f32 do not fit A2/A3's 1 KiB bias table: the vector unit adds them.
        check(
            &biased(272),
            expect![[r#"
                Cube [Param("x"), Param("w"), Workspace(0)]
                kernel biased_aic0(x: In Tile[16,16] F16, w: In Tile[16,272] F16, ws0: Out Tile[16,272] F32)
                  %0 = matmul(x, w) : Tile[16,272] F32
                  store(ws0, %0)
                Vector [Param("b"), Param("y"), Workspace(0)]
                kernel biased_aiv1(b: In Tile[1,272] F32, y: Out Tile[16,272] F32, ws0: In Tile[16,272] F32)
                  %0 = load(b) : Tile[1,272] F32
                  %1 = load(ws0) : Tile[16,272] F32
                  %2 = add(%0, %1) : Tile[16,272] F32
                  store(y, %2)
            "#]],
        );
    }

    #[test]
    fn an_accumulator_from_the_vector_unit_is_added_there() {
        check(
            &ffn(),
            expect![[r#"
                Cube [Param("x"), Param("w"), Workspace(0)]
                kernel ffn_aic0(x: In Tile[16,16] F16, w: In Tile[16,16] F16, ws0: Out Tile[16,16] F32)
                  %0 = matmul(x, w) : Tile[16,16] F32
                  store(ws0, %0)
                Vector [Param("r"), Param("y"), Workspace(0)]
                kernel ffn_aiv1(r: In Tile[16,16] F32, y: Out Tile[16,16] F32, ws0: In Tile[16,16] F32)
                  %0 = exp(r) : Tile[16,16] F32
                  %1 = load(ws0) : Tile[16,16] F32
                  %2 = add(%1, %0) : Tile[16,16] F32
                  store(y, %2)
            "#]],
        );
    }

    #[test]
    fn memory_order_survives_the_split() {
        use Direction::{In, InOut};
        // `h` is stored by the vector part and read back by the cube: the cube part comes
        // after, and the load in it sees the store.
        check(
            &kernel(
                "roundtrip",
                vec![tile("x", In, 16, 16, F16), tile("h", InOut, 16, 16, F16)],
                vec![
                    op("exp", vec![p("x")], t(16, 16, F16)),
                    op("store", vec![p("h"), v(0)], ValueType::Unit),
                    op("load", vec![p("h")], t(16, 16, F16)),
                    op("matmul", vec![v(2), p("x")], t(16, 16, F32)),
                    op("cast", vec![v(3), Operand::DType(F16)], t(16, 16, F16)),
                    op("store", vec![p("h"), v(4)], ValueType::Unit),
                ],
            ),
            expect![[r#"
                Vector [Param("x"), Param("h")]
                kernel roundtrip_aiv0(x: In Tile[16,16] F16, h: Out Tile[16,16] F16)
                  %0 = exp(x) : Tile[16,16] F16
                  store(h, %0)
                Cube [Param("x"), Param("h")]
                kernel roundtrip_aic1(x: In Tile[16,16] F16, h: InOut Tile[16,16] F16)
                  %0 = load(h) : Tile[16,16] F16
                  %1 = matmul(%0, x) : Tile[16,16] F32
                  %2 = cast(%1, F16) : Tile[16,16] F16
                  store(h, %2)
            "#]],
        );
        // A value loaded before a store but used by another unit after it cannot be split.
        check(
            &kernel(
                "stale",
                vec![tile("x", In, 16, 16, F16), tile("h", InOut, 16, 16, F16)],
                vec![
                    op("load", vec![p("h")], t(16, 16, F16)),
                    op("matmul", vec![p("x"), p("x")], t(16, 16, F32)),
                    op("cast", vec![v(1), Operand::DType(F16)], t(16, 16, F16)),
                    op("store", vec![p("h"), v(2)], ValueType::Unit),
                    op("exp", vec![v(0)], t(16, 16, F16)),
                    op("store", vec![p("x"), v(4)], ValueType::Unit),
                ],
            ),
            expect![[r#"
                error: a value of `h` loaded before a store to it is read on the other core, which runs after the store: read it on the store's core, or load `h` again after the store
            "#]],
        );
    }

    /// `ffn` of the accumulator test as a program: a `P` loop of 4 over it and a send of its
    /// task, beside a kernel already named like its first part.
    #[test]
    fn a_programs_tasks_become_a_task_per_part_with_their_own_workspace() {
        use crate::plan::{Composite, Layout, LoopKind, TensorOrigin, Workload};
        use Direction::{In, Out};
        let ffn = ffn();
        let clash = kernel("ffn_aic0", vec![], vec![]);
        let tensor = |name: &str, dtype| Tensor {
            name: name.into(),
            shape: vec![4, 16, 16],
            dtype,
            layout: Layout::replicated(3),
            init: None,
            origin: TensorOrigin::Declared,
        };
        let arg = |param: &str, dir, tensor: &str| TaskArg::Tile {
            param: param.into(),
            direction: dir,
            view: View {
                tensor: tensor.into(),
                indices: vec![ViewIndex::At(Affine::var("i"))],
            },
        };
        let task = Task {
            id: 7,
            kernel: "ffn".into(),
            index: vec![Affine::var("i")],
            fields: vec!["i".into()],
            args: vec![
                arg("x", In, "X"),
                arg("w", In, "W"),
                arg("r", In, "R"),
                arg("y", Out, "Y"),
            ],
            site: None,
        };
        let program = Program {
            version: crate::VERSION,
            name: "program".into(),
            target: crate::Target::AscendNpu,
            symbols: vec![],
            tensors: vec![
                tensor("X", F16),
                tensor("W", F16),
                tensor("R", F32),
                tensor("Y", F32),
            ],
            axes: vec![],
            channels: vec![],
            kernels: vec![clash, ffn],
            workloads: vec![Workload {
                name: "run".into(),
                args: vec![],
                body: vec![
                    Node::Loop {
                        kind: LoopKind::Independent,
                        vars: vec![LoopVar {
                            name: "i".into(),
                            axis: String::new(),
                            axis_kind: AxisKind::Dense,
                            extent: Some(4),
                            row: None,
                        }],
                        body: vec![Node::Task(task)],
                        site: None,
                    },
                    Node::Send {
                        channel: "c".into(),
                        task: 7,
                    },
                ],
            }],
            root: Composite::Call(0),
            schedule: vec![],
            explored: None,
        };
        let split = split_program(&program, &A2A3).unwrap();
        let names: Vec<&str> = split.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["ffn_aic0", "ffn_aic0_", "ffn_aiv1"]);
        let ws = split.tensors.last().unwrap();
        assert_eq!(
            (ws.name.as_str(), &ws.shape[..]),
            ("run_ffn_ws0", &[4, 16, 16][..])
        );
        // The last part keeps the id the send names; each reads the workspace of its loop
        // instance.
        let text = split.to_string();
        let body = &text[text.find("workload").unwrap_or(0)..];
        expect![[r#"
            workload #0 run()
              loop Independent i in range Dense x4
                task #8 ffn_aic0_[i] fields (i) (x: In X[i], w: In W[i], ws0: Out run_ffn_ws0[i])
                task #7 ffn_aiv1[i] fields (i) (r: In R[i], y: Out Y[i], ws0: In run_ffn_ws0[i])
              send c task #7

            root #0
        "#]]
        .assert_eq(body);
    }
}
