//! `wsp tune` and the AutoScheduler API end to end: the best configuration an exploration
//! finds is the one with the fewest cycles when each configuration runs alone under `wsp run`;
//! the tasks run once however many configurations there are; scores are cached and a kernel's
//! change invalidates them; shards partition the space; failures are recorded, not fatal.

mod common;

use std::path::{Path, PathBuf};

use common::{root, scratch, written_schedule, wsp};
use serde_json::Value;

/// Runs `wsp tune FILE --json OUT --stats-json STATS` with a scoring cache in `cache`: the
/// document and the stats.
fn tune(file: &Path, cache: &Path, extra: &[&str]) -> (Value, Value) {
    let dir = file.parent().unwrap();
    let (json, stats) = (dir.join("tune.json"), dir.join("stats.json"));
    let out = wsp()
        .env("WSP_TUNE_CACHE", cache)
        .arg("tune")
        .arg(file)
        .arg("--json")
        .arg(&json)
        .arg("--stats-json")
        .arg(&stats)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wsp tune failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &Path| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    (read(&json), read(&stats))
}

/// `wsp run FILE ARGS...` with a scoring cache in `cache`: what it printed on standard output,
/// once it succeeded.
fn run(file: &Path, cache: &Path, args: &[&str]) -> String {
    let out = wsp()
        .env("WSP_TUNE_CACHE", cache)
        .arg("run")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "wsp run failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A tuning file of `cli/tests/tune/` without its exploration: the tensors, kernels and
/// workloads.
fn workload_of(name: &str) -> String {
    let text = std::fs::read_to_string(root().join("cli/tests/tune").join(name)).unwrap();
    text.split("# EXPLORE").next().unwrap().to_string()
}

/// A program of four tasks for the tests' own spaces: the workload `w()`.
const DOUBLE: &str = r#"from pto_wsp import *

X = Tensor((4, 16, 16), DType.F32, init=ones())
Y = Tensor((4, 16, 16), DType.F32)

@kernel
def double(x: In[Tile[16, 16, DType.F32]], y: Out[Tile[16, 16, DType.F32]]):
    pto.store(y, pto.add(x, x))

@workload
def w():
    for i in P(Dense[4]):
        double[i](x=X[i], y=Y[i])
"#;

/// A tuning file of `cli/tests/tune/` copied into a scratch folder.
fn copy(name: &str, group: &str) -> PathBuf {
    let dir = scratch("tune", group);
    let file = dir.join(name);
    std::fs::copy(root().join("cli/tests/tune").join(name), &file).unwrap();
    file
}

/// Every configuration of the exploration in `name`, each compiled as a program of its own
/// and run alone by `wsp run`, has the cycles the exploration scored, and so has the program
/// as written; the best has the fewest, the first of equals, unless the program as written
/// has fewer.
fn best_is_the_fastest_run_alone(name: &str, workload: &str, min_configs: usize) {
    let file = copy(name, name.trim_end_matches(".wsp"));
    let (doc, _) = tune(&file, &file.with_file_name("cache"), &[]);
    let x = &doc["explorations"][0];
    let configs = x["configurations"].as_array().unwrap();
    assert!(
        configs.len() >= min_configs,
        "{} configurations",
        configs.len()
    );
    let mut alone = workload_of(name);
    for c in configs {
        let i = c["index"].as_u64().unwrap();
        let d = written_schedule(&c["config"]);
        alone += &format!("p{i} = {workload}{d}.compile()\np{i}.execute()\n");
    }
    alone += &format!("written = {workload}.compile()\nwritten.execute()\n");
    let alone_file = file.with_file_name("alone.wsp");
    std::fs::write(&alone_file, alone).unwrap();
    let stats = file.with_file_name("alone-stats.json");
    let cache = file.with_file_name("cache");
    run(
        &alone_file,
        &cache,
        &["--workers", "1", "--stats-json", stats.to_str().unwrap()],
    );
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let runs = stats["executions"].as_array().unwrap();
    assert_eq!(runs.len(), configs.len() + 1);
    let written = runs[configs.len()]["total_cycles"].as_u64().unwrap();
    assert_eq!(x["baseline"]["total_cycles"].as_u64(), Some(written));
    let mut fastest: Option<(u64, u64)> = None;
    for (c, run) in configs.iter().zip(runs) {
        let i = c["index"].as_u64().unwrap();
        assert_eq!(run["program"], format!("p{i}"));
        let cycles = run["total_cycles"].as_u64().unwrap();
        assert_eq!(
            c["total_cycles"].as_u64(),
            Some(cycles),
            "configuration {i} ({}): explored vs run alone",
            c["config"]["label"]
        );
        if fastest.is_none_or(|(best, _)| cycles < best) {
            fastest = Some((cycles, i));
        }
    }
    let (cycles, index) = fastest.unwrap();
    let best = (cycles <= written).then_some(index);
    assert_eq!(
        x["best"].as_u64(),
        best,
        "written {written}, fastest {cycles}"
    );
    assert_eq!(
        configs[index as usize]["total_cycles"].as_u64(),
        Some(cycles)
    );
    // The configurations differ: the ranking is not a tie of everything.
    assert!(
        configs
            .iter()
            .any(|c| c["total_cycles"].as_u64() != Some(cycles))
    );
}

#[test]
fn decode_attention_best_is_the_fastest_run_alone() {
    best_is_the_fastest_run_alone("decode.wsp", "decode()", 50);
}

#[test]
fn moe_best_is_the_fastest_run_alone() {
    best_is_the_fastest_run_alone("moe.wsp", "moe(batch, routing)", 50);
}

/// The original's docstring example, as written (over the MoE workload): it runs, prints the
/// best configuration and the speedup, and `with_config(best_config)` runs that schedule.
#[test]
fn the_docstring_example_runs_as_written() {
    let stdout = run(
        &root().join("examples/tune/autoschedule.wsp"),
        &scratch("tune", "docstring"),
        &[],
    );
    expect_test::expect_file!["tune/autoschedule.stdout"].assert_eq(&stdout);
}

/// Kernel executions do not grow with the configurations: the graph is built once.
#[test]
fn tasks_run_once_however_many_configurations() {
    let small = copy("decode.wsp", "once-small");
    let text = std::fs::read_to_string(&small).unwrap();
    let narrow = text
        .replace("space.add_streams([1, 2, 4, 8])", "space.add_streams([1])")
        .replace("params=[1, 2, 4]", "params=[4]")
        .replace("space.add_window([None, 8])", "");
    std::fs::write(&small, narrow).unwrap();
    let large = copy("decode.wsp", "once-large");
    let (a, sa) = tune(&small, &small.with_file_name("cache"), &[]);
    let (b, sb) = tune(&large, &large.with_file_name("cache"), &[]);
    let n = |d: &Value| {
        d["explorations"][0]["configurations"]
            .as_array()
            .unwrap()
            .len()
    };
    assert!(n(&b) >= 10 * n(&a), "{} vs {}", n(&a), n(&b));
    let executions = |s: &Value| s["explorations"][0]["kernel_executions"].as_u64().unwrap();
    // 8 heads × (4 chunks + 1 finish).
    assert_eq!(executions(&sa), 40);
    assert_eq!(executions(&sb), 40);
}

/// A second run reads every score from the cache and runs no task; a changed kernel body is
/// another program, scored anew.
#[test]
fn scores_are_cached_and_a_kernel_change_invalidates_them() {
    let file = copy("moe.wsp", "cache");
    let cache = file.with_file_name("cache");
    let (first, s1) = tune(&file, &cache, &[]);
    let (second, s2) = tune(&file, &cache, &[]);
    let stat = |s: &Value, k: &str| s["explorations"][0][k].as_u64().unwrap();
    let n = first["explorations"][0]["configurations"]
        .as_array()
        .unwrap()
        .len() as u64;
    assert_eq!(stat(&s1, "cache_hits"), 0);
    assert_eq!(stat(&s2, "cache_hits"), n);
    assert_eq!(stat(&s2, "kernel_executions"), 0);
    assert_eq!(first, second);
    // The expert's second matmul doubled: more cycles, so no earlier score may be reused.
    let text = std::fs::read_to_string(&file).unwrap();
    let changed = text.replace(
        "pto.store(out, pto.matmul(pto.cast(h, F16), w_down))",
        "pto.store(out, pto.add(pto.matmul(pto.cast(h, F16), w_down), pto.matmul(pto.cast(h, F16), w_down)))",
    );
    assert_ne!(text, changed);
    std::fs::write(&file, changed).unwrap();
    let (third, s3) = tune(&file, &cache, &[]);
    assert_eq!(stat(&s3, "cache_hits"), 0);
    assert!(stat(&s3, "kernel_executions") > 0);
    assert_ne!(first, third);
}

/// `--shard i/n` for n = 1..4: the shards' configurations partition the space, and each has
/// the whole run's score.
#[test]
fn shards_partition_the_space() {
    let file = copy("moe.wsp", "shards");
    let cache = file.with_file_name("cache");
    let (whole, _) = tune(&file, &cache, &["--no-cache"]);
    let all = whole["explorations"][0]["configurations"]
        .as_array()
        .unwrap()
        .clone();
    for n in 1..=4u32 {
        let mut seen: Vec<Value> = Vec::new();
        for i in 1..=n {
            let (doc, _) = tune(&file, &cache, &["--shard", &format!("{i}/{n}")]);
            let x = &doc["explorations"][0];
            assert_eq!(x["baseline"], whole["explorations"][0]["baseline"]);
            for c in x["configurations"].as_array().unwrap() {
                assert!(!seen.contains(c), "shard {i}/{n} repeats {}", c["index"]);
                seen.push(c.clone());
            }
        }
        seen.sort_by_key(|c| c["index"].as_u64());
        assert_eq!(seen, all, "the shards of {n}");
    }
}

/// A configuration whose run fails (its key divides by zero) is recorded with its error, and
/// one the target rejects (a window that aborts, on ascend_npu) is not run; the others are
/// ranked.
#[test]
fn failed_and_rejected_configurations_are_recorded() {
    let dir = scratch("tune", "failed");
    let file = dir.join("failing.wsp");
    std::fs::write(
        &file,
        DOUBLE.to_string()
            + r#"
space = SearchSpace()
space.add_streams([1, 4])
space.add_dispatch(["round_robin", "dispatch_by"], keys=[lambda t: t.i // slot_u64(0)])
space.add_window([None, 2], modes=[WindowMode.ABORT])
best, summary = AutoScheduler(w()).explore(space, target="ascend_npu")
summary.print_summary()
"#,
    )
    .unwrap();
    let (doc, _) = tune(&file, &dir.join("cache"), &[]);
    let x = &doc["explorations"][0];
    let status: Vec<&str> = x["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        status,
        [
            "ran", "rejected", "failed", "rejected", "ran", "rejected", "failed", "rejected"
        ]
    );
    assert_eq!(x["best"].as_u64(), Some(4));
    let stdout = run(&file, &dir.join("cache"), &[]);
    expect_test::expect![[r#"
        Scheduling Exploration Summary
        ==================================================
        Configurations tested: 8
        Successful trials: 2
        Baseline time (the program as written): 0.001 ms (2009 cycles, simulated)
        Best time: 0.001 ms (2009 cycles, simulated)
        Speedup: 1.00x

        Best configuration:
          Streams: 4
          Dispatch: round_robin(4)
          Timing: immediate
        Not ranked (6):
          streams=1 round_robin(4) immediate window=2/ABORT: rejected: TaskWindow(..., WindowMode.ABORT) on ascend_npu: the AICPU expander can only stall when the window is full
          streams=1 dispatch_by(4) key=`lambda t: t.i // slot_u64(0)` immediate: failed: `(i // slot_u64(0))` divides by zero
          streams=1 dispatch_by(4) key=`lambda t: t.i // slot_u64(0)` immediate window=2/ABORT: rejected: TaskWindow(..., WindowMode.ABORT) on ascend_npu: the AICPU expander can only stall when the window is full
          streams=4 round_robin(4) immediate window=2/ABORT: rejected: TaskWindow(..., WindowMode.ABORT) on ascend_npu: the AICPU expander can only stall when the window is full
          streams=4 dispatch_by(4) key=`lambda t: t.i // slot_u64(0)` immediate: failed: `(i // slot_u64(0))` divides by zero
          streams=4 dispatch_by(4) key=`lambda t: t.i // slot_u64(0)` immediate window=2/ABORT: rejected: TaskWindow(..., WindowMode.ABORT) on ascend_npu: the AICPU expander can only stall when the window is full
    "#]]
    .assert_eq(&stdout);
}

/// Mistakes in a space are located check errors.
#[test]
fn bad_spaces_are_located_errors() {
    let dir = scratch("tune", "bad");
    let file = dir.join("bad.wsp");
    std::fs::write(
        &file,
        DOUBLE.to_string()
            + r#"
space = SearchSpace()
space.add_streams([])
space.add_dispatch(["round_robbin"])
space.add_timing(["batched"], params=[0])
space.add_window([8], modes=[WindowMode.STALL])
space.add_dispatch(["affinity"], keys=[lambda t: t.j])
best, summary = AutoScheduler(w()).explore(space, metric="cycle")
"#,
    )
    .unwrap();
    let out = wsp()
        .args(["check", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let diags: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shown: Vec<String> = diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {}:{} {}",
                d["code"].as_str().unwrap(),
                d["range"]["start"]["line"],
                d["range"]["start"]["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    expect_test::expect!["WSP503 null:null an empty list leaves nothing to explore"]
        .assert_eq(&shown.join("\n"));
}

/// `wsp emit` leaves an exploration's program out of the tree, and refuses a program whose
/// schedule an exploration chooses when the file runs, saying what to do instead.
#[test]
fn emit_leaves_explorations_out() {
    let dir = scratch("tune", "emit");
    let text = std::fs::read_to_string(root().join("cli/tests/tune/moe.wsp")).unwrap();
    let fixed = format!(
        "{text}program = moe(batch, routing).with_config(ScheduleConfig(streams=2)).compile(target=\"ascend_npu\")\nprogram.execute()\n"
    );
    let file = dir.join("fixed.wsp");
    std::fs::write(&file, fixed).unwrap();
    let out = wsp()
        .arg("emit")
        .arg(&file)
        .arg("-o")
        .arg(dir.join("tree"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = std::fs::read_to_string(dir.join("tree/plan/plan.cpp")).unwrap();
    assert!(!plan.contains("explore#"));
    let chosen = format!(
        "{text}program = moe(batch, routing).with_config(best_config).compile(target=\"ascend_npu\")\nprogram.execute()\n"
    );
    let file = dir.join("chosen.wsp");
    std::fs::write(&file, chosen).unwrap();
    let out = wsp()
        .arg("emit")
        .arg(&file)
        .arg("-o")
        .arg(dir.join("tree2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("takes the best configuration of an exploration"),
        "{err}"
    );
}

/// With `add_bindings`, each configuration's cycles are the sum over one task graph per
/// binding, each equal to a run alone with that binding; `metric="wall"` runs each
/// configuration whole `warmup + trials` times, as the original does; `verbose=True` prints
/// each configuration's score.
#[test]
fn bindings_sum_over_graphs_and_wall_time_is_the_originals() {
    let dir = scratch("tune", "bindings");
    let head = r#"from pto_wsp import *

F32 = DType.F32
requests = DenseDyn(4)
X = Tensor((16, 16, 16), F32, init=ones())
Y = Tensor((16, 16, 16), F32)

@kernel
def double(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.add(x, x))

@workload
def w(requests):
    for i in P(requests):
        double[i](x=X[i], y=Y[i])
"#;
    let file = dir.join("bind.wsp");
    std::fs::write(
        &file,
        format!(
            "{head}
space = SearchSpace()
space.add_streams([1, 2])
space.add_bindings(requests=[3, 16])
best, summary = AutoScheduler(w(requests)).explore(space, verbose=True)
print(summary.best_cycles)
"
        ),
    )
    .unwrap();
    let (doc, stats) = tune(&file, &dir.join("cache"), &["--no-cache"]);
    let x = &doc["explorations"][0];
    assert_eq!(
        x["bindings"],
        serde_json::json!([{"requests": 3}, {"requests": 16}])
    );
    // 3 + 16 tasks, once each.
    assert_eq!(stats["explorations"][0]["kernel_executions"], 19);
    for c in x["configurations"].as_array().unwrap() {
        let streams = c["config"]["streams"].as_u64().unwrap();
        let mut sum = 0;
        for r in [3, 16] {
            let alone = dir.join(format!("alone-{streams}-{r}.wsp"));
            std::fs::write(
                &alone,
                format!("{head}p = w(requests).dispatch(DispatchPolicy.round_robin(4)).streams({streams}).timing(TimingPolicy.immediate).compile()\np.execute(requests={r})\nprint(p.stats.total_cycles)\n"),
            )
            .unwrap();
            sum += run(&alone, &dir.join("cache"), &[])
                .trim()
                .parse::<u64>()
                .unwrap();
        }
        assert_eq!(
            c["total_cycles"].as_u64(),
            Some(sum),
            "{}",
            c["config"]["label"]
        );
    }
    let stdout = run(&file, &dir.join("cache"), &[]);
    assert!(
        stdout.starts_with("Exploring 2 configurations (by simulated cycles: one trial each is exact)\n  [1/2] Testing round_robin(4) streams=1 timing=immediate\n    Simulated: "),
        "{stdout}"
    );
    let wall = dir.join("wall.wsp");
    std::fs::write(
        &wall,
        format!(
            "{head}
space = SearchSpace()
space.add_streams([1, 2])
best, summary = AutoScheduler(w(requests)).explore(space, metric=\"wall\", trials=2, warmup=1)
"
        ),
    )
    .unwrap();
    let (doc, stats) = tune(&wall, &dir.join("cache"), &[]);
    let x = &doc["explorations"][0];
    assert_eq!(x["metric"], "wall");
    // The baseline and two configurations, each run 1 + 2 times, 4 tasks a run.
    assert_eq!(stats["explorations"][0]["kernel_executions"], 3 * 3 * 4);
    for c in x["configurations"].as_array().unwrap() {
        assert!(c["time_ms"].as_f64().unwrap() > 0.0, "{c}");
    }
}

/// An exploration runs on a copy of the tensors: the program's numbers after it are those of
/// the file without it, even where tasks accumulate into their outputs (`InOut`).
#[test]
fn an_exploration_changes_no_tensor() {
    let dir = scratch("tune", "numbers");
    let decode = std::fs::read_to_string(root().join("cli/tests/tune/decode.wsp")).unwrap();
    let (workload, _) = decode.split_once("# EXPLORE").unwrap();
    let program = "program = decode().compile(target=\"cpu_sim\")\nprogram.execute()\n";
    let example = format!("{workload}{program}");
    let explored = format!(
        "{workload}space = SearchSpace()\nspace.add_streams([1, 2])\nbest, summary = AutoScheduler(decode()).explore(space)\n{program}"
    );
    let mut dumps = Vec::new();
    for (name, text) in [("plain", &example), ("explored", &explored)] {
        let file = dir.join(format!("{name}.wsp"));
        std::fs::write(&file, text).unwrap();
        let out_dir = dir.join(name);
        run(
            &file,
            &dir.join("cache"),
            &["--dump-tensors", out_dir.to_str().unwrap()],
        );
        dumps.push(
            ["O", "Acc", "M", "L"]
                .map(|t| std::fs::read(out_dir.join(format!("{t}.npy"))).unwrap()),
        );
    }
    assert!(dumps[0] == dumps[1]);
}

/// `--space SPACE.toml` explores each compiled program of a file that declares no
/// exploration, as the `.wsp` statements it means would; its mistakes are the space file's.
#[test]
fn a_space_file_explores_a_file_that_declares_none() {
    let dir = scratch("tune", "space");
    let body = workload_of("moe.wsp");
    let file = dir.join("plain.wsp");
    std::fs::write(
        &file,
        format!("{body}program = moe(batch, routing).compile()\n"),
    )
    .unwrap();
    let space = dir.join("space.toml");
    std::fs::write(
        &space,
        "streams = [1, 2, 4]\ndispatch = [\"round_robin\", \"affinity\"]\ndispatch_params = [2, 4]\ndispatch_keys = [\"lambda t: t.b\"]\ntiming = [\"immediate\", \"batched\"]\ntiming_params = [2]\n",
    )
    .unwrap();
    let (doc, _) = tune(
        &file,
        &dir.join("cache"),
        &["--space", space.to_str().unwrap()],
    );
    let x = &doc["explorations"][0];
    assert_eq!(x["space_size"], 3 * 2 * 2 * 2);
    assert_eq!(x["line"], Value::Null);
    assert_eq!(
        x["configurations"][3]["config"]["label"],
        "streams=1 round_robin(4) batched(2)"
    );
    let bad = |toml: &str| {
        std::fs::write(&space, toml).unwrap();
        let out = wsp()
            .arg("tune")
            .arg(&file)
            .arg("--space")
            .arg(&space)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = bad("streams = [0]\n");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("error[WSP503]")
            && err.contains("space.toml: a stream count is at least 1, not 0"),
        "{err}"
    );
    let (code, err) = bad("stream = [1]\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown field `stream`"), "{err}");
    let (code, err) = bad("program = [\"other\"]\n");
    assert_eq!(code, Some(2));
    assert!(
        err.contains("names the program `other`, which the file does not compile"),
        "{err}"
    );
}

/// A tiled GEMM of 160 independent tasks with no schedule (`cli/tests/tune/gemm.wsp`), tuned
/// as a new user would: every stream count serialises its tasks, so no configuration of a
/// space of stream counts beats the program as written, and the tuner says so rather than
/// recommend a slower schedule. With the program's own stream count among the choices, the
/// best is no slower than the program. Configurations that set the same directives are scored
/// and shown once, and the utilisation is `wsp run`'s `core_utilization`.
#[test]
fn tuning_a_gemm_recommends_nothing_slower_than_the_program_as_written() {
    let file = copy("gemm.wsp", "gemm");
    let dir = file.parent().unwrap().to_path_buf();
    let cache = dir.join("cache");
    let space = dir.join("space.toml");
    let streams = "[1, 2, 4, 8]";
    let write_space = |streams: &str| {
        std::fs::write(
            &space,
            format!(
                "streams = {streams}\ndispatch = [\"round_robin\", \"work_steal\"]\ndispatch_params = [2, 4]\ntiming = [\"immediate\"]\ntiming_params = [1, 2]\n"
            ),
        )
        .unwrap();
    };
    write_space(streams);
    let stats = dir.join("run.json");
    run(&file, &cache, &["--stats-json", stats.to_str().unwrap()]);
    let alone: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let written = alone["total_cycles"].as_u64().unwrap();

    let (doc, _) = tune(&file, &cache, &["--space", space.to_str().unwrap()]);
    let x = &doc["explorations"][0];
    let configs = x["configurations"].as_array().unwrap();
    // 4 stream counts × round_robin(2), round_robin(4), work_steal: `immediate`'s parameter
    // and `work_steal`'s AICPU count change nothing.
    assert_eq!(configs.len(), 12);
    assert_eq!(x["space_size"], 12);
    let labels: std::collections::BTreeSet<&str> = configs
        .iter()
        .map(|c| c["config"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 12, "{labels:?}");
    assert_eq!(x["baseline"]["total_cycles"].as_u64(), Some(written));
    assert_eq!(
        x["baseline"]["core_utilization"], alone["core_utilization"],
        "the baseline's utilisation is wsp run's"
    );
    assert!(
        configs
            .iter()
            .all(|c| c["total_cycles"].as_u64().unwrap() > written)
    );
    assert_eq!(x["best"], Value::Null);
    assert_eq!(x["speedup"], 1.0);
    let out = wsp()
        .env("WSP_TUNE_CACHE", &cache)
        .args([
            "tune",
            file.to_str().unwrap(),
            "--space",
            space.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("best: the program as written. No configuration of the space beats it"),
        "{table}"
    );

    // With the program's own stream count among the choices.
    write_space("[\"None\", 1, 2, 4, 8]");
    let (doc, _) = tune(&file, &cache, &["--space", space.to_str().unwrap()]);
    let x = &doc["explorations"][0];
    let best = x["best"].as_u64().map(|b| {
        x["configurations"][b as usize]["total_cycles"]
            .as_u64()
            .unwrap()
    });
    assert!(
        best.is_none_or(|b| b <= written),
        "best {best:?} vs as written {written}"
    );
    assert_eq!(x["configurations"].as_array().unwrap().len(), 15);
    assert_eq!(x["configurations"][0]["config"]["streams"], Value::Null);
}

/// `auto_schedule(w, verbose=True)` says what it selected, in the original's words.
#[test]
fn auto_schedule_verbose_says_what_it_selected() {
    let dir = scratch("tune", "auto");
    let body = workload_of("moe.wsp");
    let file = dir.join("auto.wsp");
    std::fs::write(
        &file,
        format!(
            "{body}p = auto_schedule(moe(batch, routing), verbose=True).compile()\np.execute()\n"
        ),
    )
    .unwrap();
    assert_eq!(
        run(&file, &dir.join("cache"), &[]),
        "Auto-schedule selected: streams=8, dispatch=round_robin\n"
    );
}
