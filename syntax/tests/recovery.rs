//! Error recovery keeps the rest of the file: breaking one line of an example (dropping a `)`,
//! `]` or a block's `:`) must leave every top-level definition after the broken one intact.

mod common;

use wsp_syntax::SyntaxKind;
use wsp_syntax::ast::Stmt;

/// Top-level definitions as (kind, name, line): functions and assignments.
fn definitions(text: &str) -> Vec<(String, usize)> {
    let parse = wsp_syntax::parse(text);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    parse
        .tree()
        .statements()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => {
                let name = f.name()?;
                Some((
                    format!("def {}", name.text()),
                    line_of(name.text_range().start().into()),
                ))
            }
            Stmt::AssignStmt(a) => {
                let target = a.targets().next()?;
                let range = wsp_syntax::ast::AstNode::syntax(&target).text_range();
                Some((format!("{} =", &text[range]), line_of(range.start().into())))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_broken_line_costs_only_its_own_definition() {
    let (mut checked, mut colons) = (0, 0);
    for (path, text) in common::examples() {
        let good = definitions(&text);
        let (tokens, _) = wsp_syntax::lex(&text);
        let line_of = |offset: usize| text[..offset].matches('\n').count();
        for n in 0..text.lines().count() {
            for closer in [SyntaxKind::R_PAREN, SyntaxKind::R_BRACK, SyntaxKind::COLON] {
                // Drop the last such token on the line, leaving the file otherwise the same.
                let Some(at) = tokens
                    .iter()
                    .rposition(|t| t.kind == closer && line_of(t.range.start().into()) == n)
                else {
                    continue;
                };
                let token = &tokens[at];
                // A `:` that does not end its line is a slice's or an annotation's, and
                // without it the line may still be Python (`a[i:(j)]` is `a[i(j)]`).
                let ends_line = tokens[at + 1..]
                    .iter()
                    .find(|t| !t.kind.is_trivia())
                    .is_none_or(|t| {
                        t.kind == SyntaxKind::NEWLINE || line_of(t.range.start().into()) != n
                    });
                if closer == SyntaxKind::COLON && !ends_line {
                    continue;
                }
                let mut broken = text.clone();
                broken.replace_range(std::ops::Range::<usize>::from(token.range), "");
                let parse = wsp_syntax::parse(&broken);
                assert!(
                    !parse.errors().is_empty(),
                    "{}:{}: dropping {closer:?} went unnoticed",
                    path.display(),
                    n + 1
                );
                // Definitions that start after the broken line's statement are all still there.
                let after = |defs: &[(String, usize)]| -> Vec<String> {
                    let next_def_line = good
                        .iter()
                        .map(|d| d.1)
                        .find(|&l| l > n + 1)
                        .unwrap_or(usize::MAX);
                    defs.iter()
                        .filter(|d| d.1 > next_def_line)
                        .map(|d| d.0.clone())
                        .collect()
                };
                let got = definitions(&broken);
                assert_eq!(
                    after(&got),
                    after(&good),
                    "{}:{}: dropping {closer:?} lost later definitions",
                    path.display(),
                    n + 1
                );
                checked += 1;
                colons += usize::from(closer == SyntaxKind::COLON);
            }
        }
    }
    assert!(checked > 200, "only {checked} broken variants checked");
    assert!(colons > 50, "only {colons} block colons dropped");
}
