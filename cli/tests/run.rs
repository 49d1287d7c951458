//! `wsp run` end to end: real numbers against NumPy references, determinism across worker
//! counts, the kernel cache, run-time values, faults, and each schedule policy's effect on the
//! simulated timeline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod common;
use common::{examples, root};

/// A scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("run", name)
}

/// `wsp run FILE ARGS...` with a cache shared by the tests of this file.
fn wsp_run(file: &Path, args: &[&str]) -> Output {
    common::wsp()
        .arg("run")
        .arg(file)
        .args(args)
        .output()
        .expect("run wsp")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "wsp run failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs with `--stats-json` (and any other args) and returns the stats.
fn stats(file: &Path, dir: &Path, args: &[&str]) -> Value {
    let path = dir.join("stats.json");
    let mut all = vec!["--stats-json", path.to_str().unwrap()];
    all.extend_from_slice(args);
    ok(&wsp_run(file, &all));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each file `--dump-tensors` wrote: its name and bytes.
type Dump = Vec<(String, Vec<u8>)>;

/// The files `--dump-tensors` wrote, by name.
fn dumped(dir: &Path) -> Dump {
    let mut files: Dump = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_matches_its_numpy_reference() {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let mut failures = Vec::new();
    let perf = common::perf().into_iter().map(|p| (p, "tests/golden/perf"));
    for (example, golden) in examples()
        .into_iter()
        .map(|p| (p, "tests/golden"))
        .chain(perf)
    {
        let name = example.file_stem().unwrap().to_str().unwrap().to_string();
        let script = root().join(golden).join(format!("{name}.py"));
        assert!(
            script.is_file(),
            "{name} has no NumPy reference at {}",
            script.display()
        );
        let dir = scratch(&format!("golden-{name}"));
        ok(&wsp_run(
            &example,
            &["--workers", "2", "--dump-tensors", dir.to_str().unwrap()],
        ));
        let out = Command::new(&python)
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run python");
        let text = String::from_utf8_lossy(&out.stdout);
        eprintln!("{name}:\n{text}{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            failures.push(name);
        }
    }
    assert!(failures.is_empty(), "references disagree: {failures:?}");
}

#[test]
fn worker_count_changes_neither_numbers_nor_cycles() {
    for example in examples() {
        let name = example.file_stem().unwrap().to_str().unwrap().to_string();
        let mut first: Option<(Value, Dump)> = None;
        for workers in ["1", "2", "4"] {
            let dir = scratch(&format!("workers-{name}-{workers}"));
            let dump = dir.join("dump");
            let s = stats(
                &example,
                &dir,
                &[
                    "--workers",
                    workers,
                    "--dump-tensors",
                    dump.to_str().unwrap(),
                ],
            );
            let files = dumped(&dump);
            match &first {
                None => first = Some((s, files)),
                Some((s1, f1)) => {
                    assert_eq!(
                        s["total_cycles"], s1["total_cycles"],
                        "{name}: cycles with {workers} workers"
                    );
                    assert_eq!(s["task_count"], s1["task_count"], "{name}");
                    assert!(
                        f1 == &files,
                        "{name}: tensors differ with {workers} workers"
                    );
                }
            }
        }
    }
}

#[test]
fn a_rerun_compiles_nothing() {
    let dir = scratch("rerun");
    let file = root().join("examples/softmax.wsp");
    stats(&file, &dir, &[]);
    let again = stats(&file, &dir, &[]);
    assert_eq!(again["cache_hit"], true);
}

const DYNAMIC: &str = r#"from pto_wsp import *

F32 = DType.F32
seq = DenseDyn(8)
Lens = Tensor((4,), DType.I32, init=load_npy("lens.npy"))
tokens = Ragged(4, lengths=Lens)
X = Tensor((64, 4, 8), F32, init=arange())
Y = Tensor((64, 4, 8), F32)


@kernel
def double(x: In[Tile[4, 8, F32]], y: Out[Tile[4, 8, F32]]):
    pto.store(y, pto.add(x, x))


@workload
def run(seq, tokens):
    for i in P(seq):
        double[i](x=X[i], y=Y[i])
    for b in P(Dense[4]):
        for t in P(tokens[b]):
            double[b, t](x=X[32 + 8 * b + t], y=Y[32 + 8 * b + t])


program = run(seq, tokens).compile(target="cpu_sim")
program.execute()
"#;

fn write_lens(dir: &Path, lens: &[i32]) {
    let mut bytes = Vec::new();
    let header = format!(
        "{{'descr': '<i4', 'fortran_order': False, 'shape': ({},), }}",
        lens.len()
    );
    let pad = 64 - (10 + header.len() + 1) % 64;
    let header = format!("{header}{}\n", " ".repeat(pad % 64));
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for l in lens {
        bytes.extend_from_slice(&l.to_le_bytes());
    }
    std::fs::write(dir.join("lens.npy"), bytes).unwrap();
}

#[test]
fn new_bindings_and_new_data_need_no_recompile() {
    let dir = scratch("dynamic");
    let file = dir.join("dynamic.wsp");
    std::fs::write(&file, DYNAMIC).unwrap();
    write_lens(&dir, &[1, 2, 3, 4]);
    let s = stats(&file, &dir, &[]);
    assert_eq!(s["task_count"], 8 + 10);
    let s = stats(&file, &dir, &["--bind", "seq=32"]);
    assert_eq!(s["task_count"], 32 + 10);
    assert_eq!(s["cache_hit"], true, "a new binding recompiled");
    write_lens(&dir, &[8, 0, 2, 5]);
    let s = stats(&file, &dir, &["--bind", "seq=16"]);
    assert_eq!(s["task_count"], 16 + 15);
    assert_eq!(s["cache_hit"], true, "new ragged lengths recompiled");
}

/// `wsp run` started from a file that is replaced while it builds its kernels, as an upgrade
/// or a rebuild does: its run process starts from the running image, so the run succeeds.
#[test]
fn a_run_survives_its_binary_being_replaced_before_it_spawns() {
    let dir = scratch("replaced-binary");
    let copy = dir.join("wsp");
    std::fs::copy(env!("CARGO_BIN_EXE_wsp"), &copy).unwrap();
    let file = dir.join("hello.wsp");
    // A kernel no cache holds, so the build (a C++ compile) comes between start and spawn.
    let text = std::fs::read_to_string(root().join("examples/hello_add.wsp"))
        .unwrap()
        .replace("pto.add(x, y)", "pto.add(x, pto.mul(y, 3.0))");
    assert!(text.contains("pto.mul(y, 3.0)"));
    std::fs::write(&file, text).unwrap();
    let child = Command::new(&copy)
        .args(["run", file.to_str().unwrap()])
        .env("WSP_CACHE_DIR", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Another file renamed over it, as `cargo install` does.
    let upgrade = dir.join("wsp.new");
    std::fs::write(
        &upgrade,
        "#!/bin/sh\necho 'not the running wsp' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &upgrade,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::rename(&upgrade, &copy).unwrap();
    let out = child.wait_with_output().unwrap();
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("'task_count': 4"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A kernel mixing a matmul and vector ops: its vector ops' cycles are the vector unit's in
/// utilisation, its matmul's the cube unit's (they were all the cube's, reading 0 vector).
#[test]
fn a_mixed_kernels_cycles_are_split_by_unit() {
    let dir = scratch("mixed-utilisation");
    let utilisation = |body: &str| {
        let file = dir.join("mixed.wsp");
        let text = format!(
            r#"from pto_wsp import *

F32 = DType.F32
A = Tensor((4, 16, 16), F32, init=ones())
B = Tensor((16, 16), F32, init=ones())
C = Tensor((4, 16, 16), F32)


@kernel
def k(a: In[Tile[16, 16, F32]], b: In[Tile[16, 16, F32]], c: Out[Tile[16, 16, F32]]):
    pto.store(c, {body})


@workload
def w():
    for i in P(Dense[4]):
        k[i](a=A[i], b=B, c=C[i])


program = w().compile(target="cpu_sim")
program.execute()
"#
        );
        std::fs::write(&file, text).unwrap();
        let s = stats(&file, &dir, &[]);
        let u = &s["core_utilization"];
        (u["cube"].as_f64().unwrap(), u["vector"].as_f64().unwrap())
    };
    let (cube, vector) = utilisation("pto.matmul(a, b)");
    assert!(cube > 0.0 && vector == 0.0, "{cube} {vector}");
    let (cube, vector) = utilisation("pto.exp(pto.rowmul(pto.matmul(a, b), pto.rowsum(a)))");
    assert!(cube > 0.0 && vector > 0.0, "{cube} {vector}");
    let (cube, vector) = utilisation("pto.exp(a)");
    assert!(cube == 0.0 && vector > 0.0, "{cube} {vector}");
}

/// The original's `tests/test_codegen_ragged_axis.py`, ported: a loop over a whole ragged
/// axis iterates every element, row by row, and new lengths need no recompile.
const RAGGED_WHOLE: &str = r#"from pto_wsp import *

I32 = DType.I32
Lens = Tensor((2,), I32, init=load_npy("lens.npy"))
ragged = Ragged(2, lengths=Lens)
y = Tensor((3, 1, 1), I32)


@kernel
def mark(y_tile: InOut[Tile[1, 1, I32]]):
    v = pto.load(y_tile)
    one = pto.constant(1.0, I32)
    v1 = pto.add(v, one)
    pto.store(y_tile, v1)


@workload
def wl():
    for t in P.seq(ragged, name="t"):
        mark[t](y_tile=y[t])


program = wl().compile(target="cpu_sim")
program.execute()
flat = y.reshape(3)
print(flat)
"#;

#[test]
fn a_loop_over_a_whole_ragged_axis_iterates_every_element() {
    let dir = scratch("ragged-whole");
    let file = dir.join("ragged.wsp");
    std::fs::write(&file, RAGGED_WHOLE).unwrap();
    let mut printed = Vec::new();
    for lens in [[1, 1], [1, 2], [0, 0], [0, 3]] {
        write_lens(&dir, &lens);
        let out = wsp_run(&file, &[]);
        ok(&out);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        printed.push(format!("{lens:?}: {}", stdout.lines().next().unwrap_or("")));
    }
    expect_test::expect![[r#"
        [1, 1]: [1 1 0]
        [1, 2]: [1 1 1]
        [0, 0]: [0 0 0]
        [0, 3]: [1 1 1]"#]]
    .assert_eq(&printed.join("\n"));
    // A negative length is the data's error, not an empty row; a total past the tensor is a
    // view out of bounds.
    write_lens(&dir, &[-1, 2]);
    let err = exit_1(&wsp_run(&file, &[]));
    assert!(
        err.contains("error[WSP602]: axis `ragged`: lengths[0] is -1; a row's length is 0 or more")
            && err.contains("ragged.wsp:19:5")
            && err.contains("the loop did not run"),
        "{err}"
    );
    write_lens(&dir, &[2, 2]);
    let err = exit_1(&wsp_run(&file, &[]));
    assert!(
        err.contains("task mark[3]") && err.contains("out of bounds"),
        "{err}"
    );
}

/// The standard error of a run that reported an error (exit status 1), not one that crashed.
fn exit_1(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    err
}

fn failure(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "wsp run succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_binding_of_no_symbol_or_out_of_range_is_an_error_listing_the_symbols() {
    let dir = scratch("bind-errors");
    let file = dir.join("dynamic.wsp");
    std::fs::write(&file, DYNAMIC).unwrap();
    write_lens(&dir, &[1, 2, 3, 4]);
    let err = failure(&wsp_run(&file, &["--bind", "sqe=3"]));
    expect_test::expect![[r#"
        error: `--bind sqe=3`: no run-time symbol `sqe`; the run-time symbols are `seq` (default 8)
    "#]]
    .assert_eq(&err);
    let err = failure(&wsp_run(&file, &["--bind", "seq=9223372036854775808"]));
    expect_test::expect![[r#"
        error: `--bind seq=9223372036854775808`: 9223372036854775808 is out of range for `seq`: a run-time symbol takes 0 to 9223372036854775807 (2^63 - 1)
    "#]]
    .assert_eq(&err);
    // Past the static shapes: a located error before the build, at the view.
    let shown = exit_1(&wsp_run(&file, &["--bind", "seq=65"]));
    assert!(
        shown.contains("error[WSP208]: with `--bind seq=65`, `X[i]` reaches 64, out of range for dimension 0 of `X`, which has extent 64")
            && shown.contains("dynamic.wsp:19:21"),
        "{shown}"
    );
    let hello = root().join("examples/hello_add.wsp");
    let err = failure(&wsp_run(&hello, &["--bind", "nosuch=3"]));
    expect_test::expect![[r#"
        error: `--bind nosuch=3`: no run-time symbol `nosuch`; the program has no run-time symbols (a `DenseDyn` axis is one)
    "#]]
    .assert_eq(&err);
}

/// The run process starts before the file is checked (`wsp run` hands it the job later): a run
/// that stops before it has a job kills and reaps it, leaving nothing behind.
#[test]
fn a_run_that_stops_before_running_leaves_no_run_process() {
    let hello = root().join("examples/hello_add.wsp");
    let child = common::wsp()
        .arg("run")
        .arg(&hello)
        .args(["--bind", "nosuch=3"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wsp");
    let pid = child.id();
    let out = child.wait_with_output().expect("wsp run ends");
    let err = failure(&out);
    assert!(err.contains("no run-time symbol `nosuch`"), "{err}");
    // A run process names its parent in its environment (it would end itself a while after
    // the parent, which is too late).
    let mark = format!("WSP_RUN_PARENT={pid}");
    let left: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == mark.as_bytes()))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.is_empty(),
        "run processes of {pid} left running: {left:?}"
    );
}

#[test]
fn workers_out_of_range_is_an_error() {
    let hello = root().join("examples/hello_add.wsp");
    for bad in ["0", "1025", "18446744073709551615"] {
        let err = failure(&wsp_run(&hello, &["--workers", bad]));
        assert!(
            err.contains(&format!(
                "invalid value '{bad}' for '--workers <WORKERS>': {bad} is not in 1..=1024"
            )),
            "{err}"
        );
    }
    ok(&wsp_run(&hello, &["--workers", "1024"]));
}

/// Four small tasks, then a 32 MiB tensor saved.
const BIG_SAVE: &str = r#"from pto_wsp import *

F32 = DType.F32
A = Tensor((4, 32, 32), F32, init=ones())
C = Tensor((4, 32, 32), F32)
Big = Tensor((2048, 4096), F32, init=ones())


@kernel
def double(a: In[Tile[32, 32, F32]], c: Out[Tile[32, 32, F32]]):
    pto.store(c, pto.add(pto.load(a), pto.load(a)))


@workload
def twice(batch):
    for i in P(batch):
        double[i](a=A[i], c=C[i])


program = twice(Dense[4]).compile(target="cpu_sim")
program.execute()
save_npy(Big, "big.npy")
"#;

#[test]
fn writing_files_is_reported_as_io_apart_from_execution() {
    let dir = scratch("io-apart");
    let file = dir.join("big.wsp");
    std::fs::write(&file, BIG_SAVE).unwrap();
    let s = stats(&file, &dir, &[]);
    assert_eq!(
        std::fs::metadata(dir.join("big.npy")).unwrap().len(),
        128 + (32 << 20)
    );
    let (execute, io) = (s["execute_time_ms"].as_f64(), s["io_ms"].as_f64());
    let (Some(execute), Some(io)) = (execute, io) else {
        panic!("execute_time_ms and io_ms must be numbers: {s}");
    };
    // Four 32x32 additions against a 32 MiB write: the execution does not hold the write.
    assert!(
        io > 0.0 && execute < io,
        "execute_time_ms {execute} vs io_ms {io}"
    );
    // Written through temporary files, renamed: none is left beside the results.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["big.npy", "big.wsp", "stats.json"]);
}

/// `double` over a loop nest, with `{LOOPS}` and `{ARGS}` filled in.
const LOOP_SIZES: &str = r#"from pto_wsp import *

F32 = DType.F32
A = Tensor((1000000, 1, 1), F32, init=ones())
C = Tensor((1000000, 1, 1), F32)


@kernel
def double(a: In[Tile[1, 1, F32]], c: Out[Tile[1, 1, F32]]):
    pto.store(c, pto.add(pto.load(a), pto.load(a)))


@workload
def run(steps, items):
{LOOPS}


program = run({ARGS}).compile(target="cpu_sim")
program.execute()
"#;

/// A loop of 10^12 iterations, and 10^4 steps of a 10^6-task launch, are refused by size
/// before they are enumerated (the first grew memory until the machine killed it).
#[test]
fn loops_past_the_task_budget_are_refused_before_enumeration() {
    let dir = scratch("loop-sizes");
    let cases = [
        (
            "    for s in P.seq(steps):\n        double[s](a=A[0], c=C[0])",
            "Dense[10**12], Dense[1]",
            "error: workload `run`: the loop over `s` has 1000000000000 iterations, more than the ",
        ),
        (
            "    for s in P.seq(steps):\n        for i in P(items):\n            double[s, i](a=A[i], c=C[i])",
            "Dense[10000], Dense[1000000]",
            "error: workload `run`: a launch of 1000000 `i` instances would make more than the ",
        ),
    ];
    for (loops, args, expected) in cases {
        let file = dir.join("sizes.wsp");
        let text = LOOP_SIZES.replace("{LOOPS}", loops).replace("{ARGS}", args);
        std::fs::write(&file, text).unwrap();
        let err = failure(&wsp_run(&file, &[]));
        assert!(err.starts_with(expected), "{err}");
        assert!(err.contains("tasks a run can hold ("), "{err}");
    }
}

/// A tensor past any host's memory is reported at its definition (WSP505) before anything
/// runs; it used to abort the run process in the allocator, naming nothing.
#[test]
fn a_tensor_past_the_host_memory_is_refused_at_its_definition() {
    let dir = scratch("tensor-size");
    let file = dir.join("big.wsp");
    let text = LOOP_SIZES
        .replace(
            "{LOOPS}",
            "    for i in P(items):\n        double[i](a=A[i], c=C[i])",
        )
        .replace("{ARGS}", "Dense[1], Dense[4]")
        .replace(
            "C = Tensor(",
            "Big = Tensor((100000, 100000, 100000), F32)\nC = Tensor(",
        );
    std::fs::write(&file, text).unwrap();
    let out = wsp_run(&file, &[]);
    // Diagnostics go to standard error; standard output is the program's.
    assert!(out.stdout.is_empty());
    let err = exit_1(&out);
    assert!(
        err.starts_with("error[WSP505]: `Big` (F32 [100000,100000,100000]) needs 4000000000000000 bytes (3725290.3 GiB), more than this host's "),
        "{err}"
    );
    assert!(err.contains("big.wsp:5:1"), "{err}");
}

/// A Fortran-order `.npy` from NumPy (`np.asfortranarray`) is read at the right indices: the
/// tensor and the task's result equal NumPy's array and its double (it was read as C order).
#[test]
fn load_npy_reads_a_fortran_order_file_from_numpy() {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let dir = scratch("fortran-npy");
    let numpy = |script: &str| {
        let out = Command::new(&python)
            .args(["-c", script])
            .current_dir(&dir)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    numpy(
        "import numpy as np\n\
         x = np.arange(4 * 32 * 32, dtype=np.float32).reshape(4, 32, 32)\n\
         np.save('x.npy', np.asfortranarray(x))\n\
         assert np.load('x.npy').flags['F_CONTIGUOUS'] and not np.load('x.npy').flags['C_CONTIGUOUS']",
    );
    let file = dir.join("fortran.wsp");
    std::fs::write(
        &file,
        std::fs::read_to_string(root().join("examples/hello_add.wsp"))
            .unwrap()
            .replace("init=randn(seed=1)", "init=load_npy(\"x.npy\")")
            .replace("init=randn(seed=2)", "init=load_npy(\"x.npy\")"),
    )
    .unwrap();
    let dump = dir.join("dump");
    ok(&wsp_run(&file, &["--dump-tensors", dump.to_str().unwrap()]));
    numpy(
        "import numpy as np\n\
         x = np.arange(4 * 32 * 32, dtype=np.float32).reshape(4, 32, 32)\n\
         assert np.array_equal(np.load('dump/A.npy'), x), 'A differs'\n\
         assert np.array_equal(np.load('dump/C.npy'), x + x), 'C differs'",
    );
}

/// Loops that run as index launches: over fresh tensors, after a launch of the same tiles, in
/// rows of a two-variable loop reading a tensor two ways, and inside `P.seq`. Then loops that
/// cannot: a reversed view of a tensor a launch wrote, and one of tensors left with per-task
/// records.
const LAUNCHES: &str = r#"from pto_wsp import *

F32 = DType.F32
items = Dense[64]
heads = Dense[4]
steps = Dense[3]
X = Tensor((64, 4, 8), F32, init=randn(seed=1))
Y = Tensor((64, 4, 8), F32)
Z = Tensor((64, 4, 8), F32)
W = Tensor((64, 4, 8), F32)
U = Tensor((64, 4, 8), F32, init=ones())
V = Tensor((16, 4, 4, 8), F32)
A = Tensor((64, 4, 8), F32, init=ones())


@kernel
def double(x: In[Tile[4, 8, F32]], y: Out[Tile[4, 8, F32]]):
    pto.store(y, pto.add(x, x))


@kernel
def add(a: In[Tile[4, 8, F32]], b: In[Tile[4, 8, F32]], c: Out[Tile[4, 8, F32]]):
    pto.store(c, pto.add(a, b))


@kernel
def bump(a: In[Tile[4, 8, F32]], c: InOut[Tile[4, 8, F32]]):
    pto.store(c, pto.add(pto.load(c), a))


@workload
def chain(items):
    for i in P(items):
        double[i](x=X[i], y=Y[i])
    for i in P(items):
        add[i](a=Y[i], b=X[i], c=Z[i])
    for b, h in P(Dense[16], heads):
        add[b, h](a=X[4 * b + h], b=X[4 * b + 3 - h], c=V[b, h])
    for s in P.seq(steps):
        for i in P(items):
            bump[s, i](a=Y[i], c=U[i])
    for i in P(items):
        add[i](a=Z[63 - i], b=Y[i], c=W[i])
    for i in P(items):
        double[i](x=W[i], y=Y[i])
    # Steps of one task: each updates the same tile and reads a tile of its own.
    for b in P(heads):
        for s in P.seq(Dense[16]):
            bump[b, s](a=X[s], c=A[b])
    # Every step reads the same tile; a later task writes what the steps read.
    for s in P.seq(Dense[8]):
        add[s](a=Z[0], b=X[s], c=A[8 + s])
    for i in P(items):
        double[i](x=A[i], y=X[i])
    # Each step reads what the step two before wrote.
    for s in P.seq(Dense[8]):
        add[s](a=A[40 + s], b=X[s], c=A[42 + s])
    # An inner P.seq's first step waits for the outer step before.
    for t in P.seq(Dense[2]):
        for s in P.seq(Dense[4]):
            bump[t, s](a=Y[s], c=A[20 + t])


program = chain(items).compile(target="cpu_sim")
program.execute()
"#;

#[test]
fn index_launches_change_neither_numbers_nor_timeline() {
    let dir = scratch("launches");
    let file = dir.join("launches.wsp");
    std::fs::write(&file, LAUNCHES).unwrap();
    let mut programs = examples();
    programs.push(file);
    for program in programs {
        let name = program.file_stem().unwrap().to_str().unwrap().to_string();
        let mut runs = Vec::new();
        for (mode, off) in [("on", &[][..]), ("off", &["--no-index-launches"][..])] {
            for workers in ["1", "2"] {
                let dir = scratch(&format!("launches-{name}-{mode}-{workers}"));
                let (dump, trace) = (dir.join("dump"), dir.join("trace.json"));
                let tasks = dir.join("tasks.txt");
                let mut args = vec![
                    "--workers",
                    workers,
                    "--dump-tensors",
                    dump.to_str().unwrap(),
                    "--trace",
                    trace.to_str().unwrap(),
                    "--dump-tasks",
                    tasks.to_str().unwrap(),
                ];
                args.extend_from_slice(off);
                let s = stats(&program, &dir, &args);
                let trace: Value =
                    serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
                let tasks = std::fs::read_to_string(&tasks).unwrap();
                runs.push((s, trace, dumped(&dump), tasks));
            }
        }
        let launches: Vec<&Value> = runs.iter().map(|r| &r.0["index_launches"]).collect();
        assert_eq!(launches[2..], [0, 0], "{name}: launches while asked not to");
        if name == "launches" {
            // 1 + 1 + 16 rows + 3 steps, and the last two of those loops task by task;
            // then sequential launches: 4 heads + 1 + 1 + 2 outer steps, and the loop
            // between them task by task (its tensors have per-task records).
            assert_eq!(launches[..2], [29, 29], "{name}");
        }
        let (s0, t0, f0, d0) = &runs[0];
        for (s, t, f, d) in &runs[1..] {
            assert_eq!(s["total_cycles"], s0["total_cycles"], "{name}");
            assert_eq!(s["task_count"], s0["task_count"], "{name}");
            assert!(t == t0, "{name}: the timeline differs");
            assert!(f == f0, "{name}: tensors differ");
            // Every task with the same predecessors: launches keep each instance's edges.
            assert!(d == d0, "{name}: the task streams differ");
        }
    }
}

/// `--simulate-npu` runs programs as `wsp emit` lays them out for the 910B: kernels mixing
/// cube and vector work split into a task per core, passing values through workspace
/// tensors. Every tensor of the program comes out bit for bit as the kernels computed it
/// unsplit, and the split tasks are what runs. The A2/A3 forms programs add kernels the
/// lowering rewrites without splitting (bf16 math through f32, cube-only forms). A loop
/// kernel mixing the units stays one task, of its mixed launch, whose ring is not dumped.
#[test]
fn kernels_split_for_the_910b_compute_what_they_computed_whole() {
    let mut split = Vec::new();
    let mut mixed = Vec::new();
    let forms = ["a2a3_forms", "a2a3_bf16"].map(|f| root().join(format!("cli/tests/data/{f}.wsp")));
    let programs = examples()
        .into_iter()
        .chain(common::ported())
        .chain(common::perf());
    for program in programs.chain(forms) {
        let name = program.file_stem().unwrap().to_str().unwrap().to_string();
        let mut runs = Vec::new();
        for (mode, extra) in [("cpu", &[][..]), ("npu", &["--simulate-npu"][..])] {
            let dir = scratch(&format!("split-{name}-{mode}"));
            let (dump, tasks) = (dir.join("dump"), dir.join("tasks.txt"));
            let mut args = vec![
                "--dump-tensors",
                dump.to_str().unwrap(),
                "--dump-tasks",
                tasks.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            let s = stats(&program, &dir, &args);
            runs.push((s, dumped(&dump), std::fs::read_to_string(&tasks).unwrap()));
        }
        let (cpu, npu) = (&runs[0], &runs[1]);
        for (file, bytes) in &cpu.1 {
            let theirs = npu.1.iter().find(|(f, _)| f == file);
            assert!(
                theirs.is_some_and(|(_, b)| b == bytes),
                "{name}: {file} differs when split"
            );
        }
        let workspaces: Vec<&String> = npu
            .1
            .iter()
            .map(|(f, _)| f)
            .filter(|f| !cpu.1.iter().any(|(g, _)| g == *f))
            .collect();
        if npu.0["task_count"] != cpu.0["task_count"] {
            assert!(npu.2.contains("_aic") && npu.2.contains("_aiv"), "{name}");
            assert!(!workspaces.is_empty(), "{name}: split with no workspace");
            split.push(name);
        } else {
            assert!(workspaces.is_empty(), "{name}: {workspaces:?}");
            // The same tasks, of the mixed launch's kernel.
            if npu.2 != cpu.2 {
                assert!(npu.2.contains("_mix "), "{name}");
                mixed.push(name);
            }
        }
    }
    expect_test::expect![[r#"
        [
            "chunked_decode_attention",
            "fa_long",
            "fa_small",
            "fa_standard",
        ]
    "#]]
    .assert_debug_eq(&mixed);
    // Every program whose kernels mix a matmul with vector work.
    expect_test::expect![[r#"
        [
            "moe",
            "transformer_layer",
            "varlen_attention",
            "attention",
            "bgemm",
            "flashinfer_decode",
            "llama",
            "moe_top2",
        ]
    "#]]
    .assert_debug_eq(&split);
}

#[test]
fn a_crash_inside_a_launch_names_the_instance() {
    let dir = scratch("launch-crash");
    let file = dir.join("crash.wsp");
    // Tile i of X starts with 32 * i; instance 40 crashes, in an index launch and in a
    // sequential one.
    for lp in ["P", "P.seq"] {
        let text = format!(
            r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((64, 4, 8), F32, init=arange())
Y = Tensor((64, 4, 8), F32)


@kernel(cpp_src="""
    if (x[0] == 1280.0f) {{
        volatile float* p = nullptr;
        *p = 1.0f;
    }}
""")
def crash(x: In[Tile[4, 8, F32]], y: Out[Tile[4, 8, F32]]):
    pass


@workload
def w(items):
    for i in {lp}(items):
        crash[i](x=X[i], y=Y[i])


program = w(Dense[64]).compile(target="cpu_sim")
program.execute()
"#
        );
        std::fs::write(&file, text).unwrap();
        for workers in ["1", "2"] {
            let args = ["--workers", workers, "--stats-json", "/dev/null"];
            let err = exit_1(&wsp_run(&file, &args));
            assert!(
                err.contains("error[WSP602]: segmentation fault in task crash[40]"),
                "{lp}, {workers} workers: {err}"
            );
        }
    }
}

/// A program with one `cpp_src` kernel `name` over 8×8 tiles `x` and `y`, whose body starts on
/// line 9 of the file.
fn cpp_src_program(dir: &Path, name: &str, body: &str) -> PathBuf {
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(&file, cpp_src_text(name, body)).unwrap();
    file
}

/// The text of [`cpp_src_program`].
fn cpp_src_text(name: &str, body: &str) -> String {
    format!(
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 8, 8), F32, init=ones())
Y = Tensor((4, 8, 8), F32)


@kernel(cpp_src="""
{body}""")
def {name}(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


@workload
def w(batch):
    for i in P(batch):
        {name}[i](x=X[i], y=Y[i])


program = w(Dense[4]).compile(target="cpu_sim")
program.execute()
"#
    )
}

#[test]
fn a_crash_inside_a_task_names_the_task_and_spares_the_caller() {
    let dir = scratch("crash");
    let file = cpp_src_program(
        &dir,
        "crash",
        "    if (x[0] > 0.5f && y_rs > 0) {\n        volatile float* p = nullptr;\n        *p = 1.0f;\n    }\n",
    );
    let err = exit_1(&wsp_run(&file, &[]));
    assert!(
        err.contains("error[WSP602]: segmentation fault in task crash["),
        "stderr: {err}"
    );
}

/// What the program prints, and a `cpp_src` kernel's own `printf`, reach standard output in
/// the order they happen, and none of what came before a crash is lost.
#[test]
fn prints_and_kernel_output_come_in_order_and_survive_a_crash() {
    let dir = scratch("print-order");
    let chatty = cpp_src_program(
        &dir,
        "chatty",
        "    std::printf(\"tile %g%c\", (double)x[0], 10);\n    std::fflush(stdout);\n    for (int i = 0; i < 64; ++i) y[i] = x[i];\n",
    );
    let text = std::fs::read_to_string(&chatty)
        .unwrap()
        .replace(
            "@kernel(cpp_src=",
            "@kernel(cpp_includes=[\"cstdio\"], cpp_src=",
        )
        .replace(
            "program.execute()\n",
            "print(\"before\")\nprogram.execute()\nprint(\"after\")\n",
        );
    std::fs::write(&chatty, text).unwrap();
    let out = wsp_run(&chatty, &["--workers", "1"]);
    ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().take(6).collect();
    assert_eq!(
        lines,
        ["before", "tile 1", "tile 1", "tile 1", "tile 1", "after"],
        "{stdout}"
    );
    let crash = dir.join("crash.wsp");
    let text = std::fs::read_to_string(&chatty).unwrap().replace(
        "std::printf(\"tile %g%c\", (double)x[0], 10);",
        "volatile float* p = nullptr; *p = x[0];",
    );
    std::fs::write(&crash, text).unwrap();
    let out = wsp_run(&crash, &[]);
    exit_1(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "before\n");
}

#[test]
fn cpp_src_errors_point_into_the_string() {
    let dir = scratch("cpp-error");
    let file = cpp_src_program(
        &dir,
        "bad",
        "    for (int i = 0; i < y_rows; ++i)\n        y[i * y_rs] = x[i * x_rs] + undefined_name;\n",
    );
    let err = exit_1(&wsp_run(&file, &[]));
    assert!(err.contains("error[WSP601]"), "stderr: {err}");
    assert!(
        err.contains("bad.wsp:10:"),
        "the error is on line 10 of the .wsp file: {err}"
    );
    assert!(err.contains("undefined_name"), "stderr: {err}");
}

#[test]
fn a_missing_compiler_is_a_clear_error() {
    let dir = scratch("no-compiler");
    let file = dir.join("add.wsp");
    // A kernel no other test builds, so the cache cannot answer.
    let text = std::fs::read_to_string(root().join("examples/hello_add.wsp"))
        .unwrap()
        .replace("pto.add(x, y)", "pto.sub(pto.add(x, y), pto.add(y, y))");
    std::fs::write(&file, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("run")
        .arg(&file)
        .env("WSP_CACHE_DIR", dir.join("cache"))
        .env("CXX", "/nonexistent/c++")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("no C++ compiler"), "stderr: {err}");
}

/// A dispatch-bound program: many tiny independent tasks, so where and when AICPUs hand them
/// out decides the simulated time.
fn policy_program(dir: &Path, name: &str, schedule: &str) -> PathBuf {
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(
        &file,
        format!(
            r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 12, 1, 16), F32, init=ones())
Y = Tensor((4, 12, 1, 16), F32)


@kernel
def tiny(x: In[Tile[1, 16, F32]], y: Out[Tile[1, 16, F32]]):
    pto.store(y, pto.add(x, x))


@workload
def w(batch, items):
    for b, i in P(batch, items):
        tiny[b, i](x=X[b, i], y=Y[b, i])


program = w(Dense[4], Dense[12]){schedule}.compile(target="cpu_sim")
program.execute()
"#
        ),
    )
    .unwrap();
    file
}

/// One dispatched task of the trace: (b, i), its AICPU, dispatch time and core span.
#[derive(Debug)]
struct Dispatched {
    b: i64,
    i: i64,
    aicpu: i64,
    dispatch: f64,
}

fn timeline(dir: &Path, name: &str, schedule: &str) -> (u64, Vec<Dispatched>, Vec<(f64, f64)>) {
    let file = policy_program(dir, name, schedule);
    let trace = dir.join(format!("{name}.trace.json"));
    let s = stats(&file, dir, &["--trace", trace.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let mut out = Vec::new();
    let mut cores = Vec::new();
    for e in doc["traceEvents"].as_array().unwrap() {
        if e["ph"] != "X" {
            continue;
        }
        let name = e["name"].as_str().unwrap();
        let idx: Vec<i64> = name
            .trim_start_matches("tiny[")
            .trim_end_matches(']')
            .split(", ")
            .map(|x| x.parse().unwrap())
            .collect();
        if e["pid"] == 1 {
            out.push(Dispatched {
                b: idx[0],
                i: idx[1],
                aicpu: e["tid"].as_i64().unwrap(),
                dispatch: e["ts"].as_f64().unwrap(),
            });
        } else {
            let ts = e["ts"].as_f64().unwrap();
            cores.push((ts, ts + e["dur"].as_f64().unwrap()));
        }
    }
    (s["total_cycles"].as_u64().unwrap(), out, cores)
}

fn aicpus_used(d: &[Dispatched]) -> Vec<i64> {
    let mut v: Vec<i64> = d.iter().map(|x| x.aicpu).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn round_robin_spreads_tasks_in_order_over_n_aicpus() {
    let dir = scratch("round-robin");
    let (one, d1, _) = timeline(&dir, "rr1", ".dispatch(DispatchPolicy.round_robin(1))");
    let (four, d4, _) = timeline(&dir, "rr4", ".dispatch(DispatchPolicy.round_robin(4))");
    assert_eq!(aicpus_used(&d1), [0]);
    assert_eq!(aicpus_used(&d4), [0, 1, 2, 3]);
    for d in &d4 {
        assert_eq!(d.aicpu, (d.b * 12 + d.i) % 4, "{d:?}");
    }
    // Each task's pickup and completion latencies are paid on every AICPU alike.
    assert!(
        four * 5 < one * 2,
        "4 AICPUs ({four} cycles) should be several times faster than 1 ({one})"
    );
}

#[test]
fn affinity_keeps_a_key_on_one_aicpu() {
    let dir = scratch("affinity");
    let (_, d, _) = timeline(
        &dir,
        "aff",
        ".dispatch(DispatchPolicy.affinity(lambda t: t.b))",
    );
    for x in &d {
        assert_eq!(x.aicpu, x.b % 6, "{x:?}");
    }
    assert_eq!(aicpus_used(&d), [0, 1, 2, 3]);
}

#[test]
fn hash_sends_equal_keys_together_and_spreads_keys() {
    let dir = scratch("hash");
    let (_, d, _) = timeline(
        &dir,
        "hash",
        ".dispatch(DispatchPolicy.hash(lambda t: t.i))",
    );
    for x in &d {
        let same: Vec<i64> = d.iter().filter(|y| y.i == x.i).map(|y| y.aicpu).collect();
        assert!(
            same.iter().all(|&a| a == x.aicpu),
            "key {} split over {same:?}",
            x.i
        );
    }
    assert!(
        aicpus_used(&d).len() >= 3,
        "12 keys on {:?}",
        aicpus_used(&d)
    );
}

#[test]
fn dispatch_by_puts_each_task_where_its_key_says() {
    let dir = scratch("dispatch-by");
    let (_, d, _) = timeline(
        &dir,
        "by",
        ".dispatch(DispatchPolicy.dispatch_by(lambda t: (t.i % 3) + 2))",
    );
    for x in &d {
        assert_eq!(x.aicpu, x.i % 3 + 2, "{x:?}");
    }
}

#[test]
fn work_steal_lets_idle_aicpus_take_queued_work() {
    let dir = scratch("work-steal");
    let (steal, d, _) = timeline(&dir, "steal", ".dispatch(DispatchPolicy.work_steal())");
    let (single, _, _) = timeline(&dir, "single", ".dispatch(DispatchPolicy.round_robin(1))");
    // Everything starts on AICPU 0's queue; the other five steal from it.
    assert_eq!(aicpus_used(&d), [0, 1, 2, 3, 4, 5]);
    assert!(
        steal * 3 < single,
        "stealing ({steal}) should beat one AICPU ({single}) several times"
    );
}

#[test]
fn streams_serialize_each_stream() {
    let dir = scratch("streams");
    let (one, _, cores1) = timeline(&dir, "s1", ".streams(1).stream_by(lambda t: 0)");
    let (many, _, _) = timeline(&dir, "s8", ".streams(8).stream_by(lambda t: t.i % 8)");
    // One stream: no two tasks overlap on the cores.
    let mut spans = cores1.clone();
    spans.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    for w in spans.windows(2) {
        assert!(w[1].0 >= w[0].1 - 1e-9, "overlap in one stream: {w:?}");
    }
    assert!(many < one, "8 streams ({many}) should beat 1 ({one})");
}

#[test]
fn timing_policies_change_dispatch() {
    let dir = scratch("timing");
    let (immediate, _, _) = timeline(&dir, "imm", ".timing(TimingPolicy.immediate)");
    let (batched, d, _) = timeline(&dir, "bat", ".timing(TimingPolicy.batched(8))");
    assert!(
        batched < immediate,
        "batches of 8 pay the dispatch latency less ({batched} vs {immediate})"
    );
    // A batch leaves its AICPU at one time.
    let first = d
        .iter()
        .filter(|x| x.aicpu == 0)
        .map(|x| x.dispatch)
        .fold(f64::MAX, f64::min);
    assert_eq!(
        d.iter()
            .filter(|x| x.aicpu == 0 && x.dispatch == first)
            .count(),
        8
    );
    // 1e6 tasks/s at 1.85 GHz: at least 1850 cycles between dispatches.
    let (limited, _, _) = timeline(&dir, "rate", ".timing(TimingPolicy.rate_limit(1000000))");
    assert!(
        limited >= 47 * 1850,
        "48 tasks at 1e6/s took only {limited} cycles"
    );
}

#[test]
fn a_stall_window_bounds_tasks_in_flight() {
    let dir = scratch("window");
    let (free, _, _) = timeline(&dir, "free", "");
    let (bounded, _, cores) = timeline(
        &dir,
        "win",
        r#".task_graph(window=TaskWindow(2, "tasks", WindowMode.STALL))"#,
    );
    for &(start, _) in &cores {
        let live = cores
            .iter()
            .filter(|(s, e)| *s <= start && start < *e)
            .count();
        assert!(live <= 2, "{live} tasks in flight at {start}");
    }
    assert!(
        bounded > free,
        "the window ({bounded}) should slow the run ({free})"
    );
}

#[test]
fn interleaving_alternates_streams_on_an_aicpu() {
    let dir = scratch("interleaved");
    // One AICPU; tasks of b = 0, 1 are stream 0 and come first in its queue, b = 2, 3 stream 1.
    let base = ".dispatch(DispatchPolicy.round_robin(1)).streams(2).stream_by(lambda t: t.b // 2)";
    let (in_order, d_in_order, _) = timeline(
        &dir,
        "imm",
        &format!("{base}.timing(TimingPolicy.immediate)"),
    );
    let (interleaved, mut d, _) = timeline(
        &dir,
        "int",
        &format!("{base}.timing(TimingPolicy.interleaved(2))"),
    );
    let stream = |x: &Dispatched| x.b / 2;
    let first_of_1 = |d: &[Dispatched]| {
        d.iter()
            .filter(|x| stream(x) == 1)
            .map(|x| x.dispatch)
            .fold(f64::MAX, f64::min)
    };
    let last_of_0 = |d: &[Dispatched]| {
        d.iter()
            .filter(|x| stream(x) == 0)
            .map(|x| x.dispatch)
            .fold(0.0, f64::max)
    };
    // Issued as they become ready, the two streams overlap: the AICPU does not hold stream 1
    // behind stream 0's tasks waiting on their predecessors.
    assert!(first_of_1(&d_in_order) < last_of_0(&d_in_order));
    // Interleaved, the AICPU turns to stream 1 long before stream 0 is done ...
    assert!(first_of_1(&d) < last_of_0(&d));
    // ... taking 2 tasks of a stream, then 2 of the other, and the two streams overlap on the
    // cores. With interleaved(1) the streams alternate task by task.
    d.sort_by(|a, b| a.dispatch.partial_cmp(&b.dispatch).unwrap());
    let order: Vec<i64> = d.iter().map(stream).collect();
    assert_eq!(order, [0, 0, 1, 1].repeat(12));
    // Taking turns is a constraint on top of issuing what is ready: here it costs time.
    assert!(
        interleaved >= in_order,
        "interleaved {interleaved} vs as ready {in_order}"
    );
    let (_, mut d1, _) = timeline(
        &dir,
        "int1",
        &format!("{base}.timing(TimingPolicy.interleaved(1))"),
    );
    d1.sort_by(|a, b| a.dispatch.partial_cmp(&b.dispatch).unwrap());
    let order: Vec<i64> = d1.iter().map(stream).collect();
    assert_eq!(order, [0, 1].repeat(24));
}

/// `print` prints as Python does, in order with the runs: constants, `program.stats` and its
/// fields as of the last execution so far, and tensors as NumPy prints them.
#[test]
fn print_prints_values_stats_and_tensors_in_order() {
    let dir = scratch("print");
    let file = dir.join("print.wsp");
    let text = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((2, 2, 3), F32, init=ones())


@kernel
def double(x: InOut[Tile[2, 3, F32]]):
    pto.store(x, pto.add(x, x))


@workload
def w(items):
    for i in P(items):
        double[i](x=X[i])


program = w(Dense[2]).compile(target="cpu_sim")
print("before:", program.stats.task_count, 1e-06, (1,), None)
program.execute()
print(program.stats.task_count)
print(X)
"#;
    std::fs::write(&file, text).unwrap();
    let out = wsp_run(&file, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<&str> = stdout.lines().take(6).collect();
    assert_eq!(
        printed,
        [
            "before: 0 1e-06 (1,) None",
            "2",
            "[[[2. 2. 2.]",
            "  [2. 2. 2.]]",
            "",
            " [[2. 2. 2.]",
        ]
    );
}

/// Decode attention as the runtime issue measured it (`cli/tests/data/decode_heads.wsp`, with
/// `schedule` put before `.compile(`): 8 independent heads, each a `P.seq` chain of 4 chunk
/// tasks then a final task, on the default 910B (24 cube cores, 6 AICPUs). Each AICPU issues
/// what is ready, so a task waiting on its predecessor no longer holds the ready tasks behind
/// it, and stealing takes ready work.
fn decode_heads(dir: &Path, name: &str, schedule: &str) -> u64 {
    let file = dir.join(format!("{name}.wsp"));
    let text = std::fs::read_to_string(root().join("cli/tests/data/decode_heads.wsp")).unwrap();
    std::fs::write(
        &file,
        text.replace(".compile(", &format!("{schedule}.compile(")),
    )
    .unwrap();
    let s = stats(&file, dir, &[]);
    let critical = s["critical_path_cycles"].as_u64().unwrap();
    let total = s["total_cycles"].as_u64().unwrap();
    assert!(
        critical <= total,
        "{name}: critical path {critical} past the makespan {total}"
    );
    total
}

#[test]
fn ready_tasks_do_not_wait_behind_blocked_ones_and_stealing_takes_ready_work() {
    let dir = scratch("decode-heads");
    let default = decode_heads(&dir, "default", "");
    let rr = decode_heads(&dir, "rr", ".dispatch(DispatchPolicy.round_robin(6))");
    let steal = decode_heads(&dir, "steal", ".dispatch(DispatchPolicy.work_steal())");
    let file = dir.join("default.wsp");
    let critical = stats(&file, &dir, &[])["critical_path_cycles"]
        .as_u64()
        .unwrap();
    // 8 independent heads on 24 cores and 6 AICPUs run side by side: close to the longest
    // chain (one head's), not a multiple of it.
    assert!(
        default * 10 < critical * 15,
        "default {default} vs critical path {critical}"
    );
    // Stealing pays for its steals, and runs what each AICPU made ready on that AICPU.
    assert!(
        steal * 100 <= rr * 105,
        "work steal {steal} vs round robin {rr}"
    );
}

/// A target description with every per-task overhead zero: dispatch, pickup, completion and
/// stealing.
fn no_overheads(dir: &Path) -> PathBuf {
    let path = dir.join("no-overheads.toml");
    std::fs::write(
        &path,
        "dispatch_latency = 0\nbatch_issue = 0\ncore_pickup = 0\ncompletion_latency = 0\nsteal_latency = 0\n",
    )
    .unwrap();
    path
}

/// `total_cycles` of `text` with `schedule` put before its compile call.
fn cycles_under(dir: &Path, name: &str, text: &str, schedule: &str, args: &[&str]) -> u64 {
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(
        &file,
        text.replace(".compile(", &format!("{schedule}.compile(")),
    )
    .unwrap();
    stats(&file, dir, args)["total_cycles"].as_u64().unwrap()
}

const ROUND_ROBIN: &str = ".dispatch(DispatchPolicy.round_robin(6))";
const WORK_STEAL: &str = ".dispatch(DispatchPolicy.work_steal())";

/// Independent heads of decode attention (`examples/ported/chunked_decode_attention.wsp`, a
/// task per head) at 8 and 48 heads, with the target's overheads and with none: work
/// stealing, whose tasks all start on AICPU 0's queue, is within 5% of round robin, since an
/// AICPU with an idle core takes what AICPU 0's busy cores cannot start.
#[test]
fn work_steal_keeps_pace_with_round_robin_on_independent_heads() {
    let dir = scratch("steal-independent");
    let zero = no_overheads(&dir);
    let example =
        std::fs::read_to_string(root().join("examples/ported/chunked_decode_attention.wsp"))
            .unwrap();
    for heads in [8, 48] {
        let text = example.replace("HEADS = 8\n", &format!("HEADS = {heads}\n"));
        for (overheads, args) in [
            ("target", vec![]),
            ("none", vec!["--target-desc", zero.to_str().unwrap()]),
        ] {
            let rr = cycles_under(&dir, "rr", &text, ROUND_ROBIN, &args);
            let steal = cycles_under(&dir, "steal", &text, WORK_STEAL, &args);
            assert!(
                steal * 100 <= rr * 105,
                "{heads} heads, overheads {overheads}: work steal {steal} vs round robin {rr}"
            );
        }
    }
}

/// Skewed work (`cli/tests/data/skewed_heads.wsp`: one head of 16 chunk tasks among 23 of
/// one): placing by head leaves one AICPU's four clusters with 16 tasks, and stealing spreads
/// them, as fast as round robin.
#[test]
fn work_steal_spreads_skewed_heads() {
    let dir = scratch("steal-skewed");
    let zero = no_overheads(&dir);
    let text = std::fs::read_to_string(root().join("cli/tests/data/skewed_heads.wsp")).unwrap();
    for (overheads, args) in [
        ("target", vec![]),
        ("none", vec!["--target-desc", zero.to_str().unwrap()]),
    ] {
        let by_head = cycles_under(
            &dir,
            "affinity",
            &text,
            ".dispatch(DispatchPolicy.affinity(lambda t: t.h))",
            &args,
        );
        let rr = cycles_under(&dir, "rr", &text, ROUND_ROBIN, &args);
        let steal = cycles_under(&dir, "steal", &text, WORK_STEAL, &args);
        assert!(
            steal * 10 < by_head * 8,
            "overheads {overheads}: work steal {steal} vs affinity by head {by_head}"
        );
        assert!(
            steal * 100 <= rr * 105,
            "overheads {overheads}: work steal {steal} vs round robin {rr}"
        );
    }
}

/// The trace: a category on every slice, and a flow arrow per dependency between tasks that
/// ran on cores: decode attention's 8 heads of 4 chained chunks and a final task have 32.
#[test]
fn the_trace_draws_dependencies_as_flows() {
    let dir = scratch("trace-flows");
    decode_heads(&dir, "heads", "");
    let trace = dir.join("trace.json");
    stats(
        &dir.join("heads.wsp"),
        &dir,
        &["--trace", trace.to_str().unwrap()],
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!slices.is_empty());
    for e in &slices {
        let cat = e["cat"].as_str().unwrap_or("");
        assert!(["dispatch", "kernel", "collective"].contains(&cat), "{e}");
    }
    let ids = |ph: &str| {
        let mut v: Vec<u64> = events
            .iter()
            .filter(|e| e["ph"] == ph && e["cat"] == "dependency")
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        v.sort();
        v
    };
    let (starts, ends) = (ids("s"), ids("f"));
    assert_eq!(starts.len(), 32);
    assert_eq!(starts, ends, "every flow starts and ends once");
    // A flow never ends before it starts.
    for id in starts {
        let at = |ph: &str| {
            events
                .iter()
                .find(|e| e["ph"] == ph && e["id"] == id)
                .and_then(|e| e["ts"].as_f64())
                .unwrap()
        };
        assert!(at("s") <= at("f"), "flow {id}");
    }
}

/// A channel's edges are flows of their own category: megakernel_pipeline's 16 tiles send
/// each loaded tile to compute and each computed one to store. Every task of a consumer's body
/// waits for the item it took, and only for it (the store waits for its compute, not for the
/// load compute took): 2 deliveries per tile. With depth 2 the third item on a channel waits
/// for the consumer of the first (14 per channel).
#[test]
fn the_trace_draws_channel_edges_apart() {
    let dir = scratch("trace-channels");
    let trace = dir.join("trace.json");
    stats(
        &root().join("examples/megakernel_pipeline.wsp"),
        &dir,
        &["--trace", trace.to_str().unwrap()],
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let flows = |cat: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "s" && e["cat"] == cat)
            .count()
    };
    assert_eq!(flows("channel"), 16 * 2 + 2 * 14);
    // The loader's `P.seq` orders its iterations: those edges stay dependencies.
    assert!(flows("dependency") > 0);
}

/// 16,384 small dependent tasks, a host read of a value they wrote, then more tasks picked by
/// it: with several workers and task by task (each chain would otherwise be one sequential
/// launch) a helper runs the first batches while enumeration goes on
/// (runtime/src/pipeline.rs), and the read waits for every task before it (8 chains of 1,024
/// increments make 1,025; the predicate holds, so 1,024 more make 2,049).
const OVERLAP: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((8, 16, 64), F32, init=ones())


@kernel
def inc(x: InOut[Tile[16, 64, F32]], by: Scalar[F32]):
    pto.store(x, pto.add(pto.load(x), by))


@workload
def w():
    for c in P(Dense[8]):
        for s in P.seq(Dense[1024]):
            inc[c, s](x=X[c], by=1.0)
    slot_load_u64(0, X[7], row=15, col=63)
    with P.when(slot_u64(0) == 1025):
        for c in P(Dense[8]):
            for s in P.seq(Dense[1024]):
                inc[c, s](x=X[c], by=1.0)
    with P.otherwise():
        for c in P(Dense[8]):
            inc[c](x=X[c], by=-1000.0)


program = w().compile(target="cpu_sim")
program.execute()
"#;

#[test]
fn execution_overlapping_enumeration_gives_the_same_numbers() {
    let check = r#"
import sys, numpy as np
X = np.load(f"{sys.argv[1]}/X.npy")
assert (X == 2049).all(), np.unique(X)
"#;
    for workers in ["1", "2", "3"] {
        for (mode, launches) in [("tasks", &["--no-index-launches"][..]), ("launches", &[])] {
            let mut args = vec!["--workers", workers];
            args.extend_from_slice(launches);
            let name = format!("overlap-{workers}-{mode}");
            common::run_and_check("run", &name, OVERLAP, &args, check);
        }
    }
}

/// A fault in a task the helper runs (the eighth of 65,544, while the rest are enumerated;
/// task by task, since each loop would otherwise be one sequential launch) names the task as
/// any other: integer division by tile 0 of `arange()`.
#[test]
fn a_crash_in_a_task_run_during_enumeration_names_the_task() {
    let dir = scratch("overlap-crash");
    let file = dir.join("crash.wsp");
    let text = r#"from pto_wsp import *

F32 = DType.F32
I32 = DType.I32
A = Tensor((8, 4, 8), I32, init=ones())
D = Tensor((8, 4, 8), I32, init=arange())
Q = Tensor((8, 4, 8), I32)
X = Tensor((64, 16, 64), F32, init=ones())


@kernel
def quot(a: In[Tile[4, 8, I32]], d: In[Tile[4, 8, I32]], q: Out[Tile[4, 8, I32]]):
    pto.store(q, pto.div(a, d))


@kernel
def inc(x: InOut[Tile[16, 64, F32]]):
    pto.store(x, pto.add(pto.load(x), 1.0))


@workload
def w():
    for c in P.seq(Dense[8]):
        quot[7 - c](a=A[7 - c], d=D[7 - c], q=Q[7 - c])
    for c in P(Dense[64]):
        for s in P.seq(Dense[1024]):
            inc[c, s](x=X[c])


program = w().compile(target="cpu_sim")
program.execute()
"#;
    std::fs::write(&file, text).unwrap();
    let err = exit_1(&wsp_run(&file, &["--workers", "2", "--no-index-launches"]));
    assert!(
        err.contains("error[WSP602]: arithmetic exception in task quot[0]"),
        "stderr: {err}"
    );
}

/// A two-stage pipeline whose producer is a `P.seq` loop, over 8 tiles, its channel `depth`
/// deep; or (`depth` 0) the same tasks as one sequential workload, each tile's load then its
/// square.
fn two_stages(depth: u32) -> String {
    let body = if depth == 0 {
        "    for i in P.seq(tiles):\n        load[i](src=X[i], dst=T[i])\n        square[i](inp=T[i], out=Y[i])\n".to_string()
    } else {
        "    with P.pipe():\n        for i in P.seq(tiles):\n            send(ch, load[i](src=X[i], dst=T[i]))\n        with consume(ch) as t:\n            square[t](inp=T[t], out=Y[t])\n".to_string()
    };
    format!(
        r#"from pto_wsp import *

F32 = DType.F32
tiles = Dense[8]
ch = Channel("l2c", depth={depth})
X = Tensor((8, 32, 64), F32, init=randn(seed=1))
T = Tensor((8, 32, 64), F32)
Y = Tensor((8, 32, 64), F32)


@kernel
def load(src: In[Tile[32, 64, F32]], dst: Out[Tile[32, 64, F32]]):
    pto.store(dst, src)


@kernel
def square(inp: In[Tile[32, 64, F32]], out: Out[Tile[32, 64, F32]]):
    pto.store(out, pto.mul(inp, inp))


@workload
def w(tiles):
{body}

program = w(tiles).dispatch(DispatchPolicy.round_robin(2)).compile(target="cpu_sim")
program.execute()
"#,
        depth = depth.max(1)
    )
}

/// What each task of a `--dump-tasks` file waits for, by `name[index]`.
fn waits(dump: &str) -> Vec<(String, Vec<String>)> {
    let name_of: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with("task="))
        .map(|l| {
            let f = |k: &str| {
                l.split(' ')
                    .find_map(|w| w.strip_prefix(k))
                    .unwrap_or_default()
                    .to_string()
            };
            format!("{}[{}]", f("name="), f("index="))
        })
        .collect();
    dump.lines()
        .filter(|l| l.starts_with("task="))
        .enumerate()
        .map(|(n, l)| {
            let after = l.split(' ').find_map(|w| w.strip_prefix("after=")).unwrap();
            let mut preds: Vec<String> = after
                .split(',')
                .filter(|p| *p != "-")
                .map(|p| name_of[p.parse::<usize>().unwrap()].clone())
                .collect();
            preds.sort();
            (name_of[n].clone(), preds)
        })
        .collect()
}

/// A `P.seq` producer orders its own iterations, not the stages it feeds: each load waits for
/// the load before it and, once the channel is full, for the square of the tile `depth`
/// places back (back-pressure), and each square for its tile's load alone. So the stages
/// overlap, and the pipeline is never slower in the clock than the same tasks as one
/// sequential workload (the original's tests/test_codegen_cspt_pipeline.py; its `P(tiles)`
/// there runs one task at a time, where here a parallel loop's tiles run on every core at once).
#[test]
fn a_pipeline_leads_by_its_channel_depth_and_overlaps_its_stages() {
    let seq_dir = scratch("pipe-seq");
    let seq_file = seq_dir.join("seq.wsp");
    std::fs::write(&seq_file, two_stages(0)).unwrap();
    let sequential = stats(&seq_file, &seq_dir, &[])["total_cycles"]
        .as_u64()
        .unwrap();
    let mut totals = Vec::new();
    for depth in [1u32, 2, 4] {
        let dir = scratch(&format!("pipe-depth-{depth}"));
        let file = dir.join("pipe.wsp");
        std::fs::write(&file, two_stages(depth)).unwrap();
        let tasks = dir.join("tasks.txt");
        let s = stats(&file, &dir, &["--dump-tasks", tasks.to_str().unwrap()]);
        for (task, preds) in waits(&std::fs::read_to_string(&tasks).unwrap()) {
            let i: i64 = task[task.find('[').unwrap() + 1..task.len() - 1]
                .parse()
                .unwrap();
            let mut want: Vec<String> = if task.starts_with("load") {
                let mut w = Vec::new();
                if i >= 1 {
                    w.push(format!("load[{}]", i - 1));
                }
                if i >= depth as i64 {
                    w.push(format!("square[{}]", i - depth as i64));
                }
                w
            } else {
                vec![format!("load[{i}]")]
            };
            want.sort();
            assert_eq!(preds, want, "depth {depth}: {task}");
        }
        let total = s["total_cycles"].as_u64().unwrap();
        assert!(
            total <= sequential,
            "depth {depth}: the pipeline takes {total} cycles, the sequential workload {sequential}"
        );
        totals.push(total);
    }
    // A deeper channel never makes the producer wait longer.
    assert!(totals.windows(2).all(|w| w[1] <= w[0]), "{totals:?}");
    // megakernel_pipeline's stages overlap: well below its 48 tasks one after another, each
    // handed out, picked up, run and seen to end.
    let dir = scratch("pipe-megakernel");
    let trace = dir.join("trace.json");
    let s = stats(
        &root().join("examples/megakernel_pipeline.wsp"),
        &dir,
        &["--trace", trace.to_str().unwrap()],
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let kernels: Vec<f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "kernel")
        .map(|e| e["dur"].as_f64().unwrap())
        .collect();
    let t = wsp_runtime::target::TargetDesc::default();
    let per_task =
        (t.dispatch_latency + t.core_pickup + t.completion_latency) as f64 / (t.clock_ghz * 1e3);
    let busy = kernels.iter().sum::<f64>() + per_task * kernels.len() as f64;
    let total_us = s["simulated_time_us"].as_f64().unwrap();
    assert!(total_us < 0.6 * busy, "{total_us} µs of {busy} µs of tasks");
}

/// The original's `__pto_wsp_channel_latency_cycles` delays each channel delivery in the
/// clock, set by the program (`set_symbol_u64`, as the original's test does) or `--bind`,
/// without a rebuild: every square starts at least that long after its load ends, and the
/// run takes longer (tests/test_codegen_cspt_pipeline.py asserts the same with 50).
#[test]
fn a_channel_latency_delays_each_delivery_without_a_rebuild() {
    let dir = scratch("pipe-latency");
    let file = dir.join("pipe.wsp");
    let text = two_stages(1).replace(
        "program.execute()",
        "program.set_symbol_u64(\"__pto_wsp_channel_latency_cycles\", 0)\nprogram.execute()",
    );
    std::fs::write(&file, text).unwrap();
    let mut totals = Vec::new();
    for latency in [0u64, 50, 400] {
        let trace = dir.join(format!("trace-{latency}.json"));
        let bind = format!("__pto_wsp_channel_latency_cycles={latency}");
        let mut args = vec!["--trace", trace.to_str().unwrap()];
        if latency > 0 {
            args.extend(["--bind", bind.as_str()]);
        }
        let s = stats(&file, &dir, &args);
        if latency > 0 {
            assert_eq!(s["cache_hit"], true, "no rebuild for a latency");
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        let kernels: Vec<&Value> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == "kernel")
            .collect();
        let cycles = |name: &str, k: &str| {
            kernels
                .iter()
                .find(|e| e["name"] == name)
                .and_then(|e| e["args"][k].as_u64())
                .unwrap()
        };
        for i in 0..8 {
            let (ready, start) = (
                cycles(&format!("load[{i}]"), "end_cycle"),
                cycles(&format!("square[{i}]"), "start_cycle"),
            );
            assert!(
                start >= ready + latency,
                "latency {latency}: square[{i}] starts at {start}, its load ended at {ready}"
            );
        }
        totals.push(s["total_cycles"].as_u64().unwrap());
    }
    assert!(totals[0] < totals[1] && totals[1] < totals[2], "{totals:?}");
}

/// Two programs, three executions: `wsp run` prints on standard error a labelled line per
/// execution the program did not print itself (`pb`'s is printed by the program, once, on
/// standard output), then the whole run's with `cache_hit`; `--stats-json` has each execution
/// beside the totals.
#[test]
fn stats_are_printed_once_per_program_and_execution() {
    let dir = scratch("stats-executions");
    let file = dir.join("two.wsp");
    std::fs::write(
        &file,
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)

@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))

@workload
def a():
    for i in P(Dense[4]):
        copy[i](x=X[i], y=Y[i])

@workload
def b():
    for i in P(Dense[2]):
        copy[i](x=X[i], y=Y[i])

pa = a().compile(target="cpu_sim")
pb = b().compile(target="cpu_sim")
pa.execute()
pb.execute()
pa.execute()
print(pb.stats)
"#,
    )
    .unwrap();
    let json = dir.join("stats.json");
    let out = wsp_run(&file, &["--stats-json", json.to_str().unwrap()]);
    ok(&out);
    // The program's print on standard output; `wsp run`'s own lines on standard error.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("{'task_count': 2"), "{stdout}");
    let labels: Vec<&str> = stderr
        .lines()
        .map(|l| l.split_once(": {").map_or(l, |(l, _)| l))
        .collect();
    assert_eq!(
        labels,
        ["pa, execute #1", "pa, execute #2", "whole run"],
        "{stderr}"
    );
    assert!(stderr.lines().last().unwrap().contains("'task_count': 10"));
    assert!(stderr.lines().last().unwrap().contains("'cache_hit'"));
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(s["task_count"], 10);
    let each: Vec<(String, u64, u64)> = s["executions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["program"].as_str().unwrap().to_string(),
                e["execute"].as_u64().unwrap(),
                e["task_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        each,
        [
            ("pa".to_string(), 1, 4),
            ("pb".to_string(), 1, 2),
            ("pa".to_string(), 2, 4)
        ]
    );
}

/// WSP602 says what happened and points at it: a view past its tensor at the task call (no
/// kernel ran), a predicate's read past its tensor at the `P.when(...)`.
#[test]
fn run_time_faults_point_at_their_source() {
    let dir = scratch("faults-located");
    let header = r#"from pto_wsp import *

F32 = DType.F32
n = DenseDyn(4)
Flags = Tensor((4,), DType.I32, init=ones())
Lens = Tensor((4,), DType.I32, init=full(6))
rows = Ragged(4, lengths=Lens)
X = Tensor((8, 16, 16), F32, init=ones())
Y = Tensor((8, 16, 16), F32)

@kernel
def twice(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.mul(pto.load(x), 2.0))

@workload
def w(n):
    for i in P(n):
"#;
    let cases = [
        (
            // Ragged lengths read at run time take `X[i + t]` past `X` (a bound known
            // before the run is WSP208 instead).
            "view",
            "        for t in P.seq(rows[i]):\n            twice[i, t](x=X[i + t], y=Y[i])\n",
            "4",
            expect_test::expect![[r#"
                error[WSP602]: task twice[3, 5]: view `X[i + t]` is out of bounds: dimension 0 of `X` has 8 entries, the view takes 8..9; the run was stopped
                   ┌─ view.wsp:19:13
                   │
                19 │             twice[i, t](x=X[i + t], y=Y[i])
                   │             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ the task was made by this call
                   │
                   = the task's kernel did not run: its view lies outside its tensor, found as the task was made; see docs/diagnostics/WSP602.md

            "#]],
        ),
        (
            // Ragged lengths read at run time take the read past `Flags`.
            "predicate",
            "        for t in P.seq(rows[i]):\n            with P.when(Flags[t] == 1):\n                twice[i, t](x=X[i], y=Y[i])\n",
            "4",
            expect_test::expect![[r#"
                error[WSP602]: `Flags[t]` (at t=4) reads `Flags` out of bounds: index 4 of dimension 0, which has 4 entries; the run was stopped
                   ┌─ predicate.wsp:19:18
                   │
                19 │             with P.when(Flags[t] == 1):
                   │                  ^^^^^^^^^^^^^^^^^^^^^ read here
                   │
                   = the expression was not evaluated: the element it reads lies outside its tensor; see docs/diagnostics/WSP602.md

            "#]],
        ),
    ];
    for (name, body, n, want) in cases {
        let file = dir.join(format!("{name}.wsp"));
        let text = format!(
            "{header}{body}\nprogram = w(n).compile(target=\"cpu_sim\")\nprogram.execute()\n"
        );
        std::fs::write(&file, text).unwrap();
        let out = common::wsp()
            .current_dir(&dir)
            .args(["run", &format!("{name}.wsp"), "--bind", &format!("n={n}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        want.assert_eq(&String::from_utf8_lossy(&out.stderr));
    }
    // `--format json`: one array on standard error, as `wsp check --format json` writes, the
    // analyzer's warnings and the run's fault together.
    let file = dir.join("json.wsp");
    let body = "        for t in P.seq(rows[i]):\n            twice[i, t](x=X[i + t], y=Y[i])\n";
    let text =
        format!("{header}{body}\nprogram = w(n).compile(target=\"cpu_sim\")\nprint(\"before\", Flags)\nprogram.execute()\n")
            .replace(
                "    pto.store(y,",
                "    spare = pto.exp(x)\n    pto.store(y,",
            );
    std::fs::write(&file, text).unwrap();
    let out = common::wsp()
        .current_dir(&dir)
        .args(["run", "json.wsp", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // What the program printed before the fault is not lost.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "before [1 1 1 1]\n");
    let json: serde_json::Value = serde_json::from_slice(&out.stderr).expect("one JSON document");
    let shown: Vec<String> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}:{}-{}:{} {}",
                d["code"].as_str().unwrap(),
                d["severity"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["end_line"],
                d["end_column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    expect_test::expect![[r#"
        WSP207 warning 13:13-13:23 the value of `pto.exp` is never used: store it (`pto.store(out, ...)`), use it in another op, or remove it
        WSP602 error 20:13-20:44 task twice[3, 5]: view `X[i + t]` is out of bounds: dimension 0 of `X` has 8 entries, the view takes 8..9; the run was stopped"#]].assert_eq(&shown.join("\n"));
}

/// `--kernel-cycles`: the measured cycles replace the model's, for a kernel or for each part
/// of a split one, and the stats say which; a name the file has that no kernel has is refused
/// before anything is built.
#[test]
fn measured_kernel_cycles_replace_the_models() {
    let dir = scratch("kernel-cycles");
    let hello = root().join("examples/hello_add.wsp");
    let modelled = stats(&hello, &dir, &[]);
    assert_eq!(modelled["kernels"][0]["source"], "modelled");
    let k = modelled["kernels"][0]["cycles"].as_u64().unwrap();
    let file = dir.join("kernel_cycles.json");
    let doubled = format!(
        r#"{{"npu_arch": 2201, "kernels": {{"add_kernel": {{"core": "AIV", "total_cycles": {}}}}}}}"#,
        2 * k
    );
    std::fs::write(&file, doubled).unwrap();
    let measured = stats(&hello, &dir, &["--kernel-cycles", file.to_str().unwrap()]);
    assert_eq!(measured["kernels"][0]["source"], "measured");
    assert_eq!(measured["kernels"][0]["cycles"].as_u64(), Some(2 * k));
    // Four independent tasks on four clusters: each ends `k` cycles later, and so does the run.
    assert_eq!(
        measured["total_cycles"].as_u64().unwrap(),
        modelled["total_cycles"].as_u64().unwrap() + k
    );

    // A split kernel is measured when each of its parts is.
    let attention = root().join("examples/ported/attention.wsp");
    std::fs::write(
        &file,
        r#"{"kernels": {"attention_tile_aic0": {"core": "AIC", "total_cycles": 100},
            "attention_tile_aiv1": {"core": "AIV", "total_cycles": 400},
            "attention_tile_aic2": {"core": "AIC", "total_cycles": 90}}}"#,
    )
    .unwrap();
    let s = stats(
        &attention,
        &dir,
        &["--kernel-cycles", file.to_str().unwrap()],
    );
    assert_eq!(
        s["kernels"][0]["cycles"].as_u64(),
        Some(590),
        "{}",
        s["kernels"]
    );
    assert_eq!(s["kernels"][0]["source"], "measured");

    std::fs::write(
        &file,
        r#"{"kernels": {"add_kernal": {"core": "AIV", "total_cycles": 5}}}"#,
    )
    .unwrap();
    let out = wsp_run(&hello, &["--kernel-cycles", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gives cycles for add_kernal") && err.contains("its kernels: add_kernel"),
        "{err}"
    );
}

/// `--swimlane`: the two files hold what simpler's documented field lists say they hold
/// (schemas written from `docs/dfx/chip-swimlane-profiling.md` and `docs/dfx/dep-gen.md`),
/// every AICPU record joins its AICore record, every stamp is set, and the stats carry the
/// overhead shares of simpler's model.
#[test]
fn a_swimlane_is_written_in_simplers_formats() {
    let dir = scratch("swimlane");
    let lanes = dir.join("lanes");
    let s = stats(
        &root().join("examples/transformer_layer.wsp"),
        &dir,
        &["--swimlane", lanes.to_str().unwrap()],
    );
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(lanes.join(name)).unwrap()).unwrap()
    };
    for (file, schema) in [
        (
            "chip_swimlane_records.json",
            include_str!("data/simpler/chip_swimlane_records.schema.json"),
        ),
        ("deps.json", include_str!("data/simpler/deps.schema.json")),
    ] {
        let schema: Value = serde_json::from_str(schema).unwrap();
        let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
        let doc = read(file);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{file}: {errors:#?}");
    }
    let records = read("chip_swimlane_records.json");
    let cores = records["metadata"]["num_cores"].as_u64().unwrap() as usize;
    assert_eq!(
        records["metadata"]["core_types"].as_array().unwrap().len(),
        cores
    );
    let aicore = records["aicore_tasks"].as_array().unwrap();
    let aicpu = records["aicpu_tasks"].as_array().unwrap();
    assert_eq!(aicore.len(), s["task_count"].as_u64().unwrap() as usize);
    let key = |r: &Value, a: usize, b: usize| (r[a].as_u64().unwrap(), r[b].as_u64().unwrap());
    let joined: std::collections::HashSet<(u64, u64)> =
        aicore.iter().map(|r| key(r, 0, 2)).collect();
    for r in aicpu {
        assert!(joined.contains(&key(r, 0, 1)), "{r} joins no AICore record");
        // Dispatched before it started, finished after it ended; no stamp is zero.
        let core = aicore
            .iter()
            .find(|c| key(c, 0, 2) == key(r, 0, 1))
            .unwrap();
        let (dispatch, finish) = key(r, 2, 3);
        let (start, end) = key(core, 3, 4);
        assert!(
            0 < dispatch && dispatch < start && start < end && end < finish,
            "{r} {core}"
        );
    }
    let deps = read("deps.json");
    assert!(!deps["edges"].as_array().unwrap().is_empty());
    let o = &s["scheduler_overhead"];
    let share = |k: &str| o[k].as_f64().unwrap();
    for k in ["aic", "aiv", "all", "has"] {
        assert!((0.0..=1.0).contains(&share(k)), "{o}");
    }
    assert!(share("all") <= share("aic").min(share("aiv")), "{o}");
    // Without a trace or a swimlane the timeline is not kept, and no shares are given.
    let plain = stats(&root().join("examples/transformer_layer.wsp"), &dir, &[]);
    assert!(plain.get("scheduler_overhead").is_none());
}

/// Standard output is the program's alone: a file with a check error prints nothing there,
/// and its diagnostic on standard error; a file that runs prints its `print`s there and
/// `wsp run`'s own summary on standard error.
#[test]
fn standard_output_holds_only_what_the_program_prints() {
    let dir = scratch("stdout-only");
    let file = dir.join("bad.wsp");
    std::fs::write(
        &file,
        "from pto_wsp import *\nprint(\"hello\")\nx = undefined_name\n",
    )
    .unwrap();
    let out = wsp_run(&file, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[WSP101]") && stderr.contains("undefined_name"),
        "{stderr}"
    );

    let good = dir.join("good.wsp");
    std::fs::write(
        &good,
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((2, 16, 16), F32, init=ones())
Y = Tensor((2, 16, 16), F32)

@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))

@workload
def w():
    for i in P(Dense[2]):
        copy[i](x=X[i], y=Y[i])

program = w().compile(target="cpu_sim")
program.execute()
print("done", program.stats.task_count)
"#,
    )
    .unwrap();
    let out = wsp_run(&good, &[]);
    ok(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done 2\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("program, execute #1: {'task_count': 2"),
        "{stderr}"
    );
}

/// A `# noqa` comment hides an error from `wsp check`, not from the build: `wsp run` shows the
/// error, says why, and runs nothing.
#[test]
fn a_suppressed_error_still_stops_the_run_and_says_so() {
    let dir = scratch("suppressed-error");
    let file = dir.join("noqa.wsp");
    let text = "from pto_wsp import *\nprint(\"hi\")\nx = undefined_q  # noqa: WSP101\n";
    std::fs::write(&file, text).unwrap();
    let check = common::wsp().arg("check").arg(&file).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let out = wsp_run(&file, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[WSP101]")
            && stderr.contains(
                "suppressed in reports, by a `# noqa` comment or `wsp.toml`, but a file with errors does not run"
            ),
        "{stderr}"
    );
}

/// A GEMM over M = 500 rows in 128-row tiles: the last tile of A is loaded partially (its 116
/// rows, the rest the `pad=` value) and the last tile of C stored partially; the numbers are
/// NumPy's, and C's rows are all written, none past its end.
#[test]
fn partial_tiles_load_and_store_only_their_valid_rows() {
    let program = r#"from pto_wsp import *

F16 = DType.F16
F32 = DType.F32
A = Tensor((500, 64), F16, init=randn(seed=5))
B = Tensor((64, 96), F16, init=randn(seed=6))
C = Tensor((500, 96), F32, init=full(7.0))
D = Tensor((500, 96), F32, init=full(7.0))

@kernel
def gemm(a: In[Tensor[F16]], b: In[Tensor[F16]], c: Out[Tensor[F32]], d: Out[Tensor[F32]]):
    for m in range(4):
        t = pto.load(a[m * 128:(m + 1) * 128, :], pad=0.0)
        pto.store(c[m * 128:(m + 1) * 128, :], pto.matmul(t, b))
        u = pto.load(a[m * 128:(m + 1) * 128, 0:32], pad=2.0)
        pto.store(d[m * 128:(m + 1) * 128, 0:32], pto.cast(u, F32))

one = Dense[1]

@workload
def w(one):
    for i in P(one):
        gemm[i](a=A, b=B, c=C, d=D)

program = w(one).compile(target="cpu_sim")
program.execute()
"#;
    let check = r#"
import sys
import numpy as np
d = sys.argv[1]
A, B, C, D = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "ABCD")
ref = A @ B
err = np.max(np.abs(C - ref)) / np.max(np.abs(ref))
assert err < 1e-5, err
assert np.array_equal(D[:, :32], A[:, :32]), "the valid columns are A's"
assert np.all(D[:, 32:] == 7.0), "columns the slice does not cover keep their value"
print("ok", err)
"#;
    common::run_and_check("run", "partial-tiles", program, &[], check);
}

/// A carried value read after its loop is its last iteration's, as in Python: `prev` holds
/// `acc` before the last addition, and three swaps leave `x` and `y` swapped once.
#[test]
fn a_carried_value_read_after_its_loop_is_its_last_iterations() {
    let program = r#"from pto_wsp import *

F32 = DType.F32
A = Tensor((16, 16), F32, init=full(3.0))
X = Tensor((16, 16), F32)
Y = Tensor((16, 16), F32)
P_ = Tensor((16, 16), F32)
S = Tensor((16, 16), F32)
one = Dense[1]

@kernel
def k(a: In[Tile[16, 16, F32]], x_out: Out[Tile[16, 16, F32]], y_out: Out[Tile[16, 16, F32]],
      prev_out: Out[Tile[16, 16, F32]], sum_out: Out[Tile[16, 16, F32]]):
    x = pto.load(a)
    y = pto.alloc((16, 16), F32)
    acc = pto.alloc((16, 16), F32)
    prev = acc
    for i in range(3):
        t = x
        x = y
        y = t
        prev = acc
        acc = pto.add(acc, pto.load(a))
    pto.store(x_out, x)
    pto.store(y_out, y)
    pto.store(prev_out, prev)
    pto.store(sum_out, acc)

@workload
def w(one):
    for i in P(one):
        k[i](a=A, x_out=X, y_out=Y, prev_out=P_, sum_out=S)

program = w(one).compile(target="cpu_sim")
program.execute()
"#;
    let check = r#"
import sys
import numpy as np
d = sys.argv[1]
x, y, prev, s = (np.load(f"{d}/{n}.npy") for n in ("X", "Y", "P_", "S"))
assert np.all(x == 0.0), x[0, :3]
assert np.all(y == 3.0), y[0, :3]
assert np.all(prev == 6.0), prev[0, :3]
assert np.all(s == 9.0), s[0, :3]
"#;
    common::run_and_check("run", "carried-after-loop", program, &[], check);
}

/// What a cold compile and a warm start need besides the kernels is kept in the kernel cache:
/// the compiler's command, the prelude with the standard headers precompiled for programs with
/// `cpp_src` bodies (built in the background after the first such compile; other programs
/// include no standard header and have none), and each kernel's model beside its library.
/// None changes a number: a kernel compiled with the precompiled prelude computes what one
/// compiled without it does, and a damaged model file is modelled again.
#[test]
fn the_toolchain_and_kernel_models_are_kept_in_the_cache_and_change_nothing() {
    let dir = scratch("toolchain-cache");
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let text = std::fs::read_to_string(root().join("examples/rmsnorm.wsp")).unwrap();
    let run = |name: &str, text: &str| -> (Value, Dump) {
        let file = dir.join(format!("{name}.wsp"));
        std::fs::write(&file, text).unwrap();
        let out_dir = dir.join(format!("{name}-tensors"));
        let _ = std::fs::remove_dir_all(&out_dir);
        let json = dir.join(format!("{name}.json"));
        let out = common::wsp()
            .env("WSP_CACHE_DIR", &cache)
            .args(["run", "--stats-json", json.to_str().unwrap()])
            .args(["--dump-tensors", out_dir.to_str().unwrap()])
            .arg(&file)
            .output()
            .unwrap();
        ok(&out);
        let stats = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (stats, dumped(&out_dir))
    };
    let entries = |prefix: &str| -> Vec<PathBuf> {
        std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .collect()
    };
    let (first, _) = run("first", &text);
    assert_eq!(first["cache_hit"], false);
    assert_eq!(
        entries("compiler-").len(),
        1,
        "the compiler's command is kept"
    );
    assert_eq!(
        entries("prelude-"),
        Vec::<PathBuf>::new(),
        "rmsnorm has no cpp_src"
    );
    // A body using the standard library without including it; the prelude with the standard
    // headers is precompiled in the background: wait for it.
    let body = "    for (int i = 0; i < 64; ++i) y[i] = std::max(std::exp(x[i] - 1.0f), 0.5f) + (float)std::numeric_limits<int8_t>::max();\n";
    let std_text = cpp_src_text("std_lib", body);
    let (_, tensors) = run("std_lib", &std_text);
    let (_, y) = tensors
        .iter()
        .find(|(name, _)| name.starts_with('Y'))
        .unwrap();
    // Y's 256 floats end the file: e^0 + 127 each.
    assert!(
        y[y.len() - 1024..]
            .chunks(4)
            .all(|b| f32::from_le_bytes(b.try_into().unwrap()) == 128.0),
        "the body's values"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while entries("prelude-")
        .iter()
        .all(|p| p.to_string_lossy().contains(".tmp-") || !p.is_dir())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no precompiled prelude in {}",
            cache.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Another kernel (times 1.0 changes no value), compiled with the precompiled prelude.
    let changed = std_text.replace("y[i] = ", "y[i] = 1.0f * ");
    assert_ne!(changed, std_text);
    let (second, again) = run("std_lib", &changed);
    assert_eq!(second["cache_hit"], false);
    assert_eq!(tensors, again);
    // Each kernel's model beside its library: a damaged one is modelled again.
    let models: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("model-")
        })
        .collect();
    assert_eq!(models.len(), 3, "{models:?}");
    for m in &models {
        std::fs::write(m, "{ not json").unwrap();
    }
    let (third, _) = run("first", &text);
    assert_eq!(third["cache_hit"], true);
    assert_eq!(third["total_cycles"], first["total_cycles"]);
    assert_eq!(third["kernels"], first["kernels"]);
}
