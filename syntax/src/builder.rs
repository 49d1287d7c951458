//! Builds the lossless rowan tree from parser events, putting back the trivia the parser never
//! saw. Trivia before a node's first token goes to the parent, so node ranges start at real text.

use rowan::{GreenNode, GreenToken, NodeOrToken};
use rustc_hash::FxHashMap;

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
        builder: TreeBuilder::default(),
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
    builder: TreeBuilder,
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

/// rowan's `GreenNodeBuilder`, with its sharing of tokens and small nodes, but with caches
/// hashed by rustc-hash 2. rowan 0.16's caches hash with rustc-hash 1's FxHash, whose low bits
/// (the bucket) come from a word's first bytes only: names that differ in their last
/// characters (`V0000001`, `V0000002`, ...) all fell in one probe chain, and 640k such
/// statements took 19 s to parse instead of 3.
#[derive(Default)]
struct TreeBuilder {
    /// The open nodes: their kind, and where their children start in `children`.
    parents: Vec<(rowan::SyntaxKind, usize)>,
    children: Vec<NodeOrToken<GreenNode, GreenToken>>,
    /// Each token made so far, by kind, then text: one `=` for the whole file.
    tokens: FxHashMap<rowan::SyntaxKind, FxHashMap<Box<str>, GreenToken>>,
    /// Each node of at most three children made so far, by kind and children (shared, so
    /// known by address): a repeated `In[Tile[16, 16, F32]]` is kept once, as rowan keeps it.
    nodes: FxHashMap<(rowan::SyntaxKind, [usize; 3]), GreenNode>,
}

/// The most children a node may have and still be shared, as rowan's cache has it.
const SHARED_CHILDREN: usize = 3;

impl TreeBuilder {
    fn start_node(&mut self, kind: rowan::SyntaxKind) {
        self.parents.push((kind, self.children.len()));
    }

    fn finish_node(&mut self) {
        let (kind, first) = self.parents.pop().expect("a node to finish");
        let children = &self.children[first..];
        let node = if children.len() <= SHARED_CHILDREN {
            let mut key = [0usize; SHARED_CHILDREN];
            for (k, c) in key.iter_mut().zip(children) {
                *k = match c {
                    NodeOrToken::Node(n) => std::ptr::from_ref::<rowan::GreenNodeData>(n) as usize,
                    NodeOrToken::Token(t) => {
                        std::ptr::from_ref::<rowan::GreenTokenData>(t) as usize
                    }
                };
            }
            match self.nodes.get(&(kind, key)) {
                Some(n) => {
                    let n = n.clone();
                    self.children.truncate(first);
                    n
                }
                None => {
                    let n = GreenNode::new(kind, self.children.drain(first..));
                    self.nodes.insert((kind, key), n.clone());
                    n
                }
            }
        } else {
            GreenNode::new(kind, self.children.drain(first..))
        };
        self.children.push(node.into());
    }

    fn token(&mut self, kind: rowan::SyntaxKind, text: &str) {
        let of_kind = self.tokens.entry(kind).or_default();
        let token = match of_kind.get(text) {
            Some(t) => t.clone(),
            None => {
                let t = GreenToken::new(kind, text);
                of_kind.insert(text.into(), t.clone());
                t
            }
        };
        self.children.push(token.into());
    }

    fn finish(mut self) -> GreenNode {
        match self.children.pop() {
            Some(NodeOrToken::Node(root)) if self.children.is_empty() => root,
            _ => panic!("the parser's events make one root node"),
        }
    }
}
