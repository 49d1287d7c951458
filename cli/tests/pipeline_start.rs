//! The spec's `pipeline = connect([...], [...])`, `pipeline.start()`, `pipeline.join()`: the
//! pipeline runs on `cpu_sim` where `start()` stands, with the same numbers as the same
//! pipeline compiled and executed (the ported `csp_pipeline` example); anything else that
//! calls `start()` is told how to run it.

mod common;

const STARTED: &str = r#"
pipe.start()
pipe.join()
save_npy(Y, "y.npy")
"#;

const COMPILED: &str = r#"
program = pipe.compile(target="cpu_sim")
program.execute()
save_npy(Y, "y.npy")
"#;

/// The ported example up to its `connect`, then `tail`; the `Y` it saves.
fn y(name: &str, tail: &str) -> Vec<u8> {
    let example =
        std::fs::read_to_string(common::root().join("examples/ported/csp_pipeline.wsp")).unwrap();
    let head = &example[..example.find("\nprogram = (").unwrap()];
    let (dir, _) = common::wsp_run(
        "pipeline_start",
        name,
        &format!("{head}\n{tail}"),
        &["--stats-json", "stats.json"],
    );
    let stats = std::fs::read_to_string(dir.join("stats.json")).unwrap();
    assert!(stats.contains("\"task_count\": 24"), "{stats}");
    std::fs::read(dir.join("y.npy")).unwrap()
}

#[test]
fn start_runs_the_pipeline_as_compiling_and_executing_it_does() {
    assert_eq!(y("started", STARTED), y("compiled", COMPILED));
}

#[test]
fn start_on_a_workload_says_how_to_run_it() {
    let dir = common::scratch("pipeline_start", "workload");
    let file = dir.join("w.wsp");
    std::fs::write(
        &file,
        r#"from pto_wsp import *
F32 = DType.F32
X = Tensor((2, 16, 16), F32)

@kernel
def k(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.exp(x))

@workload
def w():
    for b in P(Dense[2]):
        k[b](x=X[b])

w().start()
"#,
    )
    .unwrap();
    let out = common::wsp().arg("check").arg(&file).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        format!("{stdout}{stderr}").contains("error[WSP102]: `.start()` runs a `connect(...)` pipeline; a workload is compiled and run"),
        "{stdout}{stderr}"
    );
}
