//! `wsp-check ARGS` is `wsp check ARGS`, for CI scripts.
fn main() -> std::process::ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    args.insert(1.min(args.len()), "check".into());
    wsp_cli::main(args)
}
