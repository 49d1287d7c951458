//! The `wsp` command line: argument parsing and the subcommands.

mod check;
mod child;
mod emit;
mod ray;
mod report;
mod run;
mod space;
mod tune;

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
    Check(check::CheckArgs),
    /// Compile a file's programs for cpu_sim, run them, print their stats.
    Run(run::RunArgs),
    /// Run a file's schedule explorations and rank every configuration by simulated cycles,
    /// here or on a Ray cluster.
    Tune(tune::TuneArgs),
    /// Write the Ascend NPU source tree of a file's programs (AICore kernels, AICPU expander,
    /// host replay and ACL runner, CMake with ctest).
    Emit(emit::EmitArgs),
    /// The language server, on stdin and stdout.
    Lsp {
        /// Accepted for clients that name the transport (vscode-languageclient's
        /// `TransportKind.stdio` adds it); stdio is the only one.
        #[arg(long)]
        stdio: bool,
    },
    /// The Jupyter kernel and its kernelspec.
    #[command(subcommand)]
    Jupyter(Jupyter),
    /// The process `wsp run` executes a job in (internal).
    #[command(name = "__exec", hide = true)]
    Exec {
        /// Serve jobs one per line until standard input ends (a notebook kernel's runner).
        #[arg(long = "jobs")]
        jobs: bool,
    },
}

#[derive(Subcommand)]
enum Jupyter {
    /// Install the kernelspec `wsp` (in the user's Jupyter data folder unless told otherwise).
    Install {
        /// The user's Jupyter data folder (JUPYTER_DATA_DIR, XDG_DATA_HOME or ~/.local/share).
        #[arg(long, conflicts_with_all = ["sys_prefix", "prefix"])]
        user: bool,
        /// The active Python environment (VIRTUAL_ENV or CONDA_PREFIX).
        #[arg(long, conflicts_with = "prefix")]
        sys_prefix: bool,
        /// PREFIX/share/jupyter.
        #[arg(long, value_name = "PREFIX")]
        prefix: Option<PathBuf>,
    },
    /// The kernel process the kernelspec starts.
    Kernel {
        /// The connection file Jupyter writes.
        connection_file: PathBuf,
    },
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
    // Where this program started from, before anything may replace it (elsewhere than Linux,
    // children start from this path; on Linux from the running image).
    let _ = wsp_runtime::process::resolve_self();
    // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, which names the file and
    // leaves the earlier one whole, instead of SIGXFSZ killing the process mid-write. The
    // children (the run process, the compiler) inherit the disposition.
    // SAFETY: setting a signal's disposition to SIG_IGN runs no code of ours in a handler.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Run(args) => {
            child::catch_signals();
            let code = run::run(args);
            // 128 + the signal, as a shell reports a process a signal ended.
            match child::stopped_by() {
                Some(signal) => ExitCode::from(128 + signal),
                None => code,
            }
        }
        Command::Tune(args) => {
            child::catch_signals();
            let code = match &args.ray {
                Some(address) => ray::tune(&args, address),
                None => tune::tune(args),
            };
            match child::stopped_by() {
                Some(signal) => ExitCode::from(128 + signal),
                None => code,
            }
        }
        Command::Emit(args) => emit::emit(args),
        Command::Lsp { stdio: _ } => lsp(),
        Command::Jupyter(Jupyter::Kernel { connection_file }) => {
            match wsp_kernel_jupyter::serve(&connection_file) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Jupyter(Jupyter::Install {
            user: _,
            sys_prefix,
            prefix,
        }) => jupyter_install(sys_prefix, prefix),
        Command::Exec { jobs: false } => wsp_runtime::process::serve(),
        Command::Exec { jobs: true } => wsp_runtime::process::serve_jobs(),
    }
}

fn jupyter_install(sys_prefix: bool, prefix: Option<PathBuf>) -> ExitCode {
    use wsp_kernel_jupyter::install::{Destination, install};
    let dest = match (sys_prefix, prefix) {
        (_, Some(p)) => Destination::Prefix(std::path::absolute(&p).unwrap_or(p)),
        (true, None) => Destination::SysPrefix,
        (false, None) => Destination::User,
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: cannot find the wsp executable: {e}");
            return ExitCode::from(2);
        }
    };
    match install(&dest, &exe) {
        Ok((dir, notes)) => {
            println!("installed the kernelspec `wsp` in {}", dir.display());
            for n in notes {
                eprintln!("note: {n}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn lsp() -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let ending = rt.block_on(async {
                // SIGTERM (a service manager, an editor that quits): stop serving and exit 0;
                // nothing is left half-written, since the server writes no files.
                let terminate =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
                let mut terminate = match terminate {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("warning: cannot catch SIGTERM ({e})");
                        return Some(wsp_lsp::serve_stdio().await);
                    }
                };
                tokio::select! {
                    ending = wsp_lsp::serve_stdio() => Some(ending),
                    _ = terminate.recv() => None,
                }
            });
            // Stdin is read on a blocking thread that may wait forever for input after `exit`.
            rt.shutdown_background();
            // The LSP spec: 0 after a `shutdown` request, 1 for an `exit` without one.
            match ending {
                Some(wsp_lsp::Ending::ShutDown) | None => ExitCode::SUCCESS,
                Some(wsp_lsp::Ending::Abandoned) => ExitCode::from(1),
            }
        }
        Err(e) => {
            eprintln!("error: cannot start the language server: {e}");
            ExitCode::from(2)
        }
    }
}
