//! The analyzer is total and incremental analysis is exact: random edits applied one after
//! another through one database give, after every edit, the diagnostics a fresh database gives
//! for the same text, and nothing panics.

use std::path::Path;

use proptest::prelude::*;
use wsp_analysis::{Database, Diagnostic, File, TextRange, TextSize, Workspace};

/// Tokens of the language, so random edits make near-programs rather than noise.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    ".",
    "=",
    "\n",
    "\n    ",
    "\n        ",
    "0",
    "1",
    "16",
    "128",
    "-1",
    "P",
    "P.seq",
    "P.sel",
    "pto.",
    "add",
    "matmul",
    "store",
    "load",
    "In",
    "Out",
    "InOut",
    "Tile",
    "F16",
    "F32",
    "DType.I32",
    "Dense[4]",
    "Tensor(",
    "batch",
    "b",
    "i",
    "x",
    "y",
    "@kernel\n",
    "@workload\n",
    "def ",
    "for ",
    " in ",
    "with ",
    "lambda t: t.b",
    "send(",
    "consume(",
    "Channel(\"c\")",
    "+",
    "*",
    "0:8",
    "program",
    ".compile(target=\"cpu_sim\")",
    ".dispatch(DispatchPolicy.round_robin(2))",
    "relayout(",
    "TensorLayout.sharded(dim=0, rank=3, mesh_axis=1)",
    "tl.",
    "é",
    "⊔",
    "\"",
    "#",
    "  # noqa: WSP101, WSP210",
    "# wsp: noqa",
    "# wsp: noqa-file: WSP104",
];

#[derive(Debug, Clone)]
enum Edit {
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        fragment: usize,
    },
    Replace {
        at: usize,
        len: usize,
        fragment: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..12).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len())
            .prop_map(|(at, fragment)| Edit::Insert { at, fragment }),
        (any::<usize>(), 1usize..6, 0..FRAGMENTS.len())
            .prop_map(|(at, len, fragment)| Edit::Replace { at, len, fragment }),
    ]
}

fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Where `edit` goes in `text`: the byte range it replaces and what replaces it.
fn place(text: &str, edit: &Edit) -> (TextRange, &'static str) {
    let len = text.len().max(1);
    let (start, end, insert) = match *edit {
        Edit::Delete { at, len: n } => {
            let start = boundary(text, at % len);
            (start, boundary(text, start + n), "")
        }
        Edit::Insert { at, fragment } => {
            let at = boundary(text, at % len);
            (at, at, FRAGMENTS[fragment])
        }
        Edit::Replace {
            at,
            len: n,
            fragment,
        } => {
            let start = boundary(text, at % len);
            (start, boundary(text, start + n), FRAGMENTS[fragment])
        }
    };
    let range = TextRange::new(TextSize::new(start as u32), TextSize::new(end as u32));
    (range, insert)
}

fn sources() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in [
        "examples",
        "examples/perf",
        "analysis/test_data/diagnostics",
    ] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
            .collect();
        paths.sort();
        out.extend(
            paths
                .iter()
                .map(|p| std::fs::read_to_string(p).expect("source")),
        );
    }
    out
}

fn from_scratch(text: &str) -> Vec<Diagnostic> {
    let db = Database::default();
    let workspace = Workspace::new(&db, vec![wsp_analysis::Target::AscendNpu]);
    let file = File::new(&db, workspace, "edited.wsp".into(), text.to_string());
    let diagnostics = wsp_analysis::file_diagnostics(&db, file).clone();
    // Lowering is total too, and happens exactly when there is no error.
    let has_error = diagnostics
        .iter()
        .any(|d| d.severity == wsp_analysis::Severity::Error);
    assert_eq!(wsp_analysis::lower_file(&db, file).is_none(), has_error);
    let len = wsp_syntax::TextSize::of(text);
    for d in &diagnostics {
        assert!(d.range.end() <= len, "diagnostic past the end: {d:?}");
        assert!(!d.message.is_empty());
        for (r, _) in &d.related {
            assert!(r.end() <= len, "related location past the end: {d:?}");
        }
    }
    // Suppressions, their WSP003 warnings and every fix and suppression edit stay within the
    // text, on character boundaries.
    let everything = wsp_syntax::TextRange::up_to(len);
    let shown = wsp_analysis::apply_suppressions(&db, file, diagnostics.clone(), true);
    let fixes = wsp_ide::fixes(&db, file, everything);
    let suppressions = wsp_ide::suppressions(&db, file, everything);
    for d in &shown {
        assert!(d.range.end() <= len, "diagnostic past the end: {d:?}");
    }
    for fix in fixes.iter().chain(&suppressions) {
        for (r, _) in &fix.edits {
            assert!(
                r.end() <= len
                    && text.is_char_boundary(r.start().into())
                    && text.is_char_boundary(r.end().into()),
                "{fix:?}"
            );
        }
    }
    diagnostics
}

/// The whole-file queries answer within the text, in order.
fn structure_within(db: &Database, file: File, text: &str) {
    let len = wsp_syntax::TextSize::of(text);
    let mut last = 0.into();
    for h in wsp_ide::highlights(db, file) {
        assert!(h.range.start() >= last && h.range.end() <= len, "{h:?}");
        last = h.range.end();
    }
    for (r, _) in wsp_ide::folding_ranges(db, file) {
        assert!(r.end() <= len);
    }
    for h in wsp_ide::inlay_hints(db, file, wsp_syntax::TextRange::up_to(len)) {
        assert!(h.offset <= len && text.is_char_boundary(h.offset.into()));
    }
}

/// Every editor query at every character boundary answers within the text: hover on a range
/// around the cursor, references that all spell the name under the cursor.
fn queries_everywhere(db: &Database, file: File, text: &str) {
    let len = wsp_syntax::TextSize::of(text);
    for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
        let offset = wsp_syntax::TextSize::try_from(at).expect("offset");
        if let Some(h) = wsp_ide::hover(db, file, offset) {
            assert!(h.range.end() <= len, "hover past the end at {at}: {h:?}");
            assert!(
                h.range.start() <= offset && offset <= h.range.end(),
                "hover at {at} describes {:?}",
                h.range
            );
            assert!(!h.markdown.is_empty());
        }
        for c in wsp_ide::completions(db, file, offset) {
            assert!(!c.label.is_empty(), "an empty completion at {at}");
        }
        if let Some(h) = wsp_ide::signature_help(db, file, offset) {
            for &(a, b) in &h.params {
                assert!(a <= b && b <= h.label.len() && h.label.is_char_boundary(a));
            }
            assert!(
                h.active.is_none_or(|i| i < h.params.len()),
                "at {at}: {h:?}"
            );
        }
        if let Some(n) = wsp_ide::name_at(db, file, offset) {
            let refs = wsp_ide::references(db, file, offset);
            assert_eq!(refs.first(), Some(&n.definition), "at {at}");
            for r in refs {
                assert_eq!(&text[r], n.name, "a reference of `{}` at {at}", n.name);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_from_scratch(source in 0usize..64, edits in prop::collection::vec(edit(), 1..10)) {
        let sources = sources();
        let mut text = sources[source % sources.len()].clone();
        let mut db = Database::default();
        let workspace = Workspace::new(&db, vec![wsp_analysis::Target::AscendNpu]);
        let file = File::new(&db, workspace, "edited.wsp".into(), text.clone());
        let _ = wsp_analysis::file_diagnostics(&db, file);
        for e in &edits {
            let (range, insert) = place(&text, e);
            text.replace_range(std::ops::Range::<usize>::from(range), insert);
            file.apply_edit(&mut db, range, insert);
            prop_assert_eq!(file.text(&db), &text);
            let incremental = wsp_analysis::file_diagnostics(&db, file).clone();
            prop_assert_eq!(&incremental, &from_scratch(&text), "after {:?} the text is:\n{}", e, text);
        }
        queries_everywhere(&db, file, &text);
        structure_within(&db, file, &text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        from_scratch(&text);
        let db = Database::default();
        let workspace = Workspace::new(&db, Vec::new());
        let file = File::new(&db, workspace, "any.wsp".into(), text.clone());
        queries_everywhere(&db, file, &text);
        structure_within(&db, file, &text);
    }
}

/// Trees as deep as Python parses (some 3,000 levels) are checked, lowered and queried on a
/// thread with 2 MiB of stack, the least any of our threads has (Rust's default, as rayon's and
/// tokio's workers), in a debug build: deep recursion grows the stack instead
/// of overflowing it, and run-time expressions stay shallow enough for everything that reads
/// the IR.
#[test]
fn deep_trees_on_a_small_stack() {
    let kernel = |body: String| {
        format!(
            "@kernel\ndef k(a: InOut[Tile[32, 32, F32]]):\n    x = {body}\n    pto.store(a, x)\n"
        )
    };
    let n = 2900;
    let cases = [
        format!("x = {}1\n", "-".repeat(n)),
        format!("x = {}1\n", "not ".repeat(n)),
        format!("x = 1{}\n", "+1".repeat(n)),
        format!("x = {}1\n", "2**".repeat(n)),
        format!("x = a{}\n", ".b".repeat(n)),
        format!("x = {}1\n", "1 if 1 else ".repeat(n)),
        format!("x = {}1{}\n", "(".repeat(200), ")".repeat(200)),
        format!("x = {}1{}\n", "[".repeat(199), "]".repeat(199)),
        kernel(format!("{}pto.load(a)", "-".repeat(n))),
        kernel(format!("pto.load(a){}", " + pto.load(a)".repeat(n))),
        kernel(format!(
            "{}pto.load(a){}",
            "pto.exp(".repeat(199),
            ")".repeat(199)
        )),
        format!(
            "@workload\ndef w(b):\n    for i in P(b):\n        with P.when({}i):\n            pass\n",
            "not ".repeat(n)
        ),
        format!(
            "p = w(Dense[4]).dispatch(DispatchPolicy.dispatch_by(lambda t: {}t.b))\n",
            "-".repeat(n)
        ),
    ];
    for case in cases {
        let text = format!("from pto_wsp import *\nF32 = DType.F32\n{case}");
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                from_scratch(&text);
                let db = Database::default();
                let workspace = Workspace::new(&db, Vec::new());
                let file = File::new(&db, workspace, "deep.wsp".into(), text.clone());
                structure_within(&db, file, &text);
                for (at, _) in text.char_indices().step_by(331) {
                    let offset = TextSize::try_from(at).expect("offset");
                    let _ = wsp_ide::hover(&db, file, offset);
                    let _ = wsp_ide::completions(&db, file, offset);
                    let _ = wsp_ide::signature_help(&db, file, offset);
                    let _ = wsp_ide::references(&db, file, offset);
                }
            })
            .expect("spawn")
            .join()
            .expect("no panic on a deep tree");
    }
}
