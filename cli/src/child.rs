//! Interrupts of `wsp run` (SIGINT, SIGTERM, SIGHUP), and its run process.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use wsp_runtime::process::{ChildError, StartedChild};
use wsp_runtime::{Job, Report};

/// The signal that asked `wsp run` to stop, 0 while none did (see [`catch_signals`]).
static SIGNAL: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Arc::default);
/// Whether one did: a second one then exits at once.
static STOPPING: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// How long an interrupted run process gets to exit on the signal before it is killed.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// From now on SIGINT, SIGTERM and SIGHUP (a closed terminal, a job scheduler) only set
/// [`stop`]: the kernel build and the run process see it, pass the same signal on to their
/// processes, reap them and return, so `wsp run` exits 128 + the signal with nothing left
/// running, even when the signal reached this process alone (`kill -TERM`). A second signal
/// exits at once.
pub(crate) fn catch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::flag;
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // The order matters: the shutdown hook sees the flag as it was before this signal.
        let registered =
            flag::register_conditional_shutdown(signal, 128 + signal, STOPPING.clone())
                .and_then(|_| flag::register(signal, STOPPING.clone()))
                .and_then(|_| flag::register_usize(signal, SIGNAL.clone(), signal as usize));
        if let Err(e) = registered {
            eprintln!(
                "warning: cannot catch signal {signal} ({e}); it may leave processes running"
            );
        }
    }
}

/// The stop request the signals set, for [`wsp_codegen::build`] to watch: 0, or the signal.
pub(crate) fn stop() -> &'static AtomicUsize {
    &SIGNAL
}

/// The signal that stopped the run, if one did.
pub(crate) fn stopped_by() -> Option<u8> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => u8::try_from(s).ok(),
    }
}

/// Runs the job in `wsp __exec` (see [`wsp_runtime::process`]), in `started` when that started;
/// a signal to `wsp run` stops it.
pub(crate) fn execute_in_child(
    started: Result<StartedChild, ChildError>,
    job: &Job,
) -> Result<Report, ChildError> {
    let (report, err) = started?.execute(job, &SIGNAL, GRACE, |_| {})?;
    eprint!("{err}");
    Ok(report)
}
