//! The `wsp` binary: hands the process arguments to `wsp_cli::main`.

/// mimalloc, not glibc's malloc: the analyzer makes millions of small allocations of mixed
/// lifetimes, which glibc's arenas fragment (a 50 MB file's check held a tenth more memory,
/// and spent a fifth of its time in `malloc_consolidate`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    wsp_cli::main(std::env::args_os())
}
