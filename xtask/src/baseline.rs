//! The benchmarks' ratios against their anchors, beside the committed baseline
//! (`bench/baseline.json`). A ratio divides two figures measured in the same run, ours and an
//! anchor's (CPython, ipykernel, Rayon, NumPy, PTO-ISA, or our own cold path), so that it means
//! the same on a faster or a slower machine; a loss of more than `LOSS` against the baseline is
//! flagged. `cargo xtask bench --record-baseline` writes the ratios of the benchmarks just run
//! into the baseline.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// The loss against the baseline that is flagged.
const LOSS: f64 = 0.15;

/// One ratio of a benchmark: `ours / anchor`, two JSON pointers into `target/bench/BENCH.json`
/// (or `ours` alone when the benchmark writes the ratio itself).
struct Ratio {
    bench: &'static str,
    name: &'static str,
    ours: &'static str,
    anchor: Option<&'static str>,
    /// Whether a larger ratio is better (a speed), or a smaller one (a time).
    higher_is_better: bool,
}

const fn speed(
    bench: &'static str,
    name: &'static str,
    ours: &'static str,
    anchor: Option<&'static str>,
) -> Ratio {
    Ratio {
        bench,
        name,
        ours,
        anchor,
        higher_is_better: true,
    }
}

const fn time(
    bench: &'static str,
    name: &'static str,
    ours: &'static str,
    anchor: Option<&'static str>,
) -> Ratio {
    Ratio {
        higher_is_better: false,
        ..speed(bench, name, ours, anchor)
    }
}

const RATIOS: &[Ratio] = &[
    speed(
        "syntax",
        "parse MB/s over CPython's ast.parse",
        "/wsp_parse_mb_per_s",
        Some("/python_ast_parse_mb_per_s"),
    ),
    speed(
        "syntax",
        "parse MB/s over our lexer's",
        "/wsp_parse_mb_per_s",
        Some("/wsp_lex_mb_per_s"),
    ),
    time(
        "analysis",
        "incremental check over a cold check of the workspace",
        "/incremental_check_ms_median",
        Some("/cold_check_ms_median"),
    ),
    time(
        "analysis",
        "wsp check of 10k statements over the 10k-line workspace's cold check",
        "/wsp_check_statements_10k_ms_median",
        Some("/cold_check_ms_median"),
    ),
    time(
        "lsp",
        "didChange -> diagnostics p50 over a cold wsp check",
        "/did_change_to_publish_diagnostics_ms/p50",
        Some("/wsp_check_cold_ms_median"),
    ),
    time(
        "lsp",
        "didChange -> diagnostics p99 over a cold wsp check",
        "/did_change_to_publish_diagnostics_ms/p99",
        Some("/wsp_check_cold_ms_median"),
    ),
    time(
        "lsp",
        "syntax-error edit p99 over a cold wsp check",
        "/syntax_error_edit_to_publish_diagnostics_ms/p99",
        Some("/wsp_check_cold_ms_median"),
    ),
    time(
        "lsp",
        "didOpen over a cold wsp check",
        "/did_open_to_publish_diagnostics_ms",
        Some("/wsp_check_cold_ms_median"),
    ),
    time(
        "kernel",
        "notebook cell p50 over ipykernel's",
        "/kernels/wsp/execute_round_trip_ms/p50",
        Some("/kernels/ipykernel/execute_round_trip_ms/p50"),
    ),
    time(
        "kernel",
        "kernel start over ipykernel's",
        "/kernels/wsp/start_to_kernel_info_reply_ms/median",
        Some("/kernels/ipykernel/start_to_kernel_info_reply_ms/median"),
    ),
    time(
        "runtime",
        "1M tasks on 2 workers over Rayon's loop",
        "/task_throughput/runs/workers_2/ours_over_rayon",
        None,
    ),
    speed(
        "runtime",
        "f32 matmul 128^3 GFLOP/s over NumPy's",
        "/kernels/matmul_128_f32/of_numpy",
        None,
    ),
    speed(
        "runtime",
        "add tile GB/s over memcpy's",
        "/kernels/streaming/kernels/add/of_memcpy",
        None,
    ),
    time(
        "runtime",
        "exp tile time over neg's",
        "/kernels/streaming/kernels/exp/time_over_neg",
        None,
    ),
    time(
        "runtime",
        "tanh tile time over neg's",
        "/kernels/streaming/kernels/tanh/time_over_neg",
        None,
    ),
    time(
        "runtime",
        "gelu tile time over neg's",
        "/kernels/streaming/kernels/gelu/time_over_neg",
        None,
    ),
    time(
        "runtime",
        "tanh tile time over neg's, built for AVX2",
        "/kernels/math_avx2/kernels/tanh/time_over_neg",
        None,
    ),
    time(
        "runtime",
        "gelu tile time over neg's, built for AVX2",
        "/kernels/math_avx2/kernels/gelu/time_over_neg",
        None,
    ),
    time(
        "runtime",
        "randn of 134 MB on 2 workers over NumPy's",
        "/tensor_init/ours/randn_134MB_ms/workers_2",
        Some("/tensor_init/numpy/randn_134MB_ms"),
    ),
    speed(
        "runtime",
        "dependent chains: 2 workers' parallel efficiency",
        "/dependent_tasks/sequential_launches/parallel_efficiency_2",
        None,
    ),
    speed(
        "tune",
        "wsp tune's configurations a minute over one wsp run per configuration",
        "/ratio_over_one_run_each/jobs_2",
        None,
    ),
    speed(
        "tune",
        "512 heads scored on 2 jobs over 1",
        "/wsp_tune_512_heads/parallel_speedup",
        None,
    ),
    speed(
        "tune",
        "wsp tune's configurations a minute over Ray's on 2 CPUs",
        "/wsp_tune/jobs_2/configs_per_minute",
        Some("/ray_2_cpus/configs_per_minute"),
    ),
    time(
        "npu",
        "GEMM 128x64x256 Perf-Sim cycles over PTO-ISA's",
        "/gemm/0/ratio",
        None,
    ),
    time(
        "npu",
        "GEMM 1536x256x1024 Perf-Sim cycles over PTO-ISA's",
        "/gemm/1/ratio",
        None,
    ),
    time(
        "npu",
        "GEMM 256x4096x256 Perf-Sim cycles over PTO-ISA's",
        "/gemm/2/ratio",
        None,
    ),
    time(
        "npu",
        "flash attention small Perf-Sim cycles over PTO-ISA's",
        "/flash_attention/0/ratio",
        None,
    ),
    time(
        "npu",
        "flash attention standard Perf-Sim cycles over PTO-ISA's",
        "/flash_attention/1/ratio",
        None,
    ),
    time(
        "npu",
        "flash attention long Perf-Sim cycles over PTO-ISA's",
        "/flash_attention/2/ratio",
        None,
    ),
];

/// Each ratio of `bench` in its JSON, by name; a figure the run did not write is left out.
fn ratios_of(bench: &str, report: &Value) -> BTreeMap<String, f64> {
    RATIOS
        .iter()
        .filter(|r| r.bench == bench)
        .filter_map(|r| {
            let ours = report.pointer(r.ours)?.as_f64()?;
            let ratio = match r.anchor {
                None => ours,
                Some(a) => ours / report.pointer(a)?.as_f64().filter(|a| *a > 0.0)?,
            };
            ratio.is_finite().then(|| (r.name.to_string(), ratio))
        })
        .collect()
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Prints each ratio `bench` measured beside the baseline's, flagging a loss of more than
/// `LOSS`; returns the ratios.
pub fn compare(root: &Path, bench: &str) -> Result<BTreeMap<String, f64>, String> {
    let report = read_json(&root.join(format!("target/bench/{bench}.json")))?;
    let now = ratios_of(bench, &report);
    let baseline_path = root.join("bench/baseline.json");
    let baseline = if baseline_path.exists() {
        read_json(&baseline_path)?
    } else {
        Value::Null
    };
    for r in RATIOS.iter().filter(|r| r.bench == bench) {
        let Some(&ratio) = now.get(r.name) else {
            eprintln!("xtask: bench {bench}: {}: not measured in this run", r.name);
            continue;
        };
        let was = baseline
            .get(bench)
            .and_then(|b| b.get(r.name))
            .and_then(Value::as_f64);
        let line = match was {
            None => format!("{ratio:.3} (no baseline)"),
            Some(was) => {
                // The change in the better direction, as a fraction of the baseline.
                let gain = if r.higher_is_better {
                    ratio / was - 1.0
                } else {
                    was / ratio - 1.0
                };
                let flag = if gain < -LOSS {
                    format!("  LOSS of {:.0}% against the baseline", -gain * 100.0)
                } else {
                    String::new()
                };
                format!("{ratio:.3} against {was:.3} in the baseline{flag}")
            }
        };
        let better = if r.higher_is_better {
            "higher"
        } else {
            "lower"
        };
        eprintln!(
            "xtask: bench {bench}: {} ({better} is better): {line}",
            r.name
        );
    }
    Ok(now)
}

/// Writes `ratios` (by benchmark) into the baseline, keeping the other benchmarks' entries;
/// through a temporary file and a rename.
pub fn record(root: &Path, ratios: &BTreeMap<String, BTreeMap<String, f64>>) -> Result<(), String> {
    let path = root.join("bench/baseline.json");
    let mut baseline = if path.exists() {
        read_json(&path)?
    } else {
        Value::Object(Default::default())
    };
    let Some(map) = baseline.as_object_mut() else {
        return Err(format!("{}: not a JSON object", path.display()));
    };
    for (bench, r) in ratios {
        map.insert(
            bench.clone(),
            serde_json::to_value(r).map_err(|e| e.to_string())?,
        );
    }
    let text = serde_json::to_string_pretty(&baseline).map_err(|e| e.to_string())? + "\n";
    let dir = path.parent().expect("bench/");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp = dir.join(".baseline.json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}
