//! Top-level statements run in order and `print` prints what Python would: strings, numbers,
//! several values separated by spaces, each program's own stats (not one merged line), and
//! `program.is_complete()` as it stands at that statement.

mod common;

const TWO: &str = r#"from pto_wsp import *
F32 = DType.F32
X = Tensor((2, 16, 16), F32, init=ones())
Z = Tensor((4, 16, 16), F32, init=ones())

@kernel
def dbl(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.add(pto.load(x), pto.load(x)))

@workload
def w():
    for b in P(Dense[2]):
        dbl[b](x=X[b])

@workload
def v():
    for b in P(Dense[4]):
        dbl[b](x=Z[b])

p1 = w().compile(target="cpu_sim")
p2 = v().compile(target="cpu_sim")
print("hello")
p1.execute()
print(p1.is_complete(), p2.is_complete())
p2.execute()
print(p2.is_complete())
print(p1.stats.task_count); print(p2.stats.task_count)
print(p2.stats.task_count, "tasks", 1.5, (1, 2), [True, None])
"#;

#[test]
fn each_print_prints_its_own_values_in_order() {
    let dir = common::scratch("parity_print", "two");
    let file = dir.join("two.wsp");
    std::fs::write(&file, TWO).unwrap();
    let out = common::wsp().arg("run").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The last line is `wsp run`'s own summary of the whole run.
    let printed: Vec<&str> = stdout.lines().collect();
    expect_test::expect![[r#"
        hello
        True False
        True
        2
        4
        4 tasks 1.5 (1, 2) [True, None]"#]]
    .assert_eq(&printed[..printed.len() - 1].join("\n"));
}
