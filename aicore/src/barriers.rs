//! `pipe_barrier(PIPE_V)` only where a vector instruction depends on one before it: the
//! emitter writes a barrier between every two consecutive vector instructions, and this pass,
//! reading the emitted text back (its tiles' UB bytes from their declarations), drops each one
//! whose next instruction neither reads nor writes bytes that the vector instructions since
//! the last synchronisation write, nor writes bytes they read.

use wsp_ir::arch::{Arch, instruction};

use crate::listing::{Pipe, Step, call, sync};
use crate::sync::Names;

/// UB byte ranges an instruction reads and writes.
#[derive(Default)]
struct Access {
    reads: Vec<(u64, u64)>,
    writes: Vec<(u64, u64)>,
}

fn meets(a: &[(u64, u64)], b: &[(u64, u64)]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.0 < y.1 && y.0 < x.1))
}

/// What a vector instruction line touches in UB ([`crate::sync::read`]). `None`: not a
/// vector instruction, or one to keep ordered on both sides (it works element by element
/// from the scalar pipe).
fn access(line: &str, names: &Names, arch: &Arch) -> Option<Access> {
    let (instr, pipe, a) = crate::sync::read(line, names, arch)?;
    if pipe != Pipe::V || instruction(&instr.name)?.scalar_loop {
        return None;
    }
    let [reads, writes] = a.ub();
    Some(Access { reads, writes })
}

/// `src` without the vector barriers nothing needs.
pub(crate) fn elide(src: &str, arch: &Arch) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let mut names = Names::default();
    // What the vector instructions since the last barrier or raise from the vector pipe touch.
    let mut pending = Access::default();
    let mut out = String::with_capacity(src.len());
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if names.declare(t).is_some() {
        } else if t == "pipe_barrier(PIPE_V);" {
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("//") && !l.starts_with("wait_flag("));
            let free = next.and_then(|l| access(l, &names, arch)).is_some_and(|n| {
                !meets(&n.reads, &pending.writes)
                    && !meets(&n.writes, &pending.writes)
                    && !meets(&n.writes, &pending.reads)
            });
            if free {
                continue;
            }
            pending = Access::default();
        } else if t
            .split(';')
            .filter_map(sync)
            .any(|s| matches!(s, Step::Signal { from: Pipe::V, .. }))
        {
            // A raise from the vector pipe waits for its instructions to be done.
            pending = Access::default();
        } else if let Some(a) = access(t, &names, arch) {
            pending.reads.extend(a.reads);
            pending.writes.extend(a.writes);
        } else if call(t).is_some_and(|(n, _)| instruction(&n).is_some_and(|r| r.scalar_loop)) {
            // Ordered on both sides: the next barrier stays.
            pending.writes.push((0, u64::MAX));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsp_ir::arch::A2A3;

    #[test]
    fn only_dependent_vector_instructions_keep_their_barrier() {
        // v1 = x * 2 and v2 = x + 1 are independent; v3 = v1 * v2 needs both; t0_0 and v4
        // share bytes, so v4's write waits for the scratch tile's read.
        let src = "\
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v_x; TASSIGN(v_x, 0x0);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v1; TASSIGN(v1, 0x400);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v2; TASSIGN(v2, 0x800);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v3; TASSIGN(v3, 0xc00);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> t0_0; TASSIGN(t0_0, 0x1000);
    Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16> v4; TASSIGN(v4, 0x1000);
    TMULS(v1, v_x, (float)(2));
    pipe_barrier(PIPE_V);
    // %2 = add
    TADDS(v2, v_x, (float)(1));
    pipe_barrier(PIPE_V);
    TMUL(v3, v1, v2);
    pipe_barrier(PIPE_V);
    TADD(t0_0, v_x, v_x);
    pipe_barrier(PIPE_V);
    TADD(v4, v_x, v_x);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(g_y, v3);
";
        let out = elide(src, &A2A3);
        let kept: Vec<&str> = out
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("Tile<"))
            .collect();
        assert_eq!(
            kept,
            [
                "TMULS(v1, v_x, (float)(2));",
                "// %2 = add",
                "TADDS(v2, v_x, (float)(1));",
                "pipe_barrier(PIPE_V);",
                "TMUL(v3, v1, v2);",
                "TADD(t0_0, v_x, v_x);",
                "pipe_barrier(PIPE_V);",
                "TADD(v4, v_x, v_x);",
                "set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);",
                "TSTORE(g_y, v3);",
            ]
        );
    }
}
