//! Program methods and dispatch keywords of the original framework: `set_symbol_u64`,
//! `set_axis_sizes`, `disable_tracing`, and `num_aicpus=` on the keyed dispatch policies.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Action, Database, File, Workspace, file_diagnostics, lower_file};

fn check(tail: &str, expect: Expect) {
    let text = format!(
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((64, 16, 16), F32, init=ones())

@kernel
def double(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.add(pto.load(x), pto.load(x)))

@workload
def w(seq):
    for s in P(seq):
        double[s](x=X[s])

{tail}"#
    );
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "program.wsp".into(), text.clone());
    let mut shown = String::new();
    for d in file_diagnostics(&db, file) {
        let at = &text[d.range];
        let _ = writeln!(shown, "{} `{at}`: {}", d.code.as_str(), d.message);
    }
    if shown.is_empty() {
        let lowered = lower_file(&db, file).clone().expect("lowered");
        for p in &lowered.programs {
            for d in &p.schedule {
                let _ = writeln!(shown, "{d}");
            }
        }
        for (_, a) in &lowered.actions {
            let _ = match a {
                Action::Execute { program, bindings } => {
                    writeln!(shown, "execute {program} {bindings:?}")
                }
                other => writeln!(shown, "{other:?}"),
            };
        }
    }
    expect.assert_eq(&shown);
}

#[test]
fn set_symbol_binds_the_later_runs_and_execute_overrides_it() {
    check(
        r#"seq = DenseDyn(64)
program = w(seq).compile(target="cpu_sim")
program.execute()
program.set_symbol_u64("seq", 16)
program.execute()
program.execute(seq=8)
program.set_axis_sizes({"seq": 4})
program.disable_tracing()
program.execute()
"#,
        expect![[r#"
            execute program []
            execute program [("seq", 16)]
            execute program [("seq", 8)]
            EnableTracing { program: "program", level: None }
            execute program [("seq", 4)]
        "#]],
    );
}

#[test]
fn set_symbol_names_a_runtime_symbol_with_a_positive_value() {
    check(
        r#"seq = DenseDyn(64)
program = w(seq).compile(target="cpu_sim")
program.set_symbol_u64("seqs", 16)
program.set_symbol_u64("seq", 0)
program.set_axis_sizes({1: 4})
program.set_axis_sizes(["seq"])
"#,
        expect![[r#"
            WSP102 `"seqs"`: `seqs` is not a run-time symbol of this program (a DenseDyn axis it iterates, or a `symbol_u64(...)` its predicates and keys read); they are `seq` (default 64)
            WSP210 `1`: a run-time symbol is named by a string, not the integer 1
            WSP210 `["seq"]`: `set_axis_sizes` takes a dict literal of names to sizes: `{"seq": 16}`, not a list
        "#]],
    );
}

/// The original's channel latency is every program's, 0 or more cycles, and reaches the run.
#[test]
fn the_channel_latency_is_a_symbol_of_every_program() {
    check(
        r#"seq = DenseDyn(64)
program = w(seq).compile(target="cpu_sim")
program.set_symbol_u64("__pto_wsp_channel_latency_cycles", 50)
program.execute()
program.execute(__pto_wsp_channel_latency_cycles=0)
"#,
        expect![[r#"
            execute program [("__pto_wsp_channel_latency_cycles", 50)]
            execute program [("__pto_wsp_channel_latency_cycles", 0)]
        "#]],
    );
    check(
        r#"seq = DenseDyn(64)
program = w(seq).compile(target="cpu_sim")
program.set_symbol_u64("__pto_wsp_channel_latency_cycles", -1)
program.execute(__pto_wsp_channel_latency_cycles=1.5)
"#,
        expect![[r#"
            WSP210 `-1`: `__pto_wsp_channel_latency_cycles` is the cycles each channel delivery takes in the simulated clock: a whole number, 0 or more, not the integer -1
            WSP210 `1.5`: `__pto_wsp_channel_latency_cycles` is the cycles each channel delivery takes in the simulated clock: a whole number, 0 or more, not the number 1.5
        "#]],
    );
}

#[test]
fn keyed_dispatch_takes_the_originals_num_aicpus() {
    check(
        r#"a = w(Dense[64]).dispatch(DispatchPolicy.affinity(lambda t: t.s, num_aicpus=4)).compile(target="cpu_sim")
b = w(Dense[64]).dispatch(DispatchPolicy.hash(key_fn=lambda t: t.s)).compile(target="cpu_sim")
c = w(Dense[64]).dispatch(DispatchPolicy.dispatch_by(lambda t: t.s, 2)).compile(target="cpu_sim")
"#,
        expect![[r#"
            dispatch affinity(s, num_aicpus=4)
            dispatch hash(s)
            dispatch dispatch_by(s, num_aicpus=2)
        "#]],
    );
    check(
        r#"a = w(Dense[64]).dispatch(DispatchPolicy.affinity(lambda t: t.s, num_aicpus=-1)).compile(target="cpu_sim")
"#,
        expect![[r#"
            WSP210 `-1`: `num_aicpus` (0: every AICPU) must be a non-negative integer, not the integer -1
        "#]],
    );
}

/// f-strings: fields are checked where they are written; a spec that does not apply, a spec
/// with fields of its own, `program.stats` outside `print`, and a value with no text are errors.
#[test]
fn f_string_mistakes_point_into_the_string() {
    let text = r#"from pto_wsp import *
F32 = DType.F32
X = Tensor((2, 16, 16), F32, init=ones())
W = 8

@kernel
def k(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.load(x))

@workload
def w():
    for b in P(Dense[2]):
        k[b](x=X[b])

program = w().compile(target="cpu_sim")
a = f"{1.5:d}"
b = f"{W:{W}}"
c = f"{program.stats.task_count}"
d = f"{X}"
e = f"{undefined + 1}"
print(f"{W:.2f} {W=} {program.stats.total_cycles:,}")
"#;
    let db = wsp_analysis::Database::default();
    let ws = wsp_analysis::Workspace::new(&db, Vec::new());
    let file = wsp_analysis::File::new(&db, ws, "f.wsp".into(), text.to_string());
    let mut out = String::new();
    for d in wsp_analysis::file_diagnostics(&db, file) {
        out.push_str(&format!(
            "{} `{}`: {}\n",
            d.code.as_str(),
            &text[d.range],
            d.message
        ));
    }
    expect_test::expect![[r#"
        WSP210 `1.5`: unknown format code 'd' for object of type 'float'
        WSP002 `W`: a format spec with fields of its own (`{x:{width}}`) is not part of WSP; write the width out
        WSP210 `program.stats.task_count`: `program.stats` is known when the program runs: an f-string of it is printed directly, `print(f"...")`
        WSP210 `X`: an f-string here formats numbers, strings, `program.stats` and `program.trace` values, not the tensor `X` [2,16,16] F32
        WSP101 `undefined`: unknown name `undefined`
    "#]].assert_eq(&out);
}

/// The spec's `program.codegen_artifact_dir`: `None` for a `cpu_sim` program, which builds and
/// runs in place; an `ascend_npu` program's tree is `wsp emit`'s to write, where it is told.
#[test]
fn codegen_artifact_dir_is_none_on_cpu_sim() {
    check(
        "seq = DenseDyn(8)\nprogram = w(seq).compile(target=\"cpu_sim\")\nprint(program.codegen_artifact_dir)\n",
        expect![[r#"
            Print([Text("None")])
        "#]],
    );
    check(
        "seq = DenseDyn(8)\nprogram = w(seq).compile(target=\"ascend_npu\")\nprint(program.codegen_artifact_dir)\n",
        expect![[r#"
            WSP102 `codegen_artifact_dir`: an `ascend_npu` program's tree is written by `wsp emit FILE -o DIR`, to the folder you name: the program has no folder of its own
        "#]],
    );
}
