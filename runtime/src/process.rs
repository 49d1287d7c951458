//! The run process: a front end hands a job to `wsp __exec` (its own executable, started again)
//! and reads the report back, so that a crash inside a kernel ends the child and never the
//! front end (`wsp run`, the notebook kernel).

use std::io::{Read, Write};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::{Failed, Job, Report, RunError};

/// The variable that tells a run process its parent's pid, to end with it.
const PARENT_VAR: &str = "WSP_RUN_PARENT";

/// The variable that tells a run process to turn transparent huge pages back on (see
/// [`without_huge_pages`]).
const HUGE_PAGES_VAR: &str = "WSP_RUN_HUGE_PAGES";

/// Whether [`without_huge_pages`] turned them off.
static HUGE_PAGES_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns transparent huge pages off for this process, a front end that allocates little: the
/// allocator asks for huge pages, and each fresh 2 MB region then costs a zeroing (about half
/// of a warm `wsp run`'s front end). The run processes it starts turn them back on, for their
/// tensors (a 134 MB one takes 40% longer to fill without them). Where they were off already,
/// nothing changes.
pub fn without_huge_pages() {
    if rustix::thread::transparent_huge_pages_are_disabled() == Ok(false)
        && rustix::thread::disable_transparent_huge_pages(true).is_ok()
    {
        HUGE_PAGES_OFF.store(true, Ordering::Relaxed);
    }
}

/// In a run process: huge pages back on, if the front end turned them off.
fn huge_pages_back() {
    if std::env::var_os(HUGE_PAGES_VAR).is_some() {
        let _ = rustix::thread::disable_transparent_huge_pages(false);
    }
}

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
    /// A fault inside a task (WSP602): the message names the task. The child died of it,
    /// after printing `printed` (for a kept process; `execute_in_child_with_progress` passed it on already).
    Fault { what: String, printed: String },
    /// The run itself refused or failed (a bad input, channel misuse, a fault it caught),
    /// with what it printed before.
    Run(Failed),
    /// `interrupted` was set: the child was stopped (or never started).
    Interrupted,
    /// The child could not be started or ended without a report.
    Process(String),
}

impl std::fmt::Display for ChildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildError::Fault { what, .. } => {
                write!(f, "error[WSP602]: {what}; the run was stopped")
            }
            ChildError::Run(e) => write!(f, "{}", e.error),
            ChildError::Interrupted => write!(f, "interrupted: the run was stopped"),
            ChildError::Process(m) => write!(f, "error: {m}"),
        }
    }
}

/// A command that runs this program's own image: a child started from it speaks this
/// process's protocol even after the file was replaced (an upgrade, a rebuild) or removed.
/// On Linux that is `/proc/self/exe`, the running image whatever became of its path;
/// elsewhere, the path as resolved at the first call ([`resolve_self`] makes that start-up).
pub fn self_command() -> Result<Command, String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("/proc/self/exe");
        // What `ps` shows: the name, not the link.
        cmd.arg0("wsp");
        Ok(cmd)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let exe = resolve_self()?;
        if !exe.exists() {
            return Err(format!(
                "the wsp executable `{}` this process started from is gone (replaced or removed); start the command again",
                exe.display()
            ));
        }
        Ok(Command::new(exe))
    }
}

/// This program's path, resolved once, at the first call: a front end calls it at start-up so
/// that [`self_command`] uses the file it started from.
pub fn resolve_self() -> Result<&'static std::path::Path, String> {
    static EXE: std::sync::OnceLock<Result<std::path::PathBuf, String>> =
        std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        std::env::current_exe().map_err(|e| format!("cannot find the wsp executable: {e}"))
    })
    .as_ref()
    .map(|p| p.as_path())
    .map_err(Clone::clone)
}

/// A progress line of an exploration (`Job::progress`): what it is, how many of its
/// configurations are scored, of how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub label: String,
    pub done: u64,
    pub total: u64,
}

/// What starts a progress line on a run process's standard output.
const PROGRESS_MARK: &str = "\u{1}wsp-progress ";

/// Writes a progress line on standard output, for the process that reads it
/// ([`execute_in_child_with_progress`]).
pub fn progress_line(label: &str, done: u64, total: u64) {
    let label = label.replace(['\n', '\t'], " ");
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PROGRESS_MARK}{done}\t{total}\t{label}").and_then(|()| out.flush());
}

/// Runs the job in `EXE __exec`, handing it over on standard input and reading the report from
/// standard output; returns the report and what the child wrote on standard error, and calls
/// `progress` with each progress line the job reports. While it runs, `interrupted` is polled:
/// once it holds a signal's number (SIGINT, SIGTERM, SIGHUP), the child gets that signal and,
/// if it is still there after `grace`, SIGKILL.
pub fn execute_in_child_with_progress(
    job: &Job,
    interrupted: &AtomicUsize,
    grace: Duration,
    progress: impl Fn(Progress) + Send + 'static,
) -> Result<(Report, String), ChildError> {
    if interrupted.load(Ordering::Relaxed) != 0 {
        return Err(ChildError::Interrupted);
    }
    start_child()?.execute(job, interrupted, grace, progress)
}

/// Starts a run process that waits for its job: a front end starts it first, so that the
/// process starts (an exec of this executable, a few milliseconds) while the front end reads,
/// checks and lowers the file and looks its kernels up in the cache. Dropped unused, it is
/// killed and reaped.
pub fn start_child() -> Result<StartedChild, ChildError> {
    let mut cmd = self_command().map_err(ChildError::Process)?;
    if HUGE_PAGES_OFF.load(Ordering::Relaxed) {
        cmd.env(HUGE_PAGES_VAR, "1");
    }
    let child = cmd
        .arg(SUBCOMMAND)
        .env(PARENT_VAR, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ChildError::Process(format!("cannot start the run process: {e}")))?;
    Ok(StartedChild { child: Some(child) })
}

/// A run process from [`start_child`], waiting for its job.
pub struct StartedChild {
    /// Taken by [`StartedChild::execute`]; still here at the drop when it never ran.
    child: Option<Child>,
}

impl Drop for StartedChild {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl StartedChild {
    /// Hands the process `job` and waits for its report, as [`execute_in_child_with_progress`].
    pub fn execute(
        mut self,
        job: &Job,
        interrupted: &AtomicUsize,
        grace: Duration,
        progress: impl Fn(Progress) + Send + 'static,
    ) -> Result<(Report, String), ChildError> {
        if interrupted.load(Ordering::Relaxed) != 0 {
            return Err(ChildError::Interrupted);
        }
        let mut child = self.child.take().expect("a started child runs one job");
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
        let stdout = child.stdout.take().expect("piped");
        // The program's output and a kernel's own `printf` pass through as they come, so that a
        // crash later loses none of what came before it; the report is the marked line.
        let out_reader = std::thread::spawn(move || {
            let mut report = String::new();
            read_output(
                stdout,
                |text| {
                    let mut o = std::io::stdout().lock();
                    let _ = o.write_all(text).and_then(|()| o.flush());
                },
                |r| {
                    report = r;
                    true
                },
                &progress,
            );
            report
        });
        let status = wait_or_interrupt(&mut child, interrupted, grace)?;
        let out = out_reader.join().unwrap_or_default();
        let _ = writer.join();
        let err = err_reader.join().unwrap_or_default();
        let Some(status) = status else {
            return Err(ChildError::Interrupted);
        };
        if let Some(fault) = fault_in(&err) {
            return Err(fault);
        }
        match serde_json::from_str::<Result<Report, Failed>>(&out) {
            Ok(Ok(r)) if status.success() => Ok((r, err)),
            Ok(Err(e)) => Err(ChildError::Run(e)),
            _ => Err(ended(Some(status), &err)),
        }
    }
}

/// Reads a run process's standard output to its end: the output as it comes to `text`, each
/// report to `report` (until it returns false). A report starts at its mark wherever that is
/// in a line, since a kernel's `printf` may have left one unfinished; the output is read as
/// bytes, since a kernel may print anything.
fn read_output(
    stdout: impl Read,
    mut text: impl FnMut(&[u8]),
    mut report: impl FnMut(String) -> bool,
    progress: &dyn Fn(Progress),
) {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(stdout);
    let mut line = Vec::new();
    while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if let Some(rest) = line.strip_prefix(PROGRESS_MARK.as_bytes()) {
            let rest = String::from_utf8_lossy(rest);
            let mut parts = rest.trim_end().splitn(3, '\t');
            if let (Some(Ok(done)), Some(Ok(total)), Some(label)) = (
                parts.next().map(str::parse),
                parts.next().map(str::parse),
                parts.next(),
            ) {
                progress(Progress {
                    label: label.to_string(),
                    done,
                    total,
                });
                line.clear();
                continue;
            }
        }
        let at = line
            .windows(REPORT_MARK.len())
            .position(|w| w == REPORT_MARK.as_bytes());
        let (output, marked) = match at {
            Some(at) => (&line[..at], Some(&line[at + REPORT_MARK.len()..])),
            None => (&line[..], None),
        };
        if !output.is_empty() {
            text(output);
        }
        if let Some(r) = marked
            && !report(String::from_utf8_lossy(r).trim_end().to_string())
        {
            return;
        }
        line.clear();
    }
}

/// Why a run process ended without a report: its exit status or signal, and its last words.
fn ended(status: Option<ExitStatus>, stderr: &str) -> ChildError {
    use std::os::unix::process::ExitStatusExt;
    let how = match status.map(|s| (s.code(), s.signal())) {
        Some((Some(code), _)) => format!("failed (exit status {code})"),
        Some((None, Some(signal))) => format!("was killed by signal {signal}"),
        _ => "was killed".to_string(),
    };
    ChildError::Process(format!("the run process {how}{}", tail(stderr)))
}

/// The fault (WSP602) a run process that died reported on standard error, naming the task.
fn fault_in(stderr: &str) -> Option<ChildError> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with(crate::fault::FAULT_MARK))?;
    let what = line.trim_start_matches(crate::fault::FAULT_MARK).trim();
    Some(ChildError::Fault {
        what: what.to_string(),
        printed: String::new(),
    })
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

/// Waits for the run process, or on an interrupt passes the signal on to it, kills it if it is
/// still there after `grace`, reaps it and returns `None`.
fn wait_or_interrupt(
    child: &mut Child,
    interrupted: &AtomicUsize,
    grace: Duration,
) -> Result<Option<ExitStatus>, ChildError> {
    let failed = |e: std::io::Error| ChildError::Process(format!("the run process: {e}"));
    // A pidfd is readable once the child has exited, so the wait ends then rather than at the
    // next of the sleeps (up to `POLL_MAX` late); the sleeps remain where there is no pidfd.
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_child(child),
        rustix::process::PidfdFlags::empty(),
    )
    .ok();
    let mut poll = POLL_FIRST;
    while interrupted.load(Ordering::Relaxed) == 0 {
        if let Some(status) = child.try_wait().map_err(failed)? {
            return Ok(Some(status));
        }
        match &pidfd {
            Some(fd) => {
                let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
                let timeout = rustix::event::Timespec {
                    tv_sec: 0,
                    tv_nsec: POLL_MAX.as_nanos() as _,
                };
                // Woken by the exit, by a signal (EINTR) or by the timeout, to look at
                // `interrupted`.
                let _ = rustix::event::poll(&mut fds, Some(&timeout));
            }
            None => {
                std::thread::sleep(poll);
                poll = (poll * 2).min(POLL_MAX);
            }
        }
    }
    end_child(child, grace, signal_of(interrupted));
    Ok(None)
}

/// The signal a stop request holds (SIGINT if it holds none, or no signal's number).
fn signal_of(stop: &AtomicUsize) -> rustix::process::Signal {
    i32::try_from(stop.load(Ordering::Relaxed))
        .ok()
        .and_then(rustix::process::Signal::from_named_raw)
        .unwrap_or(rustix::process::Signal::INT)
}

/// Ends a child that may still run: `signal`, then SIGKILL if it is still there after
/// `grace`; reaps it. Its exit status, if it could be had.
fn end_child(
    child: &mut Child,
    grace: Duration,
    signal: rustix::process::Signal,
) -> Option<ExitStatus> {
    if let Ok(Some(status)) = child.try_wait() {
        return Some(status);
    }
    // Not reaped yet, so the pid is still this child's.
    let _ = rustix::process::kill_process(rustix::process::Pid::from_child(child), signal);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(POLL_FIRST);
    }
    let _ = child.kill();
    child.wait().ok()
}

/// `__exec`: the child side. Reads a job on standard input, writes `Result<Report, Failed>`
/// as JSON on standard output.
pub fn serve() -> ExitCode {
    exit_with_parent();
    huge_pages_back();
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::from(2);
    }
    let result = match serde_json::from_slice::<Job>(&input) {
        Ok(job) => crate::execute_streaming(&job, &mut print_now),
        Err(e) => Err(RunError::Invalid(format!("malformed job: {e}")).into()),
    };
    let ok = result.is_ok();
    let report = serde_json::to_string(&result).expect("a report serializes");
    let mut out = std::io::stdout().lock();
    // Found wherever it starts: a kernel's `printf` may have left a line unfinished.
    let _ = writeln!(out, "{REPORT_MARK}{report}").and_then(|()| out.flush());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The flag of [`SUBCOMMAND`] that makes the child serve jobs one after another
/// ([`serve_jobs`]), for a [`Runner`].
pub const SERVE_FLAG: &str = "--jobs";

/// What starts a report line of [`serve_jobs`]: any other line on the child's standard output
/// is a kernel's own (`printf` in `cpp_src`), passed on as output.
const REPORT_MARK: &str = "\u{1}wsp-report ";

/// A run process kept between jobs, for a front end that runs many small jobs (a notebook's
/// cells): starting a process, loading it and its libraries is most of a small job's time.
/// A job that crashes the process (WSP602) or is interrupted ends it; the next job starts a
/// new one. Tensor values never live only in it: each job starts from the files it names.
#[derive(Default)]
pub struct Runner {
    live: Option<Live>,
}

struct Live {
    child: Child,
    stdin: std::process::ChildStdin,
    /// Report lines, from a thread reading the child's standard output; closed at its end.
    reports: std::sync::mpsc::Receiver<String>,
    /// What else the child writes on standard output (a kernel's `printf`), as it comes.
    printed: std::sync::Arc<std::sync::Mutex<String>>,
    /// What it writes on standard error.
    output: std::sync::Arc<std::sync::Mutex<String>>,
    /// Progress lines of explorations, as they come.
    progress: std::sync::mpsc::Receiver<Progress>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Live {
    fn start() -> Result<Live, ChildError> {
        use std::io::BufRead;
        use std::sync::{Arc, Mutex};
        let mut child = self_command()
            .map_err(ChildError::Process)?
            .args([SUBCOMMAND, SERVE_FLAG])
            .env(PARENT_VAR, std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ChildError::Process(format!("cannot start the run process: {e}")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let output = Arc::new(Mutex::new(String::new()));
        let printed = Arc::new(Mutex::new(String::new()));
        let (tx, reports) = std::sync::mpsc::channel();
        let (progress_tx, progress) = std::sync::mpsc::channel();
        let out = printed.clone();
        let stdout_reader = std::thread::spawn(move || {
            read_output(
                stdout,
                |text| {
                    out.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push_str(&String::from_utf8_lossy(text));
                },
                |report| tx.send(report).is_ok(),
                &|p| {
                    let _ = progress_tx.send(p);
                },
            );
        });
        let out = output.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut stderr = std::io::BufReader::new(stderr);
            let mut chunk = String::new();
            while stderr.read_line(&mut chunk).is_ok_and(|n| n > 0) {
                out.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push_str(&chunk);
                chunk.clear();
            }
        });
        Ok(Live {
            child,
            stdin,
            reports,
            printed,
            output,
            progress,
            readers: vec![stdout_reader, stderr_reader],
        })
    }

    /// What the child printed on standard output and on standard error since last asked.
    fn take_output(&self) -> (String, String) {
        let take = |s: &std::sync::Mutex<String>| {
            std::mem::take(&mut *s.lock().unwrap_or_else(|p| p.into_inner()))
        };
        (take(&self.printed), take(&self.output))
    }

    /// Ends the process (`signal`, then SIGKILL after `grace`) and reaps it; what it wrote.
    fn stop(
        mut self,
        grace: Duration,
        signal: rustix::process::Signal,
    ) -> (Option<ExitStatus>, String) {
        let status = end_child(&mut self.child, grace, signal);
        drop(self.stdin);
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let output = std::mem::take(&mut *self.output.lock().unwrap_or_else(|p| p.into_inner()));
        (status, output)
    }
}

impl Runner {
    /// Runs the job in the kept process (started first if there is none); returns the report
    /// and what the job printed on standard output (besides `print`, which is in the report)
    /// and on standard error. `interrupted` is polled as in [`execute_in_child_with_progress`].
    pub fn execute(
        &mut self,
        job: &Job,
        interrupted: &AtomicUsize,
        grace: Duration,
    ) -> Result<(Report, String, String), ChildError> {
        self.execute_with_progress(job, interrupted, grace, &mut |_| {})
    }

    /// As [`Runner::execute`], calling `progress` with each exploration's progress as the
    /// job reports it (`Job::progress`).
    pub fn execute_with_progress(
        &mut self,
        job: &Job,
        interrupted: &AtomicUsize,
        grace: Duration,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Report, String, String), ChildError> {
        use std::sync::mpsc::RecvTimeoutError;
        if interrupted.load(Ordering::Relaxed) != 0 {
            return Err(ChildError::Interrupted);
        }
        let mut live = match self.live.take() {
            Some(mut l) => {
                if matches!(l.child.try_wait(), Ok(None)) {
                    l
                } else {
                    l.stop(grace, rustix::process::Signal::INT);
                    Live::start()?
                }
            }
            None => Live::start()?,
        };
        let mut line = serde_json::to_string(job).expect("job serializes");
        line.push('\n');
        // The child reads each job whole before it runs it, so this write does not wait on it
        // for long; a child that died makes it fail, and the report channel says why.
        let _ = live
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| live.stdin.flush());
        // What the child prints as it runs, still readable once `stop` consumed `live`.
        let live_printed = live.printed.clone();
        let mut poll = POLL_FIRST;
        loop {
            let received = live.reports.recv_timeout(poll);
            for p in live.progress.try_iter() {
                progress(p);
            }
            match received {
                Ok(report) => {
                    let (printed, errors) = live.take_output();
                    let result = serde_json::from_str::<Result<Report, Failed>>(&report);
                    self.live = Some(live);
                    return match result {
                        Ok(Ok(r)) => Ok((r, printed, errors)),
                        Ok(Err(mut e)) => {
                            // What the job printed as it ran comes before what waited.
                            e.output.insert_str(0, &printed);
                            Err(ChildError::Run(e))
                        }
                        Err(e) => Err(ChildError::Process(format!(
                            "the run process sent an unreadable report: {e}"
                        ))),
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    if interrupted.load(Ordering::Relaxed) != 0 {
                        live.stop(grace, signal_of(interrupted));
                        return Err(ChildError::Interrupted);
                    }
                    poll = (poll * 2).min(POLL_MAX);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let (status, output) = live.stop(grace, signal_of(interrupted));
                    let printed = std::mem::take(
                        &mut *live_printed.lock().unwrap_or_else(|p| p.into_inner()),
                    );
                    // SIGINT to the process group ends the child too.
                    if interrupted.load(Ordering::Relaxed) != 0 {
                        return Err(ChildError::Interrupted);
                    }
                    if let Some(ChildError::Fault { what, .. }) = fault_in(&output) {
                        return Err(ChildError::Fault { what, printed });
                    }
                    return Err(ended(status, &output));
                }
            }
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            live.stop(Duration::ZERO, rustix::process::Signal::INT);
        }
    }
}

/// `__exec --jobs`: the child side of a [`Runner`]. Reads one job per line on standard input
/// and answers each with a report line on standard output, until standard input ends.
pub fn serve_jobs() -> ExitCode {
    use std::io::BufRead;
    exit_with_parent();
    huge_pages_back();
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let result = match serde_json::from_str::<Job>(&line) {
            Ok(job) => crate::execute_streaming(&job, &mut print_now),
            Err(e) => Err(RunError::Invalid(format!("malformed job: {e}")).into()),
        };
        let report = serde_json::to_string(&result).expect("a report serializes");
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{REPORT_MARK}{report}")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// Writes what a job prints on standard output at once, for the front end to pass on.
fn print_now(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Ends this run process when the process that started it is gone (killed with SIGKILL, which
/// it cannot pass on): a task may spin for hours, and nobody would read its result. Polled, as
/// ipykernel's parent poller does; a parent-death signal would follow the thread that started
/// the process, which a front end's thread pool retires.
fn exit_with_parent() {
    // The parent as it says, not as found now: it may already be gone.
    let parent = std::env::var(PARENT_VAR)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw)
        .or_else(rustix::process::getppid);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(250));
            if rustix::process::getppid() != parent {
                // At once: exit handlers (stdio, a kernel library's destructors) could wait on
                // what a spinning task holds.
                // SAFETY: `_exit` ends the process without running any code of ours.
                unsafe { libc::_exit(1) };
            }
        }
    });
}
