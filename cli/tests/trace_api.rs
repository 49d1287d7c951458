//! `program.trace` as the tutorial's "Profiling and Tracing" uses it, run by `wsp run`: the
//! summary and events of the simulated run at each `TraceLevel`, and `json.dump` writing the
//! Chrome trace (the same document as `--trace`) and constants as Python's `json` writes them.

mod common;

use std::path::{Path, PathBuf};

const HEADER: &str = r#"from pto_wsp import *
import json

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)

@kernel
def dbl(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.add(pto.load(x), pto.load(x)))

@kernel
def inc(y: InOut[Tile[16, 16, F32]]):
    pto.store(y, pto.exp(pto.load(y)))

@workload
def w():
    for b in P(Dense[4]):
        dbl[b](x=X[b], y=Y[b])
        inc[b](y=Y[b])

program = w().compile(target="cpu_sim")
"#;

/// Runs `body` after the header with `args`; its folder and what it printed (without
/// `wsp run`'s own stats lines).
fn run(name: &str, body: &str, args: &[&str]) -> (PathBuf, String) {
    let (dir, stdout) = common::wsp_run("trace_api", name, &format!("{HEADER}{body}"), args);
    (dir, common::printed(&stdout))
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_tutorials_profiling_section_runs_as_written() {
    let (dir, printed) = run(
        "tutorial",
        r#"
program.enable_tracing(TraceLevel.TIMING)  # or FULL for all details

program.execute()
program.synchronize()

# Print summary
program.trace.print_summary()

# Get trace events
task_events = program.trace.get_task_events()
kernel_events = program.trace.get_kernel_events("dbl")

# Get statistics
summary = program.trace.summary()
print(f"Total kernel time: {summary['kernel_time_ms']:.2f}ms")
print(f"Avg task time: {summary['avg_task_time_us']:.2f}us")
print(len(task_events), len(kernel_events), summary["task_count"], program.stats.task_count)
print(summary["total_cycles"], program.stats.total_cycles)

chrome_trace = program.trace.to_chrome_trace()
with open("trace.json", "w") as f:
    json.dump(chrome_trace, f)
with open("events.json", "w") as f:
    json.dump(kernel_events, f, indent=1)
"#,
        &["--trace", "cli-trace.json"],
    );
    let lines: Vec<&str> = printed.lines().collect();
    // The summary's figures are the clock's: checked against the stats below.
    assert_eq!(lines[0], "Execution Trace Summary:");
    assert_eq!(lines[1], "  Total events: 16");
    assert_eq!(lines[2], "  Tasks executed: 8");
    assert_eq!(lines[3], "  Kernel invocations: 8");
    assert_eq!(lines[4], "  Unique kernels: 2");
    assert!(
        lines[8].starts_with("  Simulated on ascend_910b at 1.85 GHz: "),
        "{printed}"
    );
    assert!(lines[9].starts_with("  dbl: 4 runs, "), "{printed}");
    assert!(lines[10].starts_with("  inc: 4 runs, "), "{printed}");
    assert!(lines[11].starts_with("Total kernel time: 0.0"), "{printed}");
    assert_eq!(lines[13], "8 4 8 8");
    let cycles: Vec<&str> = lines[14].split(' ').collect();
    assert_eq!(cycles[0], cycles[1], "{printed}");
    assert_ne!(cycles[0], "0");
    // `to_chrome_trace()` is the document `--trace` writes.
    let ours = json(&dir.join("trace.json"));
    assert_eq!(ours, json(&dir.join("cli-trace.json")));
    assert!(ours["traceEvents"].as_array().unwrap().len() > 16);
    // A kernel's events: its runs on cores, on the simulated clock.
    let events = json(&dir.join("events.json"));
    let events = events.as_array().unwrap();
    assert_eq!(events.len(), 4);
    let ghz = 1.85;
    for (b, e) in events.iter().enumerate() {
        assert_eq!(e["name"], "dbl");
        assert_eq!(e["category"], "kernel");
        assert_eq!(e["indices"], serde_json::json!([b]));
        let (start, end) = (
            e["start_cycle"].as_u64().unwrap(),
            e["end_cycle"].as_u64().unwrap(),
        );
        assert!(end > start);
        let us = (end - start) as f64 / (ghz * 1e3);
        assert!((e["duration_us"].as_f64().unwrap() - us).abs() < 1e-9);
        assert!(e["core"].as_u64().is_some() && e["aicpu"].as_u64().is_some());
        assert!(e.get("args").is_none(), "arguments are FULL's");
    }
    // `indent=1` as Python writes it: one item a line.
    let text = std::fs::read_to_string(dir.join("events.json")).unwrap();
    assert!(
        text.starts_with("[\n {\n  \"name\": \"dbl\",\n  \"category\": \"kernel\",\n"),
        "{text}"
    );
}

#[test]
fn each_level_records_what_the_original_says() {
    let (dir, printed) = run(
        "levels",
        r#"
print(program.trace.summary()["task_count"], program.trace.summary()["trace_level"])
program.execute()
print(program.trace.summary()["task_count"], "untraced")
program.enable_tracing(TraceLevel.SUMMARY)
program.execute()
print(program.trace.summary()["task_count"], len(program.trace.get_task_events()), program.trace.summary()["trace_level"])
program.enable_tracing(TraceLevel.FULL)
program.execute()
print(program.trace.summary()["task_count"], len(program.trace.get_task_events()), program.trace.summary()["trace_level"])
with open("full.json", "w") as f:
    json.dump(program.trace.get_task_events(), f)
program.clear_trace()
print(program.trace.summary()["task_count"], "cleared")
program.disable_tracing()
program.execute()
print(program.trace.summary()["task_count"], "after disable")
"#,
        &[],
    );
    expect_test::expect![[r#"
        0 NONE
        0 untraced
        8 0 SUMMARY
        16 8 FULL
        0 cleared
        0 after disable"#]]
    .assert_eq(&printed);
    // FULL: each task's tiles and the tasks it waited for.
    let events = json(&dir.join("full.json"));
    let events = events.as_array().unwrap();
    let first = &events[0];
    assert_eq!(first["name"], "dbl");
    assert_eq!(
        first["args"],
        serde_json::json!(["x: X[0:1, 0:16, 0:16]", "y: Y[0:1, 0:16, 0:16]"])
    );
    assert_eq!(first["deps"], serde_json::json!([]));
    let inc0 = events.iter().find(|e| e["name"] == "inc").unwrap();
    assert_eq!(inc0["args"], serde_json::json!(["y: Y[0:1, 0:16, 0:16]"]));
    assert_eq!(inc0["deps"], serde_json::json!([first["task_id"]]));
}

#[test]
fn constants_are_written_as_pythons_json_writes_them() {
    let (dir, _) = run(
        "constants",
        r#"
with open("compact.json", "w") as f:
    json.dump([1, "a", (2.5, None), True], f)
with open("out/indented.json", "w") as f:
    json.dump([1, ["a"], []], f, indent=2)
"#,
        &[],
    );
    // Python: json.dumps([1, "a", (2.5, None), True]) and json.dumps([1, ["a"], []], indent=2).
    assert_eq!(
        std::fs::read_to_string(dir.join("compact.json")).unwrap(),
        r#"[1, "a", [2.5, null], true]"#
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("out/indented.json")).unwrap(),
        "[\n  1,\n  [\n    \"a\"\n  ],\n  []\n]"
    );
}

/// The tutorial's "Kernel Tracing" block as written, with the imports its first kernel block
/// gives (`F16 = DType.F16`): a file with no program, which only prints.
const KERNEL_TRACING: &str = r#"from pto_wsp import kernel, tl, In, Out, InOut, Tile, Scalar, DType

F16 = DType.F16

@kernel
def rmsnorm(x: In[Tile[32, 128, F16]], out: Out[Tile[32, 128, F16]]):
    data = tl.load(x)
    sq = tl.mul(data, data)
    mean = tl.rowmean(sq)
    rsqrt_val = tl.rsqrt(mean)
    result = tl.mul(data, rsqrt_val)
    tl.store(out, result)

# Trace kernel to inspect IR
ir = rmsnorm.trace()
print(f"Operations: {len(ir.ops)}")
for op in ir.ops:
    print(f"  {op}")
print(ir.name, len(ir.tiles))
for name, ty in ir.params:
    print(name, ty)
"#;

#[test]
fn the_tutorials_kernel_tracing_prints_the_kernels_ir() {
    let dir = common::scratch("trace_api", "kernel_tracing");
    let file = dir.join("k.wsp");
    std::fs::write(&file, KERNEL_TRACING).unwrap();
    let out = common::wsp().arg("run").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    expect_test::expect![[r#"
        Operations: 6
          %0 = load(x) : Tile[32,128] F16
          %1 = mul(%0, %0) : Tile[32,128] F16
          %2 = rowmean(%1) : Tile[32,1] F16
          %3 = rsqrt(%2) : Tile[32,1] F16
          %4 = mul(%0, %3) : Tile[32,128] F16
          store(out, %4)
        rmsnorm 2
        x In Tile[32,128] F16
        out Out Tile[32,128] F16
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
}
