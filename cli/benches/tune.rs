//! `cargo xtask bench tune`: schedule exploration's rate, measured side by side in one run and
//! written to target/bench/tune.json:
//!
//! - configurations scored per second by `wsp tune` (release build, no score cache) over a
//!   space of 1,728 schedules of decode attention (cli/tests/tune/decode.wsp's workload: 8
//!   heads, 40 tasks), at 1 and 2 scoring jobs; and the same space over 512 heads (2,560
//!   tasks), where scoring, not start-up, is the time;
//! - the same through Ray on this machine (a head of 2 CPUs in a network namespace of its own,
//!   loopback only), when `WSP_RAY_PYTHON` names a Python with the `wsp_ray` driver and this
//!   process may `unshare -n`;
//! - beside them the original's way: one `wsp run` per configuration (compiled once, the kernel
//!   cache warm), timed over a sample of the space.
//!
//! Goals (issue 38): at least 1,000 configurations a minute on 2 cores, and at least 50× the
//! one-run-per-configuration rate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

// The tests' helpers: how a configuration is written out as directives.
#[path = "../tests/common/mod.rs"]
mod common;

const SPACE: &str = r#"
space = SearchSpace()
space.add_streams([1, 2, 4, 8])
space.add_stream_by([None, lambda t: t.h])
space.add_dispatch(["round_robin", "work_steal", "affinity", "hash"], params=[1, 2, 4], keys=[lambda t: t.h])
space.add_timing(["immediate", "batched", "interleaved"], params=[2, 4])
space.add_window([None, 8, 32])
best_config, summary = AutoScheduler(decode()).explore(space)
"#;

/// How many configurations the one-run-per-configuration way is timed over.
const SAMPLE: usize = 12;

fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// Decode attention over `heads` heads.
fn workload(heads: u32) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tune/decode.wsp"),
    )
    .expect("decode.wsp");
    let body = text.split("# EXPLORE").next().expect("the workload");
    body.replace("HEADS = 8\n", &format!("HEADS = {heads}\n"))
}

/// `wsp tune` over the space: configurations, seconds scoring (the run process's part), and
/// seconds in all.
fn tune(wsp: &Path, file: &Path, cache: &Path, extra: &[&str]) -> (u64, f64, f64) {
    let stats = file.with_extension("stats.json");
    let json = file.with_extension("tune.json");
    let began = Instant::now();
    let out = Command::new(wsp)
        .env("WSP_CACHE_DIR", cache)
        .arg("tune")
        .arg(file)
        .args(["--no-cache", "--json"])
        .arg(&json)
        .arg("--stats-json")
        .arg(&stats)
        .args(extra)
        .output()
        .expect("wsp tune");
    let wall = began.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let n = doc["explorations"][0]["configurations"]
        .as_array()
        .unwrap()
        .len() as u64;
    (n, stats["tune_time_ms"].as_f64().unwrap() / 1e3, wall)
}

/// `tune` with `--jobs jobs`, five times, one job count right after the other: the median
/// scoring and wall times (a single run of a few tens of milliseconds is mostly this machine's
/// noise).
fn median_tune(wsp: &Path, file: &Path, cache: &Path, jobs: &str) -> (u64, f64, f64) {
    let runs: Vec<(u64, f64, f64)> = (0..5)
        .map(|_| tune(wsp, file, cache, &["--jobs", jobs]))
        .collect();
    let median = |f: fn(&(u64, f64, f64)) -> f64| {
        let mut xs: Vec<f64> = runs.iter().map(f).collect();
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    (runs[0].0, median(|r| r.1), median(|r| r.2))
}

/// Seconds per configuration when each runs alone in its own `wsp run`, over `SAMPLE`
/// configurations spread over the space.
fn one_run_each(wsp: &Path, dir: &Path, cache: &Path, doc: &Value) -> f64 {
    let configs = doc["explorations"][0]["configurations"].as_array().unwrap();
    let step = (configs.len() / SAMPLE).max(1);
    let body = workload(8);
    let mut total = 0.0;
    let mut n = 0;
    for c in configs.iter().step_by(step).take(SAMPLE) {
        let file = dir.join(format!("alone{n}.wsp"));
        let d = common::written_schedule(&c["config"]);
        std::fs::write(
            &file,
            format!("{body}program = decode(){d}.compile()\nprogram.execute()\n"),
        )
        .unwrap();
        let began = Instant::now();
        let out = Command::new(wsp)
            .env("WSP_CACHE_DIR", cache)
            .arg("run")
            .arg(&file)
            .output()
            .expect("wsp run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        total += began.elapsed().as_secs_f64();
        n += 1;
    }
    total / n as f64
}

/// Through Ray: a head of 2 CPUs in a network namespace of its own, `wsp tune --ray`. Seconds,
/// or why it was not measured.
fn through_ray(wsp: &Path, file: &Path, cache: &Path) -> Result<f64, String> {
    let python = std::env::var("WSP_RAY_PYTHON")
        .map_err(|_| "WSP_RAY_PYTHON is not set (`cargo xtask bench tune` sets it)".to_string())?;
    let ray = Path::new(&python).parent().unwrap().join("ray");
    let temp = tempfile::Builder::new()
        .prefix("wsp-ray-")
        .tempdir_in("/tmp")
        .map_err(|e| e.to_string())?;
    let script = format!(
        r#"set -u
ip link set lo up
export RAY_USAGE_STATS_ENABLED=0 WSP_RAY_PYTHON={python} WSP_CACHE_DIR={cache}
{ray} start --head --num-cpus 2 --disable-usage-stats --include-dashboard false --port 6392 --temp-dir {temp} > /dev/null 2>&1 || exit 3
trap '{ray} stop --force > /dev/null 2>&1' EXIT
{wsp} tune {file} --ray 127.0.0.1:6392 --no-cache --jobs 1 --json {temp}/out.json > /dev/null 2>&1 || exit 4
s=$(date +%s%N)
{wsp} tune {file} --ray 127.0.0.1:6392 --no-cache --jobs 1 --json {temp}/out.json > /dev/null || exit 5
echo "ms=$(( ($(date +%s%N) - s) / 1000000 ))"
"#,
        cache = cache.display(),
        ray = ray.display(),
        temp = temp.path().display(),
        wsp = wsp.display(),
        file = file.display(),
    );
    let out = Command::new("timeout")
        .args(["600", "unshare", "-n", "bash", "-c", &script])
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ms = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ms="))
        .ok_or_else(|| {
            format!(
                "the Ray run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(ms.trim().parse::<f64>().map_err(|e| e.to_string())? / 1e3)
}

fn main() {
    let dir = target_dir().join("bench/tune");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench folder");
    let cache = dir.join("cache");
    let wsp = target_dir().join("release/wsp");
    let file = dir.join("decode_space.wsp");
    std::fs::write(&file, workload(8) + SPACE).unwrap();
    let large = dir.join("decode_512_heads.wsp");
    std::fs::write(&large, workload(512) + SPACE).unwrap();
    // The kernels are built once, before anything is timed.
    tune(&wsp, &file, &cache, &["--jobs", "1"]);
    let (n, one_job, one_job_wall) = median_tune(&wsp, &file, &cache, "1");
    let (_, two_jobs, two_jobs_wall) = median_tune(&wsp, &file, &cache, "2");
    let (_, large_one, large_one_wall) = median_tune(&wsp, &large, &cache, "1");
    let (_, large_two, large_two_wall) = median_tune(&wsp, &large, &cache, "2");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(file.with_extension("tune.json")).unwrap())
            .unwrap();
    let alone = one_run_each(&wsp, &dir, &cache, &doc);
    let ray = through_ray(&wsp, &file, &cache);
    let per_minute = |secs: f64| n as f64 / secs * 60.0;
    let report = json!({
        "machine_cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "configurations": n,
        "wsp_tune": {
            "jobs_1": {"scoring_s": one_job, "wall_s": one_job_wall,
                       "configs_per_minute": per_minute(one_job_wall)},
            "jobs_2": {"scoring_s": two_jobs, "wall_s": two_jobs_wall,
                       "configs_per_minute": per_minute(two_jobs_wall)},
            "parallel_speedup": one_job_wall / two_jobs_wall,
        },
        "wsp_tune_512_heads": {
            "tasks": 2560,
            "jobs_1": {"scoring_s": large_one, "wall_s": large_one_wall,
                       "configs_per_minute": per_minute(large_one_wall)},
            "jobs_2": {"scoring_s": large_two, "wall_s": large_two_wall,
                       "configs_per_minute": per_minute(large_two_wall)},
            "parallel_speedup": large_one / large_two,
        },
        "ray_2_cpus": match &ray {
            Ok(s) => json!({"wall_s": s, "configs_per_minute": per_minute(*s)}),
            Err(why) => json!({"not_measured": why}),
        },
        "one_wsp_run_per_configuration": {
            "sampled": SAMPLE,
            "s_per_configuration": alone,
            "configs_per_minute": 60.0 / alone,
        },
        "ratio_over_one_run_each": {
            "jobs_1": per_minute(one_job_wall) / (60.0 / alone),
            "jobs_2": per_minute(two_jobs_wall) / (60.0 / alone),
        },
        "goals": {"configs_per_minute_on_2_cores": 1000, "ratio_over_one_run_each": 50},
    });
    let text = serde_json::to_string_pretty(&report).expect("json");
    let path = target_dir().join("bench/tune.json");
    std::fs::write(&path, &text).expect("write tune.json");
    println!("{text}");
    println!("wrote {}", path.display());
}
