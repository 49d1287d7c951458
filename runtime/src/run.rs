//! The state of one run: tensors, the task graph so far, region records, slots, and how much
//! of the graph has executed.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use crate::RunError;
use crate::exec::{self, Collective, CyclesFn, KernelFn};
use crate::graph::Graph;
use crate::pipeline::{BATCH, Pipeline};
use crate::regions::Regions;
use crate::tensors::Tensors;

/// Bytes of host memory counted per task. A task of a sequential loop measured about 94 bytes
/// over a run (its record, tile pointers, index values, edges, its span on the simulated
/// timeline); 128 leaves room for the rest of the run.
pub const TASK_BYTES: u64 = 128;

/// The most tasks a run may enumerate with `memory` bytes of the host left over from its
/// tensors: task ids are `u32`, and past memory / [`TASK_BYTES`] the system would kill the run
/// rather than refuse it. With why, for messages.
pub fn task_budget(memory: u64) -> (u32, String) {
    let n = u32::try_from(memory / TASK_BYTES).map_or(u32::MAX - 1, |n| n.min(u32::MAX - 1));
    let why = format!(
        "{} of host memory beside the tensors, at {TASK_BYTES} bytes a task; task ids are 32-bit",
        wsp_ir::memory::bytes_text(memory)
    );
    (n, why)
}

pub struct Run {
    /// The helper running tasks while enumeration goes on. First, so that it is joined
    /// before the tensors its tasks write are dropped.
    pipeline: Option<Pipeline>,
    /// The worker threads, started by the first flush that has more than one worker.
    pool: Option<rayon::ThreadPool>,
    pub tensors: Tensors,
    pub graph: Graph,
    pub regions: Regions,
    pub slots: HashMap<i64, u64>,
    /// Per tensor: how many writes have been enumerated.
    pub version: Vec<u64>,
    /// Derived tensor → the source version it was last computed from.
    pub derived_at: HashMap<usize, u64>,
    pub collectives: Vec<Collective>,
    pub kernels: Vec<KernelFn>,
    /// Per kernel: its library's cycle hook, for the custom (`cpp_src`) ones.
    pub cycle_hooks: Vec<Option<CyclesFn>>,
    /// Per task id: the cycles its custom kernel added (`pto::cpu_sim::add_cycles`); empty
    /// when no kernel has a hook.
    pub extra_cycles: Vec<AtomicU64>,
    pub workers: usize,
    pub index_launches: bool,
    /// Whether the execution enumerating now records each task's tiles (`TraceLevel.FULL`),
    /// and those recorded, by task.
    pub record_args: bool,
    pub task_args: HashMap<crate::graph::TaskId, Vec<String>>,
    /// The most tasks (launch instances included) the run enumerates, and why: see
    /// [`task_budget`].
    pub max_tasks: u32,
    pub budget_reason: String,
    /// Per tensor: whether tasks not yet executed write it.
    dirty: Vec<bool>,
    /// Tasks `0..executed` and edges `0..edges_done` have run.
    executed: u32,
    edges_done: usize,
}

impl Run {
    pub fn new(tensors: Tensors, kernels: Vec<KernelFn>, workers: usize) -> Run {
        let n = tensors.data.len();
        Run {
            pipeline: None,
            pool: None,
            tensors,
            graph: Graph::default(),
            regions: Regions::default(),
            slots: HashMap::new(),
            version: vec![0; n],
            derived_at: HashMap::new(),
            collectives: Vec::new(),
            kernels,
            cycle_hooks: Vec::new(),
            extra_cycles: Vec::new(),
            workers,
            index_launches: true,
            record_args: false,
            task_args: HashMap::new(),
            max_tasks: u32::MAX - 1,
            budget_reason: "task ids are 32-bit".into(),
            dirty: vec![false; n],
            executed: 0,
            edges_done: 0,
        }
    }

    pub fn written(&mut self, tensor: usize) {
        self.version[tensor] += 1;
        self.dirty[tensor] = true;
    }

    /// After each entry the enumerator adds: once a batch of entries waits, they go to the
    /// helper (started on first use), unless one worker runs everything or a custom kernel's
    /// cycles are collected per task.
    pub fn enumerated(&mut self) {
        if self.workers < 2 || self.cycle_hooks.iter().any(Option::is_some) {
            return;
        }
        let hi = self.graph.tasks.len() as u32;
        let from = self
            .pipeline
            .as_ref()
            .map_or(self.executed, |p| p.published);
        if hi - from < BATCH {
            return;
        }
        let executed = self.executed;
        let kernels = &self.kernels;
        self.pipeline
            .get_or_insert_with(|| Pipeline::start(kernels.clone(), executed))
            .publish(&self.graph, hi, &self.collectives);
    }

    /// What the clock charges each collective: its transfer, source and destination, at the
    /// target's bandwidth.
    pub fn collective_cycles(&self, target: &crate::clock::target::TargetDesc) -> Vec<u64> {
        let bytes = |(_, d, s): &(*mut u8, wsp_ir::DType, Vec<u64>)| {
            s.iter().product::<u64>() * d.size_bytes() as u64
        };
        self.collectives
            .iter()
            .map(|c| target.transfer_cycles(bytes(&c.src) + bytes(&c.dst)))
            .collect()
    }

    /// What custom kernels added, by task id (each slot written by its own task).
    pub fn added_cycles(&self) -> Vec<u64> {
        self.extra_cycles
            .iter()
            .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }

    /// Runs every enumerated task that has not run yet.
    pub fn flush(&mut self) {
        let hi = self.graph.tasks.len() as u32;
        // What the helper has not run yet, all workers run now.
        let from = match &mut self.pipeline {
            Some(p) => p.pause().max(self.executed),
            None => self.executed,
        };
        if self.cycle_hooks.iter().any(Option::is_some) {
            let ids = self.graph.next_id() as usize;
            self.extra_cycles.resize_with(ids, AtomicU64::default);
        }
        let kernels = exec::Kernels {
            fns: &self.kernels,
            hooks: &self.cycle_hooks,
            extra: &self.extra_cycles,
        };
        let pool = match (&self.pool, self.workers) {
            (_, 0 | 1) => None,
            (Some(p), _) => Some(p),
            (None, w) => Some(&*self.pool.insert(exec::pool(w))),
        };
        exec::execute(
            &self.graph,
            from.min(hi),
            hi,
            self.edges_done,
            kernels,
            &self.collectives,
            pool,
        );
        if let Some(p) = &mut self.pipeline {
            p.resume(hi);
        }
        self.executed = hi;
        self.edges_done = self.graph.edges.len();
        self.dirty.fill(false);
    }

    /// Before reading a tensor's data on the host: run the tasks that write it.
    pub fn flush_if_dirty(&mut self, tensor: usize) {
        if self.dirty[tensor] {
            self.flush();
        }
    }

    /// The computation of derived tensor `dst` from `src` by `op`, registered on first use.
    pub fn collective(&mut self, op: &str, src: usize, dst: usize) -> Result<u32, RunError> {
        let dp = self.tensors.data[dst].as_mut_ptr();
        if let Some(i) = self.collectives.iter().position(|c| c.dst.0 == dp) {
            return Ok(i as u32);
        }
        let (s, d) = (&self.tensors.data[src], &self.tensors.data[dst]);
        let reduce_dim = match op {
            "relayout" | "allgather" if s.shape == d.shape => None,
            // Every device's data is in one memory here, so a reduce-scatter's values are an
            // allreduce's; only their layout (sharded) differs.
            "allreduce" | "reduce_scatter" if s.shape == d.shape => None,
            "allreduce" | "reduce_scatter" if s.shape.len() == d.shape.len() + 1 => {
                // The dimension whose removal leaves the destination's shape.
                (0..s.shape.len()).find(|&i| {
                    let mut rest = s.shape.clone();
                    rest.remove(i);
                    rest == d.shape
                })
            }
            _ => {
                return Err(RunError::Invalid(format!(
                    "`{}` = {op}(`{}`): the CPU simulator computes relayout, allgather, allreduce and reduce_scatter over one sharded dimension; {:?} → {:?} is not one of them",
                    d.name, s.name, s.shape, d.shape
                )));
            }
        };
        if op != "relayout"
            && op != "allgather"
            && s.shape.len() == d.shape.len() + 1
            && reduce_dim.is_none()
        {
            return Err(RunError::Invalid(format!(
                "`{}` = {op}(`{}`): shape {:?} does not follow from {:?}",
                d.name, s.name, d.shape, s.shape
            )));
        }
        let (sdt, ssh) = (s.dtype, s.shape.clone());
        let (ddt, dsh, tensor) = (d.dtype, d.shape.clone(), d.name.clone());
        let sp = self.tensors.data[src].as_mut_ptr();
        self.collectives.push(Collective {
            src: (sp, sdt, ssh),
            dst: (dp, ddt, dsh),
            reduce_dim,
            tensor,
        });
        Ok(self.collectives.len() as u32 - 1)
    }
}
