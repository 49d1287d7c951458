//! `wsp tune --ray ADDRESS`: hands the exploration to the Ray driver, the `wsp_ray` Python
//! package (`python/` in the repository), which runs `wsp tune --shard i/n` on the cluster's
//! nodes and merges their JSON into the document a local run writes.

use std::process::{Command, ExitCode};

use crate::tune::TuneArgs;

/// The Python that has `wsp_ray` installed: `WSP_RAY_PYTHON`, else `python3`.
fn python() -> std::ffi::OsString {
    std::env::var_os("WSP_RAY_PYTHON").unwrap_or_else(|| "python3".into())
}

pub(crate) fn tune(args: &TuneArgs, address: &str) -> ExitCode {
    let python = python();
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "wsp_ray", "tune"]).arg(&args.file);
    cmd.args(["--ray", address]);
    if let Ok(exe) = std::env::current_exe() {
        cmd.arg("--wsp").arg(exe);
    }
    cmd.args(["--top", &args.top.to_string()]);
    cmd.args(["--jobs", &args.jobs.to_string()]);
    if let Some(p) = &args.json {
        cmd.arg("--json").arg(p);
    }
    if let Some(p) = &args.space {
        cmd.arg("--space").arg(p);
    }
    if let Some(p) = &args.target_desc {
        cmd.arg("--target-desc").arg(p);
    }
    if let Some(p) = &args.kernel_cycles {
        cmd.arg("--kernel-cycles").arg(p);
    }
    for b in &args.bind {
        cmd.args(["--bind", b]);
    }
    if args.no_cache {
        cmd.arg("--no-cache");
    }
    match cmd.status() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::from(1),
        },
        Err(e) => {
            eprintln!(
                "error: cannot start the Ray driver `{} -m wsp_ray`: {e}; install it with `pip install ./python` (or set WSP_RAY_PYTHON to a Python that has it)",
                python.to_string_lossy()
            );
            ExitCode::from(2)
        }
    }
}
