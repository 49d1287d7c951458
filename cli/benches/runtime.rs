//! `cargo xtask bench runtime`: the CPU-sim path measured side by side in one run, written to
//! target/bench/runtime.json:
//!
//! - cold compile of examples/rmsnorm.wsp (`wsp run` with an empty kernel cache);
//! - warm start-up: from the start of `wsp run` until the first task, with the cache warm;
//! - tasks/s for 1,000,000 independent tasks of a trivial kernel at 1 and 2 workers, in fresh
//!   `wsp run` processes, beside a Rayon `par_iter` calling the same kernel through the same
//!   function pointer;
//! - GFLOP/s of the generated f32 128×128×128 matmul tile beside NumPy (OpenBLAS, one thread);
//! - GB/s of generated elementwise, transcendental, conversion and row-reduction kernels beside
//!   memcpy, and each transcendental's time over `neg`'s;
//! - dependent tasks: 256 `P.seq` chains of 1,024 small `InOut` updates at 1 and 2 workers
//!   (parallel efficiency, tasks/s);
//! - tensor initialisation (`randn`, `ones`, `zeros`) beside NumPy's, same sizes;
//! - decode attention's schedules on the simulated clock: makespan over the critical path.
//!
//! The original framework's figures are constants from its documentation, for the goals.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{Value, json};
use wsp_analysis::{Database, File, Workspace};
use wsp_runtime::exec::KernelFn;

const TASKS: usize = 1_000_000;

/// The trivial kernel: one [1, 8] f32 tile in, its double out.
const MANY: &str = r#"from pto_wsp import *

F32 = DType.F32
items = Dense[1000000]
X = Tensor((1000000, 1, 8), F32, init=ones())
Y = Tensor((1000000, 1, 8), F32)


@kernel
def tiny(x: In[Tile[1, 8, F32]], y: Out[Tile[1, 8, F32]]):
    pto.store(y, pto.add(x, x))


@workload
def many(items):
    for i in P(items):
        tiny[i](x=X[i], y=Y[i])


program = many(items).compile(target="cpu_sim")
program.execute()
"#;

/// Kernels whose speed is measured alone, called directly on buffers.
const KERNELS: &str = r#"from pto_wsp import *

F32 = DType.F32
F16 = DType.F16
one = Dense[1]
A = Tensor((1, 128, 128), F32, init=randn(seed=1))
B = Tensor((1, 128, 128), F32, init=randn(seed=2))
C = Tensor((1, 128, 128), F32)
X = Tensor((1, 64, 512), F32, init=randn(seed=3))
Y = Tensor((1, 64, 512), F32, init=randn(seed=4))
Z = Tensor((1, 64, 512), F32)
H = Tensor((1, 64, 512), F16, init=randn(seed=5))
G = Tensor((1, 64, 512), F16)
R = Tensor((1, 64, 1), F32)
M = Tensor((1, 64, 1), F32)


@kernel
def mm(a: In[Tile[128, 128, F32]], b: In[Tile[128, 128, F32]], c: Out[Tile[128, 128, F32]]):
    pto.store(c, pto.matmul(a, b))


@kernel
def add(x: In[Tile[64, 512, F32]], y: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.add(x, y))


@kernel
def exp(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.exp(x))


@kernel
def add_f16(x: In[Tile[64, 512, F16]], z: Out[Tile[64, 512, F16]]):
    pto.store(z, pto.add(x, x))


@kernel
def neg(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.neg(x))


@kernel
def log(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.log(x))


@kernel
def tanh(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.tanh(x))


@kernel
def sigmoid(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.sigmoid(x))


@kernel
def gelu(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.gelu(x))


@kernel
def silu(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.silu(x))


@kernel
def rsqrt(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.rsqrt(x))


@kernel
def to_f16(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F16]]):
    pto.store(z, pto.cast(x, F16))


@kernel
def from_f16(x: In[Tile[64, 512, F16]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.cast(x, F32))


@kernel
def rowsum(x: In[Tile[64, 512, F32]], r: Out[Tile[64, 1, F32]]):
    pto.store(r, pto.rowsum(x))


@kernel
def rowmax(x: In[Tile[64, 512, F32]], r: Out[Tile[64, 1, F32]]):
    pto.store(r, pto.rowmax(x))


@kernel
def softmax(x: In[Tile[64, 512, F32]], z: Out[Tile[64, 512, F32]]):
    pto.store(z, pto.softmax(x))


@workload
def every(one):
    for i in P(one):
        mm[i](a=A[i], b=B[i], c=C[i])
        add[i](x=X[i], y=Y[i], z=Z[i])
        exp[i](x=X[i], z=Z[i])
        add_f16[i](x=H[i], z=G[i])
        neg[i](x=X[i], z=Z[i])
        log[i](x=X[i], z=Z[i])
        tanh[i](x=X[i], z=Z[i])
        sigmoid[i](x=X[i], z=Z[i])
        gelu[i](x=X[i], z=Z[i])
        silu[i](x=X[i], z=Z[i])
        rsqrt[i](x=X[i], z=Z[i])
        to_f16[i](x=X[i], z=G[i])
        from_f16[i](x=H[i], z=Z[i])
        rowsum[i](x=X[i], r=R[i])
        rowmax[i](x=X[i], r=M[i])
        softmax[i](x=X[i], z=Z[i])


program = every(one).compile(target="cpu_sim")
program.execute()
"#;

/// 256 independent `P.seq` chains of 1,024 dependent tasks, each a small `InOut` update: the
/// per-task cost of enumeration, dependency tracking and the ready path.
const CHAINS: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((256, 16, 64), F32, init=ones())


@kernel
def upd(x: InOut[Tile[16, 64, F32]]):
    pto.store(x, pto.add(pto.load(x), 1.0))


@workload
def chains():
    for c in P(Dense[256]):
        for s in P.seq(Dense[1024]):
            upd[c, s](x=X[c])


program = chains().compile(target="cpu_sim")
program.execute()
"#;
const CHAIN_TASKS: f64 = 262_144.0;

/// 500 `P.seq` steps, each a task then a host read of what it wrote (`slot_load_u64`): 500
/// flushes, each of which waits for the pool.
const FLUSHES: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((1, 16, 64), F32, init=ones())


@kernel
def inc(x: InOut[Tile[16, 64, F32]]):
    pto.store(x, pto.add(pto.load(x), 1.0))


@workload
def w():
    for s in P.seq(Dense[500]):
        inc[s](x=X[0])
        slot_load_u64(0, X[0], row=0, col=0)
        with P.when(slot_u64(0) > 1000000):
            inc[s](x=X[0])


program = w().compile(target="cpu_sim")
program.execute()
"#;

/// Decode attention: 8 independent heads, each a `P.seq` chain of 4 chunk tasks then a final
/// task, on the default 910B; each policy goes before `.compile(`.
const DECODE: &str = include_str!("../tests/data/decode_heads.wsp");

/// The original Python+C++ framework, as its documentation gives it.
const ORIGINAL_COLD_COMPILE_MS: f64 = 2200.0;
const ORIGINAL_CACHED_MS: f64 = 30.0;
const ORIGINAL_TASKS_PER_S: f64 = 6.5e6;

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    exe.ancestors()
        .nth(3)
        .expect("inside target/")
        .to_path_buf()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The kernel library of the file's one program, built into `cache`.
fn build(path: &Path, text: &str, cache: &Path) -> PathBuf {
    std::fs::write(path, text).expect("write the bench program");
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::on_disk(&db, ws, path.to_path_buf(), text.to_string());
    // Its tiles may be over a 910B's UB (WSP506, a warning in a cpu_sim program): what is timed
    // is the CPU kernel.
    let errors: Vec<_> = wsp_analysis::file_diagnostics(&db, file)
        .iter()
        .filter(|d| d.severity == wsp_analysis::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let lowered = wsp_analysis::lower_file(&db, file)
        .clone()
        .expect("the bench program lowers");
    let program = lowered.programs.first().expect("one program");
    wsp_codegen::build(
        program,
        path,
        cache,
        &std::sync::atomic::AtomicUsize::new(0),
    )
    .expect("the kernels build")
    .library
}

/// `wsp run FILE ARGS --stats-json`, with the kernel cache at `cache`: the stats and the wall
/// time.
/// A fresh `wsp run`: its stats, its wall time (ms) and its peak resident memory (MB).
#[expect(clippy::zombie_processes, reason = "wait4 reaps the child")]
fn wsp_run(
    wsp: &Path,
    file: &Path,
    cache: &Path,
    scratch: &Path,
    args: &[&str],
) -> (Value, f64, f64) {
    let stats = scratch.join("stats.json");
    let t = Instant::now();
    let mut child = Command::new(wsp)
        .arg("run")
        .arg(file)
        .args(args)
        .arg("--stats-json")
        .arg(&stats)
        .env("WSP_CACHE_DIR", cache)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wsp");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    // wait4 reports the child's own peak, which std's wait does not.
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is our child's, not yet waited.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; status and usage outlive the call.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = ms(t.elapsed());
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "wsp run failed: {stderr}"
    );
    let text = std::fs::read_to_string(&stats).expect("stats written");
    let peak_mb = usage.ru_maxrss as f64 / 1024.0;
    (
        serde_json::from_str(&text).expect("stats are JSON"),
        wall,
        peak_mb,
    )
}

fn compile_and_startup(wsp: &Path, scratch: &Path) -> Value {
    let rmsnorm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/rmsnorm.wsp");
    // The first compile on a machine (an empty cache): the compiler is probed.
    let mut first = Vec::new();
    for i in 0..3 {
        let cache = scratch.join(format!("first-cache-{i}"));
        let _ = std::fs::remove_dir_all(&cache);
        let (stats, _, _) = wsp_run(wsp, &rmsnorm, &cache, scratch, &[]);
        assert_eq!(stats["cache_hit"], false);
        first.push(stats["compile_time_ms"].as_f64().expect("compile_time_ms"));
    }
    // A kernel the cache lacks, as after an edit: each run a different kernel body (its
    // square scaled by 1, 2, ...), the compiler's command kept. (rmsnorm has no `cpp_src`
    // body, so its prelude is read as text, never precompiled.)
    let cache = scratch.join("cold-cache-0");
    let _ = std::fs::remove_dir_all(&cache);
    wsp_run(wsp, &rmsnorm, &cache, scratch, &[]);
    let text = std::fs::read_to_string(&rmsnorm).expect("rmsnorm");
    let mut compile = Vec::new();
    let mut cold_wall = Vec::new();
    for i in 1..=5 {
        let edited = scratch.join(format!("rmsnorm-{i}.wsp"));
        let body = text.replace(
            "sq = pto.mul(x, x)",
            &format!("sq = pto.mul(pto.mul(x, x), {i}.0)"),
        );
        std::fs::write(&edited, body).expect("write rmsnorm");
        let (stats, wall, _) = wsp_run(wsp, &edited, &cache, scratch, &[]);
        assert_eq!(stats["cache_hit"], false);
        compile.push(stats["compile_time_ms"].as_f64().expect("compile_time_ms"));
        cold_wall.push(wall);
    }
    let mut startup = Vec::new();
    let mut warm_wall = Vec::new();
    for _ in 0..20 {
        let (stats, wall, _) = wsp_run(wsp, &rmsnorm, &cache, scratch, &[]);
        assert_eq!(stats["cache_hit"], true);
        startup.push(stats["startup_ms"].as_f64().expect("startup_ms"));
        warm_wall.push(wall);
    }
    // What starting any process costs here, for scale.
    let mut spawn = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        Command::new(wsp)
            .arg("--version")
            .output()
            .expect("wsp --version");
        spawn.push(ms(t.elapsed()));
    }
    let cold = median(compile.clone());
    let warm = median(startup.clone());
    json!({
        "cold_compile_rmsnorm_ms": {"what": "a kernel the cache lacks (rmsnorm's body changed), with the compiler's command in the cache", "median": cold, "runs": compile, "wsp_run_wall_ms": median(cold_wall)},
        "first_compile_rmsnorm_ms": {"what": "the first compile into an empty cache: the compiler probed", "median": median(first.clone()), "runs": first},
        "warm_startup_rmsnorm_ms": {"median": warm, "max": startup.iter().copied().fold(0.0, f64::max),
            "wsp_run_wall_ms": median(warm_wall), "wsp_version_wall_ms": median(spawn)},
        "original": {"cold_compile_ms": ORIGINAL_COLD_COMPILE_MS, "cached_ms": ORIGINAL_CACHED_MS},
        "goals": {"cold_compile_at_most_100_ms": cold <= 100.0, "warm_startup_at_most_2_ms": warm <= 2.0},
    })
}

/// A kernel of a built library, with the library kept loaded.
fn kernel(lib: &libloading::Library, name: &str) -> KernelFn {
    let symbol = wsp_codegen::cpp::symbol(name);
    // SAFETY: codegen exports every kernel under this name with the `KernelFn` ABI.
    unsafe {
        *lib.get::<KernelFn>(symbol.as_bytes())
            .expect("kernel symbol")
    }
}

fn throughput(wsp: &Path, scratch: &Path, cache: &Path) -> Value {
    let path = scratch.join("many.wsp");
    let library = build(&path, MANY, cache);
    // SAFETY: built by codegen above; no static constructors run.
    let lib = unsafe { libloading::Library::new(&library) }.expect("load the kernels");
    let tiny = kernel(&lib, "tiny");
    let mut rows = serde_json::Map::new();
    let mut goals = serde_json::Map::new();
    for workers in [1usize, 2] {
        // Fresh `wsp run` processes, as a user runs it: the stats' execute_time_ms, and the
        // whole process (analysis, cache lookup, tensor initialisation, simulated clock).
        let mut execute = Vec::new();
        let mut whole = Vec::new();
        let mut task_by_task = Vec::new();
        // Peak memory of the whole process, MB: with launches, and task by task.
        let mut peak = [0f64; 2];
        for _ in 0..5 {
            for launches in [true, false] {
                let w = workers.to_string();
                let mut args = vec!["--workers", &w];
                if !launches {
                    args.push("--no-index-launches");
                }
                let (stats, wall, peak_mb) = wsp_run(wsp, &path, cache, scratch, &args);
                let p = &mut peak[usize::from(!launches)];
                *p = p.max(peak_mb);
                assert_eq!(stats["task_count"].as_u64(), Some(TASKS as u64));
                assert_eq!(stats["cache_hit"], true);
                assert_eq!(stats["index_launches"].as_u64(), Some(launches as u64));
                let ms = stats["execute_time_ms"].as_f64().expect("execute_time_ms");
                if launches {
                    execute.push(ms);
                    whole.push(wall);
                } else {
                    task_by_task.push(ms);
                }
            }
        }
        let rayon_ms = rayon_tasks(tiny, workers);
        let ours = median(execute.clone());
        let per_s = TASKS as f64 / (ours / 1e3);
        let ratio = ours / rayon_ms;
        rows.insert(
            format!("workers_{workers}"),
            json!({
                "execute_ms_median": ours,
                "execute_ms_runs": execute,
                "tasks_per_s": per_s,
                "wsp_run_wall_ms_median": median(whole.clone()),
                "wsp_run_peak_mb": peak[0],
                "task_by_task_peak_mb": peak[1],
                "task_by_task_execute_ms_median": median(task_by_task),
                "rayon_ms": rayon_ms,
                "rayon_tasks_per_s": TASKS as f64 / (rayon_ms / 1e3),
                "ours_over_rayon": ratio,
            }),
        );
        if workers == 2 {
            goals.insert("at_least_10M_tasks_per_s".into(), json!(per_s >= 10e6));
            goals.insert("within_3x_of_rayon".into(), json!(ratio <= 3.0));
        }
    }
    json!({
        "tasks": TASKS,
        "kernel": "tiny: [1, 8] f32, y = x + x",
        "what": "execute_ms: enumeration, dependency tracking and execution of every task in a fresh `wsp run` (its stats' execute_time_ms; the loop runs as one index launch), median of 5; task_by_task: the same with --no-index-launches; peak_mb: the process's peak resident memory, of which 64 MB are X and Y; rayon_ms: best of 5 in this process, the same kernel through the same pointer",
        "runs": rows,
        "original_tasks_per_s": ORIGINAL_TASKS_PER_S,
        "goals": goals,
    })
}

/// Best of five: a Rayon pool of `workers` threads calling the kernel once per tile of X and
/// Y, with the same pointers, strides and scalars the runtime passes.
fn rayon_tasks(f: KernelFn, workers: usize) -> f64 {
    let x = vec![1.0f32; TASKS * 8];
    let mut y = vec![0.0f32; TASKS * 8];
    let (xp, yp) = (x.as_ptr() as usize, y.as_mut_ptr() as usize);
    let strides = [8i64, 1, 8, 1];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .stack_size(256 << 20)
        .build()
        .expect("a Rayon pool");
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        pool.install(|| {
            (0..TASKS).into_par_iter().for_each(|i| {
                let tiles = [(xp + i * 32) as *mut u8, (yp + i * 32) as *mut u8];
                // SAFETY: tile i of each buffer, [1, 8] f32, as the kernel expects.
                unsafe { f(tiles.as_ptr(), strides.as_ptr(), [].as_ptr()) }
            })
        });
        times.push(ms(t.elapsed()));
    }
    assert!(y.iter().all(|&v| v == 2.0), "the kernel ran on every tile");
    min(&times)
}

/// Calls `f` on tile after tile of `buffers` (each `tiles` tiles of `tile_bytes[k]` bytes) for
/// at least 0.3 s, on a thread with a worker's stack; returns seconds per pass.
fn time_passes(
    f: KernelFn,
    buffers: &mut [Vec<u8>],
    tile_bytes: &[usize],
    strides: &[i64],
    tiles: usize,
) -> f64 {
    let ptrs: Vec<usize> = buffers
        .iter_mut()
        .map(|b| b.as_mut_ptr() as usize)
        .collect();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || {
                let pass = || {
                    for t in 0..tiles {
                        let args: Vec<*mut u8> = ptrs
                            .iter()
                            .zip(tile_bytes)
                            .map(|(p, b)| (p + t * b) as *mut u8)
                            .collect();
                        // SAFETY: tile t of every buffer, of the kernel's tile types.
                        unsafe { f(args.as_ptr(), strides.as_ptr(), [].as_ptr()) }
                    }
                };
                pass();
                let start = Instant::now();
                let mut passes = 0;
                while start.elapsed() < Duration::from_millis(300) {
                    pass();
                    passes += 1;
                }
                start.elapsed().as_secs_f64() / passes as f64
            })
            .expect("spawn")
            .join()
            .expect("the kernel thread")
    })
}

fn kernels(scratch: &Path, cache: &Path) -> Value {
    let path = scratch.join("kernels.wsp");
    let library = build(&path, KERNELS, cache);
    // SAFETY: built by codegen above; no static constructors run.
    let lib = unsafe { libloading::Library::new(&library) }.expect("load the kernels");

    // The matmul tile, checked against a float64 product first.
    let n = 128;
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 8.0)
        .collect();
    let as_bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    let mut bufs = vec![as_bytes(&a), as_bytes(&b), vec![0u8; n * n * 4]];
    let mm = kernel(&lib, "mm");
    let strides = [n as i64, 1, n as i64, 1, n as i64, 1];
    let tile = n * n * 4;
    let secs = time_passes(mm, &mut bufs, &[tile, tile, tile], &strides, 1);
    let c: Vec<f32> = bufs[2]
        .chunks_exact(4)
        .map(|w| f32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut err = 0.0f64;
    let mut scale = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let r: f64 = (0..n)
                .map(|k| a[i * n + k] as f64 * b[k * n + j] as f64)
                .sum();
            err = err.max((c[i * n + j] as f64 - r).abs());
            scale = scale.max(r.abs());
        }
    }
    let gflops = 2.0 * (n * n * n) as f64 / secs / 1e9;
    let numpy = numpy_matmul(n);
    let numpy_gflops = numpy.as_ref().and_then(|v| v["gflops"].as_f64());

    // Streaming kernels over 256 tiles of [64, 512] (32 MiB per f32 operand), beside memcpy.
    let tiles = 256;
    let f32_tile = 64 * 512 * 4;
    let f16_tile = 64 * 512 * 2;
    let row_tile = 64 * 4;
    let mut stream = serde_json::Map::new();
    let unary = [512, 1, 512, 1, 0, 0];
    let cases: [(&str, &[usize], [i64; 6]); 15] = [
        (
            "add",
            &[f32_tile, f32_tile, f32_tile],
            [512, 1, 512, 1, 512, 1],
        ),
        ("neg", &[f32_tile, f32_tile], unary),
        ("exp", &[f32_tile, f32_tile], unary),
        ("log", &[f32_tile, f32_tile], unary),
        ("tanh", &[f32_tile, f32_tile], unary),
        ("sigmoid", &[f32_tile, f32_tile], unary),
        ("gelu", &[f32_tile, f32_tile], unary),
        ("silu", &[f32_tile, f32_tile], unary),
        ("rsqrt", &[f32_tile, f32_tile], unary),
        ("add_f16", &[f16_tile, f16_tile], unary),
        ("to_f16", &[f32_tile, f16_tile], unary),
        ("from_f16", &[f16_tile, f32_tile], unary),
        ("rowsum", &[f32_tile, row_tile], [512, 1, 1, 1, 0, 0]),
        ("rowmax", &[f32_tile, row_tile], [512, 1, 1, 1, 0, 0]),
        ("softmax", &[f32_tile, f32_tile], unary),
    ];
    // Positive finite values in every dtype (the bytes 60..=120 make f32 and f16 of moderate
    // to large size), so log and rsqrt take their ordinary path.
    let mut bufs: Vec<Vec<Vec<u8>>> = cases
        .iter()
        .map(|(_, sizes, _)| {
            sizes
                .iter()
                .map(|s| (0..s * tiles).map(|i| (i % 61) as u8 + 60).collect())
                .collect()
        })
        .collect();
    // Speeds are each kernel's best round; a time over `neg`'s is the median over rounds of
    // the two times measured in one round (neg's best round may have had faster memory than
    // any of exp's).
    let all: Vec<usize> = (0..cases.len()).collect();
    let secs = time_rounds(&lib, &cases, &all, &mut bufs, tiles);
    let best: Vec<f64> = secs.iter().map(|s| min(s)).collect();
    let neg = cases
        .iter()
        .position(|c| c.0 == "neg")
        .expect("neg is measured");
    for ((name, sizes, _), secs) in cases.iter().zip(best) {
        let bytes: usize = sizes.iter().sum::<usize>() * tiles;
        stream.insert(
            (*name).into(),
            json!({"gb_per_s": bytes as f64 / secs / 1e9, "bytes_per_pass": bytes}),
        );
    }
    let memcpy = memcpy_gb_per_s(f32_tile * tiles);
    for (k, (name, ..)) in cases.iter().enumerate() {
        let v = &mut stream[*name];
        let g = v["gb_per_s"].as_f64().unwrap_or(0.0);
        v["of_memcpy"] = json!(g / memcpy);
        if !name.contains("f16") && !name.starts_with("row") && *name != "add" {
            // Same bytes moved as `neg`: the time over neg's.
            let ratios = secs[k].iter().zip(&secs[neg]).map(|(s, n)| s / n).collect();
            v["time_over_neg"] = json!(median(ratios));
        }
    }
    let exp_over_neg = stream["exp"]["time_over_neg"]
        .as_f64()
        .unwrap_or(f64::INFINITY);
    let avx2 = avx2_math(scratch, cache, &mut bufs, &cases, tiles);
    json!({
        "matmul_128_f32": {
            "gflops": gflops,
            "max_abs_error_over_max_abs": err / scale,
            "numpy": numpy,
            "of_numpy": numpy_gflops.map(|g| gflops / g),
        },
        "streaming": {
            "what": "bytes read and written per second over 256 tiles of [64, 512] (32 MiB per f32 operand), one thread, the best of five rounds over all kernels; time_over_neg: the median over rounds of the kernel's time over neg's in the same round",
            "memcpy_gb_per_s": memcpy,
            "kernels": stream,
        },
        "math_avx2": avx2,
        "goals": {"matmul_at_least_half_of_numpy": numpy_gflops.map(|g| gflops >= 0.5 * g),
                  "exp_within_1_5x_of_neg": exp_over_neg <= 1.5},
    })
}

/// Seconds per pass of each of `cases[which]`, in `ROUNDS` rounds over them all: this
/// machine's speed drifts, and ratios between kernels mean something only when measured close
/// together.
fn time_rounds(
    lib: &libloading::Library,
    cases: &[(&str, &[usize], [i64; 6])],
    which: &[usize],
    bufs: &mut [Vec<Vec<u8>>],
    tiles: usize,
) -> Vec<Vec<f64>> {
    const ROUNDS: usize = 5;
    let mut secs = vec![Vec::with_capacity(ROUNDS); which.len()];
    for _ in 0..ROUNDS {
        for (k, &c) in which.iter().enumerate() {
            let (name, sizes, strides) = &cases[c];
            secs[k].push(time_passes(
                kernel(lib, name),
                &mut bufs[c],
                sizes,
                strides,
                tiles,
            ));
        }
    }
    secs
}

/// The elementwise math's time over neg's with the kernels built for AVX2 machines
/// (`-march=x86-64-v3`, through `CXXFLAGS`, which comes after our `-march=native`): this
/// machine may have AVX-512, and the math must vectorize on both.
fn avx2_math(
    scratch: &Path,
    cache: &Path,
    bufs: &mut [Vec<Vec<u8>>],
    cases: &[(&str, &[usize], [i64; 6])],
    tiles: usize,
) -> Value {
    const MATH: [&str; 7] = ["neg", "exp", "log", "tanh", "sigmoid", "gelu", "silu"];
    let dir = scratch.join("avx2");
    std::fs::create_dir_all(&dir).expect("bench folder");
    // SAFETY: no other thread of this process reads or writes the environment now; the
    // variable is removed before any other build.
    unsafe { std::env::set_var("CXXFLAGS", "-march=x86-64-v3") };
    let library = build(&dir.join("kernels.wsp"), KERNELS, cache);
    // SAFETY: as above.
    unsafe { std::env::remove_var("CXXFLAGS") };
    // SAFETY: built by codegen above; no static constructors run.
    let lib = unsafe { libloading::Library::new(&library) }.expect("load the kernels");
    let measured: Vec<usize> = MATH
        .iter()
        .map(|m| {
            cases
                .iter()
                .position(|c| c.0 == *m)
                .expect("measured above")
        })
        .collect();
    let secs = time_rounds(&lib, cases, &measured, bufs, tiles);
    let mut out = serde_json::Map::new();
    for (k, name) in MATH.iter().enumerate().skip(1) {
        let ratios = secs[k].iter().zip(&secs[0]).map(|(s, n)| s / n).collect();
        out.insert((*name).into(), json!({"time_over_neg": median(ratios)}));
    }
    json!({"flags": "-march=x86-64-v3", "kernels": out})
}

/// Bytes read plus bytes written per second by `copy_from_slice` of `bytes` bytes.
fn memcpy_gb_per_s(bytes: usize) -> f64 {
    let src: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    let mut dst = vec![0u8; bytes];
    dst.copy_from_slice(&src);
    let start = Instant::now();
    let mut passes = 0;
    while start.elapsed() < Duration::from_millis(300) {
        std::hint::black_box(&mut dst[..]).copy_from_slice(std::hint::black_box(&src));
        passes += 1;
    }
    (2 * bytes * passes) as f64 / start.elapsed().as_secs_f64() / 1e9
}

/// NumPy's float32 matmul of the same size on one OpenBLAS thread, in the test venv
/// (`WSP_TEST_PYTHON`, which `cargo xtask bench runtime` sets up).
fn numpy_matmul(n: usize) -> Option<Value> {
    let python = std::env::var_os("WSP_TEST_PYTHON")?;
    let script = format!(
        r#"
import json, time
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal(({n}, {n}), dtype=np.float32)
b = rng.standard_normal(({n}, {n}), dtype=np.float32)
c = np.empty(({n}, {n}), dtype=np.float32)
np.matmul(a, b, out=c)
best = float("inf")
for _ in range(5):
    reps = 0
    t = time.perf_counter()
    while time.perf_counter() - t < 0.1:
        np.matmul(a, b, out=c)
        reps += 1
    best = min(best, (time.perf_counter() - t) / reps)
blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
print(json.dumps({{"gflops": 2 * {n}**3 / best / 1e9, "numpy": np.__version__,
                  "blas": blas.get("name"), "blas_version": blas.get("version")}}))
"#
    );
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .envs(["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"].map(|v| (v, "1")))
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("numpy: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// The chains program in fresh `wsp run` processes at 1 and 2 workers, alternating, 7 runs
/// each: execute_time_ms (enumeration, dependency tracking and execution).
fn chains(wsp: &Path, scratch: &Path, cache: &Path) -> Value {
    let path = scratch.join("chains.wsp");
    std::fs::write(&path, CHAINS).expect("write the chains program");
    // As users run it (each chain one sequential launch), and task by task.
    let modes: [(&str, &[&str]); 2] = [
        ("sequential_launches", &[]),
        ("task_by_task", &["--no-index-launches"]),
    ];
    let mut runs = vec![[Vec::new(), Vec::new()]; modes.len()];
    for _ in 0..7 {
        for (m, (_, extra)) in modes.iter().enumerate() {
            for (k, w) in ["1", "2"].into_iter().enumerate() {
                let mut args = vec!["--workers", w];
                args.extend_from_slice(extra);
                let (stats, ..) = wsp_run(wsp, &path, cache, scratch, &args);
                assert_eq!(stats["task_count"].as_f64(), Some(CHAIN_TASKS));
                runs[m][k].push(stats["execute_time_ms"].as_f64().expect("execute_time_ms"));
            }
        }
    }
    let figures = |[one_runs, two_runs]: &[Vec<f64>; 2]| {
        let (one, two) = (median(one_runs.clone()), median(two_runs.clone()));
        json!({
            "workers_1": {"execute_ms_median": one, "runs": one_runs, "tasks_per_s": CHAIN_TASKS / (one / 1e3)},
            "workers_2": {"execute_ms_median": two, "runs": two_runs, "tasks_per_s": CHAIN_TASKS / (two / 1e3)},
            "parallel_efficiency_2": one / (2.0 * two),
            "parallel_efficiency_2_of_best_runs": min(one_runs) / (2.0 * min(two_runs)),
        })
    };
    let flushes = scratch.join("flushes.wsp");
    std::fs::write(&flushes, FLUSHES).expect("write the flushes program");
    let flush_ms: Vec<f64> = (0..7)
        .map(|_| {
            let (stats, ..) = wsp_run(wsp, &flushes, cache, scratch, &["--workers", "2"]);
            stats["execute_time_ms"].as_f64().expect("execute_time_ms")
        })
        .collect();
    let mut report = json!({
        "what": "256 P.seq chains of 1,024 [16, 64] f32 InOut updates; execute_time_ms of fresh `wsp run` processes, median of 7, as users run it (each chain a sequential launch) and task by task (--no-index-launches)",
        "host_reads_500_workers_2_ms": {"median": median(flush_ms.clone()), "runs": flush_ms,
            "what": "500 P.seq steps of a task then a host read of its result: 500 flushes"},
        "original_tasks_per_s_without_dependencies": ORIGINAL_TASKS_PER_S,
    });
    for ((name, _), r) in modes.iter().zip(&runs) {
        report[*name] = figures(r);
    }
    let ours = &report["sequential_launches"];
    let efficiency = ours["parallel_efficiency_2"].as_f64().unwrap_or(0.0);
    let per_s = ours["workers_1"]["tasks_per_s"].as_f64().unwrap_or(0.0);
    report["goals"] = json!({"efficiency_at_least_0_85": efficiency >= 0.85, "at_least_5M_dependent_tasks_per_s": per_s >= 5e6});
    report
}

/// Best of 3: a fresh tensor of `elems` f32 initialised by `init` with `workers` threads, in
/// milliseconds.
fn init_ms(init: &wsp_ir::plan::Init, elems: u64, workers: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let data = wsp_runtime::tensors::TensorData::new(
            "bench",
            wsp_ir::DType::F32,
            &[elems],
            Some(init),
            Path::new(""),
            workers,
        )
        .expect("allocate");
        best = best.min(ms(t.elapsed()));
        std::hint::black_box(data.bytes()[0]);
    }
    best
}

/// Tensor initialisers beside NumPy's of the same size (`WSP_TEST_PYTHON`), best of 3 each.
fn init(workers: usize) -> Value {
    use wsp_ir::plan::{F64, Init};
    const RANDN: u64 = 33_554_432; // 134 MB of f32
    const FILL: u64 = 134_217_728; // 512 MiB of f32
    let randn = Init::Randn {
        seed: 7,
        std: F64(1.0),
    };
    let ours = json!({
        "randn_134MB_ms": {"workers_1": init_ms(&randn, RANDN, 1), format!("workers_{workers}"): init_ms(&randn, RANDN, workers)},
        "ones_512MiB_ms": {"workers_1": init_ms(&Init::Ones, FILL, 1), format!("workers_{workers}"): init_ms(&Init::Ones, FILL, workers)},
        "zeros_512MiB_ms": {"workers_1": init_ms(&Init::Zeros, FILL, 1), format!("workers_{workers}"): init_ms(&Init::Zeros, FILL, workers)},
    });
    let numpy = std::env::var_os("WSP_TEST_PYTHON").and_then(|python| {
        let script = format!(
            r#"
import json, time
import numpy as np
def best(f):
    t = float("inf")
    for _ in range(3):
        s = time.perf_counter(); a = f(); a[-1]; t = min(t, time.perf_counter() - s); del a
    return t * 1e3
print(json.dumps({{
    "randn_134MB_ms": best(lambda: np.random.default_rng(7).standard_normal({RANDN}, dtype=np.float32)),
    "ones_512MiB_ms": best(lambda: np.ones({FILL}, dtype=np.float32)),
    "zeros_then_touched_512MiB_ms": best(lambda: np.zeros({FILL}, dtype=np.float32) + 0),
    "numpy": np.__version__}}))
"#
        );
        let out = Command::new(python).arg("-c").arg(script).output().ok()?;
        serde_json::from_slice::<Value>(&out.stdout).ok()
    });
    let key = format!("workers_{workers}");
    let randn_ours = ours["randn_134MB_ms"][&key]
        .as_f64()
        .unwrap_or(f64::INFINITY);
    let randn_numpy = numpy.as_ref().and_then(|n| n["randn_134MB_ms"].as_f64());
    json!({
        "what": "a fresh f32 tensor initialised (allocation, page faults and values), best of 3; NumPy: default_rng(7).standard_normal(n, float32), np.ones(n), np.zeros(n) + 0 (np.zeros alone maps pages it has not touched)",
        "ours": ours,
        "numpy": numpy,
        "goals": {"randn_at_least_numpy_speed": randn_numpy.map(|n| randn_ours <= n)},
    })
}

/// Decode attention's 8 heads under each dispatch policy: the simulated makespan over the
/// critical path (1.0 is the bound from dependencies alone).
fn decode_schedules(wsp: &Path, scratch: &Path, cache: &Path) -> Value {
    let policies = [
        ("default", ""),
        ("round_robin", ".dispatch(DispatchPolicy.round_robin(6))"),
        (
            "affinity",
            ".dispatch(DispatchPolicy.affinity(lambda t: t.h))",
        ),
        ("work_steal", ".dispatch(DispatchPolicy.work_steal())"),
    ];
    let mut rows = serde_json::Map::new();
    for (name, schedule) in policies {
        let path = scratch.join(format!("decode_{name}.wsp"));
        let text = DECODE.replace(".compile(", &format!("{schedule}.compile("));
        std::fs::write(&path, text).expect("write decode");
        let (stats, ..) = wsp_run(wsp, &path, cache, scratch, &[]);
        let total = stats["total_cycles"].as_f64().expect("total_cycles");
        let critical = stats["critical_path_cycles"]
            .as_f64()
            .expect("critical_path_cycles");
        rows.insert(
            name.into(),
            json!({"total_cycles": total, "critical_path_cycles": critical, "makespan_over_critical_path": total / critical}),
        );
    }
    json!({
        "what": "8 heads, each 4 chained chunk tasks then a final task, on the default 910B (24 cube cores, 6 AICPUs)",
        "schedules": rows,
    })
}

fn main() {
    let scratch = target_dir().join("bench/runtime");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("bench folder");
    let cache = scratch.join("cache");
    let wsp = target_dir().join("release/wsp");
    let report = json!({
        "machine_cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "compile": compile_and_startup(&wsp, &scratch),
        "task_throughput": throughput(&wsp, &scratch, &cache),
        "kernels": kernels(&scratch, &cache),
        "dependent_tasks": chains(&wsp, &scratch, &cache),
        "tensor_init": init(2),
        "decode_schedules": decode_schedules(&wsp, &scratch, &cache),
    });
    let text = serde_json::to_string_pretty(&report).expect("json");
    let path = target_dir().join("bench/runtime.json");
    std::fs::write(&path, &text).expect("write runtime.json");
    println!("{text}");
    println!("wrote {}", path.display());
}
