//! A mixed loop kernel (`wsp_ir::mixed`) as ONE A2/A3 launch: one AIC and two AIVs in one
//! entry, as PTO-ISA's flash attention is written (`kernels/manual/common/flash_atten`).
//!
//! Each core's work is written as the straight kernel `wsp_ir::mixed::unroll` makes of it
//! (the emitter's own form, flags by dependency), its views pointed at the kernel's
//! parameters and at the ring workspace, and cut into its sections. The entry runs the
//! sections in [`Mixed::order`]: the cube's under `__DAV_CUBE__`, the vector cores' under
//! `__DAV_VEC__`, each vector core on its half of the rows (`get_subblockid()`). A device
//! compiles the file once per core kind and each runs its own sections; PTO-ISA's cost
//! model and CPU simulation define both and run them in the order written, which is why the
//! order lets every hand-off be written before it is read.
//!
//! A hand-off is a store into a ring slot after `TALLOC`, pushed (`TPUSH`) right after it or
//! just before the other core's section that loads it, whichever the clock finds faster
//! ([`MixedCores::costed`]), and a load from it between `TPOP` and `TFREE` (PTO-ISA's
//! `TPipe` over global memory: cross-core flags `2r` and `2r + 1` for ring `r`). The CPU simulation runs the sections one after another,
//! so it needs no flags: there the ring calls are left out, and the two vector cores' halves
//! run in turn, each in its own 192 KiB of the simulated UB.

use std::collections::BTreeMap;
use std::fmt::Write;

use wsp_ir::Kernel;
use wsp_ir::arch::Arch;
use wsp_ir::buffers::Lifetimes;
use wsp_ir::kernel::{KernelBody, Operand, ParamType};
use wsp_ir::layout::Layouts;
use wsp_ir::mixed::{self, Base, CoreProgram, Mixed, RING_PARAM, Section};
use wsp_ir::split::Core;

use crate::listing::{self, Pipe, Step};
use crate::{Form, Refusal, adapter, elem, entry_signature, written};

/// What a mixed kernel's file says of itself in its first line.
pub const HEADER: &str = "one mixed launch";

/// The mixed kernel's translation unit, each push just before its load, or why it has none.
pub fn kernel_source(k: &Kernel, arch: &Arch, layouts: &Layouts) -> Result<String, Refusal> {
    cores(k, arch, layouts)?.source(k, layouts)
}

/// A mixed kernel's cores as the launch runs them: its form, and each core's program and
/// straight kernel text (cube first), flags into the pipes both name alike on IDs of their
/// own. What [`kernel_source`] assembles, and what the clock times.
pub struct MixedCores {
    pub plan: Mixed,
    pub programs: [CoreProgram; 2],
    pub texts: Vec<String>,
    /// Event IDs the texts use into one pipe.
    pub event_ids: u32,
    /// Per ring: whether its producer pushes each slot right after the section that stores
    /// it, rather than just before the section of the other core that loads it.
    pub early: Vec<bool>,
}

/// One step of the launch's one program: a core's section, or `n` pushes into a ring (by the
/// core that stores into it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Section(Core, Section),
    Push { ring: usize, n: usize },
}

impl MixedCores {
    /// How many slots of each ring section `section` of `core` stores into and loads from.
    fn rings_of(&self, core: Core, section: Section) -> (Vec<usize>, Vec<usize>) {
        let rings = self.plan.rings.len();
        let (mut stores, mut loads) = (vec![0; rings], vec![0; rings]);
        let p = &self.programs[usize::from(core == Core::Vector)];
        let Some(i) = p.sections.iter().position(|(_, s)| *s == section) else {
            return (stores, loads);
        };
        let KernelBody::Ops(ops) = &p.kernel.body else {
            return (stores, loads);
        };
        let end = p
            .sections
            .get(i + 1)
            .map_or(ops.len(), |(at, _)| *at as usize);
        for op in &ops[p.sections[i].0 as usize..end] {
            let Some(Operand::Param(name)) = op.args.first() else {
                continue;
            };
            let ring = p.views.iter().find_map(|(n, v)| match v.base {
                Base::Ring { ring, .. } if n == name => Some(ring),
                _ => None,
            });
            match (op.op.as_str(), ring) {
                ("store", Some(r)) => stores[r] += 1,
                ("load", Some(r)) => loads[r] += 1,
                _ => {}
            }
        }
        (stores, loads)
    }

    /// The launch's one program: the sections in [`Mixed::order`], each ring's pushes where
    /// [`MixedCores::early`] puts them.
    pub fn schedule(&self) -> Vec<Run> {
        let mut out = Vec::new();
        let mut pending = vec![0usize; self.plan.rings.len()];
        for (core, section) in self.plan.order() {
            let (stores, loads) = self.rings_of(core, section);
            for (r, n) in loads.iter().enumerate() {
                if *n > 0 && pending[r] > 0 {
                    out.push(Run::Push {
                        ring: r,
                        n: std::mem::take(&mut pending[r]),
                    });
                }
            }
            out.push(Run::Section(core, section));
            for (r, n) in stores.into_iter().enumerate() {
                match (n, self.early[r]) {
                    (0, _) => {}
                    (n, true) => out.push(Run::Push { ring: r, n }),
                    (n, false) => pending[r] += n,
                }
            }
        }
        out
    }

    /// With each ring's pushes placed where `cost` (cycles of the launch) finds the launch
    /// fastest: the first such among equals, all pushes late first.
    pub fn costed(mut self, cost: &dyn Fn(&MixedCores) -> u64) -> MixedCores {
        let rings = self.plan.rings.len().min(4);
        let mut best: Option<(u64, Vec<bool>)> = None;
        for mask in 0..1u32 << rings {
            self.early = (0..self.plan.rings.len())
                .map(|r| r < rings && mask & (1 << r) != 0)
                .collect();
            let c = cost(&self);
            if best.as_ref().is_none_or(|(b, _)| c < *b) {
                best = Some((c, self.early.clone()));
            }
        }
        if let Some((_, early)) = best {
            self.early = early;
        }
        self
    }

    /// The translation unit.
    pub fn source(&self, k: &Kernel, layouts: &Layouts) -> Result<String, Refusal> {
        let mut texts = Vec::new();
        for (p, text) in self.programs.iter().zip(&self.texts) {
            texts.push(CoreText::read(text, p, &self.plan)?);
        }
        Ok(file(k, self, &texts, layouts))
    }
}

/// `k`'s [`MixedCores`], or why it has none.
pub fn cores(k: &Kernel, arch: &Arch, layouts: &Layouts) -> Result<MixedCores, Refusal> {
    let refuse = |op: Option<u32>, message: String| Refusal { op, message };
    let m = mixed::plan(k, arch).map_err(|e| refuse(e.op, e.message))?;
    match k
        .params
        .iter()
        .find(|p| p.name == RING_PARAM)
        .map(|p| &p.ty)
    {
        Some(ParamType::Tile(_, t)) if *t == m.ring_tile() => {}
        _ => {
            return Err(refuse(
                None,
                format!(
                    "kernel `{}` mixes cube and vector work in its loop and has no `{RING_PARAM}` parameter of {} bytes for its hand-offs",
                    k.name,
                    m.ring_bytes()
                ),
            ));
        }
    }
    for p in &k.params {
        if let ParamType::Tile(_, t) = &p.ty
            && crate::gm_layout(k, &p.name, *t, layouts) != wsp_ir::arch::GmLayout::Nd
        {
            return Err(refuse(
                None,
                format!("parameter `{}` is given column-major views", p.name),
            ));
        }
    }
    let programs = mixed::unroll(k, &m).map_err(|e| refuse(e.op, e.message))?;
    let form = Form {
        lifetimes: Lifetimes::Tight,
        by_dependency: true,
        ..Form::WHOLE
    };
    let mut texts = Vec::new();
    for p in &programs {
        let text = written(
            &p.kernel,
            &p.kernel,
            arch,
            &arch.on_chip,
            &Layouts::default(),
            form,
        )
        .map_err(|r| {
            refuse(
                None,
                format!("{} of kernel `{}`: {}", p.core.name(), k.name, r.message),
            )
        })?;
        crate::verify::check(&text, arch).map_err(|r| {
            refuse(
                None,
                format!("{} of kernel `{}`: {}", p.core.name(), k.name, r.message),
            )
        })?;
        texts.push(text);
    }
    // Flags into the pipes both cores name alike (PIPE_MTE2, PIPE_S) on IDs of their own:
    // PTO-ISA's simulations key a flag by its destination pipe and ID, and run both cores.
    let used = |text: &str, pipe: Pipe| {
        flags(text)
            .filter(|(to, _)| *to == pipe)
            .map(|(_, e)| e + 1)
            .max()
            .unwrap_or(0)
    };
    let shift: Vec<(Pipe, u32)> = [Pipe::Mte2, Pipe::S]
        .into_iter()
        .map(|pipe| (pipe, used(&texts[1], pipe)))
        .collect();
    texts[0] = shift_events(&texts[0], &shift);
    let ids = texts
        .iter()
        .flat_map(|t| flags(t).map(|(_, e)| e + 1))
        .max()
        .unwrap_or(0);
    if ids > arch.events {
        return Err(refuse(
            None,
            format!(
                "kernel `{}`'s cores need {ids} event IDs into one pipe, of {}",
                k.name, arch.events
            ),
        ));
    }
    let early = vec![false; m.rings.len()];
    Ok(MixedCores {
        plan: m,
        programs,
        texts,
        event_ids: ids,
        early,
    })
}

/// One core's straight kernel, read back: its declarations, and its instructions by section.
struct CoreText {
    tiles: Vec<String>,
    globals: Vec<(String, String)>,
    sections: Vec<(Section, Vec<String>)>,
}

impl CoreText {
    fn read(text: &str, p: &CoreProgram, m: &Mixed) -> Result<CoreText, Refusal> {
        let refuse = |message: String| Refusal { op: None, message };
        let lines: Vec<&str> = text.lines().collect();
        let entry = lines
            .iter()
            .position(|l| l.starts_with("extern \"C\""))
            .ok_or_else(|| refuse("no entry".into()))?;
        let close = lines
            .iter()
            .position(|l| *l == "}")
            .ok_or_else(|| refuse("no end of the entry".into()))?;
        let pointers = pointers(p, m);
        let body: Vec<String> = lines[entry + 2..close]
            .iter()
            .map(|l| rename(l, &pointers))
            .collect();
        let (mut tiles, mut globals) = (Vec::new(), Vec::new());
        let mut sections: Vec<(Section, Vec<String>)> = Vec::new();
        let starts: BTreeMap<u32, Section> = p.sections.iter().copied().collect();
        let mut current: Option<usize> = None;
        let mut pre = Vec::new();
        for line in body {
            let t = line.trim_start();
            if current.is_none() && t.starts_with("GlobalTensor<") {
                let name = declared(t, '(');
                globals.push((name, line));
                continue;
            }
            if current.is_none()
                && (t.starts_with("Tile<")
                    || t.starts_with("TileLeft<")
                    || t.starts_with("TileRight<")
                    || t.starts_with("TileAcc<"))
            {
                tiles.push(line);
                continue;
            }
            if let Some(n) = t
                .strip_prefix("// %")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse::<u32>().ok())
                && let Some(s) = starts.get(&n)
            {
                sections.push((*s, Vec::new()));
                current = Some(sections.len() - 1);
            }
            match current {
                Some(c) => sections[c].1.push(line),
                None => pre.push(line),
            }
        }
        // What precedes the first section (flags set up front) runs with it.
        if let Some(first) = sections.first_mut() {
            pre.append(&mut first.1);
            first.1 = pre;
        }
        for (_, lines) in &mut sections {
            *lines = lines
                .iter()
                .flat_map(|l| ring_calls(l, m, p.core))
                .collect();
        }
        Ok(CoreText {
            tiles,
            globals,
            sections,
        })
    }
}

/// A `set_flag` or `wait_flag` statement (without its `;`), as the listing reads it: the
/// call, its pipes and its event ID.
fn flag(statement: &str) -> Option<(&'static str, Pipe, Pipe, u32)> {
    match listing::sync(statement)? {
        Step::Signal { from, to, event } => Some(("set_flag", from, to, event)),
        Step::Wait { from, to, event } => Some(("wait_flag", from, to, event)),
        _ => None,
    }
}

/// Each flag of `text` (every statement of a line): the pipe it goes to and its event ID.
fn flags(text: &str) -> impl Iterator<Item = (Pipe, u32)> {
    text.lines()
        .flat_map(|l| l.split(';'))
        .filter_map(|s| flag(s).map(|(_, _, to, e)| (to, e)))
}

/// `text` with the event IDs of its flags into each pipe of `shift` moved up by its count,
/// every statement of a line (`set_flag(...); wait_flag(...);`).
fn shift_events(text: &str, shift: &[(Pipe, u32)]) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        for piece in line.split_inclusive(';') {
            let moved = piece
                .strip_suffix(';')
                .and_then(flag)
                .and_then(|(f, from, to, e)| {
                    let by = shift.iter().find(|(p, _)| *p == to)?.1;
                    let indent = &piece[..piece.len() - piece.trim_start().len()];
                    Some(format!(
                        "{indent}{f}({}, {}, EVENT_ID{});",
                        from.name(),
                        to.name(),
                        e + by
                    ))
                });
            out.push_str(moved.as_deref().unwrap_or(piece));
        }
        out.push('\n');
    }
    out
}

/// The identifier declared by a declaration line: the word before `stop`.
fn declared(line: &str, stop: char) -> String {
    let head = line.split(stop).next().unwrap_or("");
    head.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
        .to_string()
}

/// What each view parameter's pointer and stride names stand for in the mixed entry: a
/// kernel parameter's rows and columns, or a ring slot (row-major, as wide as its tile), a
/// vector core's further on by its lane's rows.
fn pointers(p: &CoreProgram, m: &Mixed) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, view) in &p.views {
        let tile = p.kernel.params.iter().find_map(|q| match &q.ty {
            ParamType::Tile(_, t) if q.name == *name => Some(*t),
            _ => None,
        });
        let Some(tile) = tile else { continue };
        let lane = |rows: u64| match rows {
            0 => String::new(),
            n => format!(" + lane * {n}"),
        };
        match &view.base {
            Base::Param(base) => {
                let rs = format!("p_{base}_rs");
                out.insert(
                    format!("p_{name}"),
                    format!(
                        "(p_{base} + ({}{}) * {rs} + {})",
                        view.row,
                        lane(view.lane_rows),
                        view.col
                    ),
                );
                out.insert(format!("p_{name}_rs"), rs);
            }
            Base::Ring { ring, slot } => {
                let r = &m.rings[*ring];
                let words = (r.offset + *slot as u64 * r.slot_bytes) / 4;
                let rows = match view.lane_rows {
                    0 => "0".to_string(),
                    n => format!("lane * {n}"),
                };
                out.insert(
                    format!("p_{name}"),
                    format!(
                        "((__gm__ {}*)(p_{RING_PARAM} + {words}) + ({rows}) * {})",
                        elem(tile.dtype),
                        r.tile.cols
                    ),
                );
                out.insert(format!("p_{name}_rs"), r.tile.cols.to_string());
            }
        }
    }
    out
}

/// `line` with every identifier `map` names replaced.
fn rename(line: &str, map: &BTreeMap<String, String>) -> String {
    crate::listing::map_words(line, |w| map.get(w).cloned())
}

/// The ring a view parameter's global (`g_wsp_ring2_s1`) is a slot of.
pub fn ring_of(global: &str) -> Option<usize> {
    let rest = global.strip_prefix(&format!("g_{RING_PARAM}"))?;
    rest.split('_').next()?.parse().ok()
}

/// `line`, and around a store into a ring slot its `TALLOC` and `TPUSH`, around a load from
/// one its `TPOP` and `TFREE`.
fn ring_calls(line: &str, m: &Mixed, core: Core) -> Vec<String> {
    let t = line.trim_start();
    let indent = &line[..line.len() - t.len()];
    let c = slot_suffix(core);
    let call = |f: &str, r: usize| {
        format!(
            "{indent}WSP_RING({f}<WspRing{r}, WspSlot{c}{r}, TileSplitAxis::TILE_UP_DOWN>(wsp_ring{r}, wsp_slot{c}{r}));"
        )
    };
    let arg = |i: usize| {
        t.split(['(', ')', ','])
            .nth(i)
            .map(str::trim)
            .unwrap_or("")
            .to_string()
    };
    if t.starts_with("TSTORE(")
        && let Some(r) = ring_of(&arg(1))
        && m.rings[r].from == core
    {
        // Its `TPUSH` is written where the other core reads it ([`file`]).
        return vec![call("TALLOC", r), line.to_string()];
    }
    if t.starts_with("TLOAD(")
        && let Some(r) = ring_of(&arg(2))
    {
        return vec![call("TPOP", r), line.to_string(), call("TFREE", r)];
    }
    vec![line.to_string()]
}

/// How a ring slot's names tell the core that sees it (the simulations compile both).
fn slot_suffix(core: Core) -> &'static str {
    match core {
        Core::Cube => "C",
        Core::Vector => "V",
    }
}

fn file(k: &Kernel, mc: &MixedCores, cores: &[CoreText], layouts: &Layouts) -> String {
    let m = &mc.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// AICore kernel `{}` ({HEADER}: an AIC and two AIVs), generated by `wsp emit`\n\
         // from its IR: each core's sections in the order they hand tiles to each other through\n\
         // rings in global memory ({} slots each), the vector cores on half of the rows each.\n\
         #include <cmath>\n#include <cstdint>\n#include <pto/pto-inst.hpp>\n\nusing namespace pto;\n",
        k.name, m.depth
    );
    out.push_str(
        "// PTO-ISA's CPU simulation runs the sections one after another, the vector cores' halves\n\
         // in turn, each in its own 192 KiB of the simulated UB; a device runs each core's own, and\n\
         // the rings' cross-core flags order them.\n\
         #if defined(__CPU_SIM)\n\
         #define WSP_CUBE 1\n#define WSP_VEC 1\n#define WSP_LANES 2u\n#define WSP_LANE0 0u\n\
         #define WSP_LANE_UB 196608u\n#define WSP_RING(...)\n\
         #else\n\
         #if defined(__DAV_CUBE__)\n#define WSP_CUBE 1\n#endif\n\
         #if defined(__DAV_VEC__)\n#define WSP_VEC 1\n#endif\n\
         #define WSP_LANES 1u\n#define WSP_LANE0 ((uint32_t)get_subblockid())\n#define WSP_LANE_UB 0u\n\
         #define WSP_RING(...) __VA_ARGS__\n\
         #endif\n",
    );
    // The event IDs the simulations lack.
    out.push_str(&crate::cxx::event_ids(mc.event_ids));
    let _ = writeln!(out, "\n{}\n{{", entry_signature(k, layouts));
    // The rings: TPipe over global memory, flags 2r and 2r + 1.
    out.push_str("#if !defined(__CPU_SIM)\n");
    for (r, ring) in m.rings.iter().enumerate() {
        let dir = match ring.from {
            Core::Cube => "DIR_C2V",
            Core::Vector => "DIR_V2C",
        };
        let _ = writeln!(
            out,
            "    using WspRing{r} = TPipe<{}, Direction::{dir}, {}, {}>;\n    \
             WspRing{r} wsp_ring{r}((__gm__ void*)(p_{RING_PARAM} + {}), 0x0, 0x0);",
            2 * r,
            ring.slot_bytes,
            m.depth,
            ring.offset / 4
        );
        // The slot as the core that touches it sees it.
        for (core, guard) in [(Core::Cube, "WSP_CUBE"), (Core::Vector, "WSP_VEC")] {
            let t = m.held(ring.tile, core);
            let c = slot_suffix(core);
            let _ = writeln!(
                out,
                "#if defined({guard})\n    using WspSlot{c}{r} = GlobalTensor<{e}, pto::Shape<1, 1, 1, {}, {}>, pto::Stride<1, 1, 1, {}, 1>>;\n    WspSlot{c}{r} wsp_slot{c}{r};\n#endif",
                t.rows,
                t.cols,
                t.cols,
                e = elem(t.dtype)
            );
        }
    }
    out.push_str("#endif\n");
    let cube = &cores[0];
    let vector = &cores[1];
    // The cube's views and tiles, once.
    out.push_str("#if defined(WSP_CUBE)\n");
    for (_, g) in &cube.globals {
        let _ = writeln!(out, "{g}");
    }
    for t in &cube.tiles {
        let _ = writeln!(out, "{t}");
    }
    out.push_str("#endif\n");
    // Each vector core's tiles: one per lane the simulation runs.
    let mut lane_names: Vec<String> = Vec::new();
    out.push_str("#if defined(WSP_VEC)\n");
    for t in &vector.tiles {
        let decl = t.trim_start();
        let (ty_name, rest) = decl.split_once(';').unwrap_or((decl, ""));
        let name = declared(ty_name, ';');
        let offset = rest
            .split_once(',')
            .and_then(|(_, o)| o.split(')').next())
            .map(str::trim)
            .unwrap_or("0");
        let comment = rest.split_once("//").map(|(_, c)| c.trim()).unwrap_or("");
        let _ = writeln!(
            out,
            "    {ty_name}[WSP_LANES];  // {comment}\n    for (uint32_t wsp_l = 0; wsp_l < WSP_LANES; ++wsp_l) {{ TASSIGN({name}[wsp_l], {offset} + wsp_l * WSP_LANE_UB); }}"
        );
        lane_names.push(name);
    }
    out.push_str("#endif\n");
    let lanes: BTreeMap<String, String> = lane_names
        .iter()
        .map(|n| (n.clone(), format!("{n}[wsp_l]")))
        .collect();
    for run in mc.schedule() {
        let (core, section) = match run {
            Run::Section(core, section) => (core, section),
            // A hand-off's push, by the core that stored it: by default just before the other
            // core's section that loads it, so that the producer's later work is issued
            // first (PTO-ISA's Perf-Sim holds its one stream for both cores at a push until
            // the store is done; a device signals through the store's pipe either way).
            Run::Push { ring: r, n } => {
                let from = m.rings[r].from;
                let guard = match from {
                    Core::Cube => "WSP_CUBE",
                    Core::Vector => "WSP_VEC",
                };
                let c = slot_suffix(from);
                let _ = writeln!(out, "#if defined({guard})");
                for _ in 0..n {
                    let _ = writeln!(
                        out,
                        "    WSP_RING(TPUSH<WspRing{r}, WspSlot{c}{r}, TileSplitAxis::TILE_UP_DOWN>(wsp_ring{r}, wsp_slot{c}{r}));"
                    );
                }
                out.push_str("#endif\n");
                continue;
            }
        };
        let c = if core == Core::Cube { cube } else { vector };
        let Some((_, lines)) = c.sections.iter().find(|(s, _)| *s == section) else {
            continue;
        };
        let label = match section {
            Section::Prologue => "before the loop".to_string(),
            Section::Epilogue => "after the loop".to_string(),
            Section::Stage { stage, iter } => format!("stage {stage} of iteration {iter}"),
        };
        match core {
            Core::Cube => {
                let _ = writeln!(out, "#if defined(WSP_CUBE)\n    {{  // cube: {label}");
                for l in lines {
                    let _ = writeln!(out, "    {l}");
                }
                out.push_str("    }\n#endif\n");
            }
            Core::Vector => {
                let _ = writeln!(
                    out,
                    "#if defined(WSP_VEC)\n    for (uint32_t wsp_l = 0; wsp_l < WSP_LANES; ++wsp_l) {{  // vector: {label}\n        const uint32_t lane = WSP_LANE0 + wsp_l;\n        (void)lane;"
                );
                let text: Vec<String> = lines.iter().map(|l| rename(l, &lanes)).collect();
                for (name, g) in &vector.globals {
                    if text.iter().any(|l| l.contains(name.as_str())) {
                        let _ = writeln!(out, "    {}", rename(g, &lanes));
                    }
                }
                for l in text {
                    let _ = writeln!(out, "    {l}");
                }
                out.push_str("    }\n#endif\n");
            }
        }
    }
    out.push_str("}\n");
    out.push_str(&adapter(k, layouts));
    out
}
