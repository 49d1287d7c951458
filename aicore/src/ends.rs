//! Split ends: in a kernel whose every op works row by row ([`crate::blocks::rows`]), the
//! instructions up to its first vector instructions, and from its last ones on, run as two
//! or four pieces of the rows. With flags by dependency ([`crate::sync`]), the vector unit
//! starts on the first piece while the next is still loading, and the first piece is stored
//! while the next is computed; the instructions between stay whole, so only the ends pay a
//! vector instruction's fixed cost more than once. A row reduction (`TROWSUM`) stays whole: it
//! costs about as much over a piece of the rows as over all of them. Row blocks
//! ([`crate::blocks`]) split every instruction.
//!
//! A piece is a view of the whole tile's bytes ([`crate::pieces`]): piece `h` of `n` of a tile
//! of `M` rows at `offset` has `M/n` rows at `offset + h × M/n × row bytes` (of a `[M,1]`
//! column, `h × M/n` elements further), and of a global view of `M` rows, starts at its
//! `h × M/n`-th row.

use std::collections::HashMap;
use std::fmt::Write as _;

use wsp_ir::arch::{Arch, GmLayout, Operand, TileKind, TileLayout, instruction};

use crate::listing::{Pipe, call, renamed};
use crate::pieces::{self, Axis};
use crate::sync::{Names, read};

/// UB addresses a tile may start at.
const ALIGN: u64 = 32;

/// How a kernel's ends are split: its `rows`, in `pieces`, over its first `ends` and last
/// `ends` vector instructions.
#[derive(Clone, Copy)]
pub(crate) struct Ends {
    pub rows: u64,
    pub ends: usize,
    pub pieces: u64,
}

/// `src` (a straight kernel, before flags by dependency) with its first and last
/// `e.ends` vector instructions, and the loads before and stores after them, over `e.pieces`
/// pieces of its `e.rows` rows. `None`: nothing to split, or a piece that would not be
/// aligned.
pub(crate) fn split(src: &str, arch: &Arch, e: Ends) -> Option<String> {
    let Ends { rows, ends, pieces } = e;
    let piece = rows / pieces.max(1);
    if pieces < 2 || !rows.is_multiple_of(pieces) || piece < 8 {
        return None;
    }
    let lines: Vec<&str> = src.lines().collect();
    let mut names = Names::default();
    // Each instruction line: its index and pipe.
    let mut instrs: Vec<(usize, Pipe)> = Vec::new();
    // Declaration lines by name.
    let mut declared: HashMap<String, usize> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim();
        if let Some(name) = names.declare(t) {
            declared.insert(name, n);
        } else if let Some((_, pipe, _)) = read(t, &names, arch) {
            instrs.push((n, pipe));
        }
    }
    let vector: Vec<usize> = (0..instrs.len())
        .filter(|i| instrs[*i].1 == Pipe::V)
        .collect();
    if vector.len() < 2 * ends + 1 {
        return None;
    }
    let (head, tail) = (vector[ends - 1], vector[vector.len() - ends]);
    let mut split_lines: Vec<usize> = Vec::new();
    let mut views: Vec<String> = Vec::new();
    for (i, &(n, _)) in instrs.iter().enumerate() {
        if i > head && i < tail {
            continue;
        }
        let (name, args) = call(lines[n].trim())?;
        if instruction(&name).is_some_and(|r| r.row_reduction) {
            continue; // as slow over a piece of the rows as over all
        }
        let halved: Vec<&String> = args
            .iter()
            .filter(|a| {
                let (Some(o), Some(d)) = (names.operands.get(*a), declared.get(*a)) else {
                    return false;
                };
                of_rows(o, lines[*d]) == Some(rows)
            })
            .collect();
        if halved.is_empty() {
            continue;
        }
        for a in halved {
            if !views.contains(a) {
                views.push(a.clone());
            }
        }
        split_lines.push(n);
    }
    if split_lines.is_empty() {
        return None;
    }
    // Each view's pieces, declared after its own declaration.
    let mut after: HashMap<usize, String> = HashMap::new();
    for v in &views {
        let n = *declared.get(v)?;
        let text = match names.operands.get(v)? {
            o @ Operand::Tile { .. } => {
                pieces::tile(lines[n], v, o, pieces, Axis::Rows, 1, ALIGN, "__h")?
            }
            // A column-major view's rows are its parameter's columns.
            Operand::Global { layout, .. } if *layout == GmLayout::Nd => {
                pieces::view(lines[n], v, *layout, pieces, Axis::Rows, "__h")?
            }
            _ => return None,
        };
        after.entry(n).or_default().push_str(&text);
    }
    let mut out = String::with_capacity(src.len() * 2);
    for (n, line) in lines.iter().enumerate() {
        if !split_lines.contains(&n) {
            out.push_str(line);
            out.push('\n');
            if let Some(text) = after.get(&n) {
                out.push_str(text);
            }
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let is_vector = instrs.iter().any(|i| i.0 == n && i.1 == Pipe::V);
        for h in 0..pieces {
            if h > 0 && is_vector {
                // Kept only if the pieces share bytes (`crate::barriers`).
                let _ = writeln!(out, "{indent}pipe_barrier(PIPE_V);");
            }
            let _ = writeln!(
                out,
                "{indent}{}",
                renamed(line.trim(), &views, &format!("__h{h}"))
            );
        }
    }
    Some(out)
}

/// The rows a tile or global view has, if pieces may split it: a UB tile laid out with
/// exactly its valid rows, or a global view (the rows of its shape).
fn of_rows(o: &Operand, declaration: &str) -> Option<u64> {
    match o {
        Operand::Tile {
            kind: TileKind::Vec,
            rows,
            valid,
            layout: TileLayout::RowMajor | TileLayout::ColMajor,
            ..
        } if valid.0 == *rows => Some(*rows),
        Operand::Global { .. } => {
            let shape = declaration.get(declaration.find("pto::Shape<")? + 11..)?;
            shape.split(['>', ',']).nth(3)?.trim().parse().ok()
        }
        _ => None,
    }
}
