//! The run process: `wsp run` hands a job to `wsp __exec` (this executable, started again) and
//! reads its report back, so that a crash inside a kernel ends the child and never this process.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use wsp_runtime::{Job, Report, RunError};

/// Set by SIGINT while `wsp run` runs (see [`catch_interrupts`]).
static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// How long an interrupted run process gets to exit on SIGINT before it is killed.
const GRACE: Duration = Duration::from_secs(2);
/// How often a running child is checked for an interrupt.
const POLL: Duration = Duration::from_millis(10);

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

/// Runs the job in `wsp __exec`, handing it over on standard input and reading the report
/// from standard output. A fault in a task ends the child; its message names the task.
pub(crate) fn execute_in_child(job: &Job) -> Result<Report, String> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err("interrupted: the run was not started".into());
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the wsp executable: {e}"))?;
    let mut child = Command::new(exe)
        .arg("__exec")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the run process: {e}"))?;
    let payload = serde_json::to_vec(job).expect("job serializes");
    let mut stdin = child.stdin.take().expect("piped");
    // Write on a thread: a child that dies early must not block us on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&payload);
    });
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut stdout = child.stdout.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let Some(status) = wait_or_interrupt(&mut child)? else {
        return Err("interrupted: the run was stopped".into());
    };
    let out = out_reader.join().unwrap_or_default();
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    if let Some(line) = err
        .lines()
        .find(|l| l.starts_with(wsp_runtime::fault::FAULT_MARK))
    {
        let what = line
            .trim_start_matches(wsp_runtime::fault::FAULT_MARK)
            .trim();
        return Err(format!("error[WSP602]: {what}; the run was stopped"));
    }
    eprint!("{err}");
    match serde_json::from_str::<Result<Report, RunError>>(&out) {
        Ok(Ok(r)) if status.success() => Ok(r),
        Ok(Err(e)) => Err(e.to_string()),
        _ => Err(match status.code() {
            Some(c) => format!("error: the run process failed (exit status {c})"),
            None => {
                use std::os::unix::process::ExitStatusExt;
                format!(
                    "error: the run process was killed by signal {}",
                    status.signal().unwrap_or(0)
                )
            }
        }),
    }
}

/// Waits for the run process, or on an interrupt passes SIGINT on to it, kills it if it is
/// still there after [`GRACE`], reaps it and returns `None`.
fn wait_or_interrupt(child: &mut Child) -> Result<Option<ExitStatus>, String> {
    let failed = |e: std::io::Error| format!("the run process: {e}");
    while !INTERRUPTED.load(Ordering::Relaxed) {
        if let Some(status) = child.try_wait().map_err(failed)? {
            return Ok(Some(status));
        }
        std::thread::sleep(POLL);
    }
    // Not reaped yet, so the pid is still this child's.
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::INT,
    );
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        if child.try_wait().map_err(failed)?.is_some() {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
    let _ = child.kill();
    child.wait().map_err(failed)?;
    Ok(None)
}

/// `wsp __exec`: the child side. Reads a job on standard input, writes
/// `Result<Report, RunError>` as JSON on standard output.
pub(crate) fn exec_child() -> ExitCode {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::from(2);
    }
    let result = match serde_json::from_slice::<Job>(&input) {
        Ok(job) => wsp_runtime::execute(&job),
        Err(e) => Err(RunError::Invalid(format!("malformed job: {e}"))),
    };
    let ok = result.is_ok();
    let _ = serde_json::to_writer(std::io::stdout(), &result);
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
