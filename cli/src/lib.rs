//! The `wsp` command line: argument parsing and the subcommands.

mod check;
mod child;
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
    Run(run::RunArgs),
    /// The language server, on stdin and stdout.
    Lsp,
    /// The process `wsp run` executes a job in (internal).
    #[command(name = "__exec", hide = true)]
    Exec,
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
        Command::Run(args) => {
            child::catch_interrupts();
            let code = run::run(args);
            // 128 + SIGINT, as a shell reports a process an interrupt ended.
            if child::interrupted().load(std::sync::atomic::Ordering::Relaxed) {
                ExitCode::from(130)
            } else {
                code
            }
        }
        Command::Lsp => lsp(),
        Command::Exec => wsp_runtime::process::serve(),
    }
}

fn lsp() -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let ending = rt.block_on(wsp_lsp::serve_stdio());
            // Stdin is read on a blocking thread that may wait forever for input after `exit`.
            rt.shutdown_background();
            // The LSP spec: 0 after a `shutdown` request, 1 for an `exit` without one.
            match ending {
                wsp_lsp::Ending::ShutDown => ExitCode::SUCCESS,
                wsp_lsp::Ending::Abandoned => ExitCode::from(1),
            }
        }
        Err(e) => {
            eprintln!("error: cannot start the language server: {e}");
            ExitCode::from(2)
        }
    }
}
