//! The worker pool: runs the ready tasks of a range of the graph in parallel, each as soon as
//! every task it depends on finished. Results do not depend on the order, so for a race-free
//! program they are the same bit for bit whatever the worker count.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use crossbeam_deque::{Steal, Stealer, Worker};

use crate::fault;
use crate::graph::{Graph, TaskId, TaskKind};
use crate::tensors::{read, write_elem};
use wsp_ir::DType;

/// `void wsp_kernel_NAME(char* const* tiles, const int64_t* strides, const double* scalars)`
pub type KernelFn = unsafe extern "C" fn(*const *mut u8, *const i64, *const f64);

/// A derived tensor computed from its source (`relayout`: a copy; `allreduce`: the sum over
/// the sharded dimension).
#[derive(Debug, Clone)]
pub struct Collective {
    pub src: (*mut u8, DType, Vec<u64>),
    pub dst: (*mut u8, DType, Vec<u64>),
    /// The source dimension summed away, for `allreduce`.
    pub reduce_dim: Option<usize>,
}

// SAFETY: as for `Graph`: the pointers outlive the run and the graph orders their use.
unsafe impl Send for Collective {}
unsafe impl Sync for Collective {}

impl Collective {
    fn run(&self) {
        let (sp, sd, ss) = &self.src;
        let (dp, dd, ds) = &self.dst;
        let n_src: u64 = ss.iter().product();
        let n_dst: u64 = ds.iter().product();
        // SAFETY: both buffers hold their shapes' elements; the graph gives this task sole
        // access to the destination and read access to the source.
        let src =
            unsafe { std::slice::from_raw_parts(*sp, (n_src * sd.size_bytes() as u64) as usize) };
        let dst = unsafe {
            std::slice::from_raw_parts_mut(*dp, (n_dst * dd.size_bytes() as u64) as usize)
        };
        match self.reduce_dim {
            None => (0..n_dst as usize).for_each(|i| write_elem(*dd, dst, i, read(*sd, src, i))),
            Some(d) => {
                let outer: u64 = ss[..d].iter().product();
                let inner: u64 = ss[d + 1..].iter().product();
                let k = ss[d];
                for o in 0..outer {
                    for i in 0..inner {
                        let mut acc = 0.0;
                        for r in 0..k {
                            acc += read(*sd, src, ((o * k + r) * inner + i) as usize);
                        }
                        write_elem(*dd, dst, (o * inner + i) as usize, acc);
                    }
                }
            }
        }
    }
}

/// The stack each worker gets: tiles live on the stack of the kernel that computes them.
const WORKER_STACK: usize = 256 << 20;

/// Runs tasks `lo..hi` (edges from `first_edge` on; earlier tasks have finished).
///
/// The tasks ready at the start are claimed in chunks through a shared cursor, so that a
/// million independent tasks cost a few thousand atomic operations, not millions; tasks made
/// ready later go to the finishing worker's deque, where idle workers steal them.
pub fn execute(
    graph: &Graph,
    lo: TaskId,
    hi: TaskId,
    first_edge: usize,
    kernels: &[KernelFn],
    collectives: &[Collective],
    workers: usize,
) {
    if hi <= lo {
        return;
    }
    // Independent tasks (no edges in the range) need no successor lists: all start ready.
    let independent = !graph.edges[first_edge..]
        .iter()
        .any(|&(p, s)| p >= lo && s < hi);
    let (offsets, succs, pending) = if independent {
        Default::default()
    } else {
        graph.successors(lo, hi, first_edge)
    };
    let initial: Vec<TaskId> = if independent {
        Vec::new()
    } else {
        (lo..hi)
            .filter(|&t| pending[(t - lo) as usize] == 0)
            .collect()
    };
    let ready = |k: usize| {
        if independent {
            lo + k as TaskId
        } else {
            initial[k]
        }
    };
    let ready_count = if independent {
        (hi - lo) as usize
    } else {
        initial.len()
    };
    let pending: Vec<AtomicU32> = pending.into_iter().map(AtomicU32::new).collect();
    let workers = workers.max(1);
    // Small enough that every worker gets many chunks, so heavy tasks still spread.
    let chunk = (ready_count / (workers * 64)).clamp(1, 1024);
    let cursor = AtomicUsize::new(0);
    let remaining = AtomicUsize::new((hi - lo) as usize);
    let locals: Vec<Worker<TaskId>> = (0..workers).map(|_| Worker::new_lifo()).collect();
    let stealers: Vec<Stealer<TaskId>> = locals.iter().map(|w| w.stealer()).collect();
    fault::publish(graph);
    let run_task = |t: TaskId, local: &Worker<TaskId>| {
        let task = &graph.tasks[t as usize];
        match task.kind {
            TaskKind::Kernel(k) => {
                fault::CURRENT.set(t);
                let sig = graph.sigs[task.sig as usize];
                // SAFETY: the pools hold this task's arguments at its offsets; the kernel was
                // generated for exactly this parameter list.
                unsafe {
                    (kernels[k as usize])(
                        graph.ptrs.as_ptr().add(task.args as usize),
                        graph.strides.as_ptr().add(sig.strides as usize),
                        graph.scalars.as_ptr().add(sig.scalars as usize),
                    )
                };
                fault::CURRENT.set(u32::MAX);
            }
            TaskKind::Barrier => {}
            TaskKind::Collective(c) => collectives[c as usize].run(),
        }
        if independent {
            return;
        }
        let i = (t - lo) as usize;
        for &s in &succs[offsets[i] as usize..offsets[i + 1] as usize] {
            if pending[(s - lo) as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                local.push(s);
            }
        }
    };
    let work = |local: Worker<TaskId>| {
        // Tasks run since this worker last told `remaining`.
        let mut done = 0;
        loop {
            if let Some(t) = local.pop() {
                run_task(t, &local);
                done += 1;
                continue;
            }
            let c = cursor.fetch_add(chunk, Ordering::Relaxed);
            if c < ready_count {
                let end = (c + chunk).min(ready_count);
                for k in c..end {
                    run_task(ready(k), &local);
                }
                done += end - c;
                continue;
            }
            let stolen = std::iter::repeat_with(|| {
                stealers
                    .iter()
                    .map(|s| s.steal_batch_and_pop(&local))
                    .collect::<Steal<_>>()
            })
            .find(|s| !s.is_retry())
            .and_then(|s| s.success());
            if let Some(t) = stolen {
                run_task(t, &local);
                done += 1;
                continue;
            }
            let left = remaining.fetch_sub(done, Ordering::AcqRel) - done;
            done = 0;
            if left == 0 {
                break;
            }
            std::thread::yield_now();
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = locals
            .into_iter()
            .map(|local| {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(s, || work(local))
                    .expect("spawn a worker thread")
            })
            .collect();
        for h in handles {
            let _ = h.join();
        }
    });
}
