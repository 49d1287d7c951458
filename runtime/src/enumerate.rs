//! Enumeration: a program's composition and workload plans become tasks with concrete views,
//! schedule keys and dependencies. Run-time values (bound symbols, ragged lengths, routing,
//! predicates, slots) are read here; data written by earlier tasks is read only after those
//! tasks ran (the run flushes first).
//!
//! Each task of the program is resolved once per execution (kernel, views over variable
//! slots, strides, scalars); an instance then costs a few multiply-adds per view and one
//! region record per tile.

use std::collections::HashMap;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use wsp_ir::kernel::ParamType;
use wsp_ir::plan::{
    Axis, AxisKind, Direction, IntSource, LoopKind, LoopVar, Node, TaskArg, TensorOrigin, View,
    ViewIndex,
};
use wsp_ir::{Affine, Composite, Program, ScalarExpr, ScalarOp};

use crate::RunError;
use crate::graph::{Launch, Sig, Task, TaskId, TaskKind};
use crate::regions::Strided;
use crate::run::Run;
use crate::tensors::strides;

/// More tasks than this in one ordered step are joined by a barrier, so that the next step
/// depends on one task instead of all of them.
const BARRIER_AFTER: usize = 8;

/// An affine expression over variable slots.
struct Lin {
    constant: i64,
    terms: Vec<(u32, i64)>,
}

impl Lin {
    fn eval(&self, env: &[Option<i64>]) -> i64 {
        self.terms.iter().fold(self.constant, |v, &(s, c)| {
            v.wrapping_add(c.wrapping_mul(env[s as usize].unwrap_or(0)))
        })
    }
}

/// One index of a view: a point, a range kept, or a kept slice `start:start + len` whose
/// start is affine.
enum Dim {
    At(Lin),
    Range(i64, i64),
    Slice(Lin, i64),
}

/// A tile argument, resolved: its tensor, direction and per-dimension index.
struct Tile<'a> {
    view: &'a View,
    tensor: usize,
    dir: Direction,
    derived: bool,
    dims: Vec<Dim>,
    /// A view's: how its dimensions walk the base `tensor`, whose regions are tracked.
    in_base: Option<crate::tensors::TensorView>,
    shape: Vec<u64>,
    /// The tensor's row-major strides and element size, and its first byte.
    strides: Vec<u64>,
    elem: usize,
    base: *mut u8,
}

/// A task of the program, resolved for this execution.
struct Resolved<'a> {
    kernel: u32,
    name: &'a str,
    sig: u32,
    index: Vec<Lin>,
    /// In parameter order, as the kernel takes its tile pointers.
    tiles: Vec<Tile<'a>>,
}

/// A one-task loop body whose views are affine in the loop variable ([`Enumerator::affine_loop`]).
struct AffineLoop<'a> {
    task: &'a wsp_ir::plan::Task,
    r: Rc<Resolved<'a>>,
    /// Per tile: its instances' regions.
    tiles: Vec<Strided>,
    /// Its instances as a launch (not sequential), for the graph.
    launch: Launch,
}

/// The values a loop variable takes.
enum Values {
    Range(i64, i64),
    List(Vec<i64>),
}

pub struct Enumerator<'a> {
    pub run: &'a mut Run,
    pub program: &'a Program,
    /// Index of the program's first kernel in the run's kernel table.
    pub kernel_base: u32,
    pub bindings: &'a HashMap<String, u64>,
    /// Variable values by slot; `None` outside the variable's scope.
    env: Vec<Option<i64>>,
    slots: FxHashMap<&'a str, u32>,
    /// Program tasks resolved so far, by address.
    resolved: FxHashMap<*const wsp_ir::plan::Task, Rc<Resolved<'a>>>,
    last_resolved: Option<(*const wsp_ir::plan::Task, Rc<Resolved<'a>>)>,
    /// Per open ordered scope: the tasks every new task must wait for.
    after: Vec<Vec<TaskId>>,
    /// Per open recording: the tasks enumerated inside it.
    recorded: Vec<Vec<TaskId>>,
    /// Emptied task lists, kept for the next `P.seq` step: a step per task would otherwise
    /// allocate and free a list per task.
    spare: Vec<Vec<TaskId>>,
    /// The latest instance of each program task id of the current workload.
    last_instance: Vec<TaskId>,
    /// The workload being enumerated, for messages.
    workload: &'a str,
    pipes: Vec<Pipe<'a>>,
    dispatch_key: Option<&'a ScalarExpr>,
    stream_key: Option<&'a ScalarExpr>,
    /// The keys an exploration's configurations dispatch or stream by, each evaluated for
    /// every kernel task into `Graph::key_table`.
    pub explore_keys: Vec<&'a ScalarExpr>,
    /// Per key of `explore_keys`, the first error evaluating it (a division by zero, a read out
    /// of bounds): the configurations using it fail, the others are scored.
    pub explore_key_errors: Vec<Option<String>>,
    /// Derived tensors by id: the op that computes them and their source's id.
    derived: HashMap<usize, (&'a str, usize)>,
    /// Scratch: the regions of the task being enumerated, and its dependencies.
    bounds: Vec<u64>,
    /// The source of what is being made or read, for a fault: a task call or a predicate.
    site: Option<wsp_ir::plan::Site>,
    /// The innermost loop's, for faults in its axis's data.
    loop_site: Option<wsp_ir::plan::Site>,
    deps: Vec<TaskId>,
}

struct Pipe<'a> {
    /// Consumer stages by channel: (var, body).
    consumers: HashMap<&'a str, Vec<(&'a str, &'a [Node])>>,
    /// Per channel: the first task of each delivered item's consumer, for back-pressure.
    delivered: HashMap<&'a str, Vec<Option<TaskId>>>,
    /// Items sent on channels nobody consumes.
    unconsumed: HashMap<&'a str, u64>,
    /// The ordered scopes and recordings open where the pipe starts: its consumers wait for
    /// and are recorded in these, not in the scopes of the loop that sends (a `P.seq`
    /// producer orders its own iterations, not the stages it feeds).
    after_depth: usize,
    recorded_depth: usize,
}

impl<'a> Enumerator<'a> {
    pub fn new(
        run: &'a mut Run,
        program: &'a Program,
        kernel_base: u32,
        bindings: &'a HashMap<String, u64>,
    ) -> Self {
        let (dispatch_key, stream_key) = crate::clock::schedule_keys(&program.schedule);
        let derived = program
            .tensors
            .iter()
            .filter_map(|t| match &t.origin {
                TensorOrigin::Derived { op, source } => Some((
                    run.tensors.id(&t.name)?,
                    (op.as_str(), run.tensors.id(source)?),
                )),
                TensorOrigin::Declared | TensorOrigin::View { .. } | TensorOrigin::Ring { .. } => {
                    None
                }
            })
            .collect();
        Enumerator {
            run,
            program,
            kernel_base,
            bindings,
            env: Vec::new(),
            slots: FxHashMap::default(),
            resolved: FxHashMap::default(),
            last_resolved: None,
            after: Vec::new(),
            recorded: Vec::new(),
            spare: Vec::new(),
            last_instance: Vec::new(),
            pipes: Vec::new(),
            dispatch_key,
            stream_key,
            explore_keys: Vec::new(),
            explore_key_errors: Vec::new(),
            derived,
            workload: "",
            bounds: Vec::new(),
            site: None,
            loop_site: None,
            deps: Vec::new(),
        }
    }

    pub fn composite(&mut self, c: &'a Composite) -> Result<(), RunError> {
        match c {
            Composite::Call(w) => {
                let Some(w) = self.program.workloads.get(*w as usize) else {
                    return Err(RunError::Invalid(format!("no workload #{w}")));
                };
                self.last_instance.fill(TaskId::MAX);
                self.workload = &w.name;
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
    fn sequential(&mut self, parts: &'a [Composite]) -> Result<(), RunError> {
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

    fn nodes(&mut self, nodes: &'a [Node]) -> Result<(), RunError> {
        nodes.iter().try_for_each(|n| self.node(n))
    }

    fn node(&mut self, n: &'a Node) -> Result<(), RunError> {
        match n {
            Node::Loop {
                kind,
                vars,
                body,
                site,
            } => {
                let outer = std::mem::replace(&mut self.loop_site, *site);
                let r = self.loop_(*kind, vars, body);
                self.loop_site = outer;
                r
            }
            Node::Conditional { branches } => {
                for b in branches {
                    let holds = match &b.predicate {
                        None => true,
                        Some(p) => {
                            self.site = b.site;
                            let v = self.scalar(p);
                            self.site = None;
                            v? != 0
                        }
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
                let tile = self.tile(view, Direction::In)?;
                let mut bounds = std::mem::take(&mut self.bounds);
                bounds.clear();
                let r = self.place(&tile, &mut bounds, || "slot_load_u64".to_string());
                self.bounds = bounds;
                let (rs, cs) = tile.row_col_strides();
                let at = r? as i64 + row * rs + col * cs;
                self.run.flush_if_dirty(tile.tensor);
                let value = self.run.tensors.data[tile.tensor].get_int(at as usize);
                self.run.slots.insert(*slot, value as u64);
                Ok(())
            }
        }
    }

    /// The slot of a variable, made on first sight.
    fn slot(&mut self, name: &'a str) -> u32 {
        let n = self.slots.len() as u32;
        let s = *self.slots.entry(name).or_insert(n);
        if self.env.len() <= s as usize {
            self.env.resize(s as usize + 1, None);
        }
        s
    }

    /// Runs `f` with variable `name` bound to each of `values` in turn.
    fn bind_each(
        &mut self,
        name: &'a str,
        values: Values,
        mut f: impl FnMut(&mut Self) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let s = self.slot(name) as usize;
        let outer = self.env[s];
        let mut each = |this: &mut Self, v: i64| {
            this.env[s] = Some(v);
            f(this)
        };
        let r = match values {
            Values::Range(lo, hi) => (lo..hi).try_for_each(|v| each(self, v)),
            Values::List(l) => l.into_iter().try_for_each(|v| each(self, v)),
        };
        self.env[s] = outer;
        r
    }

    /// `0..n`, for a loop of `n` iterations: refused, before any is enumerated, past the
    /// tasks the run can hold (each iteration that runs a task adds at least one).
    fn range(&self, v: &LoopVar, n: u64) -> Result<Values, RunError> {
        if n > u64::from(self.run.max_tasks) {
            let over = if v.axis.is_empty() {
                format!("over `{}`", v.name)
            } else {
                format!("over `{}` (axis `{}`)", v.name, v.axis)
            };
            return Err(RunError::Input(format!(
                "workload `{}`: the loop {over} has {n} iterations, more than the {} tasks a run can hold ({})",
                self.workload, self.run.max_tasks, self.run.budget_reason
            )));
        }
        Ok(Values::Range(0, n as i64))
    }

    /// Refuses a task past the run's budget (see [`Run::max_tasks`]).
    fn check_budget(&self, more: u32, what: impl FnOnce() -> String) -> Result<(), RunError> {
        let next = u64::from(self.run.graph.next_id()) + u64::from(more);
        if next > u64::from(self.run.max_tasks) {
            return Err(RunError::Input(format!(
                "workload `{}`: {} would make more than the {} tasks a run can hold ({})",
                self.workload,
                what(),
                self.run.max_tasks,
                self.run.budget_reason
            )));
        }
        Ok(())
    }

    /// The values a loop variable takes.
    fn values(&mut self, v: &'a LoopVar) -> Result<Values, RunError> {
        let axis = self.program.axes.iter().find(|a| a.name == v.axis);
        let Some(axis) = axis else {
            return self.range(v, v.extent.unwrap_or(0));
        };
        let row = match &v.row {
            Some(r) => Some(self.affine(r)?),
            None => None,
        };
        Ok(match axis.kind {
            AxisKind::Dense => self.range(v, axis.size)?,
            AxisKind::DenseDyn => {
                let n = self.bindings.get(&axis.name).copied().unwrap_or(axis.size);
                self.range(v, n)?
            }
            AxisKind::Ragged => match row {
                // The whole axis: every element, row by row (the original's flattening).
                None => {
                    let mut total = 0u64;
                    for r in 0..axis.size as i64 {
                        total = total.saturating_add(self.length(axis, r)?);
                    }
                    self.range(v, total)?
                }
                Some(r) => {
                    let len = self.length(axis, r)?;
                    self.range(v, len)?
                }
            },
            // One row's entries (`P.sel(routing[b])`), or every row's in order (`P.sel(routing)`).
            AxisKind::Sparse => {
                let (first, last) = match row {
                    Some(r) => (r, r + 1),
                    None => (0, axis.size as i64),
                };
                let lo = self.int_at(axis.indptr.as_ref(), first, &axis.name, "indptr")?;
                let hi = self.int_at(axis.indptr.as_ref(), last, &axis.name, "indptr")?;
                self.range(v, hi.saturating_sub(lo).max(0) as u64)?;
                if hi < lo {
                    return Err(RunError::Invalid(format!(
                        "axis `{}`: indptr decreases from row {first} to row {last} ({lo} then {hi})",
                        axis.name
                    )));
                }
                Values::List(
                    (lo..hi)
                        .map(|i| self.int_at(axis.indices.as_ref(), i, &axis.name, "indices"))
                        .collect::<Result<_, _>>()?,
                )
            }
        })
    }
    /// Row `r`'s length of a ragged axis; a negative one is an error, not an empty row.
    fn length(&mut self, axis: &Axis, r: i64) -> Result<u64, RunError> {
        let len = self.int_at(axis.lengths.as_ref(), r, &axis.name, "lengths")?;
        u64::try_from(len).map_err(|_| {
            RunError::Invalid(format!(
                "axis `{}`: lengths[{r}] is {len}; a row's length is 0 or more",
                axis.name
            ))
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

    fn loop_(
        &mut self,
        kind: LoopKind,
        vars: &'a [LoopVar],
        body: &'a [Node],
    ) -> Result<(), RunError> {
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
        vars: &'a [LoopVar],
        body: &'a [Node],
    ) -> Result<(), RunError> {
        let Some((first, rest)) = vars.split_first() else {
            return self.iteration(kind, body);
        };
        let values = self.values(first).map_err(|e| match e {
            // Data the loop's axis reads at run time (a negative length, a decreasing
            // `indptr`) is wrong: a fault at the loop.
            RunError::Invalid(what) if self.loop_site.is_some() => RunError::Fault(crate::Fault {
                what,
                cause: crate::FaultCause::Data,
                site: self.loop_site,
            }),
            e => e,
        })?;
        if let (true, Values::Range(lo, hi)) = (rest.is_empty(), &values) {
            let taken = match kind {
                LoopKind::Independent => self.launch(&first.name, *lo, *hi, body)?,
                LoopKind::Sequential => self.sequential_launch(&first.name, *lo, *hi, body)?,
                _ => false,
            };
            if taken {
                return Ok(());
            }
        }
        self.bind_each(&first.name, values, |this| this.loop_vars(kind, rest, body))
    }

    /// The innermost variable of a loop whose body is one task, when its instances' views
    /// step by a fixed amount per iteration, so that their tiles and regions are known without
    /// enumerating them: the task, its tiles' regions and pointers, and its index values (at
    /// the first instance, and their step). `None` when the loop has to go task by task.
    fn affine_loop(
        &mut self,
        var: &'a str,
        lo: i64,
        hi: i64,
        body: &'a [Node],
    ) -> Result<Option<AffineLoop<'a>>, RunError> {
        let [Node::Task(t)] = body else {
            return Ok(None);
        };
        let Ok(count) = u32::try_from(hi - lo) else {
            return Ok(None);
        };
        // Schedule keys are stored per task; those loops stay task by task.
        if !self.run.index_launches
            || count < 2
            || self.dispatch_key.is_some()
            || self.stream_key.is_some()
            || !self.explore_keys.is_empty()
        {
            return Ok(None);
        }
        self.check_budget(count, || format!("a launch of {count} `{var}` instances"))?;
        let s = self.slot(var) as usize;
        let outer = self.env[s];
        // Resolving checks that the variables the task uses are in scope.
        self.env[s] = Some(lo);
        let r = self.resolved(t);
        self.env[s] = outer;
        let r = r?;
        // Launches track regions per tensor dimension; a view's regions are its base's, so
        // its loops go instance by instance.
        if r.tiles.iter().any(|t| t.derived || t.in_base.is_some()) {
            return Ok(None);
        }
        let mut bounds = std::mem::take(&mut self.bounds);
        let at = |this: &mut Self, v: i64, bounds: &mut Vec<u64>| {
            this.env[s] = Some(v);
            bounds.clear();
            r.tiles
                .iter()
                .map(|tile| this.place(tile, bounds, String::new).ok())
                .collect::<Option<Vec<u64>>>()
        };
        // Views are affine in the variable: the first and the last instance in bounds put
        // every instance in bounds. Otherwise the loop is enumerated, and the first instance
        // out of bounds is reported.
        let last = at(self, hi - 1, &mut bounds);
        let next = at(self, lo + 1, &mut bounds);
        let next_bounds = bounds.clone();
        let first = at(self, lo, &mut bounds);
        let index: Vec<(i64, i64)> = r
            .index
            .iter()
            .map(|l| {
                let v = l.eval(&self.env);
                self.env[s] = Some(lo + 1);
                let step = l.eval(&self.env).wrapping_sub(v);
                self.env[s] = Some(lo);
                (v, step)
            })
            .collect();
        self.env[s] = outer;
        let (Some(first), Some(next), Some(_)) = (first, next, last) else {
            self.bounds = bounds;
            return Ok(None);
        };
        let mut tiles = Vec::with_capacity(r.tiles.len());
        let mut ptrs = Vec::with_capacity(r.tiles.len());
        let mut k = 0;
        for (i, tile) in r.tiles.iter().enumerate() {
            let n = tile.shape.len();
            let (lo0, hi0) = bounds[k..k + 2 * n].split_at(n);
            let step = (0..n)
                .map(|d| next_bounds[k + d].wrapping_sub(lo0[d]) as i64)
                .collect();
            k += 2 * n;
            tiles.push(Strided {
                lo: lo0.to_vec(),
                hi: hi0.to_vec(),
                step,
                count,
            });
            let elem = tile.elem as isize;
            // SAFETY: instance 0's tile lies inside the tensor (checked by `place`).
            let base = unsafe { tile.base.add(first[i] as usize * tile.elem) };
            let step = (next[i].wrapping_sub(first[i]) as isize).wrapping_mul(elem);
            ptrs.push((base, step));
        }
        self.bounds = bounds;
        let launch = Launch {
            kernel: r.kernel,
            first: 0,
            count,
            entry: 0,
            sig: r.sig,
            tiles: ptrs,
            index,
            sequential: false,
        };
        Ok(Some(AffineLoop {
            task: t,
            r,
            tiles,
            launch,
        }))
    }

    /// The innermost variable of a `P` loop whose body is one task, as one index launch
    /// ([`Self::affine_loop`]). Taken when the instances are provably independent of each other
    /// and their regions can be recorded exactly in one record per tile
    /// ([`crate::regions::Regions::can_launch`]); returns whether it was.
    fn launch(
        &mut self,
        var: &'a str,
        lo: i64,
        hi: i64,
        body: &'a [Node],
    ) -> Result<bool, RunError> {
        let Some(AffineLoop {
            task: t,
            r,
            tiles,
            launch,
        }) = self.affine_loop(var, lo, hi, body)?
        else {
            return Ok(false);
        };
        // No instance may touch what another writes.
        let independent = r.tiles.iter().zip(&tiles).enumerate().all(|(i, (a, sa))| {
            !a.dir.writes()
                || sa.disjoint()
                    && r.tiles.iter().zip(&tiles).enumerate().all(|(j, (b, sb))| {
                        i == j || a.tensor != b.tensor || sa == sb || !sa.may_overlap(sb)
                    })
        });
        let recordable = r
            .tiles
            .iter()
            .zip(&tiles)
            .all(|(tile, st)| self.run.regions.can_launch(tile.tensor, st, tile.dir));
        if !independent || !recordable {
            return Ok(false);
        }
        let count = launch.count;
        let first = self.push_launch(t, launch);
        // Ordered scopes name every instance, as they name every task.
        for set in &self.after {
            for &p in set {
                let ids = first..first + count;
                self.run.graph.edges.extend(ids.map(|t| (p, t)));
            }
        }
        let mut preds = std::mem::take(&mut self.deps);
        preds.clear();
        for (tile, st) in r.tiles.iter().zip(&tiles) {
            if tile.dir.writes() {
                self.run.written(tile.tensor);
            }
            self.run
                .regions
                .launch_access(first, tile.tensor, st, tile.dir, &mut preds);
        }
        preds.sort_unstable();
        preds.dedup();
        self.run
            .graph
            .links
            .extend(preds.iter().map(|&p| (p, first)));
        self.deps = preds;
        Ok(true)
    }

    /// The innermost variable of a `P.seq` loop whose body is one task, as one sequential
    /// launch ([`Self::affine_loop`]): one entry whose instances run in order on one worker,
    /// each step after the one before as `P.seq` says (the launch implies that edge). Every
    /// instance's regions are recorded and its other edges added as task-by-task enumeration
    /// would, so the graph, once expanded, is the same; what it saves is a graph entry, tile
    /// pointers, index values and an edge per step, and the workers' dependency tracking
    /// between steps. Returns whether it was taken.
    fn sequential_launch(
        &mut self,
        var: &'a str,
        lo: i64,
        hi: i64,
        body: &'a [Node],
    ) -> Result<bool, RunError> {
        // The loop's own scope (pushed by `loop_`) holds what its first step waits for; each
        // later step waits for the step before.
        let Some(own) = self.after.len().checked_sub(1) else {
            return Ok(false);
        };
        let Some(AffineLoop {
            task: t,
            r,
            tiles,
            launch,
        }) = self.affine_loop(var, lo, hi, body)?
        else {
            return Ok(false);
        };
        let count = launch.count;
        let launch = Launch {
            sequential: true,
            ..launch
        };
        let first = self.push_launch(t, launch);
        for tile in &r.tiles {
            if tile.dir.writes() {
                self.run.written(tile.tensor);
            }
        }
        // A tile every step writes alike, of a tensor no other tile of the task touches: each
        // step's access finds the step before as the region's last writer (the edge the launch
        // implies) and leaves the records as the next step finds them, so the first step's
        // access and the last one's leave what every step's would. Other tiles, and scopes
        // outside the loop, are met at every step.
        let repeated: Vec<bool> = r
            .tiles
            .iter()
            .zip(&tiles)
            .map(|(tile, st)| {
                tile.dir.writes()
                    && st.step.iter().all(|&d| d == 0)
                    && r.tiles.iter().filter(|t| t.tensor == tile.tensor).count() == 1
            })
            .collect();
        let every_step = repeated.contains(&false)
            || self
                .after
                .iter()
                .enumerate()
                .any(|(k, set)| k != own && !set.is_empty());
        let steps = (0..count).filter(|&i| every_step || i == 0 || i == count - 1);
        let mut deps = std::mem::take(&mut self.deps);
        let mut implied = Vec::new();
        let (mut lo_i, mut hi_i) = (Vec::new(), Vec::new());
        for i in steps {
            let id = first + i;
            let g = &mut self.run.graph;
            for (k, set) in self.after.iter().enumerate() {
                if k != own || i == 0 {
                    g.edges.extend(set.iter().map(|&p| (p, id)));
                }
            }
            deps.clear();
            for ((tile, st), &again) in r.tiles.iter().zip(&tiles).zip(&repeated) {
                if again && i > 0 && i < count - 1 {
                    continue;
                }
                st.at_into(i, &mut lo_i, &mut hi_i);
                let found = if again && i > 0 {
                    &mut implied
                } else {
                    &mut deps
                };
                self.run.regions.access(
                    id,
                    tile.tensor,
                    &tile.shape,
                    (&lo_i, &hi_i),
                    tile.dir,
                    found,
                );
            }
            implied.clear();
            if deps.len() > 1 {
                deps.sort_unstable();
                deps.dedup();
            }
            // The edges above, and the step before, already order it after these.
            let ordered = |d: &TaskId| {
                (i > 0 && *d == id - 1)
                    || self
                        .after
                        .iter()
                        .enumerate()
                        .any(|(k, set)| (k != own || i == 0) && set.contains(d))
            };
            deps.retain(|d| !ordered(d));
            self.run.graph.edges.extend(deps.iter().map(|&d| (d, id)));
        }
        self.deps = deps;
        if let Some(last) = self.after.last_mut() {
            last.clear();
            last.push(first + count - 1);
        }
        Ok(true)
    }

    /// Adds the instances of program task `t` as a launch; the id of the first. Recordings
    /// name every instance, as they name every task, and the last is the task's latest.
    fn push_launch(&mut self, t: &wsp_ir::plan::Task, launch: Launch) -> TaskId {
        let count = launch.count;
        let first = self.run.graph.push_launch(launch);
        self.run.enumerated();
        for r in &mut self.recorded {
            r.extend(first..first + count);
        }
        self.set_last_instance(t, first + count - 1);
        first
    }

    /// Program task `t`'s latest instance is task `id`.
    fn set_last_instance(&mut self, t: &wsp_ir::plan::Task, id: TaskId) {
        let i = t.id as usize;
        if self.last_instance.len() <= i {
            self.last_instance.resize(i + 1, TaskId::MAX);
        }
        self.last_instance[i] = id;
    }

    fn iteration(&mut self, kind: LoopKind, body: &'a [Node]) -> Result<(), RunError> {
        if kind != LoopKind::Sequential {
            return self.nodes(body);
        }
        let list = self.spare.pop().unwrap_or_default();
        self.recorded.push(list);
        let r = self.nodes(body);
        let mut done = self.recorded.pop().unwrap_or_default();
        r?;
        if done.is_empty() {
            self.spare.push(done);
            return Ok(());
        }
        if done.len() > BARRIER_AFTER {
            let b = self.barrier(&done);
            done.clear();
            done.push(b);
        }
        if let Some(last) = self.after.last_mut() {
            let mut old = std::mem::replace(last, done);
            old.clear();
            self.spare.push(old);
        }
        Ok(())
    }

    fn pipeline(&mut self, stages: &'a [Node]) -> Result<(), RunError> {
        let mut consumers: HashMap<&'a str, Vec<(&'a str, &'a [Node])>> = HashMap::new();
        for s in stages {
            if let Node::Consume { channel, var, body } = s {
                consumers.entry(channel).or_default().push((var, body));
            }
        }
        self.pipes.push(Pipe {
            consumers,
            delivered: HashMap::new(),
            unconsumed: HashMap::new(),
            after_depth: self.after.len(),
            recorded_depth: self.recorded.len(),
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
                self.channel_label(ch)
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

    fn send(&mut self, channel: &'a str, task: u32) -> Result<(), RunError> {
        let instance = self
            .last_instance
            .get(task as usize)
            .copied()
            .unwrap_or(TaskId::MAX);
        if instance == TaskId::MAX {
            return Ok(()); // The task did not run (a branch not taken).
        }
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
            *pipe.unconsumed.entry(channel).or_default() += 1;
            return Ok(());
        };
        // Back-pressure: the channel holds `depth` items, so this producer waited until the
        // consumer of the item `depth` places earlier had taken it.
        let delivered = pipe.delivered.entry(channel).or_default();
        if delivered.len() >= depth
            && let Some(Some(c)) = delivered.get(delivered.len() - depth)
            && *c < instance
        {
            self.run.graph.edges.push((*c, instance));
            self.run.graph.channel_edges.push((*c, instance));
        }
        let mut value = None;
        self.run.graph.index_of(instance, |v| {
            value.get_or_insert(v);
        });
        let value = value.unwrap_or(0);
        let first_task = self.run.graph.next_id();
        let first_edge = self.run.graph.edges.len();
        // The consumers see the scopes open where the pipe starts, and wait for the sent task.
        let (after_depth, recorded_depth) = (pipe.after_depth, pipe.recorded_depth);
        let inner_after = self.after.split_off(after_depth);
        let inner_recorded = self.recorded.split_off(recorded_depth);
        let mut r = Ok(());
        for (var, body) in stages {
            self.after.push(vec![instance]);
            r = self.bind_each(var, Values::Range(value, value + 1), |this| {
                this.nodes(body)
            });
            self.after.pop();
            if r.is_err() {
                break;
            }
        }
        self.after.extend(inner_after);
        self.recorded.extend(inner_recorded);
        r?;
        // The consumer's tasks that waited for the sent one.
        let g = &mut self.run.graph;
        let delivered = g.edges[first_edge..]
            .iter()
            .filter(|&&(p, s)| p == instance && s >= first_task);
        let at = g.deliveries.len();
        g.deliveries.extend(delivered);
        g.channel_edges.extend_from_slice(&g.deliveries[at..]);
        let consumer = (self.run.graph.next_id() > first_task).then_some(first_task);
        if let Some(pipe) = self.pipes.last_mut() {
            pipe.delivered.entry(channel).or_default().push(consumer);
        }
        Ok(())
    }

    fn barrier(&mut self, preds: &[TaskId]) -> TaskId {
        let at = self.run.graph.index.len() as u32;
        let id = self.push_task(TaskKind::Barrier, 0, 0, at);
        for &p in preds {
            self.run.graph.edges.push((p, id));
        }
        id
    }

    fn push_task(&mut self, kind: TaskKind, args: u32, sig: u32, index: u32) -> TaskId {
        let id = self.run.graph.push(Task {
            kind,
            args,
            sig,
            index,
        });
        for set in &self.after {
            for &p in set {
                self.run.graph.edges.push((p, id));
            }
        }
        for r in &mut self.recorded {
            r.push(id);
        }
        self.run.enumerated();
        id
    }

    /// A program task, resolved for this execution once.
    fn resolved(&mut self, t: &'a wsp_ir::plan::Task) -> Result<Rc<Resolved<'a>>, RunError> {
        let key = t as *const _;
        if let Some((k, r)) = &self.last_resolved
            && *k == key
        {
            // A loop meets the same task again and again.
            return Ok(Rc::clone(r));
        }
        let r = match self.resolved.get(&key) {
            Some(r) => Rc::clone(r),
            None => {
                let r = Rc::new(self.resolve(t)?);
                self.resolved.insert(key, Rc::clone(&r));
                r
            }
        };
        self.last_resolved = Some((key, Rc::clone(&r)));
        Ok(r)
    }

    fn task(&mut self, t: &'a wsp_ir::plan::Task) -> Result<TaskId, RunError> {
        self.site = t.site;
        let r = self.task_at(t);
        self.site = None;
        r
    }

    fn task_at(&mut self, t: &'a wsp_ir::plan::Task) -> Result<TaskId, RunError> {
        let r = self.resolved(t)?;
        self.check_budget(1, || format!("task `{}`", r.name))?;
        for tile in &r.tiles {
            if tile.derived {
                self.refresh_derived(tile.tensor)?;
            }
        }
        let keys = match (self.dispatch_key, self.stream_key) {
            (None, None) => None,
            (d, s) => Some((
                d.map_or(Ok(0), |k| self.scalar(k))?,
                s.map_or(Ok(-1), |k| self.scalar(k))?,
            )),
        };
        let g = &mut self.run.graph;
        let idx = (g.index.len() as u32, (g.index.len() + r.index.len()) as u32);
        g.index.extend(r.index.iter().map(|l| l.eval(&self.env)));
        let args = self.run.graph.ptrs.len() as u32;
        let mut bounds = std::mem::take(&mut self.bounds);
        bounds.clear();
        for tile in &r.tiles {
            let at = self.place(tile, &mut bounds, || {
                let g = &self.run.graph;
                format!(
                    "task {}{:?}",
                    r.name,
                    &g.index[idx.0 as usize..idx.1 as usize]
                )
            });
            let at = match at {
                Ok(at) => at,
                Err(e) => {
                    self.bounds = bounds;
                    return Err(e);
                }
            };
            // SAFETY: the region lies inside the tensor (checked by `place`).
            let ptr = unsafe { tile.base.add(at as usize * tile.elem) };
            self.run.graph.ptrs.push(ptr);
        }
        let id = self.push_task(TaskKind::Kernel(r.kernel), args, r.sig, idx.0);
        if let Some(k) = keys {
            let g = &mut self.run.graph;
            g.keys.resize(id as usize, (0, -1));
            g.keys.push(k);
        }
        if !self.explore_keys.is_empty() {
            let n = self.explore_keys.len();
            self.run.graph.key_table.resize(id as usize * n, 0);
            self.explore_key_errors.resize(n, None);
            for i in 0..n {
                let v = match self.scalar(self.explore_keys[i]) {
                    Ok(v) => v,
                    Err(e) => {
                        let why = match e {
                            RunError::Fault(f) => f.what,
                            RunError::Channel(m) | RunError::Input(m) | RunError::Invalid(m) => m,
                        };
                        self.explore_key_errors[i].get_or_insert(why);
                        0
                    }
                };
                self.run.graph.key_table.push(v);
            }
        }
        let mut deps = std::mem::take(&mut self.deps);
        deps.clear();
        let mut at = 0;
        for tile in &r.tiles {
            let n = tile.shape.len();
            let (lo, hi) = bounds[at..at + 2 * n].split_at(n);
            at += 2 * n;
            if tile.dir.writes() {
                self.run.written(tile.tensor);
            }
            match &tile.in_base {
                Some(v) => {
                    let base_shape = &self.run.tensors.data[tile.tensor].shape;
                    if let Some((blo, bhi)) = v.base_box(base_shape.len(), lo, hi) {
                        let base_shape = base_shape.clone();
                        self.run.regions.access(
                            id,
                            tile.tensor,
                            &base_shape,
                            (&blo, &bhi),
                            tile.dir,
                            &mut deps,
                        );
                    }
                }
                None => self.run.regions.access(
                    id,
                    tile.tensor,
                    &tile.shape,
                    (lo, hi),
                    tile.dir,
                    &mut deps,
                ),
            }
        }
        if deps.len() > 1 {
            deps.sort_unstable();
            deps.dedup();
        }
        // `push_task` gave the task an edge from each task it waits for in loop order (a
        // `P.seq` step's); a region edge from the same task would be the same edge again.
        if self.after.iter().any(|set| !set.is_empty()) {
            deps.retain(|d| !self.after.iter().any(|set| set.contains(d)));
        }
        self.run.graph.edges.extend(deps.iter().map(|&d| (d, id)));
        if self.run.record_args {
            self.record_args(id, &r, &bounds);
        }
        self.bounds = bounds;
        self.deps = deps;
        self.set_last_instance(t, id);
        Ok(id)
    }

    /// `TraceLevel.FULL`: a task's tiles as `param: tensor[lo:hi, ...]`, from the regions
    /// it was given (`bounds`: each tile's lows, then its highs).
    fn record_args(&mut self, id: TaskId, r: &Resolved<'a>, bounds: &[u64]) {
        let params = self
            .program
            .kernels
            .iter()
            .find(|k| k.name == r.name)
            .map(|k| {
                k.params
                    .iter()
                    .filter(|p| matches!(p.ty, ParamType::Tile(..)))
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let mut at = 0;
        let mut args = Vec::new();
        for (i, tile) in r.tiles.iter().enumerate() {
            let n = tile.shape.len();
            let (lo, hi) = bounds[at..at + 2 * n].split_at(n);
            at += 2 * n;
            let dims: Vec<String> = lo.iter().zip(hi).map(|(l, h)| format!("{l}:{h}")).collect();
            let param = params.get(i).copied().unwrap_or("?");
            args.push(format!(
                "{param}: {}[{}]",
                tile.view.tensor,
                dims.join(", ")
            ));
        }
        self.run.task_args.insert(id, args);
    }

    /// A program task's kernel, views and signature, for this execution.
    fn resolve(&mut self, t: &'a wsp_ir::plan::Task) -> Result<Resolved<'a>, RunError> {
        let Some(kid) = self.program.kernels.iter().position(|k| k.name == t.kernel) else {
            return Err(RunError::Invalid(format!("no kernel `{}`", t.kernel)));
        };
        let kernel = &self.program.kernels[kid];
        let index = t
            .index
            .iter()
            .map(|a| self.lin(a))
            .collect::<Result<_, _>>()?;
        let mut tiles = Vec::new();
        let mut strides = Vec::new();
        let mut scalars = Vec::new();
        for p in &kernel.params {
            let arg = t.arg(&p.name);
            match (&p.ty, arg) {
                (ParamType::Tile(dir, _), Some(TaskArg::Tile { view, .. })) => {
                    let tile = self.tile(view, *dir)?;
                    let (rs, cs) = tile.row_col_strides();
                    strides.extend([rs, cs]);
                    tiles.push(tile);
                }
                (ParamType::Scalar(_, default) | ParamType::Constexpr(default), arg) => {
                    scalars.push(match arg {
                        // Bound for this execution: a float's f32 bits (`set_symbol_f32`), or
                        // an integer.
                        Some(TaskArg::Scalar {
                            symbol: Some(s), ..
                        }) => {
                            let bits = self.bindings.get(s).copied().unwrap_or(0);
                            match p.ty {
                                ParamType::Scalar(d, _) if !d.is_integer() => {
                                    f64::from(f32::from_bits(bits as u32))
                                }
                                _ => bits as i64 as f64,
                            }
                        }
                        Some(TaskArg::Scalar { value, .. }) => *value,
                        _ => default.map_or(0.0, |d| d.0),
                    });
                }
                (ParamType::Tile(..), _) => {
                    return Err(RunError::Invalid(format!(
                        "task `{}` passes nothing for tile parameter `{}`",
                        t.kernel, p.name
                    )));
                }
            }
        }
        let g = &mut self.run.graph;
        g.sigs.push(Sig {
            strides: g.strides.len() as u32,
            scalars: g.scalars.len() as u32,
        });
        g.strides.extend(strides);
        g.scalars.extend(scalars);
        Ok(Resolved {
            kernel: self.kernel_base + kid as u32,
            name: &t.kernel,
            sig: g.sigs.len() as u32 - 1,
            index,
            tiles,
        })
    }

    /// A view, resolved against its tensor and the variables in scope.
    fn tile(&mut self, view: &'a View, dir: Direction) -> Result<Tile<'a>, RunError> {
        // A view reads its base's bytes with its own shape and strides.
        let in_base = self.run.tensors.views.get(&view.tensor).cloned();
        let tensor = match &in_base {
            Some(v) => v.base,
            None => self.tensor_id(&view.tensor)?,
        };
        let data = &self.run.tensors.data[tensor];
        let (shape, tensor_strides) = match &in_base {
            Some(v) => (v.shape.clone(), v.strides(&data.shape)),
            None => (data.shape.clone(), strides(&data.shape)),
        };
        let elem = data.dtype.size_bytes() as usize;
        let base = self.run.tensors.data[tensor].as_mut_ptr();
        let dims = (0..shape.len())
            .map(|d| {
                Ok(match view.indices.get(d) {
                    Some(ViewIndex::At(a)) => Dim::At(self.lin(a)?),
                    Some(ViewIndex::Range(l, h)) => Dim::Range(*l, *h),
                    Some(ViewIndex::Slice(a, len)) => Dim::Slice(self.lin(a)?, *len as i64),
                    None => Dim::Range(0, shape[d] as i64),
                })
            })
            .collect::<Result<_, RunError>>()?;
        Ok(Tile {
            view,
            tensor,
            dir,
            derived: self.derived.contains_key(&tensor),
            dims,
            in_base,
            strides: tensor_strides,
            shape,
            elem,
            base,
        })
    }

    /// Appends the tile's region (`lo` then `hi`) to `bounds` and returns its first element's
    /// offset. Out of bounds is WSP602 naming `what`.
    fn place(
        &self,
        tile: &Tile,
        bounds: &mut Vec<u64>,
        what: impl FnOnce() -> String,
    ) -> Result<u64, RunError> {
        let start = bounds.len();
        let n = tile.shape.len();
        bounds.resize(start + 2 * n, 0);
        let mut at = 0u64;
        for (d, dim) in tile.dims.iter().enumerate() {
            let (l, h) = match dim {
                Dim::At(a) => {
                    let v = a.eval(&self.env);
                    (v, v.wrapping_add(1))
                }
                Dim::Range(l, h) => (*l, *h),
                Dim::Slice(a, len) => {
                    let v = a.eval(&self.env);
                    (v, v.wrapping_add(*len))
                }
            };
            let extent = tile.shape[d];
            if l < 0 || h > extent as i64 || l > h {
                return Err(RunError::Fault(crate::Fault {
                    what: format!(
                        "{}: view `{}` is out of bounds: dimension {d} of `{}` has {extent} entries, the view takes {l}..{h}",
                        what(),
                        tile.view,
                        tile.view.tensor
                    ),
                    cause: crate::FaultCause::View,
                    site: self.site,
                }));
            }
            bounds[start + d] = l as u64;
            bounds[start + n + d] = h as u64;
            at += l as u64 * tile.strides[d];
        }
        Ok(at)
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
        let at = self.run.graph.index.len() as u32;
        let task = self.push_task(TaskKind::Collective(c), 0, 0, at);
        let mut deps = Vec::new();
        for (t, dir) in [(src, Direction::In), (id, Direction::Out)] {
            let shape = self.run.tensors.data[t].shape.clone();
            let lo = vec![0; shape.len()];
            self.run
                .regions
                .access(task, t, &shape, (&lo, &shape), dir, &mut deps);
        }
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

    fn var(&self, name: &str) -> Result<i64, RunError> {
        self.slots
            .get(name)
            .and_then(|&s| self.env[s as usize])
            .ok_or_else(|| RunError::Invalid(format!("`{name}` has no value here")))
    }

    fn affine(&mut self, a: &'a Affine) -> Result<i64, RunError> {
        Ok(self.lin(a)?.eval(&self.env))
    }

    /// An affine expression over slots; its variables must be in scope here, as they are
    /// wherever the expression is met again.
    fn lin(&mut self, a: &'a Affine) -> Result<Lin, RunError> {
        let terms = a
            .terms
            .iter()
            .map(|(name, c)| {
                self.var(name)?;
                Ok((self.slot(name), *c))
            })
            .collect::<Result<_, RunError>>()?;
        Ok(Lin {
            constant: a.constant,
            terms,
        })
    }

    /// A predicate or key, with Python's integer semantics (floor division and modulo).
    fn scalar(&mut self, e: &ScalarExpr) -> Result<i64, RunError> {
        Ok(match e {
            ScalarExpr::Const(c) => *c,
            ScalarExpr::Var(v) => self.var(v)?,
            ScalarExpr::Slot(s) => self.run.slots.get(s).copied().unwrap_or(0) as i64,
            // Bound as the program's run-time symbols are, with their defaults.
            ScalarExpr::Symbol(name) => self.bindings.get(name).copied().unwrap_or(0) as i64,
            ScalarExpr::Select(abc) => {
                let [c, a, b] = &**abc;
                if self.scalar(c)? != 0 {
                    self.scalar(a)?
                } else {
                    self.scalar(b)?
                }
            }
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
                        // The iteration: the loop variables the read's index uses.
                        let mut names = Vec::new();
                        if let ScalarExpr::Element(_, idx) = e {
                            idx.iter().for_each(|i| variables(i, &mut names));
                        }
                        let at: Vec<String> = names
                            .iter()
                            .filter_map(|n| Some(format!("{n}={}", self.var(n).ok()?)))
                            .collect();
                        let at = if at.is_empty() {
                            String::new()
                        } else {
                            format!(" (at {})", at.join(", "))
                        };
                        return Err(RunError::Fault(crate::Fault {
                            what: format!(
                                "`{e}`{at} reads `{t}` out of bounds: index {i} of dimension {d}, which has {extent} entries"
                            ),
                            cause: crate::FaultCause::Read,
                            site: self.site,
                        }));
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
                    ScalarOp::BitAnd => a & b,
                    ScalarOp::BitOr => a | b,
                    ScalarOp::BitXor => a ^ b,
                    ScalarOp::Shl | ScalarOp::Shr if !(0..64).contains(&b) => {
                        return Err(RunError::Invalid(format!(
                            "`{e}` shifts by {b}, outside 0..=63"
                        )));
                    }
                    ScalarOp::Shl => a.wrapping_shl(b as u32),
                    ScalarOp::Shr => a >> b,
                }
            }
        })
    }
}

impl Tile<'_> {
    /// The row and column strides (in elements) of the last two dimensions the view keeps.
    fn row_col_strides(&self) -> (i64, i64) {
        let kept: Vec<i64> = self
            .dims
            .iter()
            .zip(&self.strides)
            .filter(|(d, _)| matches!(d, Dim::Range(..) | Dim::Slice(..)))
            .map(|(_, s)| *s as i64)
            .collect();
        match kept.as_slice() {
            [.., r, c] => (*r, *c),
            [c] => (0, *c),
            [] => (0, 1),
        }
    }
}

/// The variables of a scalar expression, each once, in order.
fn variables(e: &ScalarExpr, out: &mut Vec<String>) {
    match e {
        ScalarExpr::Var(v) => {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        e => e.children().into_iter().for_each(|x| variables(x, out)),
    }
}
