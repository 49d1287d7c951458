//! Folding ranges: defs, loops and `with` blocks, bracketed expressions, docstrings, runs of
//! comments and of imports.

use wsp_analysis::File;
use wsp_syntax::{SyntaxKind, SyntaxNode, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Region,
    Comment,
    Imports,
}

/// What folds: defs, loops and `with` blocks, bracketed expressions, docstrings, runs of
/// comments and of imports. Each range ends at its last token, not at the line after it.
pub fn folding_ranges(db: &dyn salsa::Database, file: File) -> Vec<(TextRange, FoldKind)> {
    let root = file.parse(db).syntax_node();
    let mut out = Vec::new();
    for node in root.descendants() {
        let start = match node.kind() {
            SyntaxKind::FUNCTION_DEF => node
                .children_with_tokens()
                .find(|t| t.kind() == SyntaxKind::DEF_KW)
                .map(|t| t.text_range().start()),
            SyntaxKind::FOR_STMT
            | SyntaxKind::WITH_STMT
            | SyntaxKind::ARG_LIST
            | SyntaxKind::PAREN_EXPR
            | SyntaxKind::TUPLE_EXPR
            | SyntaxKind::LIST_EXPR
            | SyntaxKind::DICT_EXPR => Some(node.text_range().start()),
            _ => None,
        };
        if let Some(start) = start
            && let Some(end) = last_token_end(&node)
            && start < end
        {
            out.push((TextRange::new(start, end), FoldKind::Region));
        }
    }
    let tokens = root
        .descendants_with_tokens()
        .filter_map(|e| e.into_token());
    let mut comments: Option<TextRange> = None;
    for t in tokens {
        match t.kind() {
            SyntaxKind::STRING if t.text().contains('\n') => {
                out.push((t.text_range(), FoldKind::Comment));
            }
            SyntaxKind::COMMENT => {
                comments = Some(comments.map_or(t.text_range(), |c| c.cover(t.text_range())));
            }
            SyntaxKind::WHITESPACE
            | SyntaxKind::NL
            | SyntaxKind::NEWLINE
            | SyntaxKind::INDENT
            | SyntaxKind::DEDENT => {}
            _ => {
                if let Some(c) = comments.take() {
                    out.push((c, FoldKind::Comment));
                }
            }
        }
    }
    if let Some(c) = comments {
        out.push((c, FoldKind::Comment));
    }
    let imports: Vec<TextRange> = root
        .children()
        .filter(|n| {
            matches!(
                n.kind(),
                SyntaxKind::IMPORT_STMT | SyntaxKind::FROM_IMPORT_STMT
            )
        })
        .filter_map(|n| Some(TextRange::new(n.text_range().start(), last_token_end(&n)?)))
        .collect();
    if let (Some(first), Some(last)) = (imports.first(), imports.last()) {
        out.push((first.cover(*last), FoldKind::Imports));
    }
    out.sort_by_key(|(r, _)| (r.start(), std::cmp::Reverse(r.end())));
    out
}

/// The end of a node's last token that is not trivia or layout.
fn last_token_end(node: &SyntaxNode) -> Option<wsp_syntax::TextSize> {
    let mut t = node.last_token()?;
    while t.kind().is_trivia()
        || matches!(
            t.kind(),
            SyntaxKind::NEWLINE | SyntaxKind::INDENT | SyntaxKind::DEDENT | SyntaxKind::EOF
        )
    {
        t = t.prev_token()?;
        if t.text_range().end() <= node.text_range().start() {
            return None;
        }
    }
    Some(t.text_range().end())
}
