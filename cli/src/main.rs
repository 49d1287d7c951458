fn main() -> std::process::ExitCode {
    wsp_cli::main(std::env::args_os())
}
