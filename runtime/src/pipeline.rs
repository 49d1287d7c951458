//! Execution that overlaps enumeration. While the enumerator goes on, a helper thread runs the
//! tasks already enumerated, in enumeration order: every edge runs from an earlier task to a
//! later one, so a single thread running them in order needs no dependency tracking at all.
//! When the enumerator needs results (a tensor read on the host, the end of an execution), it
//! stops the helper between two tasks and runs the rest with the work-stealing pool
//! ([`crate::exec::execute`]), all workers at once; the helper then resumes past them.
//!
//! The helper reads nothing the enumerator is still writing: each batch of entries is copied
//! out of the graph (kernel, tile pointers, strides, scalars, index values, launches,
//! collectives) when it is handed over. Per task it writes one word (how far it got) that no
//! other thread writes while it runs, so nothing on the per-task path is shared.
//!
//! It pays when enumerating a task costs about as much as running it (many small dependent
//! tasks): the two then run side by side. With one worker there is no helper, and programs
//! with fewer than [`BATCH`] entries never start one. Index launches are left to the pool,
//! which spreads their instances over every worker: the helper waits at one for the flush.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::exec::{Collective, KernelFn, Kernels, run_chunk};
use crate::fault;
use crate::graph::{Graph, Launch, TaskId, TaskKind};

/// Entries handed over at once.
pub const BATCH: u32 = 4096;

/// What running one entry needs, with offsets into its batch's pools.
#[derive(Debug, Clone, Copy)]
enum Exec {
    Kernel {
        kernel: u32,
        id: TaskId,
        args: u32,
        strides: u32,
        scalars: u32,
        /// Index values `index[lo..hi]` of the batch.
        index: (u32, u32),
    },
    Launch {
        launch: u32,
        strides: u32,
        scalars: u32,
    },
    Collective(u32),
    Barrier,
}

/// Entries `first..first + entries.len()` of the graph, copied for the helper.
pub struct Batch {
    first: u32,
    entries: Vec<Exec>,
    ptrs: Vec<*mut u8>,
    strides: Vec<i64>,
    scalars: Vec<f64>,
    index: Vec<i64>,
    launches: Vec<Launch>,
    collectives: Vec<Collective>,
}

// SAFETY: the pointers are tile pointers into tensor buffers the run owns, which outlive the
// helper (the run joins it before dropping them); moving a batch moves no buffer.
unsafe impl Send for Batch {}

impl Batch {
    /// Copies entries `first..hi` out of the graph.
    fn copy(graph: &Graph, first: u32, hi: u32, collectives: &[Collective]) -> Batch {
        let mut b = Batch {
            first,
            entries: Vec::with_capacity((hi - first) as usize),
            ptrs: Vec::new(),
            strides: Vec::new(),
            scalars: Vec::new(),
            index: Vec::new(),
            launches: Vec::new(),
            collectives: Vec::new(),
        };
        // The signatures copied so far: graph signature → its offsets in this batch and its
        // tile count (two strides a tile).
        let mut sigs: Vec<(u32, u32, u32, usize)> = Vec::new();
        for e in first..hi {
            let task = &graph.tasks[e as usize];
            let (strides, scalars, tiles) = match sigs.iter().find(|s| s.0 == task.sig) {
                Some(&(_, st, sc, tiles)) => (st, sc, tiles),
                None => {
                    let (st, sc) = graph.signature_data(task.sig);
                    let at = (b.strides.len() as u32, b.scalars.len() as u32, st.len() / 2);
                    b.strides.extend_from_slice(st);
                    b.scalars.extend_from_slice(sc);
                    sigs.push((task.sig, at.0, at.1, at.2));
                    at
                }
            };
            b.entries.push(match task.kind {
                TaskKind::Kernel(kernel) => {
                    let args = b.ptrs.len() as u32;
                    b.ptrs
                        .extend_from_slice(&graph.ptrs[task.args as usize..][..tiles]);
                    let lo = b.index.len() as u32;
                    b.index.extend_from_slice(graph.entry_index(e as usize));
                    Exec::Kernel {
                        kernel,
                        id: graph.id_of(e),
                        args,
                        strides,
                        scalars,
                        index: (lo, b.index.len() as u32),
                    }
                }
                TaskKind::Launch(l) => {
                    b.launches.push(graph.launches[l as usize].clone());
                    Exec::Launch {
                        launch: b.launches.len() as u32 - 1,
                        strides,
                        scalars,
                    }
                }
                TaskKind::Collective(c) => {
                    b.collectives.push(collectives[c as usize].clone());
                    Exec::Collective(b.collectives.len() as u32 - 1)
                }
                TaskKind::Barrier => Exec::Barrier,
            });
        }
        b
    }

    /// The kernel and index values of task `id`, if this batch runs it: for the fault
    /// handler, so it allocates nothing.
    pub fn describe(&self, id: TaskId, each: impl FnMut(i64)) -> Option<u32> {
        for x in &self.entries {
            match *x {
                Exec::Kernel {
                    kernel,
                    id: i,
                    index: (lo, hi),
                    ..
                } if i == id => {
                    self.index[lo as usize..hi as usize]
                        .iter()
                        .copied()
                        .for_each(each);
                    return Some(kernel);
                }
                Exec::Launch { launch, .. } => {
                    let l = &self.launches[launch as usize];
                    if id >= l.first && id - l.first < l.count {
                        l.index_at(id - l.first).for_each(each);
                        return Some(l.kernel);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn run(&self, i: usize, kernels: &[KernelFn]) {
        match self.entries[i] {
            Exec::Kernel {
                kernel,
                id,
                args,
                strides,
                scalars,
                ..
            } => {
                fault::CURRENT.set(id);
                // SAFETY: the batch holds this task's tile pointers, strides and scalars as
                // the graph had them; the kernel was generated for this parameter list, and
                // every task before it has run, so its regions are its own.
                unsafe {
                    (kernels[kernel as usize])(
                        self.ptrs.as_ptr().add(args as usize),
                        self.strides.as_ptr().add(strides as usize),
                        self.scalars.as_ptr().add(scalars as usize),
                    )
                };
                fault::CURRENT.set(u32::MAX);
            }
            Exec::Launch {
                launch,
                strides,
                scalars,
            } => {
                let l = &self.launches[launch as usize];
                // SAFETY: the pools hold the launch's strides and scalars at these offsets.
                let (st, sc) = unsafe {
                    (
                        self.strides.as_ptr().add(strides as usize),
                        self.scalars.as_ptr().add(scalars as usize),
                    )
                };
                let kernels = Kernels {
                    fns: kernels,
                    hooks: &[],
                    extra: &[],
                };
                run_chunk(l, 0, l.count as usize, kernels, st, sc);
            }
            Exec::Collective(c) => self.collectives[c as usize].run(),
            Exec::Barrier => {}
        }
    }
}

/// What the enumerator and the helper share.
struct Shared {
    /// Set by the enumerator: the helper parks before its next entry.
    stop: AtomicBool,
    /// Every entry before this one has run (written by the helper alone).
    done: AtomicU32,
    /// Entries before this one ran elsewhere while the helper was parked: it skips them.
    skip_below: AtomicU32,
    /// `Some(entry)` while the helper is parked before `entry`.
    parked: Mutex<Option<u32>>,
    wake: Condvar,
}

/// The helper thread and the batches handed to it.
pub struct Pipeline {
    tx: Option<Sender<Batch>>,
    shared: Arc<Shared>,
    helper: Option<JoinHandle<()>>,
    /// Entries before this one have been handed over (or run).
    pub published: u32,
}

impl Pipeline {
    /// A helper for the kernels `kernels`, starting at entry `first`.
    pub fn start(kernels: Vec<KernelFn>, first: u32) -> Pipeline {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            done: AtomicU32::new(first),
            skip_below: AtomicU32::new(first),
            parked: Mutex::new(None),
            wake: Condvar::new(),
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let theirs = Arc::clone(&shared);
        let helper = std::thread::Builder::new()
            .name("wsp-helper".into())
            .stack_size(crate::exec::WORKER_STACK)
            .spawn(move || helper(rx, &theirs, &kernels))
            .expect("spawn the helper thread");
        Pipeline {
            tx: Some(tx),
            shared,
            helper: Some(helper),
            published: first,
        }
    }

    /// Hands entries `published..hi` of the graph to the helper.
    pub fn publish(&mut self, graph: &Graph, hi: u32, collectives: &[Collective]) {
        if hi <= self.published {
            return;
        }
        let batch = Batch::copy(graph, self.published, hi, collectives);
        self.published = hi;
        if let Some(tx) = &self.tx {
            // A helper that ended (it only does on a panic) leaves the entries to the pool.
            let _ = tx.send(batch);
        }
    }

    /// Stops the helper between two entries; every entry before the one returned has run,
    /// and the helper runs nothing until [`Pipeline::resume`].
    pub fn pause(&mut self) -> u32 {
        let s = &self.shared;
        s.stop.store(true, Ordering::SeqCst);
        // What ran elsewhere while the helper was parked, which it has not skipped yet.
        let skipped = s.skip_below.load(Ordering::Acquire);
        let mut parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(at) = *parked {
                return at.max(skipped);
            }
            // Idle: everything handed over has run, and nothing new will be until resumed.
            let done = s.done.load(Ordering::Acquire);
            if done >= self.published || self.helper.as_ref().is_none_or(|h| h.is_finished()) {
                return done.max(skipped);
            }
            parked = s.wake.wait(parked).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Lets the helper go on, past entry `ran_to` (everything before it has run); entries
    /// not yet handed over below it never are.
    pub fn resume(&mut self, ran_to: u32) {
        self.published = self.published.max(ran_to);
        let s = &self.shared;
        s.skip_below.store(ran_to, Ordering::Release);
        // The helper is parked or idle: this word is not its to write meanwhile.
        s.done.fetch_max(ran_to, Ordering::AcqRel);
        let mut parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
        *parked = None;
        s.stop.store(false, Ordering::SeqCst);
        s.wake.notify_all();
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // Closing the channel ends the helper once it has run or skipped what it holds.
        self.tx = None;
        let done = self.shared.done.load(Ordering::Acquire);
        self.resume(done.max(self.published));
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

/// [`Batch::describe`] for the fault handler.
fn describe(source: *const (), id: TaskId, each: &mut dyn FnMut(i64)) -> Option<u32> {
    // SAFETY: `helper` sets the source to the batch it runs and clears it before dropping it.
    let batch = unsafe { &*source.cast::<Batch>() };
    batch.describe(id, each)
}

fn helper(rx: Receiver<Batch>, s: &Shared, kernels: &[KernelFn]) {
    while let Ok(batch) = rx.recv() {
        // The fault handler looks tasks up in the batch: the graph may be growing meanwhile.
        fault::SOURCE.set(Some((&batch as *const Batch as *const (), describe)));
        for i in 0..batch.entries.len() {
            let e = batch.first + i as u32;
            // An index launch is left to the pool, which runs its instances on every worker:
            // the helper waits for the flush that runs it.
            let launch = matches!(batch.entries[i], Exec::Launch { .. });
            let wait = || {
                s.stop.load(Ordering::SeqCst)
                    || (launch && e >= s.skip_below.load(Ordering::Acquire))
            };
            if wait() {
                let mut parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
                // Said again after each wake: the enumerator may have resumed and stopped
                // the helper again before it woke.
                while wait() {
                    *parked = Some(e);
                    s.wake.notify_all();
                    parked = s.wake.wait(parked).unwrap_or_else(|e| e.into_inner());
                }
                *parked = None;
            }
            if e < s.skip_below.load(Ordering::Acquire) {
                continue;
            }
            batch.run(i, kernels);
            s.done.store(e + 1, Ordering::Release);
        }
        fault::SOURCE.set(None);
        if s.stop.load(Ordering::SeqCst) {
            // The enumerator may be waiting for the last entry handed over.
            let _parked = s.parked.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
    }
}
