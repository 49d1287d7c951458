//! Faults inside native kernels. A signal handler names the task that was running on the
//! faulting thread (WSP602) on standard error and ends the process. `wsp run` executes in a
//! child process, so the process that asked for the run reports the fault and lives on.

use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::graph::{Graph, TaskKind};

thread_local! {
    /// The task this thread runs, or `u32::MAX`. Const-initialised and without a destructor,
    /// so the signal handler can read it.
    pub static CURRENT: Cell<u32> = const { Cell::new(u32::MAX) };
}

/// Looks task `id` up in what `source` points at: its kernel, and its index values one by one
/// through `each`, without allocating.
pub type Describe = fn(source: *const (), id: u32, each: &mut dyn FnMut(i64)) -> Option<u32>;

thread_local! {
    /// Where the handler looks up the running task on a thread that runs tasks from a copy of
    /// the graph (the pipeline's helper, while the graph itself is still growing).
    pub static SOURCE: Cell<Option<(*const (), Describe)>> = const { Cell::new(None) };
}

static GRAPH: AtomicPtr<Graph> = AtomicPtr::new(std::ptr::null_mut());
static NAMES: AtomicPtr<Vec<String>> = AtomicPtr::new(std::ptr::null_mut());

/// The exit status of a process ended by a fault in a task.
pub const FAULT_EXIT: i32 = 86;
/// What the handler's message starts with.
pub const FAULT_MARK: &str = "WSP602:";

/// Makes the graph being executed visible to the handler.
pub fn publish(graph: &Graph) {
    GRAPH.store(graph as *const Graph as *mut Graph, Ordering::Release);
}

/// Installs the handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL; `names` are the kernels by
/// index. Only for the process that runs tasks.
pub fn install(names: Vec<String>) {
    NAMES.store(Box::into_raw(Box::new(names)), Ordering::Release);
    // SAFETY: a plain sigaction with a handler that only reads published data and calls
    // async-signal-safe functions (write, _exit).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL] {
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// A fixed buffer formatted without allocating.
struct Buf {
    bytes: [u8; 512],
    len: usize,
}

impl Buf {
    fn push(&mut self, s: &[u8]) {
        for &b in s {
            if self.len < self.bytes.len() {
                self.bytes[self.len] = b;
                self.len += 1;
            }
        }
    }

    fn int(&mut self, v: i64) {
        if v < 0 {
            self.push(b"-");
        }
        let mut digits = [0u8; 20];
        let mut n = v.unsigned_abs();
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}

extern "C" fn handler(sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let mut buf = Buf {
        bytes: [0; 512],
        len: 0,
    };
    buf.push(FAULT_MARK.as_bytes());
    buf.push(match sig {
        libc::SIGSEGV => b" segmentation fault",
        libc::SIGBUS => b" bus error",
        libc::SIGFPE => b" arithmetic exception",
        _ => b" illegal instruction",
    });
    let task = CURRENT.with(|c| c.get());
    let graph = GRAPH.load(Ordering::Acquire);
    let names = NAMES.load(Ordering::Acquire);
    let source = SOURCE.with(|s| s.get());
    if let Some((source, describe)) = source
        && task != u32::MAX
        && !names.is_null()
    {
        // SAFETY: the names were leaked by `install` and are never freed.
        let names = unsafe { &*names };
        let mut index = [0i64; 16];
        let mut n = 0;
        let kernel = describe(source, task, &mut |v| {
            if n < index.len() {
                index[n] = v;
                n += 1;
            }
        });
        if let Some(k) = kernel {
            buf.push(b" in task ");
            buf.push(names.get(k as usize).map_or(&b"?"[..], |n| n.as_bytes()));
            buf.push(b"[");
            for (i, v) in index[..n].iter().enumerate() {
                if i > 0 {
                    buf.push(b", ");
                }
                buf.int(*v);
            }
            buf.push(b"]");
        }
    } else if task != u32::MAX && !graph.is_null() && !names.is_null() {
        // SAFETY: `CURRENT` names a task only inside `exec::execute`, which published the graph
        // it borrows before running any task and does not return while one runs, so the graph
        // is alive and unchanged; the names were leaked by `install` and are never freed.
        let (graph, names) = unsafe { (&*graph, &*names) };
        if let Some(TaskKind::Kernel(k)) = graph.kind_of(task) {
            buf.push(b" in task ");
            buf.push(names.get(k as usize).map_or(&b"?"[..], |n| n.as_bytes()));
            buf.push(b"[");
            let mut first = true;
            graph.index_of(task, |v| {
                if !first {
                    buf.push(b", ");
                }
                first = false;
                buf.int(v);
            });
            buf.push(b"]");
        }
    } else {
        buf.push(b" outside any task");
    }
    buf.push(b"\n");
    // SAFETY: write(2) and _exit(2) are async-signal-safe.
    unsafe {
        libc::write(2, buf.bytes.as_ptr().cast(), buf.len);
        libc::_exit(FAULT_EXIT);
    }
}
