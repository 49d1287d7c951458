//! Flags only where one pipe needs another's work. The emitter chains every instruction to
//! the one before it (`set_flag` then at once `wait_flag` at each change of pipe), so no two
//! pipes ever work at once. [`by_dependency`] reads such a text back and writes the flags
//! again from what the instructions touch: an instruction waits for an instruction of another
//! pipe only when it reads bytes that one writes, or writes bytes that one reads or writes
//! (on-chip memories by byte range; a global view by its rows of its parameter, and of any
//! parameter of the same view shape, which the task may have given the same region), and
//! only when what its pipe already waited for does not cover it. A pipe
//! then runs ahead of the others as far as its own tiles allow.
//!
//! [`unordered`] checks a loop-free text the other way: every two instructions that touch the
//! same bytes are ordered by the flags and barriers written, and no flag is raised again
//! before its wait is known to be done.

use std::collections::HashMap;

use wsp_ir::arch::{Arch, GmLayout, Instr, Operand, TileKind, instruction};

use crate::listing::{Pipe, Step, call, declaration, sync};

/// Where bytes live: a tile kind's memory, or a parameter's global memory seen through a
/// view of some shape (both interned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Chip(TileKind),
    /// `dn`: the view is column-major, its rows one element apart.
    Gm {
        param: usize,
        shape: usize,
        dn: bool,
    },
}

/// Whether two places may be the same: on chip, the same memory; in global memory, the same
/// parameter, or parameters seen through views of one shape (a task may pass one region as
/// two parameters, never two overlapping regions that differ), or a view not understood
/// ([`ANY`]) and any other.
fn same_space(a: Space, b: Space) -> bool {
    match (a, b) {
        (
            Space::Gm { param, shape, .. },
            Space::Gm {
                param: p, shape: s, ..
            },
        ) => param == p || shape == s || param == ANY || p == ANY,
        _ => a == b,
    }
}

/// The parameter and shape of a global view not understood: all of global memory.
const ANY: usize = usize::MAX;

/// The bytes an instruction reads and writes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Access {
    reads: Vec<Place>,
    writes: Vec<Place>,
}

/// Bytes of one space: on chip a byte range; in global memory a range of rows, and of the
/// columns of those rows (all of them on chip).
#[derive(Debug, Clone, Copy)]
struct Place {
    space: Space,
    from: u64,
    to: u64,
    cols: (u64, u64),
}

const ALL_COLS: (u64, u64) = (0, u64::MAX);

fn meet(a: &[Place], b: &[Place]) -> bool {
    a.iter().any(|x| {
        b.iter().any(|y| {
            let crossed = match (x.space, y.space) {
                // Rows of one are columns of the other: compared whole.
                (Space::Gm { dn, .. }, Space::Gm { dn: d, .. }) => dn != d,
                _ => false,
            };
            same_space(x.space, y.space)
                && (crossed
                    || (x.from < y.to
                        && y.from < x.to
                        && x.cols.0 < y.cols.1
                        && y.cols.0 < x.cols.1))
        })
    })
}

impl Access {
    /// Whether `later` must wait for `self` (it reads what this writes, or writes what this
    /// reads or writes).
    fn conflicts(&self, later: &Access) -> bool {
        meet(&later.reads, &self.writes)
            || meet(&later.writes, &self.writes)
            || meet(&later.writes, &self.reads)
    }

    /// Only the vector unit's memory (UB): the byte ranges read, and those written.
    pub(crate) fn ub(&self) -> [Vec<(u64, u64)>; 2] {
        let ub = |v: &[Place]| {
            v.iter()
                .filter(|x| x.space == Space::Chip(TileKind::Vec))
                .map(|x| (x.from, x.to))
                .collect()
        };
        [ub(&self.reads), ub(&self.writes)]
    }
}

/// The tiles and global views declared so far.
#[derive(Default)]
pub(crate) struct Names {
    pub(crate) operands: HashMap<String, Operand>,
    /// Per global view: where it is (rows and columns as the view lays them out).
    views: HashMap<String, Place>,
    interned: Vec<String>,
}

impl Names {
    fn intern(&mut self, s: &str) -> usize {
        match self.interned.iter().position(|x| x == s) {
            Some(n) => n,
            None => {
                self.interned.push(s.to_string());
                self.interned.len() - 1
            }
        }
    }

    /// Takes a declaration line in: the name it declares, `None` if `line` is none.
    pub(crate) fn declare(&mut self, line: &str) -> Option<String> {
        let (name, operand) = declaration(line)?;
        if let Operand::Global { layout, .. } = &operand {
            let dn = *layout == GmLayout::Dn;
            // `GlobalTensor<T, pto::Shape<1, 1, 1, R, C>, ...> g_x(p_x[ + N * p_x_rs][ + N], ...`:
            // row major, `N * rs` is N rows on and `N` is N columns; column major, the other
            // way round.
            let view = (|| {
                let shape = line.get(line.find('<')? + 1..line.find(", pto::Stride")?)?;
                let mut dims = shape.rsplit(", ");
                let cols: u64 = dims.next()?.trim_end_matches('>').parse().ok()?;
                let rows: u64 = dims.next()?.parse().ok()?;
                let open = line.find(&format!(" {name}("))? + name.len() + 2;
                let ptr = line[open..].split(',').next()?;
                let mut terms = ptr.split(" + ");
                let param = terms.next()?.to_string();
                let (mut row, mut col) = (0u64, 0u64);
                for t in terms {
                    let mut factors = t.split(" * ");
                    let n: u64 = factors.next()?.parse().ok()?;
                    let strided = factors.next().is_some();
                    if strided != dn {
                        row = row.checked_add(n)?;
                    } else {
                        col = col.checked_add(n)?;
                    }
                }
                Some((
                    param,
                    shape.to_string(),
                    (row, row + rows),
                    (col, col + cols),
                ))
            })();
            if let Some((param, shape, rows, cols)) = view {
                let space = Space::Gm {
                    param: self.intern(&param),
                    shape: self.intern(&shape),
                    dn,
                };
                let place = Place {
                    space,
                    from: rows.0,
                    to: rows.1,
                    cols,
                };
                self.views.insert(name.clone(), place);
            } else {
                self.views.remove(&name);
            }
        }
        self.operands.insert(name.clone(), operand);
        Some(name)
    }
}

/// An instruction line read with the tiles declared so far: the instruction, its pipe and
/// what it touches. Its first operand is written, and so are scratch tiles (`tN_M`) and, for
/// an instruction with undeclared UB scratch, all of that; its other tiles and global
/// tensors are read. `None`: not an instruction line.
pub(crate) fn read(line: &str, names: &Names, arch: &Arch) -> Option<(Instr, Pipe, Access)> {
    let (name, args) = call(line)?;
    if name == "TASSIGN" || !name.starts_with('T') {
        return None;
    }
    let instr = Instr {
        name,
        operands: args
            .iter()
            .map(|a| {
                names
                    .operands
                    .get(a)
                    .cloned()
                    .unwrap_or_else(|| Operand::Scalar(a.clone()))
            })
            .collect(),
    };
    let pipe = Pipe::of(&instr);
    let mut a = Access::default();
    for (n, (o, arg)) in instr.operands.iter().zip(&args).enumerate() {
        let range = match o {
            Operand::Tile {
                kind,
                offset,
                bytes,
                ..
            } => Place {
                space: Space::Chip(*kind),
                from: *offset,
                to: offset + bytes,
                cols: ALL_COLS,
            },
            Operand::Global { .. } => match names.views.get(arg) {
                Some(place) => *place,
                None => Place {
                    space: Space::Gm {
                        param: ANY,
                        shape: ANY,
                        dn: false,
                    },
                    from: 0,
                    to: u64::MAX,
                    cols: ALL_COLS,
                },
            },
            Operand::Scalar(_) => continue,
        };
        let scratch = arg.starts_with('t') && arg[1..].starts_with(|c: char| c.is_ascii_digit());
        if n == 0 || scratch {
            a.writes.push(range);
        } else {
            a.reads.push(range);
        }
    }
    if instruction(&instr.name).is_some_and(|r| r.hidden_scratch) {
        let from = arch.hidden_ub_scratch.unwrap_or(arch.on_chip.ub);
        a.writes.push(Place {
            space: Space::Chip(TileKind::Vec),
            from,
            to: u64::MAX,
            cols: ALL_COLS,
        });
    }
    Some((instr, pipe, a))
}

fn slot(p: Pipe) -> usize {
    Pipe::ALL.iter().position(|q| *q == p).unwrap_or(0)
}

/// Per pipe, the index of its last instruction known to be done (-1: none).
type Clock = [i64; 7];

fn join(a: &mut Clock, b: &Clock) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// The kernel's body: the lines between the entry's `{` and its `}`, if it holds no inner
/// scope or loop.
fn body(lines: &[&str]) -> Option<(usize, usize)> {
    let open = lines.iter().position(|l| l.trim() == "{")?;
    let close = open + 1 + lines[open + 1..].iter().position(|l| l.trim() == "}")?;
    let nested = lines[open + 1..close].iter().any(|l| {
        let t = l.trim();
        t.starts_with("for (") || t.ends_with('{') || t.starts_with('}')
    });
    (!nested).then_some((open + 1, close))
}

/// `src` with its flags written from its instructions' dependencies; `None` when the text is
/// not one this pass reads (loops, scopes, instructions run from the scalar pipe) or needs
/// more event IDs than a pipe pair has.
pub(crate) fn by_dependency(src: &str, arch: &Arch) -> Option<String> {
    let lines: Vec<&str> = src.lines().collect();
    let (first, end) = body(&lines)?;
    let mut names = Names::default();
    // Each instruction: its line, pipe and access.
    let mut instrs: Vec<(usize, Pipe, Access)> = Vec::new();
    for (n, line) in lines.iter().enumerate().take(end).skip(first) {
        let t = line.trim();
        if names.declare(t).is_some() {
        } else if let Some((i, pipe, a)) = read(t, &names, arch) {
            if instruction(&i.name).is_some_and(|r| r.scalar_loop) {
                return None;
            }
            instrs.push((n, pipe, a));
        }
    }
    let (flags, after) = flags(&instrs);
    // Event IDs: a flag's ID is free again once the producer pipe knows the consumer passed
    // the ID's last wait.
    let mut last_use: HashMap<(Pipe, Pipe, u32), usize> = HashMap::new();
    let mut before: HashMap<usize, Vec<String>> = HashMap::new();
    let mut behind: HashMap<usize, Vec<String>> = HashMap::new();
    let mut ending = Vec::new();
    for &(p, q, i, j) in &flags {
        let free = (0..arch.events).find(|e| {
            last_use
                .get(&(p, q, *e))
                .is_none_or(|&w| w < instrs.len() && after[i][slot(q)] >= w as i64)
        })?;
        last_use.insert((p, q, free), j);
        let (a, b) = (p.name(), q.name());
        let set = format!("set_flag({a}, {b}, EVENT_ID{free});");
        let wait = format!("wait_flag({a}, {b}, EVENT_ID{free});");
        behind.entry(instrs[i].0).or_default().push(set);
        if j == instrs.len() {
            ending.push(wait);
        } else {
            before.entry(instrs[j].0).or_default().push(wait);
        }
    }
    vector_barriers(&lines, &instrs, &behind, &mut before);
    let mut out = String::with_capacity(src.len());
    let ids = last_use.keys().map(|k| k.2 + 1).max().unwrap_or(0);
    // Flag lines, each at the body's indent.
    let put = |out: &mut String, lines: &[String]| {
        for l in lines {
            out.push_str("    ");
            out.push_str(l);
            out.push('\n');
        }
    };
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim();
        let inside = (first..end).contains(&n);
        if inside && (t.starts_with("set_flag(") || t.starts_with("wait_flag(")) {
            continue;
        }
        if n == end {
            put(&mut out, &ending);
        }
        if t.starts_with("extern \"C\" __global__") {
            out.push_str(&crate::cxx::event_ids(ids));
        }
        put(&mut out, before.get(&n).map_or(&[], Vec::as_slice));
        out.push_str(line);
        out.push('\n');
        put(&mut out, behind.get(&n).map_or(&[], Vec::as_slice));
    }
    Some(out)
}

/// A flag: from a pipe to another, its producer instruction and its consumer (or the
/// instructions' count: the kernel's end).
type Flag = (Pipe, Pipe, usize, usize);

/// The flags `instrs` (line, pipe, access) need: each instruction waits for the last one of
/// each other pipe it conflicts with, unless what its pipe knows covers it; the end waits for
/// every pipe's last. With what each instruction's pipe knows after it.
fn flags(instrs: &[(usize, Pipe, Access)]) -> (Vec<Flag>, Vec<Clock>) {
    let mut known: [Clock; 7] = [[-1; 7]; 7];
    let mut after: Vec<Clock> = Vec::with_capacity(instrs.len());
    // Flags: (from, to, producer instruction, consumer instruction or `instrs.len()` at the end).
    let mut flags: Vec<Flag> = Vec::new();
    for j in 0..instrs.len() {
        let (_, q, ref a) = instrs[j];
        // Per other pipe, its last instruction this one conflicts with.
        let mut needs: Vec<(Pipe, usize)> = Vec::new();
        for (i, (_, p, b)) in instrs[..j].iter().enumerate() {
            if *p != q && b.conflicts(a) {
                match needs.iter_mut().find(|n| n.0 == *p) {
                    Some(n) => n.1 = i,
                    None => needs.push((*p, i)),
                }
            }
        }
        // The latest first: what it carries may cover the others.
        needs.sort_by_key(|n| std::cmp::Reverse(n.1));
        for (p, i) in needs {
            if known[slot(q)][slot(p)] < i as i64 {
                flags.push((p, q, i, j));
                let carried = after[i];
                join(&mut known[slot(q)], &carried);
            }
        }
        known[slot(q)][slot(q)] = j as i64;
        after.push(known[slot(q)]);
    }
    // The end waits for every pipe's last instruction, unless another's covers it.
    let mut lasts: Vec<(Pipe, usize)> = Pipe::ALL
        .iter()
        .filter_map(|p| instrs.iter().rposition(|x| x.1 == *p).map(|i| (*p, i)))
        .collect();
    lasts.sort_by_key(|l| std::cmp::Reverse(l.1));
    let mut done: Clock = [-1; 7];
    for (p, i) in lasts {
        if done[slot(p)] < i as i64 {
            flags.push((p, Pipe::S, i, instrs.len()));
            join(&mut done, &after[i]);
        }
    }
    (flags, after)
}

/// Two vector instructions the chained text ordered only through flags to and from another
/// pipe, now gone, get a barrier, unless a raise from the vector pipe between them (in
/// `behind`) drains it.
fn vector_barriers(
    lines: &[&str],
    instrs: &[(usize, Pipe, Access)],
    behind: &HashMap<usize, Vec<String>>,
    before: &mut HashMap<usize, Vec<String>>,
) {
    let vector: Vec<usize> = (0..instrs.len())
        .filter(|j| instrs[*j].1 == Pipe::V)
        .collect();
    for w in vector.windows(2) {
        let ((i, _, a), (j, _, b)) = (&instrs[w[0]], &instrs[w[1]]);
        let barrier = lines[*i..*j]
            .iter()
            .any(|l| l.trim() == "pipe_barrier(PIPE_V);");
        let raised = behind
            .get(i)
            .is_some_and(|r| r.iter().any(|l| l.starts_with("set_flag(PIPE_V,")));
        if !barrier && !raised && a.conflicts(b) {
            before
                .entry(*j)
                .or_default()
                .insert(0, "pipe_barrier(PIPE_V);".into());
        }
    }
}

/// The first two instructions (their lines' numbers, 0-based) of a loop-free kernel text
/// that touch the same bytes on different pipes with nothing ordering them, or on the vector
/// pipe with no barrier between; or a flag raised while its last raise may not have been
/// waited for (the line of the second raise, twice).
pub fn unordered(src: &str, arch: &Arch) -> Option<(usize, usize)> {
    let mut names = Names::default();
    let mut known: [Clock; 7] = [[-1; 7]; 7];
    // Each instruction so far: its line, pipe, access and what its pipe knew after it.
    let mut done: Vec<(usize, Pipe, Access)> = Vec::new();
    // The vector instructions since the vector pipe was last drained.
    let mut vector_since = 0usize;
    // Raised and not yet waited for, per flag: what the raise carries.
    let mut raised: HashMap<(Pipe, Pipe, u32), Vec<Clock>> = HashMap::new();
    // The consumer's first instruction after a flag's last wait (None: none yet).
    let mut waited: HashMap<(Pipe, Pipe, u32), Option<usize>> = HashMap::new();
    for (n, line) in src.lines().enumerate() {
        let t = line.trim();
        if names.declare(t).is_some() {
            continue;
        }
        let steps: Vec<Step> = t.split(';').filter_map(sync).collect();
        for s in &steps {
            match *s {
                Step::Signal { from, to, event } => {
                    let key = (from, to, event);
                    if raised.get(&key).is_some_and(|r| !r.is_empty()) {
                        return Some((n, n));
                    }
                    match waited.get(&key) {
                        Some(None) => return Some((n, n)),
                        Some(Some(w)) if known[slot(from)][slot(to)] < *w as i64 => {
                            return Some((n, n));
                        }
                        _ => {}
                    }
                    raised.entry(key).or_default().push(known[slot(from)]);
                    if from == Pipe::V {
                        vector_since = done.len();
                    }
                }
                Step::Wait { from, to, event } => {
                    let key = (from, to, event);
                    if let Some(c) = raised.get_mut(&key).and_then(|r| r.pop()) {
                        join(&mut known[slot(to)], &c);
                    }
                    waited.insert(key, None);
                }
                Step::Barrier(Pipe::V) => vector_since = done.len(),
                Step::Barrier(_) => {}
                Step::Instr { .. } => {}
            }
        }
        if !steps.is_empty() {
            continue;
        }
        let Some((_, q, a)) = read(t, &names, arch) else {
            continue;
        };
        let j = done.len();
        for (i, (m, p, b)) in done.iter().enumerate() {
            let ordered = if *p == q {
                q != Pipe::V || i < vector_since
            } else {
                known[slot(q)][slot(*p)] >= i as i64
            };
            if !ordered && b.conflicts(&a) {
                return Some((*m, n));
            }
        }
        for w in waited.iter_mut() {
            if w.0.1 == q && w.1.is_none() {
                *w.1 = Some(j);
            }
        }
        known[slot(q)][slot(q)] = j as i64;
        done.push((n, q, a));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use wsp_ir::arch::A2A3;

    /// Two independent chains, as the emitter chains them: y = x * 2, then z = w + 1.
    const CHAINED: &str = "\
extern \"C\" __global__ AICORE void k(__gm__ float* p_x, __gm__ float* p_w, __gm__ float* p_y, __gm__ float* p_z, int64_t p_x_rs, int64_t p_w_rs, int64_t p_y_rs, int64_t p_z_rs)
{
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1, 1, 1, -1, 1>> g_x(p_x, pto::Shape<1, 1, 1, 16, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_x_rs));
    GlobalTensor<float, pto::Shape<1, 1, 1, 8, 64>, pto::Stride<1, 1, 1, -1, 1>> g_w(p_w, pto::Shape<1, 1, 1, 8, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_w_rs));
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1, 1, 1, -1, 1>> g_y(p_y, pto::Shape<1, 1, 1, 16, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_y_rs));
    GlobalTensor<float, pto::Shape<1, 1, 1, 8, 64>, pto::Stride<1, 1, 1, -1, 1>> g_z(p_z, pto::Shape<1, 1, 1, 8, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_z_rs));
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64> v_x; TASSIGN(v_x, 0x0);
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64> v0; TASSIGN(v0, 0x1000);
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v_w; TASSIGN(v_w, 0x2000);
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v2; TASSIGN(v2, 0x0);
    // %0 = muls
    TLOAD(v_x, g_x);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TMULS(v0, v_x, (float)(2));
    // %1 = store
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(g_y, v0);
    // %2 = adds
    set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0); wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    TLOAD(v_w, g_w);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TADDS(v2, v_w, (float)(1));
    // %3 = store
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(g_z, v2);
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0); wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
}
";

    fn body(src: &str) -> String {
        src.lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("Tile<") && !l.starts_with("GlobalTensor<"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn each_instruction_waits_only_for_what_it_touches() {
        // w's load runs while x * 2 is computed and stored; z = w + 1 waits for that load
        // only (v2 shares v_x's bytes, but the raise after x * 2 drained the vector pipe).
        let out = by_dependency(CHAINED, &A2A3).unwrap();
        assert_eq!(unordered(&out, &A2A3), None);
        expect![[r#"
            extern "C" __global__ AICORE void k(__gm__ float* p_x, __gm__ float* p_w, __gm__ float* p_y, __gm__ float* p_z, int64_t p_x_rs, int64_t p_w_rs, int64_t p_y_rs, int64_t p_z_rs)
            {
            // %0 = muls
            TLOAD(v_x, g_x);
            set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
            wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
            TMULS(v0, v_x, (float)(2));
            set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
            // %1 = store
            wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
            TSTORE(g_y, v0);
            // %2 = adds
            TLOAD(v_w, g_w);
            set_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
            wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
            TADDS(v2, v_w, (float)(1));
            set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
            // %3 = store
            wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
            TSTORE(g_z, v2);
            set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
            wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
            }"#]]
        .assert_eq(&body(&out));
    }

    #[test]
    fn unordered_finds_a_missing_flag_and_a_flag_raised_twice() {
        assert_eq!(unordered(CHAINED, &A2A3), None);
        // Without its wait, the vector reads x before the load may be done.
        let missing = CHAINED.replacen(
            "set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);",
            "",
            1,
        );
        let (a, b) = unordered(&missing, &A2A3).unwrap();
        let line = |n: usize| missing.lines().nth(n).unwrap().trim();
        assert_eq!(
            (line(a), line(b)),
            ("TLOAD(v_x, g_x);", "TMULS(v0, v_x, (float)(2));")
        );
        // The same flag raised again before anything shows its first raise was waited for.
        let twice = CHAINED.replacen(
            "TLOAD(v_x, g_x);",
            "TLOAD(v_x, g_x);\n    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);",
            1,
        );
        let (a, b) = unordered(&twice, &A2A3).unwrap();
        assert_eq!(a, b);
        // Vector instructions that share bytes need a barrier between them.
        let no_barrier = CHAINED.replace(
            "TMULS(v0, v_x, (float)(2));",
            "TMULS(v0, v_x, (float)(2));\n    TADDS(v0, v0, (float)(1));",
        );
        assert!(unordered(&no_barrier, &A2A3).is_some());
    }

    #[test]
    fn vector_instructions_ordered_through_another_pipe_get_a_barrier() {
        // x * 2, then a load of w, then (x * 2) + w: the chained text orders the two vector
        // instructions by the flags around the load; with those gone, a barrier does.
        let chained = "\
extern \"C\" __global__ AICORE void k(__gm__ float* p_x, __gm__ float* p_w, int64_t p_x_rs, int64_t p_w_rs)
{
    GlobalTensor<float, pto::Shape<1, 1, 1, 8, 64>, pto::Stride<1, 1, 1, -1, 1>> g_x(p_x, pto::Shape<1, 1, 1, 8, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_x_rs));
    GlobalTensor<float, pto::Shape<1, 1, 1, 8, 64>, pto::Stride<1, 1, 1, -1, 1>> g_w(p_w, pto::Shape<1, 1, 1, 8, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_w_rs));
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v_x; TASSIGN(v_x, 0x0);
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v0; TASSIGN(v0, 0x800);
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v_w; TASSIGN(v_w, 0x1000);
    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v1; TASSIGN(v1, 0x1800);
    TLOAD(v_x, g_x);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TMULS(v0, v_x, (float)(2));
    set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
    TLOAD(v_w, g_w);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TADD(v1, v0, v_w);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(g_x, v1);
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0); wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
}
";
        let out = by_dependency(chained, &A2A3).unwrap();
        assert_eq!(unordered(&out, &A2A3), None, "{out}");
        let at = |s: &str| out.find(s).unwrap();
        assert!(at("TMULS(") < at("pipe_barrier(PIPE_V);"), "{out}");
        assert!(at("pipe_barrier(PIPE_V);") < at("TADD("), "{out}");
        // The load of w waits for nothing.
        assert!(!out.contains("set_flag(PIPE_V, PIPE_MTE2"), "{out}");
    }

    #[test]
    fn global_views_meet_by_rows_of_one_parameter_or_one_shape() {
        // A store of out's rows [0, 8), then a load of x's rows [8, 16) (same view shape: the
        // task may pass one region as both) and of w (another shape): only a load of x's
        // rows [0, 8) must wait for the store.
        let view = |name: &str, ptr: &str, rows: u64| {
            format!(
                "    GlobalTensor<float, pto::Shape<1, 1, 1, {rows}, 64>, pto::Stride<1, 1, 1, -1, 1>> {name}({ptr}, pto::Shape<1, 1, 1, {rows}, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_x_rs));\n"
            )
        };
        let src = |x_ptr: &str| {
            format!(
                "{}{}{}{}    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v0; TASSIGN(v0, 0x0);\n    Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64> v1; TASSIGN(v1, 0x800);\n    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64> v2; TASSIGN(v2, 0x1000);\n    TSTORE(g_out, v0);\n    TLOAD(v1, g_x);\n    TLOAD(v2, g_w);\n",
                view("g_out", "p_out", 8),
                view("g_x", x_ptr, 8),
                view("g_w", "p_w", 16),
                "",
            )
        };
        assert_eq!(unordered(&src("p_x + 8 * p_x_rs"), &A2A3), None);
        let same_rows = src("p_x");
        let (a, b) = unordered(&same_rows, &A2A3).unwrap();
        let line = |n: usize| same_rows.lines().nth(n).unwrap().trim();
        assert_eq!(
            (line(a), line(b)),
            ("TSTORE(g_out, v0);", "TLOAD(v1, g_x);")
        );
        // A view of another shape whose pointer is not read as rows of a parameter may be
        // anywhere.
        let unknown: String = src("p_x + p_off")
            .lines()
            .map(|l| match l.contains(" g_x(") {
                true => l.replace("1, 8, 64>", "1, 4, 64>") + "\n",
                false => format!("{l}\n"),
            })
            .collect();
        assert!(
            unknown.contains("g_x(p_x + p_off, pto::Shape<1, 1, 1, 4, 64>"),
            "{unknown}"
        );
        assert!(unordered(&unknown, &A2A3).is_some());
        assert_eq!(
            unordered(&unknown.replace("p_x + p_off", "p_x + 8 * p_x_rs"), &A2A3),
            None
        );
        // Row major, `+ N` is N columns on: the same rows, other columns.
        assert_eq!(unordered(&src("p_x + 64"), &A2A3), None);
        assert!(unordered(&src("p_x + 32"), &A2A3).is_some());
        // A view laid out the other way round (column major: `+ N * rs` is N columns on)
        // meets every view of its shape or parameter, wherever each starts.
        let dn = src("p_x + 64 * p_x_rs").replace(
            "pto::Stride<1, 1, 1, -1, 1>> g_x(",
            "pto::Stride<1, 1, 1, 1, -1>, Layout::DN> g_x(",
        );
        assert!(dn.contains("Layout::DN> g_x(p_x + 64 * p_x_rs, "), "{dn}");
        assert!(unordered(&dn, &A2A3).is_some());
    }
}
