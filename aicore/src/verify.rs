//! Every instruction of an emitted AICore kernel, read back from the emitted text
//! ([`crate::listing`]) and checked against its architecture's rules (`wsp_ir::arch`) and, in
//! a loop-free kernel, for instructions its flags leave unordered ([`crate::sync::unordered`]):
//! what is checked is what the tree holds.

use wsp_ir::arch::Arch;

use crate::Refusal;
use crate::listing::listing;

/// `Err` names the first instruction that breaks a rule, its op and the rule.
pub fn check(src: &str, arch: &Arch) -> Result<(), Refusal> {
    let l = listing(src);
    if l.loops.is_empty()
        && let Some((a, b)) = crate::sync::unordered(src, arch)
    {
        let line = |n: usize| src.lines().nth(n).unwrap_or_default().trim().to_string();
        return Err(Refusal {
            op: None,
            message: if a == b {
                format!(
                    "`{}` raises a flag that may not have been waited for",
                    line(a)
                )
            } else {
                format!(
                    "`{}` and `{}` touch the same bytes with nothing ordering them",
                    line(a),
                    line(b)
                )
            },
        });
    }
    for (op, _, i) in l.instrs() {
        if let Some((id, why)) = wsp_ir::arch::broken_rules(arch, i, &l.facts)
            .into_iter()
            .next()
        {
            let at = op.map_or(String::new(), |o| format!(" (op %{o})"));
            return Err(Refusal {
                op,
                message: format!("{why}{at}: breaks the {} rule `{id}`", arch.name),
            });
        }
    }
    Ok(())
}

/// The first instruction of the emitted kernel that reads or writes UB from the scalar pipe
/// (which Perf-Sim cannot run), with its op.
pub fn scalar_loop(src: &str) -> Option<String> {
    listing(src).instrs().find_map(|(op, _, i)| {
        wsp_ir::arch::instruction(&i.name)
            .is_some_and(|r| r.scalar_loop)
            .then(|| match op {
                Some(o) => format!("{} (op %{o})", i.name),
                None => i.name.clone(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsp_ir::arch::A2A3;

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
