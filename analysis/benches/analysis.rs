//! `cargo xtask bench analysis`: the analyzer on a generated 10,000-line workspace — a cold
//! check, a re-check after a one-token edit inside one kernel body (and the ratio), peak RSS —
//! `wsp check` on 100,000 lines, and `wsp check` on one file of 10,000, 40,000 and 160,000
//! top-level statements (each 4x the last, so linear time shows as ratios near 4). Writes
//! target/bench/analysis.json. It allocates with mimalloc, as `wsp` does (`cli/src/main.rs`), so
//! the in-process figures are those of `wsp check` and the language server.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/statements.rs"]
mod statements;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use wsp_analysis::{Database, File, Workspace};

const HEADER: &str = r#"from pto_wsp import *

F32 = DType.F32
F16 = DType.F16
batch = Dense[4]
heads = Dense[8]
X = Tensor((4, 8, 16, 128), F32, init=randn(seed=1))
W = Tensor((8, 128, 128), F16, init=randn(seed=2, std=0.05))
"#;

/// One kernel, one workload and one program (25 lines); `{i}` makes the names unique.
const BLOCK: &str = r#"
Y{i} = Tensor((4, 8, 16, 128), F32)


@kernel
def norm{i}(x: In[Tile[16, 128, F32]], w: In[Tile[128, 128, F16]], out: Out[Tile[16, 128, F32]],
           eps: Scalar[F32] = 1e-6):
    inv = pto.rsqrt(pto.add(pto.rowmean(pto.mul(x, x)), eps))
    h = pto.matmul(pto.cast(pto.rowmul(x, inv), F16), w)
    pto.store(out, pto.exp(h))


@workload
def run{i}(batch, heads):
    for b, h in P(batch, heads):
        norm{i}[b, h](x=X[b, h], w=W[h], out=Y{i}[b, h])


program{i} = (run{i}(batch, heads)
    .dispatch(DispatchPolicy.affinity(lambda t: t.b))
    .streams(2)
    .compile(target="cpu_sim"))
"#;

const BLOCKS_PER_FILE: usize = 8;

/// Files of about 200 lines until `lines` lines in all.
fn workspace(lines: usize) -> Vec<String> {
    let mut files = Vec::new();
    let mut total = 0;
    let mut i = 0;
    while total < lines {
        let mut text = HEADER.to_string();
        for _ in 0..BLOCKS_PER_FILE {
            text.push_str(&BLOCK.replace("{i}", &i.to_string()));
            i += 1;
        }
        total += text.lines().count();
        files.push(text);
    }
    files
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn check_all(db: &Database, files: &[File]) -> usize {
    files
        .iter()
        .map(|&f| wsp_analysis::file_diagnostics(db, f).len())
        .sum()
}

fn load(texts: &[String]) -> (Database, Vec<File>) {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let files = texts
        .iter()
        .enumerate()
        .map(|(n, t)| File::on_disk(&db, ws, format!("gen{n}.wsp").into(), t.clone()))
        .collect();
    (db, files)
}

/// Peak resident set size of this process, in MiB (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    exe.ancestors()
        .nth(3)
        .expect("inside target/")
        .to_path_buf()
}

/// Median wall time of `wsp check DIR` (the release binary xtask built).
fn wsp_check(wsp: &Path, dir: &Path) -> Option<Duration> {
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(wsp)
            .args(["check", "--format", "json"])
            .arg(dir)
            .output()
            .ok()?;
        times.push(t.elapsed());
        if !out.status.success() {
            eprintln!(
                "wsp check found problems: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            return None;
        }
    }
    Some(median(times))
}

/// Median wall time of `wsp check` on one file of `n` mixed statements. The mix has errors,
/// so `wsp check` must exit with 1 (problems found), not crash.
fn wsp_check_statements(wsp: &Path, dir: &Path, n: usize) -> Option<Duration> {
    let path = dir.join(format!("statements_{n}.wsp"));
    std::fs::write(&path, statements::mixed_statements(n)).expect("write");
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new(wsp)
            .args(["check", "--format", "json"])
            .arg(&path)
            .output()
            .ok()?;
        times.push(t.elapsed());
        if out.status.code() != Some(1) {
            eprintln!(
                "wsp check {} failed: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
    }
    Some(median(times))
}

/// Statements in the big file: 2.5 million, 47.5 MB.
const BIG_FILE_STATEMENTS: usize = 2_500_000;

/// Wall time and peak resident memory (MiB) of `wsp check` on one file of
/// `BIG_FILE_STATEMENTS` top-level statements (`V0000000 = 1000000`, ...): linear in size is
/// the goal, within 60 s and 2 GiB.
fn wsp_check_big_file(wsp: &Path, dir: &Path) -> Option<(Duration, f64)> {
    let path = dir.join("big_file.wsp");
    let mut text = String::from("from pto_wsp import *\n");
    for i in 0..BIG_FILE_STATEMENTS {
        text.push_str(&format!("V{i:07} = {}\n", i + 1_000_000));
    }
    std::fs::write(&path, text).expect("write");
    let t = Instant::now();
    let out = Command::new(wsp)
        .args(["check", "--format", "json"])
        .arg(&path)
        .output()
        .ok()?;
    let elapsed = t.elapsed();
    if !out.status.success() {
        eprintln!(
            "wsp check of the big file failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    // The largest child waited for so far: run before any other `wsp check`.
    // SAFETY: all zeros is a valid `rusage` (integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` writes only into the struct it is given, which lives here.
    let got = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    (got == 0).then(|| (elapsed, usage.ru_maxrss as f64 / 1024.0))
}

fn main() {
    let texts = workspace(10_000);
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    let definitions = texts.len() * BLOCKS_PER_FILE * 2;

    // Cold: a fresh database each time.
    let mut cold = Vec::new();
    for _ in 0..7 {
        let (db, files) = load(&texts);
        let t = Instant::now();
        let found = check_all(&db, &files);
        cold.push(t.elapsed());
        assert_eq!(found, 0, "the generated workspace must check clean");
    }
    let cold = median(cold);

    // Incremental: one token inside one kernel body, flipped back and forth.
    let (mut db, files) = load(&texts);
    check_all(&db, &files);
    let target = files.len() / 2;
    let variants = [
        texts[target].clone(),
        texts[target].replacen("pto.exp(h)", "pto.log(h)", 1),
    ];
    assert_ne!(variants[0], variants[1]);
    let mut incremental = Vec::new();
    for round in 0..200 {
        files[target].edit(&mut db, variants[(round + 1) % 2].clone());
        let t = Instant::now();
        let found = check_all(&db, &files);
        incremental.push(t.elapsed());
        assert_eq!(found, 0);
    }
    let incremental = median(incremental);
    let rss = peak_rss_mib();

    let wsp = target_dir().join("release/wsp");
    // First of the `wsp check` runs, so the peak memory of children is its own.
    let big_file_dir = target_dir().join("bench/analysis_big_file");
    std::fs::create_dir_all(&big_file_dir).expect("bench folder");
    let big_file = if wsp.exists() {
        wsp_check_big_file(&wsp, &big_file_dir)
    } else {
        None
    };

    // `wsp check` on 100,000 lines.
    let dir = target_dir().join("bench/analysis_100k");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench folder");
    let big = workspace(100_000);
    let big_lines: usize = big.iter().map(|t| t.lines().count()).sum();
    for (n, t) in big.iter().enumerate() {
        std::fs::write(dir.join(format!("gen{n:04}.wsp")), t).expect("write");
    }
    let check_time = if wsp.exists() {
        wsp_check(&wsp, &dir)
    } else {
        None
    };

    // `wsp check` on 10k, 40k, 160k top-level statements.
    let sizes = [10_000, 40_000, 160_000];
    let statements_dir = target_dir().join("bench/analysis_statements");
    std::fs::create_dir_all(&statements_dir).expect("bench folder");
    let statement_times: Vec<Option<Duration>> = sizes
        .iter()
        .map(|&n| {
            if wsp.exists() {
                wsp_check_statements(&wsp, &statements_dir, n)
            } else {
                None
            }
        })
        .collect();
    let ms = |t: &Option<Duration>| t.map(|t| t.as_secs_f64() * 1e3);
    let growth = |i: usize| match (statement_times[i], statement_times[i + 1]) {
        (Some(a), Some(b)) => Some(b.as_secs_f64() / a.as_secs_f64()),
        _ => None,
    };

    let ratio = cold.as_secs_f64() / incremental.as_secs_f64();
    let incremental_ms = incremental.as_secs_f64() * 1e3;
    let report = serde_json::json!({
        "workspace_lines": lines,
        "workspace_files": texts.len(),
        "kernels_and_workloads": definitions,
        "cold_check_ms_median": cold.as_secs_f64() * 1e3,
        "incremental_check_ms_median": incremental_ms,
        "cold_over_incremental": ratio,
        "peak_rss_mib": rss,
        "wsp_check_100k_lines": big_lines,
        "wsp_check_100k_ms_median": check_time.map(|t| t.as_secs_f64() * 1e3),
        "wsp_check_lines_per_s": check_time.map(|t| big_lines as f64 / t.as_secs_f64()),
        "wsp_check_statements_10k_ms_median": ms(&statement_times[0]),
        "wsp_check_statements_40k_ms_median": ms(&statement_times[1]),
        "wsp_check_statements_160k_ms_median": ms(&statement_times[2]),
        "wsp_check_statements_40k_over_10k": growth(0),
        "wsp_check_statements_160k_over_40k": growth(1),
        "wsp_check_big_file_statements": BIG_FILE_STATEMENTS,
        "wsp_check_big_file_ms": big_file.map(|(t, _)| t.as_secs_f64() * 1e3),
        "wsp_check_big_file_peak_mib": big_file.map(|(_, m)| m),
        "goals": {
            "ratio_at_least_100": ratio >= 100.0,
            "incremental_under_10_ms": incremental_ms < 10.0,
            "rss_under_200_mib": rss.is_some_and(|r| r < 200.0),
            "statements_growth_under_6x_per_4x": growth(0).zip(growth(1)).is_some_and(|(a, b)| a < 6.0 && b < 6.0),
            "big_file_under_60_s_and_2_gib": big_file.is_some_and(|(t, m)| t.as_secs_f64() < 60.0 && m < 2048.0),
        },
    });
    let out_dir = target_dir().join("bench");
    let path = out_dir.join("analysis.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).expect("json"))
        .expect("write analysis.json");
    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    println!("wrote {}", path.display());
}
