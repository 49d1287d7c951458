//! The parser is total: for any text it terminates, does not panic or overflow the stack, gives
//! back exactly the input text, and reports errors inside it. Reparsing after an edit gives
//! exactly what parsing the new text does.

use proptest::prelude::*;
use wsp_syntax::{Parse, TextRange, TextSize, check_invariants, parse};

mod common;

fn check(text: &str) {
    check_invariants(text);
}

/// Fragments that stress the lexer and layout more than random characters do.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    "\n",
    "\n    ",
    "\t",
    "\\\n",
    "\\",
    "'",
    "\"",
    "\"\"\"",
    "'''",
    "#",
    "@",
    "def ",
    "for ",
    " in ",
    "with ",
    "as ",
    "lambda",
    "=",
    "==",
    ",",
    ".",
    "P.seq(",
    "pto.",
    "1e-",
    "0x",
    "_",
    "\r",
    "\r\n",
    "é",
    "∂",
    "\u{FEFF}",
    "if ",
    "else",
    "async ",
    "*",
    "**",
    ":=",
    "->",
    ";",
    "class ",
    // Edits that often keep a program valid, so that reparsing splices.
    "x",
    "_1",
    "2",
    "\n# note\n",
    "\n\n",
    "    ",
    "y = 1\n",
    "else:\n    pass\n",
    "@kernel\n",
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

/// Applies `edit`, returning the replaced range of the old text and what replaced it.
fn apply(text: &mut String, edit: &Edit) -> (TextRange, String) {
    let (start, end, insert) = if text.is_empty() {
        (0, 0, String::new())
    } else {
        match *edit {
            Edit::Delete { at, len } => {
                let start = floor_char_boundary(text, at % text.len());
                (start, floor_char_boundary(text, start + len), String::new())
            }
            Edit::Insert { at, fragment } => {
                let at = floor_char_boundary(text, at % text.len());
                (at, at, FRAGMENTS[fragment].to_string())
            }
            Edit::InsertChar { at, c } => {
                let at = floor_char_boundary(text, at % text.len());
                (at, at, c.to_string())
            }
        }
    };
    text.replace_range(start..end, &insert);
    let range = TextRange::new(TextSize::new(start as u32), TextSize::new(end as u32));
    (range, insert)
}

/// How many of the old tree's top-level children the new tree holds as the same node.
fn shared(old: &Parse, new: &Parse) -> usize {
    let old = old.syntax_node().green().into_owned();
    let new = new.syntax_node().green().into_owned();
    new.children()
        .filter_map(|c| c.into_node())
        .filter(|n| {
            old.children()
                .filter_map(|c| c.into_node())
                .any(|o| std::ptr::eq(*n, o))
        })
        .count()
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
    fn reparsing_an_edit_equals_parsing_anew(which in any::<usize>(), edits in proptest::collection::vec(edit(), 1..24)) {
        let examples = common::examples();
        let mut text = examples[which % examples.len()].1.clone();
        // Half with leading trivia, so that the first statement starts after the file does.
        if which % 2 == 1 {
            text.insert_str(0, "\n# leading comment\n");
        }
        let mut tree = parse(&text);
        for e in &edits {
            let old = text.clone();
            let (range, insert) = apply(&mut text, e);
            let reparsed = tree.reparse(&old, range, &insert, &text);
            prop_assert_eq!(&reparsed, &parse(&text), "{:?} in {:?}", e, old);
            tree = reparsed;
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

/// An edit inside one kernel re-parses that statement alone: every other top-level statement of
/// the new tree is the old tree's node itself.
#[test]
fn an_edit_inside_a_statement_keeps_the_other_statements() {
    for (path, text) in common::examples() {
        let old = parse(&text);
        let statements = old.tree().statements().count();
        let at = text.find("pto.").expect("a kernel") + "pto.".len();
        let range = TextRange::empty(TextSize::new(at as u32));
        let mut new_text = text.clone();
        new_text.insert(at, 'x');
        let new = old.reparse(&text, range, "x", &new_text);
        assert_eq!(new, parse(&new_text), "{}", path.display());
        assert_eq!(shared(&old, &new), statements - 1, "{}", path.display());
    }
}

/// An edit that breaks the first statement after leading comments or blank lines reparses as
/// the whole text does: the statement starts the file's tokens but not its text.
#[test]
fn breaking_the_first_statement_after_leading_trivia() {
    for text in ["# c\nx = 1\ny = 2\n", "\n\nx = 1\ny = 2\n"] {
        let at = text.find('1').unwrap();
        let old = parse(text);
        let mut new_text = text.to_string();
        new_text.replace_range(at..at + 1, "(");
        let range = TextRange::at(TextSize::new(at as u32), TextSize::new(1));
        assert_eq!(
            old.reparse(text, range, "(", &new_text),
            parse(&new_text),
            "{text:?}"
        );
    }
}

/// Edits whose effect crosses a statement boundary: each must reparse as the whole text does.
#[test]
fn edits_that_reach_across_statements() {
    let text =
        "if x:\n    a = 1\nb = 2\n\n@kernel\ndef f(x):\n    return x\nc = [1,\n     2]\nd = 3\n";
    // (where, what to insert)
    let edits = [
        ("a = 1", "\\"), // a line continued into the next statement
        ("= 2\n", "\\"),
        ("b = 2", "else:\n    pass\n"), // an `else` that belongs to the `if` above
        ("@kernel", "@d\n"),
        ("def f", "@d\n"),
        ("c = [1,", "("),  // an open bracket swallowing what follows
        ("2]", "\"\"\""),  // an open string
        ("d = 3", "    "), // indented into the statement above
    ];
    for (at, insert) in edits {
        let at = text.find(at).unwrap()
            + if at.ends_with('\n') {
                at.len() - 1
            } else {
                at.len()
            };
        let old = parse(text);
        let mut new_text = text.to_string();
        new_text.insert_str(at, insert);
        let range = TextRange::empty(TextSize::new(at as u32));
        let reparsed = old.reparse(text, range, insert, &new_text);
        assert_eq!(reparsed, parse(&new_text), "{insert:?} at {at}");
        // And back.
        let range = TextRange::at(TextSize::new(at as u32), TextSize::of(insert));
        assert_eq!(
            reparsed.reparse(&new_text, range, "", text),
            old,
            "{insert:?} at {at}"
        );
    }
}
