//! Cube parts: a straight cube kernel's one matmul over `P` blocks of its product, each the
//! product of a block of one operand (rows of the left, or columns of the right) by the
//! whole other. A block is loaded (MTE2), moved to L0 (MTE1), multiplied (M) and stored
//! (FIX) on tiles of its own, so with flags by dependency ([`crate::sync`]) one block loads
//! while another is multiplied and a third is stored; the operand kept whole is loaded and
//! moved once. A block's tiles share out the whole tile's bytes.

use std::collections::HashMap;
use std::fmt::Write as _;

use wsp_ir::arch::Operand;
use wsp_ir::buffers::FRACTAL;

use crate::listing::{call, declaration, renamed};
use crate::pieces::{self, Axis};

/// A block's tiles start at whole fractals of f16.
const ALIGN: u64 = 512;

/// `src` (a straight kernel, before flags by dependency) with its matmul in `parts` blocks
/// along `axis`. `None`: not one matmul of a loaded operand whose product is only stored, or
/// blocks that would not be whole fractals.
pub(crate) fn split(src: &str, parts: u64, axis: Axis) -> Option<String> {
    if parts < 2 {
        return None;
    }
    let text = Text::read(src);
    let chain = text.chain(axis)?;
    let mut declarations: HashMap<usize, String> = HashMap::new();
    for n in &chain.names {
        let (at, o) = text.declared.get(n)?;
        let line = text.lines[*at];
        let blocks = match o {
            Operand::Tile { .. } => pieces::tile(line, n, o, parts, axis, FRACTAL, ALIGN, "__p")?,
            Operand::Global { layout, .. } => pieces::view(line, n, *layout, parts, axis, "__p")?,
            Operand::Scalar(_) => return None,
        };
        declarations.insert(*at, blocks);
    }
    let order = text.order(&chain, parts)?;
    let mut out = String::with_capacity(src.len() * 2);
    for (n, line) in text.lines.iter().enumerate() {
        if let Some(blocks) = declarations.get(&n) {
            out.push_str(blocks);
            continue;
        }
        let Some(pieces) = order.get(&n) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let indent = &line[..line.len() - line.trim_start().len()];
        for piece in pieces {
            match piece {
                Piece::Line(m) => {
                    let _ = writeln!(out, "{indent}{}", text.lines[*m].trim());
                }
                Piece::Blocks(m, blocks) => {
                    for p in blocks.clone() {
                        let line = renamed(text.lines[*m].trim(), &chain.names, &format!("__p{p}"));
                        let _ = writeln!(out, "{indent}{line}");
                    }
                }
            }
        }
    }
    Some(out)
}

/// A kernel's lines, its declarations by name (line and what), and its instructions (line,
/// name, arguments).
struct Text<'s> {
    lines: Vec<&'s str>,
    declared: HashMap<String, (usize, Operand)>,
    instrs: Vec<(usize, String, Vec<String>)>,
}

/// What is split: the matmul's split operand in L0, its L1 tile and its global view, the
/// product and its global view; and the other operand in L0.
struct Chain {
    names: [String; 5],
    whole: String,
}

/// What an instruction line of the kernel is written as.
enum Piece {
    /// The instruction at this line, as it is.
    Line(usize),
    /// The instruction at this line, for these blocks.
    Blocks(usize, std::ops::Range<u64>),
}

impl<'s> Text<'s> {
    fn read(src: &'s str) -> Self {
        let lines: Vec<&str> = src.lines().collect();
        let mut declared = HashMap::new();
        let mut instrs = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            let t = line.trim();
            if let Some((name, o)) = declaration(t) {
                declared.insert(name, (n, o));
            } else if let Some((name, args)) = call(t)
                && name.starts_with('T')
                && name != "TASSIGN"
            {
                instrs.push((n, name, args));
            }
        }
        Text {
            lines,
            declared,
            instrs,
        }
    }

    /// The only instruction writing `of`, if it is `name` with a second argument: that.
    fn only_writer(&self, of: &str, name: &str) -> Option<String> {
        let mut w = self
            .instrs
            .iter()
            .filter(|i| i.2.first().is_some_and(|a| a == of));
        let (_, n, args) = w.next()?;
        (w.next().is_none() && n == name && args.len() == 2).then(|| args[1].clone())
    }

    /// How many instructions name `n`.
    fn uses(&self, n: &str) -> usize {
        self.instrs
            .iter()
            .filter(|i| i.2.iter().any(|a| a == n))
            .count()
    }

    /// The line of the first instruction writing `n`.
    fn writer_line(&self, n: &str) -> Option<usize> {
        self.instrs
            .iter()
            .find(|i| i.2.first().is_some_and(|a| a == n))
            .map(|i| i.0)
    }

    /// The one matmul's operand on `axis`, loaded (`TLOAD`) and moved (`TMOV`) for it alone,
    /// and its product, stored once and read by nothing else.
    fn chain(&self, axis: Axis) -> Option<Chain> {
        let mut matmuls = self.instrs.iter().filter(|i| i.1.starts_with("TMATMUL"));
        let (_, name, args) = matmuls.next()?;
        if matmuls.next().is_some() || name != "TMATMUL" || args.len() != 3 {
            return None;
        }
        let (split, whole) = match axis {
            Axis::Rows => (&args[1], &args[2]),
            Axis::Cols => (&args[2], &args[1]),
        };
        let acc = &args[0];
        let l1 = self.only_writer(split, "TMOV")?;
        let global = self.only_writer(&l1, "TLOAD")?;
        let mut stores = self
            .instrs
            .iter()
            .filter(|i| i.2.iter().skip(1).any(|a| a == acc));
        let (_, store, store_args) = stores.next()?;
        if stores.next().is_some() || store != "TSTORE" || store_args.len() != 2 {
            return None;
        }
        let names = [
            split.clone(),
            l1,
            global,
            acc.clone(),
            store_args[0].clone(),
        ];
        let uses = names.each_ref().map(|n| self.uses(n));
        (uses == [2, 2, 1, 2, 1]).then(|| Chain {
            names,
            whole: whole.clone(),
        })
    }

    /// What each instruction line becomes: in place of the chain's, their blocks. The other
    /// operand's load goes before the blocks', and its move after the first block's, so the
    /// first block is multiplied as soon as it is in L0.
    fn order(&self, chain: &Chain, parts: u64) -> Option<HashMap<usize, Vec<Piece>>> {
        let mut at: HashMap<usize, Vec<Piece>> = HashMap::new();
        for (n, _, args) in &self.instrs {
            if args.iter().any(|a| chain.names.contains(a)) {
                at.insert(*n, vec![Piece::Blocks(*n, 0..parts)]);
            }
        }
        let whole = &chain.whole;
        let Some(whole_l1) = self.only_writer(whole, "TMOV") else {
            return Some(at);
        };
        if self.only_writer(&whole_l1, "TLOAD").is_none()
            || self.uses(whole) != 2
            || self.uses(&whole_l1) != 2
        {
            return Some(at);
        }
        let (load, whole_load) = (
            self.writer_line(&chain.names[1])?,
            self.writer_line(&whole_l1)?,
        );
        let (mov, whole_mov) = (self.writer_line(&chain.names[0])?, self.writer_line(whole)?);
        // Moved only past lines that are no instructions.
        let adjacent =
            |a: usize, b: usize| !self.instrs.iter().any(|i| a.min(b) < i.0 && i.0 < a.max(b));
        if load < whole_load && adjacent(load, whole_load) {
            at.insert(load, Vec::new());
            at.insert(
                whole_load,
                vec![Piece::Line(whole_load), Piece::Blocks(load, 0..parts)],
            );
        }
        if adjacent(mov, whole_mov) {
            at.insert(mov.min(whole_mov), Vec::new());
            at.insert(
                mov.max(whole_mov),
                vec![
                    Piece::Blocks(mov, 0..1),
                    Piece::Line(whole_mov),
                    Piece::Blocks(mov, 1..parts),
                ],
            );
        }
        Some(at)
    }
}
