//! `cargo xtask`: the one entry point for the project's chores.
//!
//! - `test`: `tidy`, every test of the workspace, then the language server's end-to-end tests
//!   with pytest-lsp (in a venv under `target/`), the editor packages (`editors/`: the VS Code
//!   extension's tests and `.vsix`, the Neovim plugin in Debian's Neovim 0.7 and two current
//!   ones), the Jupyter kernel's tests with real clients (jupyter_kernel_test, nbclient,
//!   jupyter_client, JupyterLab in Debian's Chromium driven by Playwright, in another venv), and
//!   the extension in real VS Code (code-server) in Chromium, installed as needed.
//! - `tidy`: rustfmt's check, clippy with warnings denied and `// SAFETY:` comments required,
//!   and a `//!` line opening every Rust file (`tidy.rs`).
//! - `bench [NAME] [--record-baseline]`: the benchmarks; each writes `target/bench/NAME.json`
//!   (`npu`, with `PTO_ISA_PATH` set: `bench_npu.rs`), and its ratios against their anchors are
//!   printed beside `bench/baseline.json`'s, a loss of more than 15% flagged (`baseline.rs`);
//!   `--reports-only` runs nothing and compares the reports already in `target/bench/`.
//! - `calibrate [--pto-isa PATH]`: measure every example kernel with PTO-ISA's Perf-Sim and
//!   fit the simulated clock's instruction table to it (`calibrate.rs`).
//! - `tree-sitter`: regenerate the tree-sitter parser from `grammar.js` and record its hash.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand};

mod baseline;
mod bench_npu;
mod calibrate;
mod editors;
mod tidy;

#[derive(Parser)]
#[command(name = "cargo xtask")]
struct Xtask {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Run every test (after `tidy`).
    Test,
    /// Check formatting, clippy, SAFETY comments and the `//!` line of every Rust file.
    Tidy,
    /// Run the benchmarks (all, or the one named) and write target/bench/*.json.
    Bench {
        /// Which benchmark: `syntax`, `analysis`, `runtime`, `tune`, `lsp`, `kernel` or `npu`
        /// (which needs `PTO_ISA_PATH`).
        name: Option<String>,
        /// Write the ratios of the benchmarks run into bench/baseline.json.
        #[arg(long)]
        record_baseline: bool,
        /// Run nothing: compare (or record) the reports already in target/bench/.
        #[arg(long)]
        reports_only: bool,
    },
    /// Measure every example kernel with PTO-ISA's A2/A3 Perf-Sim into
    /// runtime/calibration/perf_sim.json and fit the clock's instruction table to it.
    Calibrate {
        /// A PTO-ISA checkout whose cost model builds (tested: d07bd4b6). Without it, the
        /// table is fitted again to the committed measurements.
        #[arg(long)]
        pto_isa: Option<PathBuf>,
        /// The C++ compiler for the cost-model build (clang >= 17, or g++ >= 12).
        #[arg(long, default_value = "clang++-19")]
        cxx: String,
    },
    /// Print the clock's cycles for each AICore kernel of a tree `wsp emit` wrote (nothing is
    /// built or run): to compare forms of a kernel before measuring them.
    Clock { tree: PathBuf },
    /// Regenerate syntax/tree-sitter-wsp/src from grammar.js at ABI 14 (needs the tree-sitter CLI).
    TreeSitter,
}

/// Each benchmark and the package whose cargo bench it is; `None`: a Python script,
/// `kernel-jupyter/benches/NAME.py`, run in the Jupyter venv (it drives our kernel and ipykernel
/// side by side with jupyter_client).
const BENCHES: &[(&str, Option<&str>)] = &[
    ("syntax", Some("wsp-syntax")),
    ("analysis", Some("wsp-analysis")),
    ("runtime", Some("wsp-cli")),
    ("tune", Some("wsp-cli")),
    ("lsp", Some("wsp-lsp")),
    ("kernel", None),
];

fn main() -> ExitCode {
    let result = match Xtask::parse().task {
        Task::Test => test(),
        Task::Tidy => tidy::tidy(),
        Task::Bench {
            name,
            record_baseline,
            reports_only,
        } => bench(name.as_deref(), record_baseline, reports_only),
        Task::Calibrate { pto_isa, cxx } => calibrate::calibrate(pto_isa.as_deref(), &cxx),
        Task::Clock { tree } => bench_npu::clock(&tree),
        Task::TreeSitter => tree_sitter(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn run(cmd: &mut Command) -> Result<(), String> {
    eprintln!("xtask: running {cmd:?}");
    // From the workspace root unless the command names its own folder.
    if cmd.get_current_dir().is_none() {
        cmd.current_dir(root());
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// Builds the release `wsp` binary; its path.
fn release_wsp() -> Result<PathBuf, String> {
    run(cargo().args([
        "build",
        "--release",
        "--locked",
        "-p",
        "wsp-cli",
        "--bin",
        "wsp",
    ]))?;
    Ok(root().join("target/release/wsp"))
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn test() -> Result<(), String> {
    // Cheap once clippy's results are cached, and a failure here needs no test run to find.
    tidy::tidy()?;
    let python = test_venv()?;
    let ray_python = ray_venv()?;
    // The emitted NPU trees are configured, built and tested with CMake and ctest.
    if !has_program("cmake") {
        apt_install("cmake")?;
    }
    // The durability tests watch the writers' fsyncs and renames with strace.
    if !has_program("strace") {
        apt_install("strace")?;
    }
    run(cargo()
        .args(["test", "--workspace", "--locked"])
        .env("WSP_TEST_PYTHON", &python)
        .env("WSP_REQUIRE_CMAKE", "1")
        .env("WSP_REQUIRE_STRACE", "1")
        .env("WSP_RAY_PYTHON", &ray_python)
        .env("WSP_REQUIRE_RAY", "1"))?;
    editor_clients(&python)?;
    let wsp = root().join("target/debug/wsp");
    let vsix = editors::vscode_extension(&wsp)?;
    editors::neovim_plugin(&wsp)?;
    notebook_clients()?;
    editors::vscode_end_to_end(&jupyter_venv()?, &vsix, &wsp)
}

/// `wsp lsp` driven over stdio by pytest-lsp (as VS Code and as Neovim 0.7); real Neovims
/// drive it through the plugin (`editors::neovim_plugin`).
fn editor_clients(python: &Path) -> Result<(), String> {
    // Already built by the tests above; this only makes sure of it.
    run(cargo().args(["build", "--locked", "-p", "wsp-cli", "--bin", "wsp"]))?;
    let wsp = root().join("target/debug/wsp");
    run(Command::new(python)
        .args(["-m", "pytest", "-q", "-c", "lsp/tests/clients/pytest.ini"])
        .arg("lsp/tests/clients")
        .env("WSP_BIN", &wsp))
}

/// Debian's Neovim (0.7.2 on bookworm), installed when `nvim` is missing.
fn install_neovim() -> Result<(), String> {
    if has_program("nvim") {
        return Ok(());
    }
    apt_install("neovim")
}

/// Whether `program --version` runs.
fn has_program(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Installs a Debian package (CI runs as root on Debian).
fn apt_install(package: &str) -> Result<(), String> {
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends", package])
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// `wsp jupyter kernel` driven by real clients: jupyter_kernel_test's protocol suite, nbclient
/// running `examples/notebooks/tour.ipynb`, jupyter_client for interrupts, crashes, restarts and
/// signatures, and JupyterLab in a headless Chromium (Playwright) running the tour. The tests'
/// conftest installs the kernelspec with `wsp jupyter install --prefix` into a temporary folder
/// and points `JUPYTER_PATH` at it, so running pytest alone works the same way.
fn notebook_clients() -> Result<(), String> {
    let python = jupyter_venv()?;
    install_chromium()?;
    run(cargo().args(["build", "--locked", "-p", "wsp-cli", "--bin", "wsp"]))?;
    // `timeout`: every wait in the tests is bounded; this bounds a hang outside them too.
    run(Command::new("timeout")
        .arg("900")
        .arg(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-c",
            "kernel-jupyter/tests/clients/pytest.ini",
        ])
        .arg("kernel-jupyter/tests/clients")
        .env("WSP_BIN", root().join("target/debug/wsp")))
}

/// Debian's Chromium for the JupyterLab test, installed when missing. Playwright's own
/// browser download (`playwright install`) fails on this project's machines, so the test
/// launches this one instead.
fn install_chromium() -> Result<(), String> {
    if Path::new(CHROMIUM).is_file() {
        return Ok(());
    }
    apt_install("chromium")
}

/// Where Debian's `chromium` package puts the browser; the tests launch this file.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The Python venv the golden (NumPy) tests run in: `target/test-venv`, with the pinned
/// packages of `tests/requirements.txt`.
fn test_venv() -> Result<PathBuf, String> {
    venv("target/test-venv", "tests/requirements.txt")
}

/// The Ray driver's venv, `target/ray-venv`: ray and what it needs (`python/requirements.txt`),
/// and the `wsp_ray` package itself, installed by pip as a user would, again whenever its
/// sources change.
fn ray_venv() -> Result<PathBuf, String> {
    let python = venv("target/ray-venv", "python/requirements.txt")?;
    let package = root().join("python");
    let mut files = vec![package.join("pyproject.toml")];
    let sources = std::fs::read_dir(package.join("wsp_ray"))
        .map_err(|e| format!("{}: {e}", package.display()))?;
    files.extend(
        sources
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "py")),
    );
    files.sort();
    let mut hash = String::new();
    for f in &files {
        hash += &file_hash(f)?;
    }
    installed_once(
        &root().join("target/ray-venv/wsp_ray.blake3"),
        &hash,
        || {
            run(Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--no-deps",
                    "--force-reinstall",
                ])
                .arg(&package))
        },
    )?;
    Ok(python)
}

/// The venv of the Jupyter clients and of ipykernel for the kernel benchmark:
/// `target/jupyter-venv`, with the pinned packages of `tests/requirements-jupyter.txt`.
fn jupyter_venv() -> Result<PathBuf, String> {
    venv("target/jupyter-venv", "tests/requirements-jupyter.txt")
}

/// A venv at `dir` (relative to the workspace) with the packages of `requirements`; its
/// python. Rebuilt only when the requirements file changes (its blake3 is stamped in the venv).
fn venv(dir: &str, requirements: &str) -> Result<PathBuf, String> {
    let venv = root().join(dir);
    let python = venv.join("bin/python");
    let stamp = venv.join("requirements.blake3");
    if !python.is_file() {
        // A venv without its python is made again.
        let _ = std::fs::remove_file(&stamp);
    }
    installed_once(&stamp, &file_hash(&root().join(requirements))?, || {
        let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(Command::new(&system)
            .arg("-m")
            .arg("venv")
            .arg("--clear")
            .arg(&venv))?;
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(root().join(requirements)))
    })?;
    Ok(python)
}

/// Runs `install` unless `stamp` already holds `what` (a version, or a file's blake3), then
/// writes `what` there: an install under `target/` is redone only when what it installs changes.
fn installed_once(
    stamp: &Path,
    what: &str,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    if std::fs::read_to_string(stamp).ok().as_deref() == Some(what) {
        return Ok(());
    }
    let dir = stamp.parent().expect("a stamp lives in a folder");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    install()?;
    std::fs::write(stamp, what).map_err(|e| format!("{}: {e}", stamp.display()))
}

/// The blake3 of a file, in hex.
fn file_hash(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(blake3::hash(&bytes).to_hex().to_string())
}

/// Runs the benchmarks, then prints each one's ratios beside the baseline's (`baseline.rs`).
fn bench(name: Option<&str>, record_baseline: bool, reports_only: bool) -> Result<(), String> {
    let mut ran = Vec::new();
    match name {
        _ if reports_only => {
            let npu = root().join("target/bench/npu.json");
            if matches!(name, None | Some("npu")) && npu.exists() {
                ran.push("npu");
            }
        }
        Some("npu") => {
            bench_npu::bench()?;
            ran.push("npu");
        }
        None if std::env::var_os("PTO_ISA_PATH").is_some_and(|p| !p.is_empty()) => {
            bench_npu::bench()?;
            ran.push("npu");
        }
        None => eprintln!(
            "xtask: bench npu skipped: PTO_ISA_PATH is unset (a PTO-ISA checkout at d07bd4b6)"
        ),
        _ => {}
    }
    let selected: Vec<&(&str, Option<&str>)> = match name {
        None => BENCHES.iter().collect(),
        Some("npu") => Vec::new(),
        Some(n) => {
            let found: Vec<_> = BENCHES.iter().filter(|(b, _)| *b == n).collect();
            if found.is_empty() {
                let known: Vec<&str> = BENCHES.iter().map(|(b, _)| *b).chain(["npu"]).collect();
                return Err(format!("no benchmark `{n}`; known: {}", known.join(", ")));
            }
            found
        }
    };
    for (bench, package) in selected {
        if !reports_only {
            run_bench(bench, *package)?;
        }
        ran.push(bench);
    }
    let mut measured = std::collections::BTreeMap::new();
    for bench in ran {
        measured.insert(bench.to_string(), baseline::compare(&root(), bench)?);
    }
    if record_baseline {
        baseline::record(&root(), &measured)?;
    }
    Ok(())
}

fn run_bench(bench: &str, package: Option<&str>) -> Result<(), String> {
    let mut cmd = cargo();
    if matches!(bench, "analysis" | "runtime" | "lsp" | "kernel" | "tune") {
        // These time the release `wsp` binary too.
        release_wsp()?;
    }
    let Some(package) = package else {
        run(Command::new(jupyter_venv()?)
            .arg(format!("kernel-jupyter/benches/{bench}.py"))
            .env("WSP_BIN", root().join("target/release/wsp"))
            .env(
                "WSP_BENCH_OUT",
                root().join(format!("target/bench/{bench}.json")),
            ))?;
        return Ok(());
    };
    if bench == "runtime" {
        // NumPy's matmul is measured beside ours, in the test venv.
        cmd.env("WSP_TEST_PYTHON", test_venv()?);
    }
    if bench == "tune" {
        // Exploration through Ray is measured beside the local one.
        cmd.env("WSP_RAY_PYTHON", ray_venv()?);
    }
    run(cmd.args(["bench", "--locked", "-p", package, "--bench", bench]))
}

fn tree_sitter() -> Result<(), String> {
    let grammar_dir = root().join("syntax/tree-sitter-wsp");
    let status = Command::new("tree-sitter")
        // ABI 14: the newest that Neovim 0.7's tree-sitter loads ("between 13 and 14").
        .args(["generate", "--abi", "14"])
        .current_dir(&grammar_dir)
        .status()
        .map_err(|e| format!("cannot run the tree-sitter CLI ({e}); install it with `cargo install tree-sitter-cli --version 0.27.1 --locked`"))?;
    if !status.success() {
        return Err(format!("tree-sitter generate failed: {status}"));
    }
    let grammar =
        std::fs::read(grammar_dir.join("grammar.js")).map_err(|e| format!("grammar.js: {e}"))?;
    let hash = blake3::hash(&grammar).to_hex().to_string();
    std::fs::write(grammar_dir.join("src/grammar.js.blake3"), &hash)
        .map_err(|e| format!("writing the hash: {e}"))?;
    eprintln!("xtask: regenerated the parser from grammar.js (blake3 {hash})");
    Ok(())
}
