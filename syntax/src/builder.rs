//! Builds the lossless rowan tree from parser events, putting back the trivia the parser never
//! saw. Trivia before a node's first token goes to the parent, so node ranges start at real text.

use rowan::{GreenNode, GreenToken, NodeOrToken, TextSize};
use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::FxHasher;

use crate::layout::{Input, SYNTHETIC};
use crate::lexer::RawToken;
use crate::parser::Event;
use crate::{SyntaxError, SyntaxKind, validation};

/// The tree of the raw tokens `raw_range`, from the parser's `events` that start at parser
/// token `first_token`. The whole file's, or one run of top-level statements'
/// (`crate::parse_chunks`).
pub(crate) fn build(
    text: &str,
    raw: &[RawToken],
    raw_range: std::ops::Range<usize>,
    input: &Input,
    first_token: usize,
    mut events: Vec<Event>,
    errors: &mut Vec<SyntaxError>,
) -> GreenNode {
    let offset = raw
        .get(raw_range.start)
        .map_or(TextSize::of(text), |t| t.range.start());
    let mut b = Sink {
        text,
        raw: &raw[..raw_range.end],
        input,
        builder: TreeBuilder {
            last_tokens: vec![None; SyntaxKind::__LAST as usize],
            offset,
            ..TreeBuilder::default()
        },
        raw_pos: raw_range.start,
        tok_pos: first_token,
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
                b.builder.finish_node(errors);
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
        let end = end.min(self.raw.len());
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

/// rowan's `GreenNodeBuilder` and its cache (`rowan::green::node_cache`), hashed by
/// rustc-hash 2. rowan 0.16's cache hashes with rustc-hash 1's FxHash, whose low bits (the
/// bucket) come from a word's first bytes only: names that differ in their last characters
/// (`V0000001`, `V0000002`, ...) all fell in one probe chain, and 640k such statements took
/// 19 s to parse instead of 3.
///
/// As rowan's, it shares every token and each node of at most three children that are all
/// shared, keyed by a hash made from the children's hashes: a repeated `In[Tile[16, 16, F32]]`
/// is kept once. A node with a child that is not shared is never looked up, since no node
/// seen before can hold that child.
#[derive(Default)]
struct TreeBuilder {
    /// The open nodes: their kind, where their children start in `children`, and their offset.
    parents: Vec<(rowan::SyntaxKind, usize, TextSize)>,
    /// The end of the text made so far.
    offset: TextSize,
    /// The open nodes' children, each with its hash if it is shared (else `UNSHARED`).
    children: Vec<(u64, NodeOrToken<GreenNode, GreenToken>)>,
    /// Each token made so far, with its hash: one `=` for the whole file.
    tokens: HashTable<(u64, GreenToken)>,
    /// The last token made of each kind, with its hash. A keyword or an operator always has the
    /// same text, and most whitespace is one space, so most tokens are found here without
    /// hashing their text.
    last_tokens: Vec<Option<(u64, GreenToken)>>,
    /// Each shared node made so far, with its hash.
    nodes: HashTable<(u64, GreenNode)>,
}

/// The most children a node may have and still be shared, as rowan's cache has it.
const SHARED_CHILDREN: usize = 3;

/// The hash of a child that is not shared; a shared one's hash is never this.
const UNSHARED: u64 = 0;

fn shared_hash(h: FxHasher) -> u64 {
    h.finish().max(1)
}

/// A child's identity: shared children are equal only when they are the same allocation.
fn element_id(e: NodeOrToken<&rowan::GreenNodeData, &rowan::GreenTokenData>) -> *const () {
    match e {
        NodeOrToken::Node(n) => std::ptr::from_ref(n).cast(),
        NodeOrToken::Token(t) => std::ptr::from_ref(t).cast(),
    }
}

fn owned_id(e: &NodeOrToken<GreenNode, GreenToken>) -> *const () {
    match e {
        NodeOrToken::Node(n) => element_id(NodeOrToken::Node(n)),
        NodeOrToken::Token(t) => element_id(NodeOrToken::Token(t)),
    }
}

impl TreeBuilder {
    fn start_node(&mut self, kind: rowan::SyntaxKind) {
        self.parents.push((kind, self.children.len(), self.offset));
    }

    /// Finishes the open node and checks it (`validation`), at the offset where it started.
    fn finish_node(&mut self, errors: &mut Vec<SyntaxError>) {
        let (kind, first, start) = self.parents.pop().expect("a node to finish");
        let node = self.make_node(kind, first);
        validation::validate_node(&node.0, start, errors);
        self.children.push((node.1, node.0.into()));
    }

    /// The node of `kind` whose children are those from `first` on, and its hash (`UNSHARED`
    /// when it is not shared).
    fn make_node(&mut self, kind: rowan::SyntaxKind, first: usize) -> (GreenNode, u64) {
        let children = &self.children[first..];
        let shared =
            children.len() <= SHARED_CHILDREN && children.iter().all(|(h, _)| *h != UNSHARED);
        if !shared {
            let node = GreenNode::new(kind, self.children.drain(first..).map(|(_, c)| c));
            return (node, UNSHARED);
        }
        let mut h = FxHasher::default();
        kind.hash(&mut h);
        for (c, _) in children {
            c.hash(&mut h);
        }
        let hash = shared_hash(h);
        let found = self.nodes.find(hash, |(nh, n)| {
            *nh == hash
                && n.kind() == kind
                && n.children().len() == children.len()
                && n.children()
                    .map(element_id)
                    .eq(children.iter().map(|(_, c)| owned_id(c)))
        });
        let node = match found {
            Some((_, n)) => {
                let n = n.clone();
                self.children.truncate(first);
                n
            }
            None => {
                let n = GreenNode::new(kind, self.children.drain(first..).map(|(_, c)| c));
                self.nodes
                    .insert_unique(hash, (hash, n.clone()), |(nh, _)| *nh);
                n
            }
        };
        (node, hash)
    }

    fn token(&mut self, kind: rowan::SyntaxKind, text: &str) {
        self.offset += TextSize::of(text);
        if let Some(Some((hash, t))) = self.last_tokens.get(usize::from(kind.0))
            && t.text() == text
        {
            self.children.push((*hash, t.clone().into()));
            return;
        }
        let mut h = FxHasher::default();
        kind.hash(&mut h);
        text.hash(&mut h);
        let hash = shared_hash(h);
        let token = match self.tokens.find(hash, |(th, t)| {
            *th == hash && t.kind() == kind && t.text() == text
        }) {
            Some((_, t)) => t.clone(),
            None => {
                let t = GreenToken::new(kind, text);
                self.tokens
                    .insert_unique(hash, (hash, t.clone()), |(th, _)| *th);
                t
            }
        };
        if let Some(last) = self.last_tokens.get_mut(usize::from(kind.0)) {
            *last = Some((hash, token.clone()));
        }
        self.children.push((hash, token.into()));
    }

    fn finish(mut self) -> GreenNode {
        match self.children.pop() {
            Some((_, NodeOrToken::Node(root))) if self.children.is_empty() => root,
            _ => panic!("the parser's events make one root node"),
        }
    }
}
