//! The `wsp` command line: argument parsing and the subcommands.

mod check;
mod report;
mod run;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "wsp", version, about = "Check and run WSP workload programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check files and folders of `.wsp` programs; exit 1 if any has an error.
    Check {
        /// Files or folders (searched for `*.wsp`); the current folder if none.
        paths: Vec<PathBuf>,
        /// How to print the diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also check every program against this target's applicability rules
        /// (`cpu_sim` or `ascend_npu`); overrides `[check] targets` in `wsp.toml`.
        #[arg(long)]
        target: Option<String>,
    },
    /// Compile a file's programs for cpu_sim, run them, print their stats.
    Run {
        file: PathBuf,
        /// Bind a run-time symbol (a DenseDyn axis) for every execution: `--bind seq=16`.
        #[arg(long, value_name = "NAME=VALUE")]
        bind: Vec<String>,
        /// Write a Chrome/Perfetto timeline of the simulated run.
        #[arg(long, value_name = "OUT.json")]
        trace: Option<PathBuf>,
        /// Worker threads that run tasks (results do not depend on it).
        #[arg(long, default_value_t = default_workers())]
        workers: usize,
        /// Write task_count, total_cycles, compile_time_ms, execute_time_ms, cache_hit.
        #[arg(long, value_name = "OUT.json")]
        stats_json: Option<PathBuf>,
        /// A target description (TOML) for the simulated clock, over the 910B-like defaults.
        #[arg(long, value_name = "FILE.toml")]
        target_desc: Option<PathBuf>,
        /// After the run, write every tensor as NAME.npy into this folder.
        #[arg(long, value_name = "DIR")]
        dump_tensors: Option<PathBuf>,
    },
    /// The process `wsp run` executes a job in (internal).
    #[command(name = "__exec", hide = true)]
    Exec,
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// Source snippets with the offending text underlined.
    Human,
    /// One JSON array of diagnostics.
    Json,
    /// A SARIF 2.1.0 log.
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
}

/// Runs `wsp` with these arguments (the first is the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Check {
            paths,
            format,
            target,
        } => check::run(paths, format, target),
        Command::Run {
            file,
            bind,
            trace,
            workers,
            stats_json,
            target_desc,
            dump_tensors,
        } => run::run(run::RunArgs {
            file,
            bind,
            trace,
            workers,
            stats_json,
            target_desc,
            dump_tensors,
        }),
        Command::Exec => run::exec_child(),
    }
}
