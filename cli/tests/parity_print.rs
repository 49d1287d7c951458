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

/// What `wsp run` prints for `program`, which must run: standard output (the program's
/// prints) and standard error (`wsp run`'s own summary).
fn run_both(name: &str, program: &str) -> (String, String) {
    let dir = common::scratch("parity_print", name);
    let file = dir.join(format!("{name}.wsp"));
    std::fs::write(&file, program).unwrap();
    let out = common::wsp().arg("run").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What the program printed.
fn run(name: &str, program: &str) -> String {
    run_both(name, program).0
}

#[test]
fn each_print_prints_its_own_values_in_order() {
    let (stdout, stderr) = run_both("two", TWO);
    // `wsp run`'s own lines are on standard error: each execution's stats, then the whole
    // run's; standard output is the program's prints alone.
    let own: Vec<&str> = stderr
        .lines()
        .map(|l| l.split_once(": {").map_or(l, |(label, _)| label))
        .collect();
    assert_eq!(own, ["p1, execute #1", "p2, execute #1", "whole run"]);
    expect_test::expect![[r#"
        hello
        True False
        True
        2
        4
        4 tasks 1.5 (1, 2) [True, None]"#]]
    .assert_eq(stdout.trim_end());
}

/// The seeds' tutorial prints with f-strings: fields known when the file is checked are
/// formatted then, `program.stats` fields when the statement runs, with Python's format specs.
const FSTRINGS: &str = r#"from pto_wsp import *
import math
F32 = DType.F32
N = 4
X = Tensor((N, 16, 16), F32, init=ones())
label = f"dbl x{N}"

@kernel
def dbl(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.add(pto.load(x), pto.load(x)))

@workload
def w():
    for b in P(Dense[N]):
        dbl[b](x=X[b])

program = w().compile(target="cpu_sim")
print(f"{label}: pi is {math.pi:.3f}, {N=}, {N!r:>4}|{'{'}braces{'}'} and {{literal}}")
program.execute()
program.synchronize()
print(f"Tasks: {program.stats.task_count}")
print(f"tasks {program.stats.task_count:>6,}|{program.stats.task_count:<4d}|", f"{N * 2}")
print(f"Compile time: {program.stats.compile_time_ms:.2f}ms")
print(program.stats.core_utilization, f"{program.stats.critical_path_cycles:,} {program.stats.simulated_time_us:.1f}")
print(program.stats.simulated_time_us, f"{program.stats.simulated_time_us}")
"#;

#[test]
fn f_strings_print_as_python_does() {
    let stdout = run("fstrings", FSTRINGS);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "dbl x4: pi is 3.142, N=4,    4|{braces} and {literal}"
    );
    assert_eq!(lines[1], "Tasks: 4");
    assert_eq!(lines[2], "tasks      4|4   | 8");
    assert!(
        lines[3].starts_with("Compile time: ") && lines[3].ends_with("ms"),
        "{}",
        lines[3]
    );
    let ms = &lines[3]["Compile time: ".len()..lines[3].len() - 2];
    assert!(
        ms.split_once('.').is_some_and(|(_, d)| d.len() == 2),
        "{ms}"
    );
    // The new stats fields: utilisation per unit, the critical path and the simulated time.
    assert!(
        lines[4].starts_with("{'cube': 0.000, 'vector': 0.0"),
        "{}",
        lines[4]
    );
    let (_, rest) = lines[4].split_once("} ").unwrap();
    let (critical, us) = rest.split_once(' ').unwrap();
    assert!(
        critical.replace(',', "").parse::<u64>().unwrap() > 0,
        "{rest}"
    );
    assert!(
        us.split_once('.').is_some_and(|(_, d)| d.len() == 1),
        "{rest}"
    );
    // A float field prints as Python prints a float, in full, with or without an f-string.
    let (printed, formatted) = lines[5].split_once(' ').unwrap();
    assert_eq!(printed, formatted);
    assert!(printed.parse::<f64>().is_ok(), "{}", lines[5]);
}
