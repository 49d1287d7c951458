//! Builds the lossless rowan tree from parser events, putting back the trivia the parser never
//! saw. Trivia before a node's first token goes to the parent, so node ranges start at real text.

use rowan::{GreenNode, GreenNodeBuilder};

use crate::layout::{Input, SYNTHETIC};
use crate::lexer::RawToken;
use crate::parser::Event;

pub(crate) fn build(
    text: &str,
    raw: &[RawToken],
    input: &Input,
    mut events: Vec<Event>,
) -> GreenNode {
    let mut b = Sink {
        text,
        raw,
        input,
        builder: GreenNodeBuilder::new(),
        raw_pos: 0,
        tok_pos: 0,
        depth: 0,
    };
    let mut parents = Vec::new();
    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start {
                kind,
                forward_parent,
            } => {
                parents.push(kind);
                let (mut idx, mut step) = (i, forward_parent);
                while step != 0 {
                    idx += step as usize;
                    step = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start {
                            kind,
                            forward_parent,
                        } => {
                            parents.push(kind);
                            forward_parent
                        }
                        _ => 0,
                    };
                }
                for kind in parents.drain(..).rev() {
                    if b.depth > 0 {
                        b.leading_trivia();
                    }
                    b.builder.start_node(kind.into());
                    b.depth += 1;
                }
            }
            Event::Finish => {
                if b.depth == 1 {
                    b.rest();
                }
                b.builder.finish_node();
                b.depth -= 1;
            }
            Event::Token => b.token(),
            Event::Tombstone => {}
        }
    }
    b.builder.finish()
}

struct Sink<'a> {
    text: &'a str,
    raw: &'a [RawToken],
    input: &'a Input,
    builder: GreenNodeBuilder<'static>,
    /// Next raw token to emit.
    raw_pos: usize,
    /// Next parser token.
    tok_pos: usize,
    depth: usize,
}

impl Sink<'_> {
    fn emit_raw_until(&mut self, end: usize) {
        while self.raw_pos < end {
            let t = self.raw[self.raw_pos];
            self.builder.token(t.kind.into(), &self.text[t.range]);
            self.raw_pos += 1;
        }
    }

    /// Emits the trivia before the next real token, so that a node about to start excludes it.
    fn leading_trivia(&mut self) {
        let next = self.input.raw[self.tok_pos..]
            .iter()
            .find(|&&r| r != SYNTHETIC);
        let end = next.map_or(self.raw.len(), |&r| r as usize);
        self.emit_raw_until(end);
    }

    fn token(&mut self) {
        let Some(&raw) = self.input.raw.get(self.tok_pos) else {
            return;
        };
        self.tok_pos += 1;
        if raw != SYNTHETIC {
            self.emit_raw_until(raw as usize + 1);
        }
    }

    /// Everything left (trailing trivia) belongs to the root.
    fn rest(&mut self) {
        self.emit_raw_until(self.raw.len());
    }
}
