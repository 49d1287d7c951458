//! The WSP language's syntax: a Python lexer with layout, an error-resilient event-based parser,
//! a lossless rowan tree (text → tree → text is the identity) and a typed AST over it.
//!
//! `parse` is total: any text gives a tree plus the syntax errors (WSP001) found in it.

pub mod ast;
mod builder;
mod escapes;
mod fstring;
mod layout;
mod lexer;
mod parser;
mod syntax_kind;
mod validation;

use std::fmt::Write;
use std::sync::Arc;

pub use fstring::{FStringField, FStringPart};
pub use line_index::{LineCol, LineIndex, WideEncoding, WideLineCol};
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

    /// The parse of `new_text`, which is `old_text` (the text of `self`) with `range` replaced
    /// by `insert`. Only the top-level statements the edit touches are parsed again when that
    /// gives the same tree and errors as parsing `new_text` whole; otherwise it is parsed whole.
    /// Statements outside the edit keep their green nodes, so an unchanged item stays the same
    /// node.
    pub fn reparse(&self, old_text: &str, range: TextRange, insert: &str, new_text: &str) -> Parse {
        self.reparse_statements(old_text, range, insert, new_text)
            .unwrap_or_else(|| parse(new_text))
    }

    /// The splice of `reparse`, when it is sure to be exact. Top-level statements that start a
    /// line cut the file into regions; every region the edit touches (or borders) is parsed
    /// alone. That equals the whole parse when the new regions parse without an error and no
    /// old error lies beside them: the layout is then back at column 0 with no bracket or
    /// string open at both cuts, and no lookahead across a cut (an `else` after an `if`, a
    /// decorator before a `def`) can change what the neighbours parse to. New regions with an
    /// error are parsed again in the whole file's layout (`reparse_in_file`), so an edit that
    /// breaks a statement costs that statement, not the file.
    fn reparse_statements(
        &self,
        old_text: &str,
        range: TextRange,
        insert: &str,
        new_text: &str,
    ) -> Option<Parse> {
        let old_len = TextSize::of(old_text);
        let new_len = TextSize::of(new_text);
        if self.green.text_len() != old_len
            || range.end() > old_len
            || new_len + range.len() != old_len + TextSize::of(insert)
        {
            return None;
        }
        // (offset, child index) of each cut, then the end.
        let mut cuts = vec![(TextSize::from(0), 0)];
        let mut offset = TextSize::from(0);
        for (index, child) in self.green.children().enumerate() {
            if child.as_node().is_some()
                && offset > TextSize::from(0)
                && old_text[..usize::from(offset)].ends_with('\n')
            {
                cuts.push((offset, index));
            }
            offset += child.text_len();
        }
        let children = self.green.children().len();
        cuts.push((old_len, children));
        let regions = cuts.len() - 1;
        // Regions touched by the edit, ends included: an edit at a cut touches both sides.
        let first = (0..regions).find(|&k| cuts[k + 1].0 >= range.start())?;
        let last = (0..regions).rev().find(|&k| cuts[k].0 <= range.end())?;
        let (start, end) = (cuts[first].0, cuts[last + 1].0);
        // Errors in the regions parsed again are replaced; one beside them may come from
        // lookahead across the cut.
        let touches = |e: &SyntaxError, r: TextRange| {
            e.range.start() <= r.end() && r.start() <= e.range.end()
        };
        let before = TextRange::new(cuts[first.saturating_sub(1)].0, start);
        let after = TextRange::new(end, cuts[(last + 2).min(regions)].0);
        if self
            .errors
            .iter()
            .any(|e| touches(e, before) || touches(e, after))
        {
            return None;
        }
        // A message may name a line ("to close the `[` at 52:90"): errors after an edit that
        // adds or removes lines would need new messages.
        let replaced = old_text.get(std::ops::Range::<usize>::from(range))?;
        let lines_moved = replaced.matches('\n').count() != insert.matches('\n').count();
        if lines_moved && self.errors.iter().any(|e| e.range.start() >= end) {
            return None;
        }
        let new_end = end + TextSize::of(insert) - range.len();
        // A line ending in `\` continues across the cut.
        let continued = |before: &str| {
            let line = before.strip_suffix('\n').unwrap_or(before);
            line.strip_suffix('\r').unwrap_or(line).ends_with('\\')
        };
        let (start_at, end_at) = (usize::from(start), usize::from(new_end));
        if continued(&old_text[..start_at]) || continued(new_text.get(..end_at)?) {
            return None;
        }
        let mut part = parse(new_text.get(start_at..end_at)?);
        let mut part_errors = Vec::new();
        if !part.errors.is_empty() {
            (part.green, part_errors) = reparse_in_file(new_text, start, new_end)?;
        }
        let green = self.green.splice_children(
            cuts[first].1..cuts[last + 1].1,
            part.green.children().map(|c| c.to_owned()),
        );
        // Errors before the edit stay; those after it move with the text.
        let before = self
            .errors
            .iter()
            .filter(|e| e.range.end() < start)
            .cloned();
        let after = self
            .errors
            .iter()
            .filter(|e| e.range.start() > end)
            .map(|e| SyntaxError::new(e.message.clone(), e.range - end + new_end));
        Some(Parse {
            green,
            errors: before.chain(part_errors).chain(after).collect(),
        })
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

/// Runs `f`, first adding stack to this thread when little is left. Every recursive step over
/// a syntax tree goes through it (the parser's and the analyzer's): trees as deep as CPython
/// accepts (some 3,000 levels) are then walked on any thread, an editor's worker or a rayon
/// thread with its small stack included.
pub fn grow_stack<R>(f: impl FnOnce() -> R) -> R {
    const RED_ZONE: usize = 128 * 1024;
    const GROWTH: usize = 2 * 1024 * 1024;
    stacker::maybe_grow(RED_ZONE, GROWTH, f)
}

/// Files smaller than this are parsed on the calling thread: cutting them costs more than
/// it saves.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;

/// The least text in one run of statements parsed on a thread of its own.
const CHUNK_MIN_BYTES: usize = 16 * 1024;

/// Parses WSP (Python-syntax) source text. Never fails, never panics.
///
/// A large file is cut into runs of top-level statements parsed on rayon's threads
/// (`parse_chunks`); the tree and errors are those of parsing it whole.
pub fn parse(text: &str) -> Parse {
    let (raw, input, errors) = lay_out(text);
    if text.len() >= PARALLEL_MIN_BYTES
        && rayon::current_num_threads() > 1
        && let Some(parse) = parse_chunks(text, &raw, &input, &errors)
    {
        return parse;
    }
    parse_laid_out(text, &raw, &input, errors)
}

/// `parse` on the calling thread alone: what `parse` must equal, for the tests.
#[doc(hidden)]
pub fn parse_sequential(text: &str) -> Parse {
    let (raw, input, errors) = lay_out(text);
    parse_laid_out(text, &raw, &input, errors)
}

/// `parse` cut into runs of statements at any size, or `None` where `parse` would parse the
/// file whole: for the tests.
#[doc(hidden)]
pub fn parse_in_chunks(text: &str) -> Option<Parse> {
    let (raw, input, errors) = lay_out(text);
    parse_chunks(text, &raw, &input, &errors)
}

fn parse_laid_out(
    text: &str,
    raw: &[RawToken],
    input: &layout::Input,
    mut errors: Vec<SyntaxError>,
) -> Parse {
    let (events, parse_errors) = parser::parse(text, input);
    errors.extend(parse_errors);
    let green = builder::build(text, raw, 0..raw.len(), input, 0, events, &mut errors);
    finish(green, errors)
}

fn finish(green: GreenNode, mut errors: Vec<SyntaxError>) -> Parse {
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
    Parse {
        green,
        errors: errors.into(),
    }
}

/// The statements of `text` from offset `start` to `end`, parsed in the layout of the whole
/// file, with their errors: for a region of `Parse::reparse` whose text alone parses with an
/// error, which may be one only because the file goes on (an unclosed bracket). The rest of
/// the file keeps its tree when both ends are cuts where the layout is back at the top level
/// (`Input::statement_at`), no bracket is matched across them (`layout::brackets_apart`), and
/// the region parses as in the file (`parse_run`); else `None`.
fn reparse_in_file(
    text: &str,
    start: TextSize,
    end: TextSize,
) -> Option<(GreenNode, Vec<SyntaxError>)> {
    let (raw, input, mut errors) = lay_out(text);
    let first = input.statement_at(text, start)?;
    let last = if end == TextSize::of(text) {
        input.kinds.len()
    } else {
        input.statement_at(text, end)?
    };
    let raw_range = input.raw_at(first, raw.len())..input.raw_at(last, raw.len());
    if !layout::brackets_apart(&raw, raw_range) {
        return None;
    }
    // In the whole parse's order: the lexer's and layout's, the parser's, the checks'.
    errors.retain(|e| e.range.start() >= start && e.range.start() < end);
    let (green, mut errors) = parse_run(text, &raw, &input, first..last, errors)?;
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
    Some((green, errors))
}

/// The text lexed and laid out: the raw tokens, the parser's input, the errors found so far.
fn lay_out(text: &str) -> (Vec<RawToken>, layout::Input, Vec<SyntaxError>) {
    let (mut raw, mut errors) = lexer::lex(text);
    let input = layout::layout(text, &mut raw, &mut errors);
    (raw, input, errors)
}

/// The tree of the top-level statements of parser tokens `tokens`, as a file of their own,
/// with `errors` and then the parser's and the checks': `None` unless they parse as they do
/// in the whole file. They do when the last statement ends where `tokens` end and no error of
/// theirs lies there or beyond (the parser reports one error per place, the first).
fn parse_run(
    text: &str,
    raw: &[RawToken],
    input: &layout::Input,
    tokens: std::ops::Range<usize>,
    mut errors: Vec<SyntaxError>,
) -> Option<(GreenNode, Vec<SyntaxError>)> {
    let (first, last) = (tokens.start, tokens.end);
    let (events, parse_errors, exact) = parser::parse_statements(text, input, first, last);
    let next = input.ranges.get(last).map(|r| r.start());
    if !exact || next.is_some_and(|next| parse_errors.iter().any(|e| e.range.start() >= next)) {
        return None;
    }
    errors.extend(parse_errors);
    let raw_range = input.raw_at(first, raw.len())..input.raw_at(last, raw.len());
    let green = builder::build(text, raw, raw_range, input, first, events, &mut errors);
    Some((green, errors))
}

/// Parses runs of top-level statements in parallel and joins their trees under one root, with
/// the lexer's and layout's `errors`. The parser reads the same tokens in a run as in the whole
/// file and starts each run in the state it is in there (at the top level); a run that does
/// not parse as in the file (`parse_run`: a statement that runs on past the cut) gives `None`,
/// and the file is parsed whole.
fn parse_chunks(
    text: &str,
    raw: &[RawToken],
    input: &layout::Input,
    errors: &[SyntaxError],
) -> Option<Parse> {
    use rayon::prelude::*;
    let chunk_bytes = CHUNK_MIN_BYTES.max(text.len() / (4 * rayon::current_num_threads()));
    let cuts = input.statement_cuts(text, chunk_bytes);
    if cuts.is_empty() {
        return None;
    }
    let starts: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).collect();
    let ends: Vec<usize> = cuts
        .iter()
        .copied()
        .chain(std::iter::once(input.kinds.len()))
        .collect();
    let parts: Vec<Option<(GreenNode, Vec<SyntaxError>)>> = starts
        .par_iter()
        .zip(ends.par_iter())
        .map(|(&start, &end)| parse_run(text, raw, input, start..end, Vec::new()))
        .collect();
    let mut children = Vec::new();
    let mut all_errors = errors.to_vec();
    for part in parts {
        let (green, part_errors) = part?;
        children.extend(green.children().map(|c| c.to_owned()));
        all_errors.extend(part_errors);
    }
    let green = GreenNode::new(SyntaxKind::SOURCE_FILE.into(), children);
    Some(finish(green, all_errors))
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
