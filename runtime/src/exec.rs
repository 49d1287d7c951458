//! The worker pool: runs the ready tasks of a range of the graph in parallel, each as soon as
//! every task it depends on finished. Results do not depend on the order, so for a race-free
//! program they are the same bit for bit whatever the worker count.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crossbeam_deque::{Steal, Stealer, Worker};

use crate::fault;
use crate::graph::{Graph, Launch, Task, TaskKind};
use crate::tensors::{read, write_elem};
use wsp_ir::DType;

/// `void wsp_kernel_NAME(char* const* tiles, const int64_t* strides, const double* scalars)`
pub type KernelFn = unsafe extern "C" fn(*const *mut u8, *const i64, *const f64);

/// `wsp_take_cycles` of a kernel library: the cycles the kernel just run on this thread added
/// with `pto::cpu_sim::add_cycles` (a `cpp_src` body's cost), and resets them.
pub type CyclesFn = unsafe extern "C" fn() -> u64;

/// The kernels by index, and for each custom (`cpp_src`) one its library's [`CyclesFn`]:
/// after such a kernel runs, what it added is stored in `extra[task]`, a slot of its own task
/// (no counter shared between tasks), for the simulated clock.
#[derive(Clone, Copy)]
pub struct Kernels<'a> {
    pub fns: &'a [KernelFn],
    pub hooks: &'a [Option<CyclesFn>],
    pub extra: &'a [AtomicU64],
}

impl Kernels<'_> {
    /// Runs kernel `k` for task `task`.
    ///
    /// # Safety
    /// As the kernel's: the pointers are its arguments, as codegen laid them out.
    unsafe fn run(
        &self,
        k: usize,
        task: u32,
        tiles: *const *mut u8,
        strides: *const i64,
        scalars: *const f64,
    ) {
        // SAFETY: the caller passes the kernel's own arguments.
        unsafe { (self.fns[k])(tiles, strides, scalars) };
        if let Some(Some(take)) = self.hooks.get(k) {
            // SAFETY: `wsp_take_cycles` takes nothing and only reads a thread-local.
            let cycles = unsafe { take() };
            if let Some(slot) = self.extra.get(task as usize) {
                slot.store(cycles, Ordering::Relaxed);
            }
        }
    }
}

/// A derived tensor computed from its source (`relayout`: a copy; `allreduce`: the sum over
/// the sharded dimension).
#[derive(Debug, Clone)]
pub struct Collective {
    pub src: (*mut u8, DType, Vec<u64>),
    pub dst: (*mut u8, DType, Vec<u64>),
    /// The source dimension summed away, for `allreduce`.
    pub reduce_dim: Option<usize>,
    /// The derived tensor it computes, for task dumps.
    pub tensor: String,
}

// SAFETY: as for `Graph`: the pointers point into tensor buffers the run owns, which outlive
// every execution, and moving a collective moves no buffer.
unsafe impl Send for Collective {}
// SAFETY: a shared collective is only read; `run` writes through `dst`, and the graph's edges
// order its task against every task that writes the source or touches the destination, so no
// other thread touches those bytes meanwhile.
unsafe impl Sync for Collective {}

impl Collective {
    pub(crate) fn run(&self) {
        let (sp, sd, ss) = &self.src;
        let (dp, dd, ds) = &self.dst;
        let n_src: u64 = ss.iter().product();
        let n_dst: u64 = ds.iter().product();
        // SAFETY: the source buffer holds its shape's elements, and the graph orders this task
        // after every writer of the source, so nothing writes it while this slice lives.
        let src =
            unsafe { std::slice::from_raw_parts(*sp, (n_src * sd.size_bytes() as u64) as usize) };
        // SAFETY: the destination buffer holds its shape's elements and is a different tensor
        // from the source; the graph gives this task sole access to it while the slice lives.
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
pub(crate) const WORKER_STACK: usize = 256 << 20;

/// An item of work: an entry, or one chunk of a launch's instances (`chunk + 1` in the high
/// half).
type Item = u64;

/// Runs entries `lo..hi` of the graph (edges from `first_edge` on; earlier entries have
/// finished): in order on the calling thread without a pool, else on every thread of `pool`.
///
/// The entries ready at the start are split into one contiguous block per worker, which it
/// claims in chunks through its own cursor (and, once done, through the others'), so that a
/// million independent tasks cost a few thousand atomic operations, not millions, and two
/// workers do not run neighbouring entries at once (their tiles are often neighbours in
/// memory, and two cores writing neighbouring pages slow each other down: 256 chains over
/// adjacent 4 KiB tiles ran no faster on two workers than on one); entries made
/// ready later go to the finishing worker's deque, where idle workers steal them. A launch
/// becomes chunks of instances on the deque of the worker that meets it, and finishes with its
/// last chunk.
pub fn execute(
    graph: &Graph,
    lo: u32,
    hi: u32,
    first_edge: usize,
    kernels: Kernels,
    collectives: &[Collective],
    pool: Option<&rayon::ThreadPool>,
) {
    if hi <= lo {
        return;
    }
    fault::publish(graph);
    let Some(pool) = pool else {
        // Edges run from lower entries to higher ones, so enumeration order is an order that
        // every dependency allows: one worker needs no successor lists, counts or deque.
        for e in lo..hi {
            run_whole(graph, e, kernels, collectives);
        }
        return;
    };
    let workers = pool.current_num_threads();
    // Independent entries (no edges in the range) need no successor lists: all start ready.
    let successors = graph.successors(lo, hi, first_edge);
    let initial: Vec<u32> = match &successors {
        None => Vec::new(),
        Some((_, _, pending)) => (lo..hi)
            .filter(|&t| pending[(t - lo) as usize] == 0)
            .collect(),
    };
    let ready = |k: usize| match successors {
        None => lo + k as u32,
        Some(_) => initial[k],
    };
    let ready_count = match successors {
        None => (hi - lo) as usize,
        Some(_) => initial.len(),
    };
    let pending: Vec<AtomicU32> = successors
        .as_ref()
        .map(|(_, _, p)| p.iter().map(|&n| AtomicU32::new(n)).collect())
        .unwrap_or_default();
    let workers = workers.max(1);
    // Small enough that every worker gets many chunks, so heavy tasks still spread.
    let chunk = (ready_count / (workers * 64)).clamp(1, 1024);
    let launch_chunk = |l: &Launch| (l.count as usize / (workers * 16)).clamp(1, 4096);
    let chunks_left: Vec<AtomicUsize> =
        graph.launches.iter().map(|_| AtomicUsize::new(0)).collect();
    // Worker `w`'s block is `ready_count * w / workers..` up to the next one's.
    let block = |w: usize| ready_count * w / workers;
    let cursors: Vec<Cursor> = (0..workers)
        .map(|w| Cursor(AtomicUsize::new(block(w))))
        .collect();
    let remaining = AtomicUsize::new((hi - lo) as usize);
    let locals: Vec<Worker<Item>> = (0..workers).map(|_| Worker::new_lifo()).collect();
    let stealers: Vec<Stealer<Item>> = locals.iter().map(|w| w.stealer()).collect();
    // Entry `e` finished: its successors may be ready. Returns 1, the entries finished.
    let finish = |e: u32, local: &Worker<Item>| {
        if let Some((offsets, succs, _)) = &successors {
            let i = (e - lo) as usize;
            for &s in &succs[offsets[i] as usize..offsets[i + 1] as usize] {
                if pending[(s - lo) as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                    local.push(s as Item);
                }
            }
        }
        1
    };
    // Runs an item; returns the entries it finished.
    let run = |item: Item, local: &Worker<Item>| -> usize {
        let e = item as u32;
        let task = &graph.tasks[e as usize];
        let TaskKind::Launch(l) = task.kind else {
            run_whole(graph, e, kernels, collectives);
            return finish(e, local);
        };
        let launch = &graph.launches[l as usize];
        if launch.sequential {
            // Its steps run in order, here.
            run_whole(graph, e, kernels, collectives);
            return finish(e, local);
        }
        let size = launch_chunk(launch);
        let left = &chunks_left[l as usize];
        let c = match (item >> 32).checked_sub(1) {
            Some(c) => c as usize,
            None => {
                // Met whole: split into chunks, the first run here.
                let n = (launch.count as usize).div_ceil(size);
                if n == 0 {
                    return finish(e, local);
                }
                left.store(n, Ordering::Relaxed);
                for c in (1..n as Item).rev() {
                    local.push(e as Item | (c + 1) << 32);
                }
                0
            }
        };
        let (strides, scalars) = signature(graph, task);
        run_chunk(launch, c * size, size, kernels, strides, scalars);
        if left.fetch_sub(1, Ordering::AcqRel) == 1 {
            finish(e, local)
        } else {
            0
        }
    };
    let work = |w: usize, local: Worker<Item>| {
        // Entries finished since this worker last told `remaining`.
        let mut done = 0;
        loop {
            if let Some(item) = local.pop() {
                done += run(item, &local);
                continue;
            }
            // Its own block first, then the others' from the next worker's on.
            let claimed = (0..workers).map(|v| (w + v) % workers).find_map(|v| {
                let end = block(v + 1);
                let c = cursors[v].0.fetch_add(chunk, Ordering::Relaxed);
                (c < end).then(|| c..(c + chunk).min(end))
            });
            if let Some(range) = claimed {
                for k in range {
                    done += run(ready(k) as Item, &local);
                }
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
            if let Some(item) = stolen {
                done += run(item, &local);
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
    // The pool's threads live as long as the run, so a flush starts none.
    pool.scope(|s| {
        for (w, local) in locals.into_iter().enumerate() {
            let work = &work;
            s.spawn(move |_| work(w, local));
        }
    });
}

/// A worker's cursor into the entries ready at the start, on a cache line of its own.
#[repr(align(128))]
struct Cursor(AtomicUsize);

/// The worker threads of a run, started once: `workers` of them, each with the stack tiles
/// need.
pub fn pool(workers: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .stack_size(WORKER_STACK)
        .thread_name(|i| format!("wsp-worker-{i}"))
        .build()
        .expect("start the worker threads")
}

/// Where a task's strides and scalars start.
fn signature(graph: &Graph, task: &Task) -> (*const i64, *const f64) {
    let sig = graph.sigs[task.sig as usize];
    // SAFETY: the pools hold these offsets for every task with a signature.
    unsafe {
        (
            graph.strides.as_ptr().add(sig.strides as usize),
            graph.scalars.as_ptr().add(sig.scalars as usize),
        )
    }
}

/// Runs entry `e` of the graph, a launch's every instance.
fn run_whole(graph: &Graph, e: u32, kernels: Kernels, collectives: &[Collective]) {
    let task = &graph.tasks[e as usize];
    let (strides, scalars) = signature(graph, task);
    match task.kind {
        TaskKind::Kernel(k) => {
            let id = graph.id_of(e);
            fault::CURRENT.set(id);
            // SAFETY: the pool holds this task's arguments at its offset; the kernel was
            // generated for exactly this parameter list.
            unsafe {
                kernels.run(
                    k as usize,
                    id,
                    graph.ptrs.as_ptr().add(task.args as usize),
                    strides,
                    scalars,
                )
            };
            fault::CURRENT.set(u32::MAX);
        }
        TaskKind::Barrier => {}
        TaskKind::Collective(c) => collectives[c as usize].run(),
        TaskKind::Launch(l) => {
            let launch = &graph.launches[l as usize];
            run_chunk(launch, 0, launch.count as usize, kernels, strides, scalars);
        }
    }
}

/// Runs instances `lo..lo + size` of a launch (fewer at its end).
pub(crate) fn run_chunk(
    launch: &Launch,
    lo: usize,
    size: usize,
    kernels: Kernels,
    strides: *const i64,
    scalars: *const f64,
) {
    let hi = (lo + size).min(launch.count as usize);
    let mut tiles: Vec<*mut u8> = launch.tiles.iter().map(|t| t.0).collect();
    for i in lo..hi {
        for (p, &(base, step)) in tiles.iter_mut().zip(&launch.tiles) {
            *p = base.wrapping_offset(step.wrapping_mul(i as isize));
        }
        let id = launch.first + i as u32;
        fault::CURRENT.set(id);
        // SAFETY: the enumerator checked that every instance's tiles lie inside their
        // tensors, and the graph gives each instance its regions alone.
        unsafe { kernels.run(launch.kernel as usize, id, tiles.as_ptr(), strides, scalars) };
    }
    fault::CURRENT.set(u32::MAX);
}
