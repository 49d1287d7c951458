//! Navigation: for a name under the cursor, its kind, its definition and every reference, and
//! what a rename edits or why it is refused, as snapshots.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, TextRange, TextSize, Workspace};
use wsp_ide::{file_symbols, name_at, references, rename};

const PROGRAM: &str = r#"from pto_wsp import *

ROWS = 16
batch = Dense[4]
X = Tensor((4, ROWS, 128), DType.F32, init=ones())
Y = Tensor((4, ROWS, 128), DType.F32)


@kernel
def scale(x: In[Tile[ROWS, 128, DType.F32]], y: Out[Tile[ROWS, 128, DType.F32]]):
    t = pto.mul(x, x)
    t = pto.add(t, x)
    pto.store(y, t)


@workload
def run(b_axis: Dense):
    for b in P(b_axis):
        scale[b](x=X[b], y=Y[b])
    for b in P(b_axis):
        scale[b](y=Y[b], x=X[b])


program = run(b_axis=batch).compile(target="cpu_sim")
program.execute()
"#;

fn setup() -> (Database, File) {
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, "nav.wsp".into(), PROGRAM.to_string());
    (db, file)
}

fn at(needle: &str, nth: usize, cursor: usize) -> TextSize {
    let start = PROGRAM
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` #{nth} not found"))
        .0;
    TextSize::try_from(start + cursor).unwrap()
}

fn place(r: TextRange) -> String {
    let before = &PROGRAM[..usize::from(r.start())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{col}")
}

/// Each range of `text` as `LINE:TEXT`, sorted, space-separated.
fn lines_and_texts(text: &str, ranges: impl IntoIterator<Item = TextRange>) -> String {
    let mut out: Vec<String> = ranges
        .into_iter()
        .map(|r| {
            let line = text[..usize::from(r.start())].matches('\n').count() + 1;
            format!("{line}:{}", &text[r])
        })
        .collect();
    out.sort();
    out.join(" ")
}

fn check(probes: &[(&str, usize, usize)], expect: Expect) {
    let (db, file) = setup();
    let mut out = String::new();
    for &(needle, nth, cursor) in probes {
        let offset = at(needle, nth, cursor);
        let _ = write!(out, "{}|{}: ", &needle[..cursor], &needle[cursor..]);
        match name_at(&db, file, offset) {
            None => out.push_str("nothing\n"),
            Some(n) => {
                let refs: Vec<String> = references(&db, file, offset)
                    .into_iter()
                    .map(|r| {
                        assert_eq!(&PROGRAM[r], n.name);
                        place(r)
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "{} {:?} defined at {}; references {}",
                    n.name,
                    n.kind,
                    place(n.definition),
                    refs.join(" ")
                );
            }
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn definitions_and_references() {
    check(
        &[
            ("ROWS, 128), DType", 0, 0),
            ("Tile[ROWS", 1, 5),
            ("batch).compile", 0, 2),
            ("X = Tensor", 0, 0),
            ("x=X[b]", 0, 2),
            ("def scale", 0, 5),
            ("scale[b](y", 0, 3),
            ("x: In", 0, 0),
            ("mul(x, x)", 0, 4),
            ("x=X[b]", 1, 0),
            ("t = pto.add", 0, 0),
            ("add(t, x)", 0, 4),
            ("store(y, t)", 0, 9),
            ("b_axis: Dense", 0, 2),
            ("run(b_axis=", 0, 6),
            ("for b in", 0, 4),
            ("X[b], y=Y[b])", 0, 2),
            ("x=X[b])", 0, 4),
            ("program.execute", 0, 3),
            // no symbol: builtins, ops, keywords, strings
            ("P(b_axis)", 0, 0),
            ("pto.mul", 0, 5),
            ("def run", 0, 1),
            ("cpu_sim", 0, 2),
        ],
        expect![[r#"
            |ROWS, 128), DType: ROWS Constant defined at 3:1; references 3:1 5:16 6:16 10:22 10:58
            Tile[|ROWS: ROWS Constant defined at 3:1; references 3:1 5:16 6:16 10:22 10:58
            ba|tch).compile: batch Axis defined at 4:1; references 4:1 24:22
            |X = Tensor: X Tensor defined at 5:1; references 5:1 19:20 21:28
            x=|X[b]: X Tensor defined at 5:1; references 5:1 19:20 21:28
            def s|cale: scale Kernel defined at 10:5; references 10:5 19:9 21:9
            sca|le[b](y: scale Kernel defined at 10:5; references 10:5 19:9 21:9
            |x: In: x Parameter defined at 10:11; references 10:11 11:17 11:20 12:20 19:18 21:26
            mul(|x, x): x Parameter defined at 10:11; references 10:11 11:17 11:20 12:20 19:18 21:26
            |x=X[b]: x Parameter defined at 10:11; references 10:11 11:17 11:20 12:20 19:18 21:26
            |t = pto.add: t Variable defined at 12:5; references 12:5 13:18
            add(|t, x): t Variable defined at 11:5; references 11:5 12:17
            store(y, |t): t Variable defined at 12:5; references 12:5 13:18
            b_|axis: Dense: b_axis Parameter defined at 17:9; references 17:9 18:16 20:16 24:15
            run(b_|axis=: b_axis Parameter defined at 17:9; references 17:9 18:16 20:16 24:15
            for |b in: b Variable defined at 18:9; references 18:9 19:15 19:22 19:30
            X[|b], y=Y[b]): b Variable defined at 18:9; references 18:9 19:15 19:22 19:30
            x=X[|b]): b Variable defined at 20:9; references 20:9 21:15 21:22 21:30
            pro|gram.execute: program Program defined at 24:1; references 24:1 25:1
            |P(b_axis): nothing
            pto.m|ul: nothing
            d|ef run: nothing
            cp|u_sim: nothing
        "#]],
    );
}

#[test]
fn rename_edits_every_occurrence_or_says_why_not() {
    let (db, file) = setup();
    let mut out = String::new();
    for (needle, nth, cursor, new) in [
        ("x: In", 0, 0, "src"),
        ("X = Tensor", 0, 0, "A"),
        ("for b in", 1, 4, "j"),
        ("scale[b](y", 0, 0, "scale2"),
        ("X = Tensor", 0, 0, "Y"),
        ("X = Tensor", 0, 0, "P"),
        ("X = Tensor", 0, 0, "2x"),
        ("X = Tensor", 0, 0, "for"),
        ("x: In", 0, 0, "t"),
        ("pto.mul", 0, 5, "mult"),
    ] {
        let _ = write!(out, "{needle:?} -> {new}: ");
        match rename(&db, file, at(needle, nth, cursor), new) {
            Ok(edits) => {
                let places: Vec<String> = edits.into_iter().map(place).collect();
                let _ = writeln!(out, "{}", places.join(" "));
            }
            Err(why) => {
                let _ = writeln!(out, "refused: {why}");
            }
        }
    }
    expect![[r#"
        "x: In" -> src: 10:11 11:17 11:20 12:20 19:18 21:26
        "X = Tensor" -> A: 5:1 19:20 21:28
        "for b in" -> j: 20:9 21:15 21:22 21:30
        "scale[b](y" -> scale2: 10:5 19:9 21:9
        "X = Tensor" -> Y: refused: `Y` is already defined in this file
        "X = Tensor" -> P: refused: `P` is a `pto_wsp` name
        "X = Tensor" -> 2x: refused: `2x` is not a name
        "X = Tensor" -> for: refused: `for` is not a name
        "x: In" -> t: refused: `t` is already used in `scale`
        "pto.mul" -> mult: refused: there is no kernel, workload, tensor, axis or parameter here
    "#]]
    .assert_eq(&out);
}

#[test]
fn outline() {
    let (db, file) = setup();
    let mut out = String::new();
    for s in file_symbols(&db, file) {
        let _ = writeln!(
            out,
            "{} {:?} at {} ({})",
            s.name,
            s.kind,
            place(s.name_range),
            s.detail
        );
        for c in s.children {
            let _ = writeln!(
                out,
                "  {} {:?} at {} ({})",
                c.name,
                c.kind,
                place(c.name_range),
                c.detail
            );
        }
    }
    expect![[r#"
        ROWS Constant at 3:1 (the integer 16)
        batch Axis at 4:1 (Dense 4)
        X Tensor at 5:1 ([4,16,128] F32)
        Y Tensor at 6:1 ([4,16,128] F32)
        scale Kernel at 10:5 (kernel(x, y))
          x Parameter at 10:11 (In[Tile[16, 128, F32]])
          y Parameter at 10:46 (Out[Tile[16, 128, F32]])
        run Workload at 17:5 (workload(b_axis))
          b_axis Parameter at 17:9 (Dense)
        program Program at 24:1 (a compiled program)
    "#]]
    .assert_eq(&out);
}

/// The process builder's bodies are work over lambda indices: their names are found, and a
/// resource key (`{"src": ...}`) is the kernel parameter's name, inside its quotes.
#[test]
fn process_bodies_are_navigated() {
    let text = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)
tiles = Dense[4]()
ch = Channel("ch", depth=2)

@kernel
def copy(src: In[Tile[16, 16, F32]], dst: Out[Tile[16, 16, F32]]):
    pto.store(dst, src)

loader = process("loader").produces(ch).body(
    for_each(tiles, lambda t: send(ch, task(copy, [t], {"src": X[t], "dst": Y[t]})))
)
program = connect([loader, process("sink").consumes(ch).body(
    consume(ch, lambda u: copy[u](src=Y[u], dst=X[u])))], [ch]).compile()
"#;
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, "csp.wsp".into(), text.to_string());
    let spots = |needle: &str, new: &str| {
        let offset = TextSize::try_from(text.find(needle).unwrap()).unwrap();
        let edits = rename(&db, file, offset, new).unwrap_or_else(|e| panic!("{needle}: {e}"));
        lines_and_texts(text, edits)
    };
    expect!["14:X 17:X 4:X"].assert_eq(&spots("X = Tensor", "A"));
    expect![[r#"10:src 11:src 14:src 17:src"#]].assert_eq(&spots("src: In", "source"));
    expect![[r#"14:t 14:t 14:t 14:t"#]].assert_eq(&spots("t: send", "tile"));
    expect![[r#"17:u 17:u 17:u 17:u"#]].assert_eq(&spots("u: copy", "i"));
}

/// `B, S = 2, 16` binds each name as its own definition: found, renamed and hovered one by one.
#[test]
fn unpacking_binds_each_name() {
    let text = "from pto_wsp import *\nB, S = 2, 16\nX = Tensor((B, S), DType.F32)\nY = Tensor((S, B), DType.F32)\n";
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, "unpack.wsp".into(), text.to_string());
    assert!(wsp_analysis::file_diagnostics(&db, file).is_empty());
    let spots = |offset: usize| {
        let offset = TextSize::try_from(offset).unwrap();
        lines_and_texts(text, references(&db, file, offset))
    };
    let b = text.find("B, S").unwrap();
    let s = b + 3;
    expect!["2:B 3:B 4:B"].assert_eq(&spots(b));
    expect!["2:S 3:S 4:S"].assert_eq(&spots(s));
    expect!["2:S 3:S 4:S"].assert_eq(&spots(text.find("(S, B)").unwrap() + 1));
}
