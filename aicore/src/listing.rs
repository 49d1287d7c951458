//! An emitted AICore kernel read back from its text: every instruction with the pipe it runs
//! on and the op it computes, and every `set_flag`/`wait_flag`/`pipe_barrier` between them.
//! What [`crate::verify`] checks and what the simulated clock costs is what the tree holds.
//!
//! The text is this emitter's own, in a fixed form: declarations of global tensors
//! (`GlobalTensor<T, Shape, Stride[, Layout::DN]> g_x(...)`) and tiles (`Tile<...> v0;
//! TASSIGN(v0, 0x...)`, `TileLeft<...>`, ...), then one instruction per line (`TNAME(a, b);`
//! or `TNAME<...>(a, b);`) under a `// %i = op` comment naming the op it computes.

use std::collections::HashMap;

use wsp_ir::DType;
use wsp_ir::arch::{GmLayout, Instr, KernelFacts, Operand, TileKind, TileLayout};

use crate::elem;

/// The hardware pipe an instruction runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pipe {
    S,
    Mte2,
    Mte1,
    Mte3,
    V,
    M,
    Fix,
}

impl Pipe {
    pub const ALL: [Pipe; 7] = [
        Pipe::S,
        Pipe::Mte2,
        Pipe::Mte1,
        Pipe::Mte3,
        Pipe::V,
        Pipe::M,
        Pipe::Fix,
    ];

    /// Its name in PTO-ISA's code.
    pub fn name(self) -> &'static str {
        match self {
            Pipe::S => "PIPE_S",
            Pipe::Mte2 => "PIPE_MTE2",
            Pipe::Mte1 => "PIPE_MTE1",
            Pipe::Mte3 => "PIPE_MTE3",
            Pipe::V => "PIPE_V",
            Pipe::M => "PIPE_M",
            Pipe::Fix => "PIPE_FIX",
        }
    }

    fn from_name(name: &str) -> Option<Pipe> {
        Pipe::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The pipe an instruction runs on, from its name and where its tiles are: data moves by
    /// the engine between its source and destination memories (GM → UB or L1: MTE2; UB →
    /// GM or L1: MTE3; L1 → L0 or the bias table: MTE1; out of L0C: FIX), matrix products on
    /// the cube, the scalar forms on the scalar pipe, and the rest on the vector unit.
    pub fn of(i: &Instr) -> Pipe {
        let kind = |n: usize| match i.operands.get(n) {
            Some(Operand::Tile { kind, .. }) => Some(*kind),
            _ => None,
        };
        match i.name.as_str() {
            "TLOAD" => Pipe::Mte2,
            "TSTORE" if kind(1) == Some(TileKind::Acc) => Pipe::Fix,
            "TSTORE" => Pipe::Mte3,
            "TMOV" | "TEXTRACT" => match (kind(0), kind(1)) {
                (_, Some(TileKind::Acc)) => Pipe::Fix,
                (Some(TileKind::Vec), Some(TileKind::Vec)) => Pipe::V,
                (_, Some(TileKind::Vec)) => Pipe::Mte3,
                _ => Pipe::Mte1,
            },
            n if n.starts_with("TMATMUL") => Pipe::M,
            "TCI" => Pipe::S,
            _ => Pipe::V,
        }
    }
}

/// One line of an emitted kernel's body.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Instr {
        /// The op it computes, if under one.
        op: Option<u32>,
        pipe: Pipe,
        instr: Instr,
    },
    /// `set_flag(from, to, event)`: `from` signals once its instructions so far are done.
    Signal { from: Pipe, to: Pipe, event: u32 },
    /// `wait_flag(from, to, event)`: `to` waits for the signal.
    Wait { from: Pipe, to: Pipe, event: u32 },
    /// `pipe_barrier(pipe)`: the pipe's instructions so far are done before its next.
    Barrier(Pipe),
}

/// A `for` loop of the emitted text: steps `first..end` run `trips` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub first: usize,
    pub end: usize,
    pub trips: u64,
}

/// An emitted kernel read back.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Each step once, as written.
    pub steps: Vec<Step>,
    /// The loops over `steps`, outer before inner (pre-order), properly nested.
    pub loops: Vec<Repeat>,
    pub facts: KernelFacts,
    /// Tiles bound with `TASSIGN`, each an instruction of the scalar pipe.
    pub tiles: usize,
}

impl Listing {
    /// Every step in the order the kernel runs them, each loop's body `trips` times.
    pub fn run(&self, f: &mut impl FnMut(&Step)) {
        self.run_range(0, self.steps.len(), 0, &mut |i| f(&self.steps[i]));
    }

    /// Steps `first..end` (their indices), whose loops are `self.loops[next..]` that lie
    /// inside.
    fn run_range(&self, first: usize, end: usize, mut next: usize, f: &mut impl FnMut(usize)) {
        let mut i = first;
        while i < end
            || self
                .loops
                .get(next)
                .is_some_and(|l| l.first == i && l.end <= end)
        {
            match self.loops.get(next) {
                Some(l) if l.first == i && l.end <= end => {
                    let inner = next + 1;
                    for _ in 0..l.trips {
                        self.run_range(l.first, l.end, inner, f);
                    }
                    next = self.after(next);
                    i = l.end;
                }
                _ => {
                    f(i);
                    i += 1;
                }
            }
        }
    }

    /// The first loop after loop `n` and the loops inside it.
    pub fn after(&self, n: usize) -> usize {
        let end = self.loops[n].end;
        let first = self.loops[n].first;
        let mut m = n + 1;
        while self
            .loops
            .get(m)
            .is_some_and(|l| l.first >= first && l.end <= end && (l.first < end || l.end == first))
        {
            m += 1;
        }
        m
    }

    /// Every instruction in the order the kernel runs them (each loop's body `trips` times),
    /// as Perf-Sim's trace lists them.
    pub fn run_instrs(&self) -> Vec<(Option<u32>, Pipe, &Instr)> {
        let mut out = Vec::new();
        self.run_range(0, self.steps.len(), 0, &mut |i| {
            if let Step::Instr { op, pipe, instr } = &self.steps[i] {
                out.push((*op, *pipe, instr));
            }
        });
        out
    }

    pub fn instrs(&self) -> impl Iterator<Item = (Option<u32>, Pipe, &Instr)> {
        self.steps.iter().filter_map(|s| match s {
            Step::Instr { op, pipe, instr } => Some((*op, *pipe, instr)),
            _ => None,
        })
    }
}

/// Every step of the emitted text `src`, in order, and the kernel's facts.
pub fn listing(src: &str) -> Listing {
    let mut names: HashMap<String, Operand> = HashMap::new();
    let mut out = Listing::default();
    let mut op = None;
    // Open braces: a loop (its index in `out.loops`) or a plain scope.
    let mut open: Vec<Option<usize>> = Vec::new();
    for line in src.lines().map(str::trim) {
        if let Some(trips) = for_header(line) {
            open.push(Some(out.loops.len()));
            out.loops.push(Repeat {
                first: out.steps.len(),
                end: out.steps.len(),
                trips,
            });
            continue;
        }
        if line == "{" {
            open.push(None);
            continue;
        }
        if line == "}" {
            if let Some(Some(l)) = open.pop() {
                out.loops[l].end = out.steps.len();
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("// %") {
            op = rest.split(' ').next().and_then(|n| n.parse().ok());
            continue;
        }
        if !line.starts_with("//") {
            out.tiles += line.matches("TASSIGN(").count();
        }
        if let Some((name, operand)) = declaration(line) {
            if let Operand::Tile {
                kind: TileKind::Vec,
                offset,
                bytes,
                ..
            } = operand
            {
                out.facts.ub_end = out.facts.ub_end.max(offset + bytes);
            }
            names.insert(name, operand);
            continue;
        }
        if line.starts_with("set_flag(")
            || line.starts_with("wait_flag(")
            || line.starts_with("pipe_barrier(")
        {
            out.steps.extend(line.split(';').filter_map(sync));
            continue;
        }
        let Some((name, args)) = call(line) else {
            continue;
        };
        if name == "TASSIGN" || !name.starts_with('T') {
            continue;
        }
        let operands = args
            .iter()
            .map(|a| {
                names
                    .get(a.as_str())
                    .cloned()
                    .unwrap_or_else(|| Operand::Scalar(a.clone()))
            })
            .collect();
        let instr = Instr { name, operands };
        out.steps.push(Step::Instr {
            op,
            pipe: Pipe::of(&instr),
            instr,
        });
    }
    out
}

/// The trips of `for (int64_t V = A; V < B; V += S) {`, the one loop form the emitter writes.
fn for_header(line: &str) -> Option<u64> {
    let inner = line.strip_prefix("for (")?.strip_suffix(") {")?;
    let mut parts = inner.split(';').map(str::trim);
    let (init, cond, step) = (parts.next()?, parts.next()?, parts.next()?);
    let (var, a) = init.strip_prefix("int64_t ")?.split_once(" = ")?;
    let b = cond.strip_prefix(var)?.trim().strip_prefix("< ")?;
    let s = step.strip_prefix(var)?.trim().strip_prefix("+= ")?;
    let (a, b, s): (i64, i64, i64) = (a.parse().ok()?, b.parse().ok()?, s.parse().ok()?);
    if s <= 0 || b <= a {
        return Some(0);
    }
    Some(((b - a) as u64).div_ceil(s as u64))
}

/// One synchronisation statement (`set_flag(A, B, EVENT_IDn)`, `wait_flag(...)`,
/// `pipe_barrier(P)`), without its `;`.
pub(crate) fn sync(statement: &str) -> Option<Step> {
    let s = statement.trim();
    let open = s.find('(')?;
    let args: Vec<&str> = s[open + 1..]
        .strip_suffix(')')?
        .split(',')
        .map(str::trim)
        .collect();
    let event = |a: Option<&&str>| a?.strip_prefix("EVENT_ID")?.parse().ok();
    match (&s[..open], args.as_slice()) {
        ("set_flag", [a, b, e]) => Some(Step::Signal {
            from: Pipe::from_name(a)?,
            to: Pipe::from_name(b)?,
            event: event(Some(e))?,
        }),
        ("wait_flag", [a, b, e]) => Some(Step::Wait {
            from: Pipe::from_name(a)?,
            to: Pipe::from_name(b)?,
            event: event(Some(e))?,
        }),
        ("pipe_barrier", [p]) => Some(Step::Barrier(Pipe::from_name(p)?)),
        _ => None,
    }
}

/// `NAME(args);` or `NAME<...>(args);`: the name and the top-level arguments.
pub(crate) fn call(line: &str) -> Option<(String, Vec<String>)> {
    let body = line.strip_suffix(';')?;
    let name_end = body.find(['(', '<'])?;
    let name = &body[..name_end];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
        return None;
    }
    let open = top_level(body, name_end, '(')?;
    let inner = body.get(open + 1..body.len() - 1)?;
    Some((name.to_string(), split_top(inner)))
}

/// The index of the first `c` at angle-bracket depth 0 from `from`.
fn top_level(s: &str, from: usize, c: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s[from..].char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if ch == c && depth == 0 => return Some(from + i),
            _ => {}
        }
    }
    None
}

/// Splits at commas outside brackets, trimmed.
pub(crate) fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, ch) in s.char_indices() {
        match ch {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim().to_string());
    }
    out
}

fn dtype(elem_name: &str) -> Option<DType> {
    DType::ALL.iter().copied().find(|d| elem(*d) == elem_name)
}

/// A declaration line: the name it declares and what it is.
pub(crate) fn declaration(line: &str) -> Option<(String, Operand)> {
    let open = line.find('<')?;
    let head = &line[..open];
    let close = matching(line, open)?;
    let params = split_top(&line[open + 1..close]);
    let rest = line[close + 1..].trim_start();
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    if head == "GlobalTensor" {
        let layout = if params.iter().any(|p| p == "Layout::DN") {
            GmLayout::Dn
        } else {
            GmLayout::Nd
        };
        return Some((
            name.clone(),
            Operand::Global {
                name,
                layout,
                dtype: dtype(params.first()?)?,
            },
        ));
    }
    let num = |i: usize| params.get(i).and_then(|p| p.parse::<u64>().ok());
    let (kind, layout, dt, rows, cols, valid) = match head {
        "Tile" => {
            let kind = match params.first()?.as_str() {
                "TileType::Vec" => TileKind::Vec,
                "TileType::Mat" => TileKind::Mat,
                "TileType::Bias" => TileKind::Bias,
                _ => return None,
            };
            let b = params.get(4)?.as_str();
            let s = params.get(7).map(String::as_str);
            let layout = match (kind, b, s) {
                (TileKind::Vec, "BLayout::ColMajor", _) => TileLayout::ColMajor,
                (TileKind::Vec | TileKind::Bias, _, _) => TileLayout::RowMajor,
                (_, "BLayout::RowMajor", None) => TileLayout::RowMajor,
                (_, "BLayout::ColMajor", Some("SLayout::RowMajor")) => TileLayout::Nz,
                (_, "BLayout::RowMajor", Some("SLayout::ColMajor")) => TileLayout::Zn,
                _ => return None,
            };
            (
                kind,
                layout,
                dtype(params.get(1)?)?,
                num(2)?,
                num(3)?,
                (num(5)?, num(6)?),
            )
        }
        "TileLeft" | "TileRight" | "TileAcc" => {
            let kind = match head {
                "TileLeft" => TileKind::Left,
                "TileRight" => TileKind::Right,
                _ => TileKind::Acc,
            };
            (
                kind,
                TileLayout::Cube,
                dtype(params.first()?)?,
                num(1)?,
                num(2)?,
                (num(3)?, num(4)?),
            )
        }
        _ => return None,
    };
    let at = rest.find(&format!("TASSIGN({name}, 0x"))?;
    let hex: String = rest[at + name.len() + 12..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    let offset = u64::from_str_radix(&hex, 16).ok()?;
    Some((
        name.clone(),
        Operand::Tile {
            name,
            kind,
            layout,
            dtype: dt,
            rows,
            cols,
            valid,
            offset,
            bytes: rows * cols * dt.size_bytes() as u64,
        },
    ))
}

/// The `>` closing the `<` at `open`.
pub(crate) fn matching(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s[open..].char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `line` with each word in `names` followed by `suffix`.
pub(crate) fn renamed(line: &str, names: &[String], suffix: &str) -> String {
    map_words(line, |w| {
        names.iter().any(|n| n == w).then(|| format!("{w}{suffix}"))
    })
}

/// `line` with each identifier-like word replaced by what `f` gives for it, if anything.
pub(crate) fn map_words(line: &str, f: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match f(word) {
            Some(w) => out.push_str(&w),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in line.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_declarations_and_calls_back() {
        let (name, op) = declaration(
            "Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1> v1; TASSIGN(v1, 0x4000);  // UB",
        )
        .unwrap();
        assert_eq!(name, "v1");
        assert!(matches!(
            op,
            Operand::Tile {
                layout: TileLayout::ColMajor,
                offset: 0x4000,
                bytes: 64,
                ..
            }
        ));
        let (name, op) = declaration(
            "GlobalTensor<half, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<1, 1, 1, 1, -1>, Layout::DN> g_k_t(p_k, pto::Shape<1, 1, 1, 32, 64>(), pto::Stride<1, 1, 1, 1, -1>(p_k_rs));",
        )
        .unwrap();
        assert_eq!(name, "g_k_t");
        assert!(matches!(
            op,
            Operand::Global {
                layout: GmLayout::Dn,
                dtype: DType::F16,
                ..
            }
        ));
        assert_eq!(
            call("TSTORE<decltype(c1), decltype(g_c), AtomicType::AtomicAdd>(g_c, c1);"),
            Some((
                "TSTORE".to_string(),
                vec!["g_c".to_string(), "c1".to_string()]
            ))
        );
        assert_eq!(
            call("set_flag(PIPE_V, PIPE_S, EVENT_ID0); wait_flag(PIPE_V, PIPE_S, EVENT_ID0);"),
            None
        );
    }

    #[test]
    fn reads_steps_with_their_pipes_and_flags() {
        let src = "\
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v0; TASSIGN(v0, 0x0);
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<1, 1, 1, -1, 1>> g_x(p_x, pto::Shape<1, 1, 1, 16, 16>(), pto::Stride<1, 1, 1, -1, 1>(p_x_rs));
    // %0 = load
    TLOAD(v0, g_x);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    // %1 = exp
    TEXP(v0, v0);
    pipe_barrier(PIPE_V);
    TMULS(v0, v0, (float)(2));
";
        let l = listing(src);
        let pipes: Vec<String> = l
            .steps
            .iter()
            .map(|s| match s {
                Step::Instr { op, pipe, instr } => {
                    format!("{}@{pipe:?}%{}", instr.name, op.unwrap())
                }
                Step::Signal { from, to, event } => format!("set {from:?}->{to:?} {event}"),
                Step::Wait { from, to, event } => format!("wait {from:?}->{to:?} {event}"),
                Step::Barrier(p) => format!("barrier {p:?}"),
            })
            .collect();
        assert_eq!(
            pipes,
            [
                "TLOAD@Mte2%0",
                "set Mte2->V 0",
                "wait Mte2->V 0",
                "TEXP@V%1",
                "barrier V",
                "TMULS@V%1"
            ]
        );
        assert_eq!((l.facts.ub_end, l.tiles), (1024, 1));
    }
}
