//! The parser: reads the layout's significant tokens and emits a flat stream of events (start
//! node, token, finish node, error). It builds no tree; `builder.rs` does, adding trivia back.
//!
//! As in rust-analyzer, a `Marker` must be completed or abandoned, and `precede` wraps an
//! already-completed node for left-recursive constructs without backtracking.

mod expressions;
mod patterns;
mod statements;

use std::cell::OnceCell;

use drop_bomb::DropBomb;
use line_index::LineIndex;
use rowan::{TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::{self, *};
use crate::layout::Input;

/// Max depth of an expression's tree: its nesting plus the operators folded into it (see
/// `expressions::extend_chain`). CPython gives up near 3,000 levels too (its recursion limit:
/// 2,985 nested unary minuses or chained `+` parse, 2,986 do not). Brackets have their own,
/// lower limit in the layout (200, as CPython's tokenizer).
pub(crate) const MAX_EXPR_DEPTH: u32 = 3000;
/// Max nesting of blocks: CPython's tokenizer takes 99 indented levels below the module.
const MAX_BLOCK_DEPTH: u32 = 99;

/// What the parser did, in order. Errors are kept apart, so an event is 8 bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// `forward_parent`: distance to the Start of the node that `precede` put around this one;
    /// 0 when there is none.
    Start {
        kind: SyntaxKind,
        forward_parent: u32,
    },
    Finish,
    Token,
    Tombstone,
}

/// A set of token kinds, as a bitset.
#[derive(Clone, Copy)]
pub(crate) struct TokenSet(u128);

impl TokenSet {
    pub(crate) const fn new(kinds: &[SyntaxKind]) -> TokenSet {
        let mut bits = 0u128;
        let mut i = 0;
        while i < kinds.len() {
            bits |= 1u128 << kinds[i] as u16;
            i += 1;
        }
        TokenSet(bits)
    }

    pub(crate) const fn contains(self, kind: SyntaxKind) -> bool {
        (kind as u16) < 128 && self.0 & (1u128 << kind as u16) != 0
    }
}

pub(crate) struct Parser<'t> {
    text: &'t str,
    input: &'t Input,
    pos: usize,
    events: Vec<Event>,
    errors: Vec<SyntaxError>,
    expr_depth: u32,
    /// Operators folded into the expressions now open; see `MAX_EXPR_DEPTH`.
    chain: u32,
    block_depth: u32,
    last_error_at: Option<TextSize>,
    line_index: OnceCell<LineIndex>,
}

impl<'t> Parser<'t> {
    pub(crate) fn new(text: &'t str, input: &'t Input) -> Parser<'t> {
        Parser {
            text,
            input,
            pos: 0,
            events: Vec::with_capacity(input.kinds.len() * 3),
            errors: Vec::new(),
            expr_depth: 0,
            chain: 0,
            block_depth: 0,
            last_error_at: None,
            line_index: OnceCell::new(),
        }
    }

    pub(crate) fn finish(self) -> (Vec<Event>, Vec<SyntaxError>) {
        (self.events, self.errors)
    }

    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        self.input.kinds.get(self.pos + n).copied().unwrap_or(EOF)
    }

    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn at_ts(&self, set: TokenSet) -> bool {
        set.contains(self.current())
    }

    pub(crate) fn current_range(&self) -> TextRange {
        self.range_of(self.pos)
    }

    /// The range of the token before the current one.
    pub(crate) fn prev_range(&self) -> TextRange {
        self.range_of(self.pos.saturating_sub(1))
    }

    fn range_of(&self, pos: usize) -> TextRange {
        self.input
            .ranges
            .get(pos)
            .copied()
            .unwrap_or_else(|| TextRange::empty(TextSize::of(self.text)))
    }

    /// Consumes the current token; does nothing at the end.
    pub(crate) fn bump(&mut self) {
        if self.pos < self.input.kinds.len() && !self.at(EOF) {
            self.pos += 1;
            self.events.push(Event::Token);
        }
    }

    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes `kind` or reports it missing.
    pub(crate) fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.eat(kind) {
            return true;
        }
        let found = self.found();
        self.error(format!("expected {}, found {found}", kind.describe()));
        false
    }

    /// Consumes the bracket `close` that matches `open`, or reports where `open` was.
    pub(crate) fn expect_closing(&mut self, close: SyntaxKind, open: TextRange) -> bool {
        if self.eat(close) {
            return true;
        }
        let (line, col) = self.line_col(open.start());
        let open_text = &self.text[open];
        let found = self.found();
        self.error(format!(
            "expected {} to close the `{open_text}` at {line}:{col}, found {found}",
            close.describe()
        ));
        false
    }

    /// How the current token is written in "found ..." messages.
    pub(crate) fn found(&self) -> String {
        match self.current() {
            NAME => format!("name `{}`", &self.text[self.current_range()]),
            kind => kind.describe().to_string(),
        }
    }

    /// 1-based line and column (in characters) of an offset, for messages.
    pub(crate) fn line_col(&self, offset: TextSize) -> (u32, u32) {
        let index = self.line_index.get_or_init(|| LineIndex::new(self.text));
        crate::line_col(index, offset)
    }

    /// Reports an error at the current token; at a line end or a synthetic token, just after the
    /// previous token, where the missing text belongs.
    pub(crate) fn error(&mut self, message: String) {
        let range = match self.current() {
            NEWLINE | INDENT | DEDENT | EOF => {
                let end = if self.pos == 0 {
                    TextSize::from(0)
                } else {
                    self.range_of(self.pos - 1).end()
                };
                TextRange::empty(end)
            }
            _ => self.current_range(),
        };
        self.error_at(message, range);
    }

    /// Records an error, unless one was already reported where this one starts (the first
    /// error at a place explains it; the rest would be its echoes) or the lexer reported the
    /// invalid character here.
    pub(crate) fn error_at(&mut self, message: String, range: TextRange) {
        if self.last_error_at == Some(range.start())
            || (self.at(ERROR_TOKEN) && range == self.current_range())
        {
            return;
        }
        self.last_error_at = Some(range.start());
        self.errors.push(SyntaxError::new(message, range));
    }

    /// Reports an error and, unless the current token is in `recovery` (or ends the line),
    /// consumes it into an ERROR node, so that every call makes progress.
    pub(crate) fn err_recover(&mut self, message: String, recovery: TokenSet) {
        self.error(message);
        if self.at_ts(recovery) || self.at_ts(LINE_END) {
            return;
        }
        let m = self.start();
        self.bump();
        m.complete(self, ERROR);
    }

    pub(crate) fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Start {
            kind: ERROR,
            forward_parent: 0,
        });
        Marker {
            pos,
            bomb: DropBomb::new("Marker must be completed or abandoned"),
        }
    }

    /// Runs `f` one expression level deeper, or reports the nesting limit and skips a token.
    /// Past the limit the rest of the logical line is one ERROR node: reporting it token by
    /// token would flood the file with errors.
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Parser<'t>) -> Option<T>) -> Option<T> {
        if self.expr_depth + self.chain >= MAX_EXPR_DEPTH {
            self.error(format!(
                "expression nested too deeply (the limit is {MAX_EXPR_DEPTH} levels)"
            ));
            self.skip_line();
            return None;
        }
        self.expr_depth += 1;
        let result = crate::grow_stack(|| f(self));
        self.expr_depth -= 1;
        result
    }

    /// Wraps the tokens up to the end of the logical line in an ERROR node.
    pub(crate) fn skip_line(&mut self) {
        if self.at_ts(LINE_END) {
            return;
        }
        let m = self.start();
        while !self.at_ts(LINE_END) {
            self.bump();
        }
        m.complete(self, ERROR);
    }
}

/// Tokens at which no statement-level recovery may skip past.
pub(crate) const LINE_END: TokenSet = TokenSet::new(&[NEWLINE, INDENT, DEDENT, EOF]);

pub(crate) struct Marker {
    pos: u32,
    bomb: DropBomb,
}

impl Marker {
    pub(crate) fn complete(mut self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        self.bomb.defuse();
        if let Event::Start { kind: slot, .. } = &mut p.events[self.pos as usize] {
            *slot = kind;
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos }
    }

    pub(crate) fn abandon(mut self, p: &mut Parser<'_>) {
        self.bomb.defuse();
        let idx = self.pos as usize;
        if idx == p.events.len() - 1 {
            p.events.pop();
        } else {
            p.events[idx] = Event::Tombstone;
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
}

impl CompletedMarker {
    /// Starts a node that will contain this one.
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        let m = p.start();
        if let Event::Start { forward_parent, .. } = &mut p.events[self.pos as usize] {
            *forward_parent = m.pos - self.pos;
        }
        m
    }
}

pub(crate) fn parse(text: &str, input: &Input) -> (Vec<Event>, Vec<SyntaxError>) {
    let mut p = Parser::new(text, input);
    statements::source_file(&mut p, usize::MAX);
    p.finish()
}

/// The top-level statements from token `start` up to token `end`, as a file of their own; and
/// whether the last of them ended at `end` exactly, as it does in the whole file's parse. The
/// parser reads the whole input, so its lookahead past `end` sees what it sees in the file.
pub(crate) fn parse_statements(
    text: &str,
    input: &Input,
    start: usize,
    end: usize,
) -> (Vec<Event>, Vec<SyntaxError>, bool) {
    let mut p = Parser::new(text, input);
    p.pos = start;
    statements::source_file(&mut p, end);
    let exact = p.pos == end || p.at(EOF);
    let (events, errors) = p.finish();
    (events, errors, exact)
}
