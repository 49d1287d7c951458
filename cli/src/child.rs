//! Interrupts of `wsp run`, and its run process.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use wsp_runtime::process::ChildError;
use wsp_runtime::{Job, Report};

/// Set by SIGINT while `wsp run` runs (see [`catch_interrupts`]).
static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// How long an interrupted run process gets to exit on SIGINT before it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// From now on SIGINT only sets [`interrupted`]: the kernel build and the run process see it,
/// pass it on to their processes, reap them and return, so `wsp run` exits 130 with nothing
/// left running, even when the signal reached this process alone (`kill -INT`). A second
/// SIGINT exits at once.
pub(crate) fn catch_interrupts() {
    use signal_hook::consts::SIGINT;
    use signal_hook::flag;
    // The order matters: the shutdown hook sees the flag as it was before this signal.
    let registered = flag::register_conditional_shutdown(SIGINT, 130, INTERRUPTED.clone())
        .and_then(|_| flag::register(SIGINT, INTERRUPTED.clone()));
    if let Err(e) = registered {
        eprintln!(
            "warning: cannot catch interrupts ({e}); an interrupt may leave processes running"
        );
    }
}

/// The flag SIGINT sets, for [`wsp_codegen::build`] to watch.
pub(crate) fn interrupted() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Runs the job in `wsp __exec` (see [`wsp_runtime::process`]); a SIGINT to `wsp run` stops it.
pub(crate) fn execute_in_child(job: &Job) -> Result<Report, ChildError> {
    let (report, err) = wsp_runtime::process::execute_in_child(job, &INTERRUPTED, GRACE)?;
    eprint!("{err}");
    Ok(report)
}
