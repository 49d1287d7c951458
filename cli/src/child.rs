//! The run process: `wsp run` hands a job to `wsp __exec` (this executable, started again) and
//! reads its report back, so that a crash inside a kernel ends the child and never this process.

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};

use wsp_runtime::{Job, Report, RunError};

/// Runs the job in `wsp __exec`, handing it over on standard input and reading the report
/// from standard output. A fault in a task ends the child; its message names the task.
pub(crate) fn execute_in_child(job: &Job) -> Result<Report, String> {
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
    let mut out = String::new();
    let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
    let status = child.wait().map_err(|e| format!("the run process: {e}"))?;
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
