//! Suppression comments: `# noqa: CODES` and `# wsp: noqa` on a diagnostic's line, `# wsp:
//! noqa-file` for the file; what each drops, the WSP003 warning of one that drops nothing, and
//! that warning's fix.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, apply_suppressions, file_diagnostics};

/// The diagnostics left after the suppressions, each with the text its fix gives the line.
fn check(text: &str, expect: Expect) {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "m.wsp".into(), text.to_string());
    let all = file_diagnostics(&db, file).clone();
    let mut shown = String::new();
    for d in apply_suppressions(&db, file, all, true) {
        let _ = writeln!(
            shown,
            "{} `{}`: {}",
            d.code.as_str(),
            &text[d.range],
            d.message
        );
        if let (wsp_analysis::Code::UnusedSuppression, Some(fix)) = (d.code, &d.fix) {
            let fixed = fix.apply(text);
            let line = text[..usize::from(d.range.start())].matches('\n').count();
            let _ = writeln!(
                shown,
                "  {}: {:?}",
                fix.title,
                fixed.lines().nth(line).unwrap_or("")
            );
        }
    }
    expect.assert_eq(&shown);
}

#[test]
fn each_form_drops_what_it_names() {
    check(
        r#"# wsp: noqa-file: WSP104
from pto_wsp import *

F32 = DType.F32
a = undefined_a  # noqa: WSP101
b = undefined_b  # wsp: noqa
c = undefined_c  # noqa
d = undefined_d  # noqa: E501
e = undefined_e  # NOQA:WSP101,E501
f = undefined_f  # why it is fine  # noqa: WSP101
g = undefined_g  # noqa: WSP102

@kernel
def act(x: In[Tile[16, 128, F32]], y: Out[Tile[16, 128, F32]]):
    pto.store(y, tl.relu(x))
"#,
        expect![[r#"
            WSP101 `undefined_d`: unknown name `undefined_d`
            WSP101 `undefined_g`: unknown name `undefined_g`
            WSP003 `# noqa: WSP102`: this suppression of `WSP102` drops no diagnostic on its line
              remove the unused suppression: "g = undefined_g"
        "#]],
    );
}

#[test]
fn a_suppression_that_drops_nothing_is_reported_with_its_removal() {
    check(
        r#"# wsp: noqa-file: WSP501
from pto_wsp import *

# R ⊔ S(i) = S(i)  # ⊔ noqa: é  # nöqa  # wsp: ⊔
x = undefined_x  # noqa: WSP102, WSP101, WSP103
v = 1  # noqa: WSP101
u = 2  # wsp: noqa
t = 3  # a comment  # noqa: WSP999
w = 4  # noqa
z = 5  # noqa-ish: WSP101
"#,
        expect![[r#"
            WSP003 `# wsp: noqa-file: WSP501`: this suppression of `WSP501` drops no diagnostic in this file
              remove the unused suppression: "from pto_wsp import *"
            WSP003 `WSP102, WSP101, WSP103`: `WSP102` and `WSP103` in this suppression drop no diagnostic on its line
              remove `WSP102` and `WSP103` from the suppression: "x = undefined_x  # noqa: WSP101"
            WSP003 `# noqa: WSP101`: this suppression of `WSP101` drops no diagnostic on its line
              remove the unused suppression: "v = 1"
            WSP003 `# wsp: noqa`: this suppression of every code drops no diagnostic on its line
              remove the unused suppression: "u = 2"
            WSP003 `# noqa: WSP999`: this suppression of `WSP999` drops no diagnostic on its line (`WSP999` is no WSP code)
              remove the unused suppression: "t = 3  # a comment"
        "#]],
    );
}

/// The edit that suppresses a code on a line: appended to the line's `# noqa:` list, else a
/// comment at the line's end (after another comment too); none inside a multi-line string or
/// for a syntax error.
#[test]
fn a_suppression_is_written_where_a_comment_can_go() {
    let text = r#"from pto_wsp import *
a = undefined_a  # noqa: WSP102
b = undefined_b  # why
c = undefined_c
d = """text
""" + undefined_d
"#;
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "m.wsp".into(), text.to_string());
    let mut shown = String::new();
    for name in ["undefined_a", "undefined_b", "undefined_c", "text"] {
        let at = wsp_analysis::TextSize::from(text.find(name).unwrap() as u32);
        let edit = wsp_analysis::suppress_edit(&db, file, at, wsp_analysis::Code::UnknownName);
        let line = match edit {
            Some((range, insert)) => {
                let mut fixed = text.to_string();
                fixed.replace_range(
                    usize::from(range.start())..usize::from(range.end()),
                    &insert,
                );
                let n = text[..usize::from(at)].matches('\n').count();
                fixed.lines().nth(n).unwrap().to_string()
            }
            None => "(none)".to_string(),
        };
        let _ = writeln!(shown, "{name}: {line}");
    }
    let at = wsp_analysis::TextSize::from(0);
    assert!(wsp_analysis::suppress_edit(&db, file, at, wsp_analysis::Code::Syntax).is_none());
    expect![[r#"
        undefined_a: a = undefined_a  # noqa: WSP102, WSP101
        undefined_b: b = undefined_b  # why  # noqa: WSP101
        undefined_c: c = undefined_c  # noqa: WSP101
        text: (none)
    "#]]
    .assert_eq(&shown);
}
