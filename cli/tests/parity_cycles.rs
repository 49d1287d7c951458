//! The cycle hook of custom kernels: a `cpp_src` body that calls `pto::cpu_sim::add_cycles(n)`
//! costs `n` more cycles on the simulated clock, per task, from data if it likes, and
//! `total_cycles` stays the same at every worker count and with index launches off.

use serde_json::Value;

mod common;

fn program(extra: &str, batch: u32) -> String {
    looped("P.seq", extra, batch)
}

fn looped(loop_: &str, extra: &str, batch: u32) -> String {
    format!(
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor(({batch}, 8, 8), F32, init=arange())
Y = Tensor(({batch}, 8, 8), F32)


@kernel(cpp_src="""
    for (int i = 0; i < y_rows; ++i)
        for (int j = 0; j < y_cols; ++j)
            y[i * y_rs + j * y_cs] = x[i * x_rs + j * x_cs];
    pto::cpu_sim::add_cycles({extra});
""")
def copy(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


@workload
def w(batch):
    for i in {loop_}(batch):
        copy[i](x=X[i], y=Y[i])


program = w(Dense[{batch}]).compile(target="cpu_sim")
program.execute()
"#
    )
}

/// `total_cycles` of `text` run with `args`.
fn cycles(name: &str, text: &str, args: &[&str]) -> u64 {
    let dir = common::scratch("parity_cycles", name);
    let file = dir.join("p.wsp");
    std::fs::write(&file, text).unwrap();
    let stats = dir.join("stats.json");
    let out = common::wsp()
        .arg("run")
        .arg(&file)
        .arg("--stats-json")
        .arg(&stats)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap();
    v["total_cycles"].as_u64().unwrap()
}

#[test]
fn add_cycles_costs_exactly_what_the_body_says() {
    let none = cycles("none", &program("0", 1), &[]);
    let some = cycles("some", &program("1000", 1), &[]);
    assert_eq!(some, none + 1000);
    // Four tasks in order, each adding (its first element + 1) * 100: x[0] is 0, 64, 128, 192.
    let base = cycles("base4", &program("0", 4), &[]);
    let data = program("(uint64_t)(x[0] + 1) * 100", 4);
    let with = cycles("data4", &data, &["--workers", "1"]);
    assert_eq!(with, base + 100 + 6500 + 12900 + 19300);
    assert_eq!(cycles("data4-2", &data, &["--workers", "2"]), with);
    assert_eq!(
        cycles(
            "data4-nolaunch",
            &data,
            &["--workers", "2", "--no-index-launches"]
        ),
        with
    );
}

#[test]
fn index_launches_keep_each_instances_cycles() {
    // One parallel loop of one custom task: an index launch, whose instances add cycles from
    // their own data, the same as task by task.
    let data = looped("P", "(uint64_t)x[0] * 10", 64);
    let launched = cycles("launch", &data, &["--workers", "2"]);
    assert_eq!(
        cycles(
            "no-launch",
            &data,
            &["--workers", "1", "--no-index-launches"]
        ),
        launched
    );
    assert!(launched > cycles("launch-base", &looped("P", "0", 64), &[]));
}
