//! Enumeration: a program's composition and workload plans become tasks with concrete views,
//! schedule keys and dependencies. Run-time values (bound symbols, ragged lengths, routing,
//! predicates, slots) are read here; data written by earlier tasks is read only after those
//! tasks ran (the run flushes first).

use std::collections::HashMap;

use wsp_ir::kernel::ParamType;
use wsp_ir::plan::{
    AxisKind, Direction, IntSource, LoopKind, LoopVar, Node, TaskArg, TensorOrigin, View, ViewIndex,
};
use wsp_ir::schedule::Dispatch;
use wsp_ir::{Affine, Composite, Directive, Program, ScalarExpr, ScalarOp};

use crate::RunError;
use crate::graph::{Region, Task, TaskId, TaskKind};
use crate::run::Run;

/// More tasks than this in one ordered step are joined by a barrier, so that the next step
/// depends on one task instead of all of them.
const BARRIER_AFTER: usize = 8;

pub struct Enumerator<'a> {
    pub run: &'a mut Run,
    pub program: &'a Program,
    /// Index of the program's first kernel in the run's kernel table.
    pub kernel_base: u32,
    pub bindings: &'a HashMap<String, u64>,
    pub execution: u32,
    env: Vec<(String, i64)>,
    /// Per open ordered scope: the tasks every new task must wait for.
    after: Vec<Vec<TaskId>>,
    /// Per open recording: the tasks enumerated inside it.
    recorded: Vec<Vec<TaskId>>,
    /// The latest instance of each IR task id of the current workload.
    last_instance: HashMap<u32, TaskId>,
    pipes: Vec<Pipe>,
    dispatch_key: Option<&'a ScalarExpr>,
    stream_key: Option<&'a ScalarExpr>,
    round_robin: u32,
    /// Derived tensors by id: the op that computes them and their source's id.
    derived: HashMap<usize, (&'a str, usize)>,
}

struct Pipe {
    /// Consumer stages by channel: (var, body).
    consumers: HashMap<String, Vec<(String, Vec<Node>)>>,
    /// Per channel: the first task of each delivered item's consumer, for back-pressure.
    delivered: HashMap<String, Vec<Option<TaskId>>>,
    /// Items sent on channels nobody consumes.
    unconsumed: HashMap<String, u64>,
}

impl<'a> Enumerator<'a> {
    pub fn new(
        run: &'a mut Run,
        program: &'a Program,
        kernel_base: u32,
        bindings: &'a HashMap<String, u64>,
        execution: u32,
    ) -> Self {
        let mut dispatch_key = None;
        let mut stream_key = None;
        for d in &program.schedule {
            match d {
                Directive::Dispatch(
                    Dispatch::Affinity(k) | Dispatch::Hash(k) | Dispatch::DispatchBy(k),
                ) => dispatch_key = Some(k),
                Directive::StreamBy(k) => stream_key = Some(k),
                _ => {}
            }
        }
        let derived = program
            .tensors
            .iter()
            .filter_map(|t| match &t.origin {
                TensorOrigin::Derived { op, source } => Some((
                    run.tensors.id(&t.name)?,
                    (op.as_str(), run.tensors.id(source)?),
                )),
                TensorOrigin::Declared => None,
            })
            .collect();
        Enumerator {
            run,
            program,
            kernel_base,
            bindings,
            execution,
            env: Vec::new(),
            after: Vec::new(),
            recorded: Vec::new(),
            last_instance: HashMap::new(),
            pipes: Vec::new(),
            dispatch_key,
            stream_key,
            round_robin: 0,
            derived,
        }
    }

    pub fn composite(&mut self, c: &Composite) -> Result<(), RunError> {
        match c {
            Composite::Call(w) => {
                let Some(w) = self.program.workloads.get(*w as usize) else {
                    return Err(RunError::Invalid(format!("no workload #{w}")));
                };
                self.last_instance.clear();
                self.nodes(&w.body)
            }
            Composite::Combine(parts) => parts.iter().try_for_each(|p| self.composite(p)),
            Composite::Sequential(parts) => {
                self.after.push(Vec::new());
                let r = self.sequential(parts);
                self.after.pop();
                r
            }
        }
    }

    /// `sequential(a, b, ...)`: each part waits for a barrier joining the one before.
    fn sequential(&mut self, parts: &[Composite]) -> Result<(), RunError> {
        for (i, p) in parts.iter().enumerate() {
            self.recorded.push(Vec::new());
            let r = self.composite(p);
            let done = self.recorded.pop().unwrap_or_default();
            r?;
            if i + 1 < parts.len() {
                let b = self.barrier(&done);
                if let Some(last) = self.after.last_mut() {
                    *last = vec![b];
                }
            }
        }
        Ok(())
    }

    fn nodes(&mut self, nodes: &[Node]) -> Result<(), RunError> {
        nodes.iter().try_for_each(|n| self.node(n))
    }

    fn node(&mut self, n: &Node) -> Result<(), RunError> {
        match n {
            Node::Loop { kind, vars, body } => self.loop_(*kind, vars, body),
            Node::Conditional { branches } => {
                for b in branches {
                    let holds = match &b.predicate {
                        None => true,
                        Some(p) => self.scalar(p)? != 0,
                    };
                    if holds {
                        return self.nodes(&b.body);
                    }
                }
                Ok(())
            }
            Node::Pipeline { stages } => self.pipeline(stages),
            // A consume stage runs when its channel delivers (see `send`).
            Node::Consume { .. } => Ok(()),
            Node::Task(t) => self.task(t).map(|_| ()),
            Node::Send { channel, task } => self.send(channel, *task),
            Node::SlotLoad {
                slot,
                view,
                row,
                col,
            } => {
                let (region, rs, cs) = self.region(view, None)?;
                let t = region.tensor as usize;
                self.run.flush_if_dirty(t);
                let data = &self.run.tensors.data[t];
                let strides = strides(&data.shape);
                let base: u64 = region.lo.iter().zip(&strides).map(|(l, s)| l * s).sum();
                let at = base as i64 + row * rs + col * cs;
                let value = data.get_int(at as usize);
                self.run.slots.insert(*slot, value as u64);
                Ok(())
            }
        }
    }

    /// The values a loop variable takes.
    fn values(&mut self, v: &LoopVar) -> Result<Vec<i64>, RunError> {
        let axis = self.program.axes.iter().find(|a| a.name == v.axis);
        let Some(axis) = axis else {
            return Ok((0..v.extent.unwrap_or(0) as i64).collect());
        };
        let row = match &v.row {
            Some(r) => Some(self.affine(r)?),
            None => None,
        };
        Ok(match axis.kind {
            AxisKind::Dense => (0..axis.size as i64).collect(),
            AxisKind::DenseDyn => {
                let n = self.bindings.get(&axis.name).copied().unwrap_or(axis.size);
                (0..n as i64).collect()
            }
            AxisKind::Ragged => match row {
                None => (0..axis.size as i64).collect(),
                Some(r) => {
                    let len = self.int_at(axis.lengths.as_ref(), r, &axis.name, "lengths")?;
                    (0..len).collect()
                }
            },
            AxisKind::Sparse => match row {
                None => (0..axis.size as i64).collect(),
                Some(r) => {
                    let lo = self.int_at(axis.indptr.as_ref(), r, &axis.name, "indptr")?;
                    let hi = self.int_at(axis.indptr.as_ref(), r + 1, &axis.name, "indptr")?;
                    if hi < lo {
                        return Err(RunError::Invalid(format!(
                            "axis `{}`: indptr decreases at row {r} ({lo} then {hi})",
                            axis.name
                        )));
                    }
                    (lo..hi)
                        .map(|i| self.int_at(axis.indices.as_ref(), i, &axis.name, "indices"))
                        .collect::<Result<_, _>>()?
                }
            },
        })
    }

    /// Element `i` of an axis's integer data, from the program or from a tensor.
    fn int_at(
        &mut self,
        src: Option<&IntSource>,
        i: i64,
        axis: &str,
        role: &str,
    ) -> Result<i64, RunError> {
        let oob = |len: usize| {
            RunError::Invalid(format!(
                "axis `{axis}`: {role}[{i}] is outside its {len} entries"
            ))
        };
        match src {
            None => Err(RunError::Invalid(format!("axis `{axis}` has no {role}"))),
            Some(IntSource::List(l)) => usize::try_from(i)
                .ok()
                .and_then(|i| l.get(i))
                .map(|&v| v as i64)
                .ok_or_else(|| oob(l.len())),
            Some(IntSource::Tensor(t)) => {
                let id = self.tensor_id(t)?;
                self.run.flush_if_dirty(id);
                let data = &self.run.tensors.data[id];
                match usize::try_from(i) {
                    Ok(i) if i < data.len() => Ok(data.get_int(i)),
                    _ => Err(oob(data.len())),
                }
            }
        }
    }

    fn loop_(&mut self, kind: LoopKind, vars: &[LoopVar], body: &[Node]) -> Result<(), RunError> {
        if kind != LoopKind::Sequential {
            return self.loop_vars(kind, vars, body);
        }
        // P.seq: each iteration waits for the tasks of the one before, held in this scope.
        self.after.push(Vec::new());
        let r = self.loop_vars(kind, vars, body);
        self.after.pop();
        r
    }

    /// Nested iteration over the variables of one loop, the last varying fastest. Each
    /// variable's values are read when reached, so inner rows may depend on outer variables.
    fn loop_vars(
        &mut self,
        kind: LoopKind,
        vars: &[LoopVar],
        body: &[Node],
    ) -> Result<(), RunError> {
        let Some((first, rest)) = vars.split_first() else {
            return self.iteration(kind, body);
        };
        let values = self.values(first)?;
        for v in values {
            self.env.push((first.name.clone(), v));
            let r = self.loop_vars(kind, rest, body);
            self.env.pop();
            r?;
        }
        Ok(())
    }

    fn iteration(&mut self, kind: LoopKind, body: &[Node]) -> Result<(), RunError> {
        if kind != LoopKind::Sequential {
            return self.nodes(body);
        }
        self.recorded.push(Vec::new());
        let r = self.nodes(body);
        let done = self.recorded.pop().unwrap_or_default();
        r?;
        if !done.is_empty() {
            let wait = if done.len() > BARRIER_AFTER {
                vec![self.barrier(&done)]
            } else {
                done
            };
            if let Some(last) = self.after.last_mut() {
                *last = wait;
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, stages: &[Node]) -> Result<(), RunError> {
        let mut consumers: HashMap<String, Vec<(String, Vec<Node>)>> = HashMap::new();
        for s in stages {
            if let Node::Consume { channel, var, body } = s {
                consumers
                    .entry(channel.clone())
                    .or_default()
                    .push((var.clone(), body.clone()));
            }
        }
        self.pipes.push(Pipe {
            consumers,
            delivered: HashMap::new(),
            unconsumed: HashMap::new(),
        });
        let r = stages
            .iter()
            .filter(|s| !matches!(s, Node::Consume { .. }))
            .try_for_each(|s| self.node(s));
        let pipe = self.pipes.pop().expect("pushed above");
        r?;
        if let Some((ch, n)) = pipe.unconsumed.into_iter().next() {
            return Err(RunError::Channel(format!(
                "{n} task{} sent on channel `{ch}` ({}) but no stage of the pipeline consumes it",
                if n == 1 { " was" } else { "s were" },
                self.channel_label(&ch)
            )));
        }
        Ok(())
    }

    fn channel_label(&self, ch: &str) -> String {
        self.program
            .channels
            .iter()
            .find(|c| c.name == ch)
            .map_or_else(
                || "undeclared".into(),
                |c| format!("\"{}\", depth {}", c.label, c.depth),
            )
    }

    fn send(&mut self, channel: &str, task: u32) -> Result<(), RunError> {
        let Some(&instance) = self.last_instance.get(&task) else {
            return Ok(()); // The task did not run (a branch not taken).
        };
        let depth = self
            .program
            .channels
            .iter()
            .find(|c| c.name == channel)
            .map_or(0, |c| c.depth.max(1)) as usize;
        let Some(pipe) = self.pipes.last_mut() else {
            return Err(RunError::Channel(format!(
                "`send` on channel `{channel}` outside a `P.pipe()`: nothing can receive it"
            )));
        };
        let Some(stages) = pipe.consumers.get(channel).cloned() else {
            *pipe.unconsumed.entry(channel.to_string()).or_default() += 1;
            return Ok(());
        };
        // Back-pressure: the channel holds `depth` items, so this producer waited until the
        // consumer of the item `depth` places earlier had taken it.
        let delivered = pipe.delivered.entry(channel.to_string()).or_default();
        if delivered.len() >= depth
            && let Some(Some(c)) = delivered.get(delivered.len() - depth)
            && *c < instance
        {
            self.run.graph.edges.push((*c, instance));
        }
        let value = self
            .run
            .graph
            .index_of(instance)
            .first()
            .copied()
            .unwrap_or(0);
        let first_task = self.run.graph.tasks.len() as TaskId;
        for (var, body) in &stages {
            self.env.push((var.clone(), value));
            self.after.push(vec![instance]);
            let r = self.nodes(body);
            self.after.pop();
            self.env.pop();
            r?;
        }
        let consumer = ((self.run.graph.tasks.len() as TaskId) > first_task).then_some(first_task);
        if let Some(pipe) = self.pipes.last_mut() {
            pipe.delivered
                .entry(channel.to_string())
                .or_default()
                .push(consumer);
        }
        Ok(())
    }

    fn barrier(&mut self, preds: &[TaskId]) -> TaskId {
        let id = self.push_task(TaskKind::Barrier, 0, 0, (0, 0), 0, 0);
        for &p in preds {
            self.run.graph.edges.push((p, id));
        }
        id
    }

    fn push_task(
        &mut self,
        kind: TaskKind,
        args: u32,
        scalars: u32,
        index: (u32, u32),
        dk: i64,
        sk: i64,
    ) -> TaskId {
        let id = self.run.graph.tasks.len() as TaskId;
        self.run.graph.tasks.push(Task {
            kind,
            args,
            scalars,
            index,
            dispatch_key: dk,
            stream_key: sk,
            execution: self.execution,
        });
        for set in &self.after {
            for &p in set {
                self.run.graph.edges.push((p, id));
            }
        }
        for r in &mut self.recorded {
            r.push(id);
        }
        id
    }

    fn task(&mut self, t: &wsp_ir::plan::Task) -> Result<TaskId, RunError> {
        let Some(kid) = self.program.kernels.iter().position(|k| k.name == t.kernel) else {
            return Err(RunError::Invalid(format!("no kernel `{}`", t.kernel)));
        };
        let kernel = &self.program.kernels[kid];
        let index: Vec<i64> = t
            .index
            .iter()
            .map(|a| self.affine(a))
            .collect::<Result<_, _>>()?;
        let dk = match self.dispatch_key {
            Some(k) => self.scalar(k)?,
            None => {
                self.round_robin += 1;
                (self.round_robin - 1) as i64
            }
        };
        let sk = match self.stream_key {
            Some(k) => self.scalar(k)?,
            None => -1,
        };
        let g = &mut self.run.graph;
        let idx = (g.index.len() as u32, (g.index.len() + index.len()) as u32);
        g.index.extend_from_slice(&index);
        let args = g.ptrs.len() as u32;
        let scalars = g.scalars.len() as u32;
        let mut accesses: Vec<(Region, Direction)> = Vec::new();
        for p in &kernel.params {
            let arg = t.args.iter().find(|a| match a {
                TaskArg::Tile { param, .. } | TaskArg::Scalar { param, .. } => *param == p.name,
            });
            match (&p.ty, arg) {
                (ParamType::Tile(dir, _), Some(TaskArg::Tile { view, .. })) => {
                    let (region, rs, cs) = self.region(view, Some((&t.kernel, &index)))?;
                    let tid = region.tensor as usize;
                    self.refresh_derived(tid)?;
                    let data = &mut self.run.tensors.data[tid];
                    let st = strides(&data.shape);
                    let off: u64 = region.lo.iter().zip(&st).map(|(l, s)| l * s).sum();
                    let elem = data.dtype.size_bytes() as usize;
                    // SAFETY: the region lies inside the tensor (checked by `region`).
                    let ptr = unsafe { data.as_mut_ptr().add(off as usize * elem) };
                    let g = &mut self.run.graph;
                    g.ptrs.push(ptr);
                    g.strides.push(rs);
                    g.strides.push(cs);
                    accesses.push((region, *dir));
                }
                (ParamType::Scalar(_, default) | ParamType::Constexpr(default), arg) => {
                    let v = match arg {
                        Some(TaskArg::Scalar { value, .. }) => *value,
                        _ => default.map_or(0.0, |d| d.0),
                    };
                    self.run.graph.scalars.push(v);
                }
                (ParamType::Tile(..), _) => {
                    return Err(RunError::Invalid(format!(
                        "task `{}` passes nothing for tile parameter `{}`",
                        t.kernel, p.name
                    )));
                }
            }
        }
        let id = self.push_task(
            TaskKind::Kernel(self.kernel_base + kid as u32),
            args,
            scalars,
            idx,
            dk,
            sk,
        );
        let mut deps = Vec::new();
        for (region, dir) in &accesses {
            if dir.writes() {
                self.run.written(region.tensor as usize);
            }
            self.run.regions.access(id, region, *dir, &mut deps);
        }
        deps.sort_unstable();
        deps.dedup();
        self.run
            .graph
            .edges
            .extend(deps.into_iter().map(|d| (d, id)));
        self.last_instance.insert(t.id, id);
        Ok(id)
    }

    /// Before a task reads a derived tensor, a collective task recomputes it if its source was
    /// written since.
    fn refresh_derived(&mut self, id: usize) -> Result<(), RunError> {
        let Some(&(op, src)) = self.derived.get(&id) else {
            return Ok(());
        };
        self.refresh_derived(src)?;
        let version = self.run.version[src];
        if self.run.derived_at.get(&id) == Some(&version) {
            return Ok(());
        }
        self.run.derived_at.insert(id, version);
        let c = self.run.collective(op, src, id)?;
        let task = self.push_task(TaskKind::Collective(c), 0, 0, (0, 0), 0, -1);
        let whole = |t: usize, run: &Run| Region {
            tensor: t as u32,
            lo: vec![0; run.tensors.data[t].shape.len()],
            hi: run.tensors.data[t].shape.clone(),
        };
        let (rs, rd) = (whole(src, self.run), whole(id, self.run));
        let mut deps = Vec::new();
        self.run.regions.access(task, &rs, Direction::In, &mut deps);
        self.run
            .regions
            .access(task, &rd, Direction::Out, &mut deps);
        self.run.written(id);
        deps.sort_unstable();
        deps.dedup();
        self.run
            .graph
            .edges
            .extend(deps.into_iter().map(|d| (d, task)));
        Ok(())
    }

    fn tensor_id(&self, name: &str) -> Result<usize, RunError> {
        self.run
            .tensors
            .id(name)
            .ok_or_else(|| RunError::Invalid(format!("no tensor `{name}`")))
    }

    /// The region a view selects, with the row and column strides (in elements) of the two
    /// dimensions it keeps. Out of bounds is WSP602 naming the task.
    fn region(
        &mut self,
        view: &View,
        task: Option<(&str, &[i64])>,
    ) -> Result<(Region, i64, i64), RunError> {
        let id = self.tensor_id(&view.tensor)?;
        let shape = self.run.tensors.data[id].shape.clone();
        let st = strides(&shape);
        let mut lo = Vec::with_capacity(shape.len());
        let mut hi = Vec::with_capacity(shape.len());
        let mut kept = Vec::new();
        for (d, &extent) in shape.iter().enumerate() {
            let (l, h, keep) = match view.indices.get(d) {
                Some(ViewIndex::At(a)) => {
                    let v = self.affine(a)?;
                    (v, v + 1, false)
                }
                Some(ViewIndex::Range(l, h)) => (*l, *h, true),
                None => (0, extent as i64, true),
            };
            if l < 0 || h > extent as i64 || l > h {
                let what = match task {
                    Some((k, idx)) => format!("task {k}{idx:?}"),
                    None => "slot_load_u64".to_string(),
                };
                return Err(RunError::Fault(format!(
                    "{what}: view `{view}` is out of bounds: dimension {d} of `{}` has {extent} entries, the view takes {l}..{h}",
                    view.tensor
                )));
            }
            lo.push(l as u64);
            hi.push(h as u64);
            if keep {
                kept.push(d);
            }
        }
        let (rs, cs) = match kept.as_slice() {
            [.., r, c] => (st[*r] as i64, st[*c] as i64),
            [c] => (0, st[*c] as i64),
            [] => (0, 1),
        };
        Ok((
            Region {
                tensor: id as u32,
                lo,
                hi,
            },
            rs,
            cs,
        ))
    }

    fn var(&self, name: &str) -> Result<i64, RunError> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| RunError::Invalid(format!("`{name}` has no value here")))
    }

    fn affine(&self, a: &Affine) -> Result<i64, RunError> {
        let mut v = a.constant;
        for (name, c) in &a.terms {
            v = v.wrapping_add(c.wrapping_mul(self.var(name)?));
        }
        Ok(v)
    }

    /// A predicate or key, with Python's integer semantics (floor division and modulo).
    fn scalar(&mut self, e: &ScalarExpr) -> Result<i64, RunError> {
        Ok(match e {
            ScalarExpr::Const(c) => *c,
            ScalarExpr::Var(v) => self.var(v)?,
            ScalarExpr::Slot(s) => self.run.slots.get(s).copied().unwrap_or(0) as i64,
            ScalarExpr::Element(t, idx) => {
                let id = self.tensor_id(t)?;
                let idx: Vec<i64> = idx
                    .iter()
                    .map(|i| self.scalar(i))
                    .collect::<Result<_, _>>()?;
                self.run.flush_if_dirty(id);
                let data = &self.run.tensors.data[id];
                let st = strides(&data.shape);
                let mut at = 0i64;
                for (d, (&i, &extent)) in idx.iter().zip(&data.shape).enumerate() {
                    if i < 0 || i >= extent as i64 {
                        return Err(RunError::Fault(format!(
                            "`{e}` reads `{t}` out of bounds: index {i} of dimension {d}, which has {extent} entries"
                        )));
                    }
                    at += i * st[d] as i64;
                }
                data.get_int(at as usize)
            }
            ScalarExpr::Not(x) => (self.scalar(x)? == 0) as i64,
            ScalarExpr::Neg(x) => self.scalar(x)?.wrapping_neg(),
            ScalarExpr::Binary(op, a, b) => {
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                match op {
                    ScalarOp::Add => a.wrapping_add(b),
                    ScalarOp::Sub => a.wrapping_sub(b),
                    ScalarOp::Mul => a.wrapping_mul(b),
                    ScalarOp::FloorDiv | ScalarOp::Mod if b == 0 => {
                        return Err(RunError::Invalid(format!("`{e}` divides by zero")));
                    }
                    ScalarOp::FloorDiv => {
                        a.div_euclid(b) - i64::from(b < 0 && a.rem_euclid(b) != 0)
                    }
                    ScalarOp::Mod => {
                        let r = a.rem_euclid(b);
                        if b < 0 && r != 0 { r + b } else { r }
                    }
                    ScalarOp::Lt => (a < b) as i64,
                    ScalarOp::Le => (a <= b) as i64,
                    ScalarOp::Gt => (a > b) as i64,
                    ScalarOp::Ge => (a >= b) as i64,
                    ScalarOp::Eq => (a == b) as i64,
                    ScalarOp::Ne => (a != b) as i64,
                    ScalarOp::And => (a != 0 && b != 0) as i64,
                    ScalarOp::Or => (a != 0 || b != 0) as i64,
                    ScalarOp::Min => a.min(b),
                    ScalarOp::Max => a.max(b),
                }
            }
        })
    }
}

/// Row-major strides, in elements.
pub fn strides(shape: &[u64]) -> Vec<u64> {
    let mut st = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}
