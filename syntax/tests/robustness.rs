//! The parser is total: for any text it terminates, does not panic or overflow the stack, gives
//! back exactly the input text, and reports errors inside it.

use proptest::prelude::*;
use wsp_syntax::check_invariants;

mod common;

fn check(text: &str) {
    check_invariants(text);
}

/// Fragments that stress the lexer and layout more than random characters do.
const FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ":", "\n", "\n    ", "\t", "\\\n", "\\", "'", "\"", "\"\"\"",
    "'''", "#", "@", "def ", "for ", " in ", "with ", "as ", "lambda", "=", "==", ",", ".",
    "P.seq(", "pto.", "1e-", "0x", "_", "\r", "\r\n", "é", "∂", "\u{FEFF}", "if ", "else",
    "async ", "*", "**", ":=", "->", ";", "class ",
];

#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    InsertChar { at: usize, c: char },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..8).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len())
            .prop_map(|(at, fragment)| Edit::Insert { at, fragment }),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Edit::InsertChar { at, c }),
    ]
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &mut String, edit: &Edit) {
    if text.is_empty() {
        return;
    }
    match *edit {
        Edit::Delete { at, len } => {
            let start = floor_char_boundary(text, at % text.len());
            let end = floor_char_boundary(text, start + len);
            text.replace_range(start..end, "");
        }
        Edit::Insert { at, fragment } => {
            let at = floor_char_boundary(text, at % text.len());
            text.insert_str(at, FRAGMENTS[fragment]);
        }
        Edit::InsertChar { at, c } => {
            let at = floor_char_boundary(text, at % text.len());
            text.insert(at, c);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_of_examples(which in any::<usize>(), edits in proptest::collection::vec(edit(), 1..24)) {
        let examples = common::examples();
        let mut text = examples[which % examples.len()].1.clone();
        for e in &edits {
            apply(&mut text, e);
            check(&text);
        }
    }

    #[test]
    fn arbitrary_text(text in any::<String>()) {
        check(&text);
    }

    #[test]
    fn python_shaped_text(text in "[ \t\n()\\[\\]{}:=,.a-z0-9#'\"\\\\@*+<>-]{0,300}") {
        check(&text);
    }
}

#[test]
fn pathological_nesting_and_chains() {
    let n = 100_000;
    let cases = [
        "(".repeat(n),
        format!("{}{}", "[".repeat(n), "]".repeat(n)),
        format!("x{}", ".a".repeat(n)),
        format!("x{}", "[0]".repeat(n)),
        format!("x{}", "()".repeat(n)),
        format!("1{}", " + 1".repeat(n)),
        format!("2{}", " ** 2".repeat(n)),
        format!("{}1", "-".repeat(n)),
        format!("{}x", "not ".repeat(n)),
        format!("{}1", "lambda: ".repeat(n)),
        format!("{}c", "a if b else ".repeat(n)),
        format!("{}1", "x = ".repeat(n)),
        format!("{}def f(): pass", "@d\n".repeat(n)),
        "\"".repeat(n + 1),
        "'''".repeat(n),
        (0..2_000)
            .map(|i| format!("{}if x:\n", " ".repeat(i)))
            .collect::<String>(),
        (0..2_000)
            .map(|i| format!("{}for i in P(a):\n", "\t".repeat(i)))
            .collect::<String>(),
        "\\\n".repeat(n),
        ")".repeat(n),
        "\n\t \n".repeat(n),
    ];
    for text in &cases {
        check(text);
    }
}
