//! The `wsp` binary: hands the process arguments to `wsp_cli::main`.

fn main() -> std::process::ExitCode {
    wsp_cli::main(std::env::args_os())
}
