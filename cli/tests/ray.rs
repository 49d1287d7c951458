//! `wsp tune --ray` on a real Ray cluster, on loopback only: the test makes a network
//! namespace of its own with only `lo` up (`unshare -n`, as root), starts a Ray head in it
//! (`ray start --head`, usage statistics off, a scratch temp dir), runs the exploration through
//! the `wsp_ray` driver and stops the head. Inside such a namespace Ray advertises 127.0.0.1;
//! outside one it advertises the machine's interface address whatever it is told.
//!
//! Needs `WSP_RAY_PYTHON`, a Python with `ray` and `wsp_ray` installed (`cargo xtask test`
//! makes `target/ray-venv` and sets it, with `WSP_REQUIRE_RAY`, which makes a missing piece
//! fail the test instead of skipping it).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{root, scratch, wsp};

/// The Python with Ray and the driver, or `None` (said) to skip.
fn ray_python() -> Option<String> {
    let required = std::env::var_os("WSP_REQUIRE_RAY").is_some();
    let python = std::env::var("WSP_RAY_PYTHON").ok();
    let unshare = Command::new("unshare")
        .args(["-n", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    match (python, unshare) {
        (Some(p), true) => Some(p),
        (p, _) => {
            let why = if p.is_none() {
                "WSP_RAY_PYTHON is not set"
            } else {
                "`unshare -n` is not allowed here (it needs root)"
            };
            assert!(!required, "the Ray test cannot run: {why}");
            eprintln!("skipped: {why} (run `cargo xtask test`)");
            None
        }
    }
}

#[test]
fn tune_on_a_ray_cluster_equals_the_local_run() {
    let Some(python) = ray_python() else { return };
    let dir = scratch("ray", "cluster");
    let file = dir.join("moe.wsp");
    std::fs::copy(root().join("cli/tests/tune/moe.wsp"), &file).unwrap();
    let local = dir.join("local.json");
    let out = wsp()
        .arg("tune")
        .arg(&file)
        .arg("--no-cache")
        .arg("--json")
        .arg(&local)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A short temp dir: Ray's sockets live under it, and socket paths are short.
    let temp = tempfile::Builder::new()
        .prefix("wsp-ray-")
        .tempdir_in("/tmp")
        .unwrap();
    let ray = Path::new(&python).parent().unwrap().join("ray");
    let wsp_bin = env!("CARGO_BIN_EXE_wsp");
    let script = format!(
        r#"set -u
ip link set lo up
export RAY_USAGE_STATS_ENABLED=0 WSP_RAY_PYTHON={python} WSP_CACHE_DIR={cache}
{ray} start --head --num-cpus 2 --disable-usage-stats --include-dashboard false --port 6390 --temp-dir {temp} > {temp}/start.log 2>&1 || {{ cat {temp}/start.log; exit 3; }}
trap '{ray} stop --force > /dev/null 2>&1' EXIT
{wsp} tune {file} --ray 127.0.0.1:6390 --no-cache --json {dir}/ray.json > {dir}/ray.out 2> {dir}/ray.err
echo "tune=$?"
start=$(date +%s%N)
{wsp} tune {file} --ray 127.0.0.1:6391 > /dev/null 2> {dir}/unreachable.err
echo "unreachable=$? $(( ($(date +%s%N) - start) / 1000000 ))"
"#,
        cache = common::kernel_cache().display(),
        ray = ray.display(),
        temp = temp.path().display(),
        wsp = wsp_bin,
        file = file.display(),
        dir = dir.display(),
    );
    let began = Instant::now();
    let out = Command::new("timeout")
        .args(["300", "unshare", "-n", "bash", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    assert!(
        stdout.contains("tune=0"),
        "{stdout}{}\n--- driver:\n{}{}",
        String::from_utf8_lossy(&out.stderr),
        read("ray.out"),
        read("ray.err")
    );
    let json = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    assert_eq!(json(&dir.join("ray.json")), json(&local));
    // The table the driver printed is the local run's.
    let local_table = wsp()
        .arg("tune")
        .arg(&file)
        .arg("--render")
        .arg(&local)
        .output()
        .unwrap();
    assert_eq!(
        read("ray.out"),
        String::from_utf8_lossy(&local_table.stdout)
    );
    // No head at that port: a clear error, exit 2, within seconds.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("unreachable="))
        .unwrap();
    let (code, ms) = line["unreachable=".len()..].split_once(' ').unwrap();
    assert_eq!(code, "2", "{}", read("unreachable.err"));
    assert!(ms.parse::<u64>().unwrap() < 10_000, "{ms} ms");
    assert!(
        read("unreachable.err").contains("127.0.0.1:6391 cannot be reached"),
        "{}",
        read("unreachable.err")
    );
    assert!(began.elapsed() < Duration::from_secs(300));
}
