//! Completion and signature help at a cursor (`$0`) in a program, as snapshots.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, TextSize, Workspace};
use wsp_ide::{CompletionKind, completions, signature_help};

const PROGRAM: &str = r#"from pto_wsp import *

ROWS = 16
batch = Dense[4]
X = Tensor((4, ROWS, 128), DType.F32, init=ones())
Y = Tensor((4, ROWS, 128), DType.F32)


@kernel
def scale(x: In[Tile[ROWS, 128, DType.F32]], y: Out[Tile[ROWS, 128, DType.F32]]):
    t = pto.mul(x, x)
    u = pto.add(t, x)
    pto.store(y, u)


@workload
def run(b_axis: Dense):
    for b in P(b_axis):
        scale[b](x=X[b], y=Y[b])
    pass


program = run(b_axis=batch).dispatch(DispatchPolicy.round_robin(2)).compile(target="cpu_sim")
program.execute()
"#;

/// The program with `at` (the n-th occurrence of a needle, cut at the cursor) replaced by
/// `with`, and the cursor's offset after `with`.
fn edited(needle: &str, nth: usize, with: &str) -> (String, TextSize) {
    let start = PROGRAM
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` #{nth} not found"))
        .0;
    let text = format!(
        "{}{with}{}",
        &PROGRAM[..start],
        &PROGRAM[start + needle.len()..]
    );
    let cursor = with.find("$0").expect("cursor");
    let text = text.replacen("$0", "", 1);
    (text, TextSize::try_from(start + cursor).unwrap())
}

fn file(text: &str) -> (Database, File) {
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, "c.wsp".into(), text.to_string());
    (db, file)
}

fn check(cases: &[(&str, usize, &str)], expect: Expect) {
    let mut out = String::new();
    for &(needle, nth, with) in cases {
        let (text, offset) = edited(needle, nth, with);
        let (db, file) = file(&text);
        let all = completions(&db, file, offset);
        let builtins = all
            .iter()
            .filter(|c| c.kind == CompletionKind::Builtin)
            .count();
        let shown: Vec<String> = all
            .iter()
            .filter(|c| c.kind != CompletionKind::Builtin)
            .map(|c| match c.detail.as_str() {
                "" => c.label.clone(),
                d => format!("{} ({d})", c.label),
            })
            .take(12)
            .collect();
        let _ = writeln!(out, "{with:?}: {}", shown.join(", "));
        if builtins > 0 {
            let _ = writeln!(out, "    + {builtins} pto_wsp names");
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn members_ops_and_methods() {
    check(
        &[
            ("pto.mul", 0, "pto.$0mul"),
            ("pto.add", 0, "pto.ad$0"),
            ("DType.F32)\n", 0, "DType.$0)\n"),
            ("P(b_axis)", 0, "P.$0(b_axis)"),
            ("DispatchPolicy.round_robin", 0, "DispatchPolicy.r$0"),
            (".dispatch(", 0, ".$0dispatch("),
            ("program.execute", 0, "program.$0"),
        ],
        expect![[r#"
            "pto.$0mul": load (pto.load(x, pad=None)), store (pto.store(dst, v)), add (pto.add(a, b)), sub (pto.sub(a, b)), mul (pto.mul(a, b)), div (pto.div(a, b)), maximum (pto.maximum(a, b)), minimum (pto.minimum(a, b)), exp (pto.exp(x)), log (pto.log(x)), sqrt (pto.sqrt(x)), rsqrt (pto.rsqrt(x))
            "pto.ad$0": load (pto.load(x, pad=None)), store (pto.store(dst, v)), add (pto.add(a, b)), sub (pto.sub(a, b)), mul (pto.mul(a, b)), div (pto.div(a, b)), maximum (pto.maximum(a, b)), minimum (pto.minimum(a, b)), exp (pto.exp(x)), log (pto.log(x)), sqrt (pto.sqrt(x)), rsqrt (pto.rsqrt(x))
            "DType.$0)\n": F16 (DType.F16), BF16 (DType.BF16), F32 (DType.F32), F64 (DType.F64), I8 (DType.I8), I16 (DType.I16), I32 (DType.I32), I64 (DType.I64), U8 (DType.U8), U16 (DType.U16), U32 (DType.U32), U64 (DType.U64)
            "P.$0(b_axis)": seq (P.seq), sel (P.sel), when (P.when), otherwise (P.otherwise), pipe (P.pipe)
            "DispatchPolicy.r$0": round_robin (DispatchPolicy.round_robin), affinity (DispatchPolicy.affinity), hash (DispatchPolicy.hash), dispatch_by (DispatchPolicy.dispatch_by), work_steal (DispatchPolicy.work_steal)
            ".$0dispatch(": dispatch (.dispatch), streams (.streams), stream_by (.stream_by), timing (.timing), task_graph (.task_graph), spatial_map (.spatial_map), compile (.compile), with_config (.with_config), named (.named), start (.start), join (.join)
            "program.$0": execute (.execute), synchronize (.synchronize), set_symbol_u64 (.set_symbol_u64), set_symbol_f32 (.set_symbol_f32), set_axis_sizes (.set_axis_sizes), enable_tracing (.enable_tracing), disable_tracing (.disable_tracing), clear_trace (.clear_trace), is_complete (.is_complete), stats (.stats), using_cpp_backend (.using_cpp_backend), trace (.trace)
        "#]],
    );
}

#[test]
fn keywords_and_names_in_scope() {
    check(
        &[
            ("x=X[b], y=Y[b]", 0, "$0"),
            ("x=X[b], y=Y[b]", 0, "x=X[b], $0"),
            ("x=X[b], y=Y[b]", 0, "x=$0"),
            ("    pass\n", 0, "    s$0\n"),
            ("    u = pto.add", 0, "    u = pto.add($0"),
            ("program = run(", 0, "program = run($0"),
        ],
        expect![[r#"
            "$0": x= (In[Tile[16, 128, F32]]), y= (Out[Tile[16, 128, F32]]), b (loop variable), b_axis (Dense), ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4), scale (kernel(x, y))
                + 77 pto_wsp names
            "x=X[b], $0": y= (Out[Tile[16, 128, F32]]), b (loop variable), b_axis (Dense), ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4), scale (kernel(x, y))
                + 77 pto_wsp names
            "x=$0": b (loop variable), b_axis (Dense), ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4), scale (kernel(x, y))
                + 77 pto_wsp names
            "    s$0\n": b_axis (Dense), ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4), scale (kernel(x, y))
                + 77 pto_wsp names
            "    u = pto.add($0": t (Tile[16,128] F32), y (Out[Tile[16, 128, F32]]), x (In[Tile[16, 128, F32]]), ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4)
                + 77 pto_wsp names
            "program = run($0": ROWS (the integer 16), X ([4,16,128] F32), Y ([4,16,128] F32), batch (Dense 4), run (workload(b_axis)), scale (kernel(x, y))
                + 77 pto_wsp names
        "#]],
    );
}

#[test]
fn signature_help_names_the_active_parameter() {
    let mut out = String::new();
    for (needle, nth, with) in [
        ("pto.add(t, x)", 0, "pto.add(t, $0x)"),
        ("pto.add(t, x)", 0, "pto.add($0t, x)"),
        ("scale[b](x=X[b], y=Y[b])", 0, "scale[b](x=X[b], $0)"),
        ("scale[b](x=X[b], y=Y[b])", 0, "scale[b](y=Y[$0b])"),
        ("run(b_axis=batch)", 0, "run($0b_axis=batch)"),
        (
            "Tensor((4, ROWS, 128), DType.F32)",
            0,
            "Tensor((4, ROWS, 128), $0DType.F32)",
        ),
        (
            "DispatchPolicy.round_robin(2)",
            0,
            "DispatchPolicy.round_robin(2$0)",
        ),
        ("program.execute()", 0, "program.execute()$0"),
    ] {
        let (text, offset) = edited(needle, nth, with);
        let (db, file) = file(&text);
        let _ = write!(out, "{with:?}: ");
        match signature_help(&db, file, offset) {
            None => out.push_str("none\n"),
            Some(h) => {
                let params: Vec<&str> = h.params.iter().map(|&(a, b)| &h.label[a..b]).collect();
                let active = h.active.map(|i| params.get(i).copied().unwrap_or("?"));
                let _ = writeln!(
                    out,
                    "{} [{}] active {:?}",
                    h.label,
                    params.join(" | "),
                    active
                );
            }
        }
    }
    expect![[r#"
        "pto.add(t, $0x)": pto.add(a, b) [a | b] active Some("b")
        "pto.add($0t, x)": pto.add(a, b) [a | b] active Some("a")
        "scale[b](x=X[b], $0)": scale[...](x: In[Tile[16, 128, F32]], y: Out[Tile[16, 128, F32]]) [x: In[Tile[16, 128, F32]] | y: Out[Tile[16, 128, F32]]] active Some("y: Out[Tile[16, 128, F32]]")
        "scale[b](y=Y[$0b])": scale[...](x: In[Tile[16, 128, F32]], y: Out[Tile[16, 128, F32]]) [x: In[Tile[16, 128, F32]] | y: Out[Tile[16, 128, F32]]] active Some("y: Out[Tile[16, 128, F32]]")
        "run($0b_axis=batch)": run(b_axis) [b_axis] active Some("b_axis")
        "Tensor((4, ROWS, 128), $0DType.F32)": Tensor(shape, dtype, init=..., layout=...) [shape | dtype | init=... | layout=...] active Some("dtype")
        "DispatchPolicy.round_robin(2$0)": DispatchPolicy.round_robin(num_aicpus) [num_aicpus] active Some("num_aicpus")
        "program.execute()$0": none
    "#]].assert_eq(&out);
}
