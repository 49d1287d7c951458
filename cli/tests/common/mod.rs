//! Helpers shared by the end-to-end tests of the `wsp` binary.

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// An empty scratch folder for one test: `name` inside `group` (one group per test file).
#[allow(dead_code)]
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// Not every test file uses every helper below.

/// The kernel cache the tests share, so each kernel is compiled once per test run.
#[allow(dead_code)]
pub fn kernel_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel-cache")
}

/// The `wsp` binary, with the shared kernel cache.
#[allow(dead_code)]
pub fn wsp() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wsp"));
    cmd.env("WSP_CACHE_DIR", kernel_cache());
    cmd
}

/// The `.wsp` examples, in name order.
#[allow(dead_code)]
pub fn examples() -> Vec<PathBuf> {
    wsp_files("examples")
}

/// The programs measured against PTO-ISA's hand-written kernels (`examples/perf/`).
#[allow(dead_code)]
pub fn perf() -> Vec<PathBuf> {
    wsp_files("examples/perf")
}

/// The original framework's programs ported to WSP (`examples/ported/`).
#[allow(dead_code)]
pub fn ported() -> Vec<PathBuf> {
    wsp_files("examples/ported")
}

fn wsp_files(folder: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wsp"))
        .collect();
    v.sort();
    v
}

/// Whether `cmake` is on PATH, saying so when a test skips for it. Under `cargo xtask test`,
/// which installs it and sets `WSP_REQUIRE_CMAKE`, a missing cmake fails the test instead.
#[allow(dead_code)]
pub fn have_cmake() -> bool {
    have_tool("cmake", "--version", "WSP_REQUIRE_CMAKE")
}

/// Whether `strace` is on PATH, as [`have_cmake`] says it of cmake (`WSP_REQUIRE_STRACE`).
#[allow(dead_code)]
pub fn have_strace() -> bool {
    have_tool("strace", "-V", "WSP_REQUIRE_STRACE")
}

/// Whether `program VERSION_ARG` runs; when it does not, a skip is said, or, with `require`
/// set (`cargo xtask test`, which installs the tool), the test fails.
fn have_tool(program: &str, version_arg: &str, require: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg(version_arg)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os(require).is_none(),
        "{program} is not on PATH (cargo xtask test installs it)"
    );
    if !found {
        eprintln!("skipped: {program} is not on PATH; `cargo xtask test` installs it");
    }
    found
}

/// The processes whose parent is `pid`.
#[allow(dead_code)]
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces, so split after its `)`.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        if fields.get(1).and_then(|f| f.parse::<u32>().ok()) == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// Runs `program` (written as `group/name/name.wsp`) with `wsp run ARGS --dump-tensors DUMP`,
/// then the Python `check` with `DUMP` as `sys.argv[1]`, in the NumPy venv `cargo xtask test`
/// makes; fails with the output of whichever failed.
#[allow(dead_code)]
pub fn run_and_check(group: &str, name: &str, program: &str, args: &[&str], check: &str) {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let dir = scratch(group, name);
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(&file, program).unwrap();
    let dump = dir.join("dump");
    let out = wsp()
        .arg("run")
        .arg(&file)
        .args(args)
        .arg("--dump-tensors")
        .arg(&dump)
        .output()
        .expect("run wsp");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let checked = std::process::Command::new(python)
        .args(["-c", check])
        .arg(&dump)
        .output()
        .expect("run python");
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// Writes `program` as `group/name/name.wsp` and runs it with `wsp run ARGS` in that folder;
/// the folder and what it wrote on standard output. Fails with standard error unless it
/// succeeds.
#[allow(dead_code)]
pub fn wsp_run(group: &str, name: &str, program: &str, args: &[&str]) -> (PathBuf, String) {
    let dir = scratch(group, name);
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(&file, program).unwrap();
    let out = wsp()
        .arg("run")
        .arg(&file)
        .args(args)
        .current_dir(&dir)
        .output()
        .expect("run wsp");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What the program printed: standard output, which holds nothing else (`wsp run`'s own
/// summary is on standard error), without its last newline.
#[allow(dead_code)]
pub fn printed(stdout: &str) -> String {
    stdout.trim_end_matches('\n').to_string()
}

/// The schedule a configuration of `wsp tune --json` makes, written out as the directives a
/// program would chain: what a test or benchmark runs alone to compare.
#[allow(dead_code)]
pub fn written_schedule(c: &serde_json::Value) -> String {
    let text = |k: &str| c[k].as_str().map(str::to_string);
    let param = c["dispatch_param"].as_u64().unwrap();
    let key = text("dispatch_key").unwrap_or_default();
    let mut s = match c["dispatch"].as_str().unwrap() {
        "round_robin" => format!(".dispatch(DispatchPolicy.round_robin({param}))"),
        "work_steal" => ".dispatch(DispatchPolicy.work_steal())".into(),
        p => format!(".dispatch(DispatchPolicy.{p}({key}, {param}))"),
    };
    if let Some(n) = c["streams"].as_u64() {
        s += &format!(".streams({n})");
    }
    if let Some(k) = text("stream_by") {
        s += &format!(".stream_by({k})");
    }
    match (c["timing"].as_str().unwrap(), c["timing_param"].as_u64()) {
        ("immediate", _) => s += ".timing(TimingPolicy.immediate)",
        (t, Some(n)) => s += &format!(".timing(TimingPolicy.{t}({n}))"),
        _ => {}
    }
    if let (Some(w), Some(m)) = (c["window"].as_u64(), text("window_mode")) {
        s += &format!(".task_graph(window=TaskWindow({w}, \"tasks\", WindowMode.{m}))");
    }
    s
}
