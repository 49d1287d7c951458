//! The run process: a front end hands a job to `wsp __exec` (its own executable, started again)
//! and reads the report back, so that a crash inside a kernel ends the child and never the
//! front end (`wsp run`, the notebook kernel).

use std::io::{Read, Write};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{Job, Report, RunError};

/// The hidden subcommand of the front end's executable that runs [`serve`].
pub const SUBCOMMAND: &str = "__exec";

/// How often a running child is checked for its end and for an interrupt: first often (a
/// notebook's small runs take milliseconds, and each poll interval adds to them), then every
/// `POLL_MAX`.
const POLL_FIRST: Duration = Duration::from_micros(100);
const POLL_MAX: Duration = Duration::from_millis(10);

/// Why a job run in a child process has no report.
#[derive(Debug)]
pub enum ChildError {
    /// A fault inside a task (WSP602): the message names the task. The child died of it.
    Fault(String),
    /// The run itself refused or failed (a bad input, channel misuse, a fault it caught).
    Run(RunError),
    /// `interrupted` was set: the child was stopped (or never started).
    Interrupted,
    /// The child could not be started or ended without a report.
    Process(String),
}

impl std::fmt::Display for ChildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildError::Fault(what) => write!(f, "error[WSP602]: {what}; the run was stopped"),
            ChildError::Run(e) => write!(f, "{e}"),
            ChildError::Interrupted => write!(f, "interrupted: the run was stopped"),
            ChildError::Process(m) => write!(f, "error: {m}"),
        }
    }
}

/// Runs the job in `EXE __exec`, handing it over on standard input and reading the report from
/// standard output; returns the report and what the child wrote on standard error. While it
/// runs, `interrupted` is polled: once set, the child gets SIGINT and, if it is still there
/// after `grace`, SIGKILL.
pub fn execute_in_child(
    job: &Job,
    interrupted: &AtomicBool,
    grace: Duration,
) -> Result<(Report, String), ChildError> {
    if interrupted.load(Ordering::Relaxed) {
        return Err(ChildError::Interrupted);
    }
    let exe = std::env::current_exe()
        .map_err(|e| ChildError::Process(format!("cannot find the wsp executable: {e}")))?;
    let mut child = Command::new(exe)
        .arg(SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ChildError::Process(format!("cannot start the run process: {e}")))?;
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
    let status = wait_or_interrupt(&mut child, interrupted, grace)?;
    let out = out_reader.join().unwrap_or_default();
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(ChildError::Interrupted);
    };
    if let Some(line) = err
        .lines()
        .find(|l| l.starts_with(crate::fault::FAULT_MARK))
    {
        let what = line.trim_start_matches(crate::fault::FAULT_MARK).trim();
        return Err(ChildError::Fault(what.to_string()));
    }
    match serde_json::from_str::<Result<Report, RunError>>(&out) {
        Ok(Ok(r)) if status.success() => Ok((r, err)),
        Ok(Err(e)) => Err(ChildError::Run(e)),
        _ => Err(ChildError::Process(match status.code() {
            Some(c) => format!("the run process failed (exit status {c}){}", tail(&err)),
            None => {
                use std::os::unix::process::ExitStatusExt;
                format!(
                    "the run process was killed by signal {}{}",
                    status.signal().unwrap_or(0),
                    tail(&err)
                )
            }
        })),
    }
}

/// The child's last words, if any, for an error message.
fn tail(err: &str) -> String {
    let last: Vec<&str> = err.lines().rev().take(5).collect();
    if last.is_empty() {
        String::new()
    } else {
        let lines: Vec<&str> = last.into_iter().rev().collect();
        format!(":\n{}", lines.join("\n"))
    }
}

/// Waits for the run process, or on an interrupt passes SIGINT on to it, kills it if it is
/// still there after `grace`, reaps it and returns `None`.
fn wait_or_interrupt(
    child: &mut Child,
    interrupted: &AtomicBool,
    grace: Duration,
) -> Result<Option<ExitStatus>, ChildError> {
    let failed = |e: std::io::Error| ChildError::Process(format!("the run process: {e}"));
    let mut poll = POLL_FIRST;
    while !interrupted.load(Ordering::Relaxed) {
        if let Some(status) = child.try_wait().map_err(failed)? {
            return Ok(Some(status));
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(POLL_MAX);
    }
    // Not reaped yet, so the pid is still this child's.
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::INT,
    );
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if child.try_wait().map_err(failed)?.is_some() {
            return Ok(None);
        }
        std::thread::sleep(POLL_FIRST);
    }
    let _ = child.kill();
    child.wait().map_err(failed)?;
    Ok(None)
}

/// `__exec`: the child side. Reads a job on standard input, writes `Result<Report, RunError>`
/// as JSON on standard output.
pub fn serve() -> ExitCode {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::from(2);
    }
    let result = match serde_json::from_slice::<Job>(&input) {
        Ok(job) => crate::execute(&job),
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
