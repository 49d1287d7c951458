//! Every instruction of an emitted AICore kernel, read back from the emitted text and checked
//! against its architecture's rules (`wsp_ir::arch`): what is checked is what the tree holds.
//!
//! The text is this emitter's own, in a fixed form: declarations of global tensors
//! (`GlobalTensor<T, Shape, Stride[, Layout::DN]> g_x(...)`) and tiles (`Tile<...> v0;
//! TASSIGN(v0, 0x...)`, `TileLeft<...>`, ...), then one instruction per line (`TNAME(a, b);`
//! or `TNAME<...>(a, b);`) under a `// %i = op` comment naming the op it computes.

use std::collections::HashMap;

use wsp_ir::DType;
use wsp_ir::arch::{Arch, GmLayout, Instr, KernelFacts, Operand, TileKind, TileLayout};

use crate::{Refusal, elem};

/// `Err` names the first instruction that breaks a rule, its op and the rule.
pub fn check(src: &str, arch: &Arch) -> Result<(), Refusal> {
    let (instrs, facts) = read(src);
    for (op, i) in &instrs {
        if let Some((id, why)) = wsp_ir::arch::broken_rules(arch, i, &facts)
            .into_iter()
            .next()
        {
            let at = op.map_or(String::new(), |o| format!(" (op %{o})"));
            return Err(Refusal {
                op: *op,
                message: format!("{why}{at}: breaks the {} rule `{id}`", arch.name),
            });
        }
    }
    Ok(())
}

/// The first instruction of the emitted kernel that reads or writes UB from the scalar pipe
/// (which Perf-Sim cannot run), with its op.
pub fn scalar_loop(src: &str) -> Option<String> {
    let (instrs, _) = read(src);
    instrs.into_iter().find_map(|(op, i)| {
        wsp_ir::arch::instruction(&i.name)
            .is_some_and(|r| r.scalar_loop)
            .then(|| match op {
                Some(o) => format!("{} (op %{o})", i.name),
                None => i.name,
            })
    })
}

/// Every instruction of the emitted text, with the op it computes, and the kernel's facts.
fn read(src: &str) -> (Vec<(Option<u32>, Instr)>, KernelFacts) {
    let mut names: HashMap<String, Operand> = HashMap::new();
    let mut facts = KernelFacts::default();
    let mut instrs: Vec<(Option<u32>, Instr)> = Vec::new();
    let mut op = None;
    for line in src.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("// %") {
            op = rest.split(' ').next().and_then(|n| n.parse().ok());
            continue;
        }
        if let Some((name, operand)) = declaration(line) {
            if let Operand::Tile {
                kind: TileKind::Vec,
                offset,
                bytes,
                ..
            } = operand
            {
                facts.ub_end = facts.ub_end.max(offset + bytes);
            }
            names.insert(name, operand);
            continue;
        }
        let Some((instr, args)) = call(line) else {
            continue;
        };
        if instr == "TASSIGN" || !instr.starts_with('T') {
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
        instrs.push((
            op,
            Instr {
                name: instr,
                operands,
            },
        ));
    }
    (instrs, facts)
}

/// `NAME(args);` or `NAME<...>(args);`: the name and the top-level arguments.
fn call(line: &str) -> Option<(String, Vec<String>)> {
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
fn split_top(s: &str) -> Vec<String> {
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
fn declaration(line: &str) -> Option<(String, Operand)> {
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
fn matching(s: &str, open: usize) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use wsp_ir::arch::A2A3;

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
    fn an_emitted_break_is_refused_with_its_op() {
        let src = "\
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> t0_0; TASSIGN(t0_0, 0x0);
    // %3 = gelu
    TDIVS(t0_0, (float)(2), t0_0);
";
        let err = check(src, &A2A3).unwrap_err();
        assert_eq!(err.op, Some(3));
        assert!(err.message.contains("`no-alias`"), "{err}");
    }
}
