//! Hover facts on the examples: for each probe (a piece of text and a cursor inside it), the
//! range described and the Markdown shown, as a snapshot.

use std::fmt::Write;
use std::path::Path;

use expect_test::{ExpectFile, expect_file};
use wsp_analysis::{Database, File, TextSize, Workspace};
use wsp_ide::hover;

/// `probes`: (text to find, which occurrence from 0, the cursor's offset inside the text).
fn check(example: &str, probes: &[(&str, usize, usize)], expect: ExpectFile) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(example);
    let text = std::fs::read_to_string(&path).expect("example");
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, example.into(), text.clone());
    let mut out = String::new();
    for &(needle, nth, at) in probes {
        let start = text
            .match_indices(needle)
            .nth(nth)
            .unwrap_or_else(|| panic!("`{needle}` #{nth} not in {example}"))
            .0;
        let offset = TextSize::try_from(start + at).expect("offset");
        let line = text[..start].matches('\n').count() + 1;
        let cursor = format!("{}|{}", &needle[..at], &needle[at..]);
        let _ = writeln!(out, "== line {line}: {cursor}");
        match hover(&db, file, offset) {
            Some(h) => {
                let _ = writeln!(out, "-- on `{}`", &text[h.range]);
                let _ = writeln!(out, "{}", h.markdown);
            }
            None => out.push_str("(nothing)\n"),
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn hover_varlen_attention() {
    check(
        "varlen_attention.wsp",
        &[
            // kernel: signature, parameter, op doc with its type here, local types
            ("def attn_short", 0, 6),
            ("k: In", 0, 0),
            ("pto.matmul(q", 0, 5),
            ("s = pto.mul", 0, 0),
            ("pto.rowmax(s)", 0, 11),
            ("pto.transpose(k)", 0, 14),
            ("F16), v", 0, 6),
            // module names
            ("Q = Tensor", 0, 0),
            ("batch = Dense", 0, 0),
            ("SeqLens[b]", 0, 2),
            // workload: blocks, loop variables, views, calls
            ("for b, h in P", 0, 0),
            ("for b, h in P", 0, 12),
            ("for b, h in P", 0, 4),
            ("with P.when", 0, 8),
            ("with P.otherwise", 0, 8),
            ("k=K[b, h, 0:KV_SHORT]", 0, 2),
            ("k=K[b, h, 0:KV_SHORT]", 0, 0),
            ("attn_long[b, h]", 0, 0),
            ("attn_long[b, h]", 0, 10),
            ("tiered_attention(batch", 0, 0),
            ("DispatchPolicy.affinity", 0, 16),
            ("F16 = DType.F16", 0, 12),
            ("program = ", 0, 0),
            // nothing to say
            ("\"\"\"Variable", 0, 4),
        ],
        expect_file!["../test_data/hover/varlen_attention.txt"],
    );
}

#[test]
fn hover_pipeline_and_moe() {
    check(
        "megakernel_pipeline.wsp",
        &[
            ("with P.pipe", 0, 6),
            ("P.seq(tiles)", 0, 2),
            ("consume(l2c)", 0, 0),
            ("as t", 0, 3),
            ("t]", 0, 0),
            ("l2c = ", 0, 0),
        ],
        expect_file!["../test_data/hover/megakernel_pipeline.txt"],
    );
    check(
        "moe.wsp",
        &[("P.sel(", 0, 2), ("routing = ", 0, 0)],
        expect_file!["../test_data/hover/moe.txt"],
    );
}

#[test]
fn hover_jit_kernels() {
    check(
        "jit_kernels.wsp",
        &[
            // a JIT-style parameter: its tile type at each task that binds it
            ("x: In[Tensor]", 0, 0),
            ("y: Out[Tensor[F32]]", 0, 0),
            // the task's keyword: the type this task binds
            ("x=Tall[j]", 0, 0),
            // an op's type inside is per binding: unknown untyped
            ("pto.rowadd(x", 0, 5),
        ],
        expect_file!["../test_data/hover/jit_kernels.txt"],
    );
}

#[test]
fn hover_kernel_loops() {
    check(
        "perf/gemm_medium.wsp",
        &[
            // the loop variables, a slice and the accumulator carried across iterations
            ("for m in range", 0, 4),
            ("for k in pto.range", 0, 4),
            ("a[m * BM", 0, 0),
            ("k * BK:(k + 1)", 0, 0),
            ("acc = pto.matmul", 0, 0),
            ("acc=acc)", 0, 4),
            ("pto.store(c[m", 0, 10),
        ],
        expect_file!["../test_data/hover/gemm_medium.txt"],
    );
}
