//! The WSP language's syntax: a Python lexer with layout, an error-resilient event-based parser,
//! a lossless rowan tree (text → tree → text is the identity) and a typed AST over it.
//!
//! `parse` is total: any text gives a tree plus the syntax errors (WSP001) found in it.

pub mod ast;
mod builder;
mod layout;
mod lexer;
mod parser;
mod syntax_kind;
mod validation;

use std::fmt::Write;
use std::sync::Arc;

pub use line_index::{LineIndex, WideEncoding, WideLineCol};
pub use rowan::{GreenNode, TextRange, TextSize, TokenAtOffset};

pub use crate::lexer::{RawToken, lex};
pub use crate::syntax_kind::{
    LexError, SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken, WspLanguage,
};

/// A syntax error: what was expected, where.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
}

impl SyntaxError {
    pub fn new(message: String, range: TextRange) -> SyntaxError {
        SyntaxError { message, range }
    }
}

/// The result of parsing: a tree (always) and the errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    green: GreenNode,
    errors: Arc<[SyntaxError]>,
}

impl Parse {
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    pub fn tree(&self) -> ast::SourceFile {
        ast::SourceFile {
            syntax: self.syntax_node(),
        }
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// The tree and errors as text, for snapshot tests.
    pub fn debug_dump(&self, text: &str) -> String {
        let mut out = format!("{:#?}", self.syntax_node());
        let index = LineIndex::new(text);
        for e in self.errors.iter() {
            let (sl, sc) = line_col(&index, e.range.start());
            let (el, ec) = line_col(&index, e.range.end());
            let _ = writeln!(out, "error {sl}:{sc}..{el}:{ec}: {}", e.message);
        }
        out
    }
}

/// The 1-based line and column of `offset`, the column counted in characters: how every
/// message and front end (`wsp check`, the snapshots) writes a position.
pub fn line_col(index: &LineIndex, offset: TextSize) -> (u32, u32) {
    let lc = index.line_col(offset);
    let col = index
        .to_wide(WideEncoding::Utf32, lc)
        .map_or(lc.col, |w| w.col);
    (lc.line + 1, col + 1)
}

/// Parses WSP (Python-syntax) source text. Never fails, never panics.
pub fn parse(text: &str) -> Parse {
    let (mut raw, mut errors) = lexer::lex(text);
    let input = layout::layout(text, &mut raw, &mut errors);
    let (events, parse_errors) = parser::parse(text, &input);
    errors.extend(parse_errors);
    let green = builder::build(text, &raw, &input, events);
    validation::validate(&green, &mut errors);
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
    Parse {
        green,
        errors: errors.into(),
    }
}

/// Parses `text` and panics if an invariant of `parse` fails: the tree must give back exactly
/// the text, and every error must lie inside it, on character boundaries, with a message. The
/// fuzz target and the property tests call this.
pub fn check_invariants(text: &str) {
    let parse = parse(text);
    assert_eq!(
        parse.syntax_node().to_string(),
        text,
        "the tree must give back the text"
    );
    let len = TextSize::of(text);
    for e in parse.errors() {
        assert!(e.range.end() <= len, "error past the end: {e:?}");
        assert!(
            text.is_char_boundary(e.range.start().into())
                && text.is_char_boundary(e.range.end().into())
        );
        assert!(!e.message.is_empty());
    }
    // The typed AST must cope with any broken tree.
    for stmt in parse.tree().statements() {
        let _ = stmt.first_token();
    }
}
