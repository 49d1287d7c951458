//! A kernel over tensors (`wsp_ir::pipeline`) as one PTO-ISA AICore kernel that overlaps its
//! pipes, in the manner of PTO-ISA's hand-written GEMM
//! (`kernels/manual/a2a3/gemm_performance`):
//!
//! - each K step loads its operand slices into L1 (MTE2), moves them to L0A/L0B (MTE1) and
//!   multiplies (M): `TMATMUL` at the first step, `TMATMUL_ACC` after. The accumulator stays in
//!   L0C, in column parts the fixpipe stores one by one after the K loop, so one part is
//!   stored while the cube computes the next;
//! - L1 and L0 buffers are ping-ponged (`stages` of each in flight). Every buffer has its own
//!   event IDs for "filled" and "free", and each operand its own "loaded" flag, so step k+1's
//!   loads run while step k multiplies;
//! - the K loop is written as straight code per group of steps (its first and last groups
//!   apart, as they start and finish the accumulator), so every event ID and buffer is a
//!   literal, as [`crate::listing`] reads them.
//!
//! Every buffer starts free: the kernel sets each "free" flag once before its loops and waits
//! each once after them.

use std::fmt::Write;

use wsp_ir::arch::{Arch, GmLayout};
use wsp_ir::kernel::{Kernel, KernelBody, Loop, ParamType};
use wsp_ir::layout::Layouts;
use wsp_ir::pipeline::{self, CubeLoop, NoForm, affine_cxx, loop_var};
use wsp_ir::{Affine, TileType};

use crate::{Refusal, elem, entry_signature, gm_layout};

/// The translation unit of a loop kernel; `Err` names the op that has no pipelined form.
pub fn kernel_source(k: &Kernel, arch: &Arch, layouts: &Layouts) -> Result<String, Refusal> {
    kernel_source_in_parts(k, arch, layouts, None)
}

/// [`kernel_source`] with the accumulator in `parts` column parts (each whole fractals)
/// rather than the plan's: more parts leave less of the last store after the cube's work.
pub(crate) fn kernel_source_in_parts(
    k: &Kernel,
    arch: &Arch,
    layouts: &Layouts,
    parts: Option<u32>,
) -> Result<String, Refusal> {
    let mut plan = pipeline::plan(k, arch).map_err(|e| match e {
        NoForm::Op(op, message) => Refusal { op, message },
        NoForm::Overflow(o) => Refusal {
            op: Some(o.op),
            message: format!("kernel `{}`: {o}, counting the buffers in flight", k.name),
        },
    })?;
    if let Some(parts) = parts {
        if plan.acc.cols % (u64::from(parts) * wsp_ir::buffers::FRACTAL) != 0 {
            return Err(Refusal {
                op: Some(plan.matmul),
                message: format!("the accumulator's columns are not {parts} parts of fractals"),
            });
        }
        plan.parts = parts;
    }
    for (p, op) in [
        (&plan.left.param, plan.left.load),
        (&plan.right.param, plan.right.load),
        (&plan.out, plan.store),
    ] {
        if let Some(ParamType::Tile(_, t)) = param(k, p)
            && gm_layout(k, p, *t, layouts) != GmLayout::Nd
        {
            return Err(Refusal {
                op: Some(op),
                message: format!(
                    "`{p}` is passed column-major (a transposed view); `wsp emit` writes a loop kernel over row-major tensors"
                ),
            });
        }
    }
    let mut g = Emit {
        out: String::new(),
        k,
        plan: &plan,
        indent: 1,
        next_loop: 0,
    };
    g.file(layouts);
    crate::verify::check(&g.out, arch)?;
    Ok(g.out)
}

fn param<'k>(k: &'k Kernel, name: &str) -> Option<&'k ParamType> {
    k.params.iter().find(|p| p.name == name).map(|p| &p.ty)
}

/// The L1 (NZ) and L0 tile types of an operand, and the accumulator's.
fn mat_type(t: TileType) -> String {
    let (r, c) = wsp_ir::buffers::padded(t, wsp_ir::buffers::Memory::L1);
    format!(
        "Tile<TileType::Mat, {e}, {r}, {c}, BLayout::ColMajor, {}, {}, SLayout::RowMajor, 512>",
        t.rows,
        t.cols,
        e = elem(t.dtype)
    )
}

fn l0_type(kind: &str, t: TileType) -> String {
    let (r, c) = wsp_ir::buffers::padded(t, wsp_ir::buffers::Memory::L0a);
    format!(
        "{kind}<{}, {r}, {c}, {}, {}>",
        elem(t.dtype),
        t.rows,
        t.cols
    )
}

struct Emit<'a> {
    out: String,
    k: &'a Kernel,
    plan: &'a CubeLoop,
    indent: usize,
    /// The next loop of `k.loops` (in pre-order) not yet written.
    next_loop: usize,
}

/// One K step: the C++ expression of its iteration, its L1 and L0 stages, and whether it is
/// the loop's first (which starts the accumulator) or last (after which each part is stored).
struct Step {
    k: String,
    l1: u32,
    l0: u32,
    first: bool,
    last: bool,
}

impl Emit<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn flag(&mut self, what: &str, from: &str, to: &str, event: u32) {
        self.line(&format!("{what}(PIPE_{from}, PIPE_{to}, EVENT_ID{event});"));
    }

    fn file(&mut self, layouts: &Layouts) {
        let (k, p) = (self.k, self.plan);
        let _ = writeln!(
            self.out,
            "// AICore kernel `{}` (cube), generated by `wsp emit` from its IR: a matmul accumulated over\n\
             // a K loop in L0C and stored once, its operands loaded through {} L1 and {} L0 buffers each\n\
             // in flight, every buffer with its own event IDs.",
            k.name, p.l1_stages, p.l0_stages
        );
        self.out.push_str(
            "#include <cmath>\n#include <cstdint>\n#include <pto/pto-inst.hpp>\n\nusing namespace pto;\n\n",
        );
        self.out
            .push_str(&crate::cxx::event_ids(self.events_used()));
        let _ = writeln!(self.out, "{}\n{{", entry_signature(k, layouts));
        self.unused_params(layouts);
        self.tiles();
        self.line("// Every buffer starts free.");
        self.free_flags("set_flag");
        let KernelBody::Ops(ops) = &k.body else {
            return;
        };
        self.block(0, ops.len() as u32);
        self.line("// Every buffer is free again: the last store is done.");
        self.free_flags("wait_flag");
        self.line("set_flag(PIPE_FIX, PIPE_S, EVENT_ID0); wait_flag(PIPE_FIX, PIPE_S, EVENT_ID0);");
        self.out.push_str("}\n");
        self.out.push_str(&crate::adapter(k, layouts));
    }

    // Event IDs are unique per destination pipe, whichever pipe signals: a kernel is then
    // right whether the chip keys a flag by its pipe pair or, as Perf-Sim does
    // (`EncodeSyncKey`), by its destination pipe and ID alone. Into MTE2: an L1 stage is free
    // (its stage). Into MTE1: an operand is loaded (left: stage, right: stages + stage), an
    // L0 stage is free (2 × stages + its stage). Into M: an L0 stage is filled (its stage),
    // a part of L0C is free (L0 stages + part). Into FIX: a part is computed (its part).

    fn l0_free(&self, s: u32) -> u32 {
        2 * self.plan.l1_stages + s
    }

    fn acc_free(&self, h: u32) -> u32 {
        self.plan.l0_stages + h
    }

    /// Event IDs of the pipe that takes the most: MTE1.
    fn events_used(&self) -> u32 {
        2 * self.plan.l1_stages + self.plan.l0_stages
    }

    fn unused_params(&mut self, layouts: &Layouts) {
        let k = self.k;
        let p = self.plan;
        for q in &k.params {
            let used = [&p.left.param, &p.right.param, &p.out].contains(&&q.name);
            match &q.ty {
                ParamType::Tile(_, t) if !used => {
                    let stride = crate::stride_name(k, &q.name, *t, layouts);
                    self.line(&format!("(void)p_{}; (void){stride};", q.name));
                }
                ParamType::Scalar(..) | ParamType::Constexpr(_) => {
                    self.line(&format!("(void)p_{};", q.name));
                }
                _ => {}
            }
        }
    }

    fn tiles(&mut self) {
        let p = self.plan;
        let [(_, l1), (_, l0a), (_, l0b), (_, l0c)] = p.bytes();
        let bytes = pipeline::buffer_bytes;
        let l1_left = bytes(p.left.tile, wsp_ir::buffers::Memory::L1);
        let right = p.part(p.right.tile);
        let l1_part = bytes(right, wsp_ir::buffers::Memory::L1);
        for s in 0..p.l1_stages {
            let at = s as u64 * l1;
            self.tile(
                &mat_type(p.left.tile),
                &format!("m{}_{s}", p.left.load),
                "L1",
                at,
                l1_left,
            );
            for h in 0..p.parts {
                let at = at + l1_left + h as u64 * l1_part;
                let name = format!("m{}_{s}_{h}", p.right.load);
                self.tile(&mat_type(right), &name, "L1", at, l1_part);
            }
        }
        let l0_part = l0b / p.parts as u64;
        for s in 0..p.l0_stages {
            let (l, a) = (format!("l{}_{s}", p.matmul), s as u64 * l0a);
            self.tile(&l0_type("TileLeft", p.left.tile), &l, "L0A", a, l0a);
            for h in 0..p.parts {
                let r = format!("r{}_{s}_{h}", p.matmul);
                let b = s as u64 * l0b + h as u64 * l0_part;
                self.tile(&l0_type("TileRight", right), &r, "L0B", b, l0_part);
            }
        }
        let c_part = l0c / p.parts as u64;
        for h in 0..p.parts {
            let c = format!("c{}_{h}", p.matmul);
            let at = h as u64 * c_part;
            self.tile(&l0_type("TileAcc", p.part(p.acc)), &c, "L0C", at, c_part);
        }
    }

    fn tile(&mut self, ty: &str, name: &str, memory: &str, at: u64, bytes: u64) {
        self.line(&format!(
            "{ty} {name}; TASSIGN({name}, 0x{at:x});  // {memory} [{at}, {})",
            at + bytes
        ));
    }

    /// Each "free" flag: L1 stages (MTE1 → MTE2), L0 stages (M → MTE1), the accumulator's
    /// parts (FIX → M).
    fn free_flags(&mut self, what: &str) {
        for s in 0..self.plan.l1_stages {
            self.flag(what, "MTE1", "MTE2", s);
        }
        for s in 0..self.plan.l0_stages {
            self.flag(what, "M", "MTE1", self.l0_free(s));
        }
        for h in 0..self.plan.parts {
            self.flag(what, "FIX", "M", self.acc_free(h));
        }
    }

    /// Ops `first..end` with the loops among them.
    fn block(&mut self, first: u32, end: u32) {
        let k = self.k;
        let p = self.plan;
        let mut i = first;
        loop {
            if let Some(l) = k.loops.get(self.next_loop)
                && l.first == i
                && l.end <= end
            {
                let n = self.next_loop;
                self.next_loop += 1;
                if Some(n) == p.k_loop {
                    self.k_loop(l);
                    // Nothing else is inside it (`pipeline::plan`): skip its inner loops.
                    while k.loops.get(self.next_loop).is_some_and(|m| m.end <= l.end) {
                        self.next_loop += 1;
                    }
                } else {
                    let v = loop_var(k, &l.var);
                    self.line(&format!(
                        "for (int64_t {v} = 0; {v} < {}; {v} += 1) {{",
                        l.trips
                    ));
                    self.indent += 1;
                    self.block(l.first, l.end);
                    self.indent -= 1;
                    self.line("}");
                }
                i = l.end;
                continue;
            }
            if i >= end {
                break;
            }
            self.op(i);
            i += 1;
        }
    }

    fn op(&mut self, i: u32) {
        let p = self.plan;
        if i == p.matmul && p.k_loop.is_none() {
            self.line(&format!("// %{i} = matmul"));
            self.group(&[Step {
                k: String::new(),
                l1: 0,
                l0: 0,
                first: true,
                last: true,
            }]);
        } else if i == p.store {
            self.store();
        } else if Some(i) == p.adds_into_out {
            self.line(&format!(
                "// %{i} = load: the store adds the product into it (atomic add), so it is not loaded"
            ));
        } else if i != p.left.load && i != p.right.load {
            // The accumulator's `alloc`: the first K step's TMATMUL starts it.
            let KernelBody::Ops(ops) = &self.k.body else {
                return;
            };
            self.line(&format!(
                "// %{i} = {}: started by the first K step's TMATMUL",
                ops[i as usize].op
            ));
        }
    }

    /// The K loop in groups of as many steps as L0 has stages: the first group (which starts
    /// the accumulator) and the last (after which each part is stored) written apart, the
    /// groups between in blocks that bring every stage back to where it was.
    fn k_loop(&mut self, l: &Loop) {
        let p = self.plan;
        let v = loop_var(self.k, &l.var);
        let g = p.l0_stages as u64;
        let trips = l.trips;
        let step = |t: u64, k: String| Step {
            k,
            l1: (t % p.l1_stages as u64) as u32,
            l0: (t % g) as u32,
            first: t == 0,
            last: t + 1 == trips,
        };
        let steps = |from: u64, to: u64, k: &dyn Fn(u64) -> String| -> Vec<Step> {
            (from..to).map(|t| step(t, k(t))).collect()
        };
        self.line(&format!(
            "// %{} = matmul over {trips} K steps: {} L1 and {} L0 buffers of each operand in flight, the accumulator in {} parts",
            p.matmul, p.l1_stages, p.l0_stages, p.parts
        ));
        let groups = trips.div_ceil(g);
        self.group(&steps(0, g.min(trips), &|t| t.to_string()));
        if groups == 1 {
            return;
        }
        let last = (groups - 1) * g;
        // Groups 1 .. groups-1 (exclusive of the last), in blocks of `block` groups.
        let block = lcm(p.l1_stages, p.l0_stages) as u64 / g;
        let middle = groups - 2;
        let (blocks, tail) = (middle / block, middle % block);
        if blocks > 0 {
            let b = format!("{v}__b");
            let end = g + blocks * block * g;
            self.line(&format!(
                "for (int64_t {b} = {g}; {b} < {end}; {b} += {}) {{",
                block * g
            ));
            self.indent += 1;
            for q in 0..block {
                let at = g + q * g;
                let b = b.clone();
                self.group(&steps(at, at + g, &move |t| format!("{b} + {}", t - g)));
            }
            self.indent -= 1;
            self.line("}");
        }
        for q in 0..tail {
            let at = g + (blocks * block + q) * g;
            self.group(&steps(at, at + g, &|t| t.to_string()));
        }
        self.group(&steps(last, trips, &|t| t.to_string()));
    }

    /// A `GlobalTensor` view `g{name}` of the slice of `param` at (`row`, `col` + `col_add`),
    /// `t` in shape.
    fn view(
        &mut self,
        name: &str,
        param: &str,
        row: &Affine,
        col: &Affine,
        col_add: u64,
        t: TileType,
    ) {
        let k = self.k;
        let shape = format!("pto::Shape<1, 1, 1, {}, {}>", t.rows, t.cols);
        let stride = "pto::Stride<1, 1, 1, -1, 1>";
        let add = if col_add == 0 {
            String::new()
        } else {
            format!(" + {col_add}")
        };
        self.line(&format!(
            "GlobalTensor<{e}, {shape}, {stride}> g{name}(p_{param} + ({r}) * p_{param}_rs + ({c}){add}, {shape}(), {stride}(p_{param}_rs));",
            e = elem(t.dtype),
            r = affine_cxx(k, row),
            c = affine_cxx(k, col),
        ));
    }

    /// A group of K steps: each loads its operands into its L1 stage and moves them to its L0
    /// stage; then each part of the accumulator takes every step's product, so the part
    /// computed first is done, and stored, while the next is computed. MTE2 → MTE1 events:
    /// the left operand at its L1 stage, the right at `stages` + that.
    fn group(&mut self, steps: &[Step]) {
        let p = self.plan;
        let (mm, n) = (p.matmul, p.l1_stages);
        let v = p.k_loop.map(|l| loop_var(self.k, &self.k.loops[l].var));
        let right = p.part(p.right.tile);
        for s in steps {
            let l1 = s.l1;
            self.line("{");
            self.indent += 1;
            if let Some(v) = &v {
                self.line(&format!("const int64_t {v} = {};", s.k));
            }
            self.line(&format!(
                "// %{} = load, %{} = load",
                p.left.load, p.right.load
            ));
            let (l, r) = (&p.left, &p.right);
            self.view(&l.load.to_string(), &l.param, &l.row, &l.col, 0, l.tile);
            for h in 0..p.parts {
                let name = format!("{}_{h}", r.load);
                self.view(
                    &name,
                    &r.param,
                    &r.row,
                    &r.col,
                    h as u64 * right.cols,
                    right,
                );
            }
            self.flag("wait_flag", "MTE1", "MTE2", l1);
            self.line(&format!("TLOAD(m{0}_{l1}, g{0});", l.load));
            self.flag("set_flag", "MTE2", "MTE1", l1);
            for h in 0..p.parts {
                self.line(&format!("TLOAD(m{0}_{l1}_{h}, g{0}_{h});", r.load));
            }
            self.flag("set_flag", "MTE2", "MTE1", n + l1);
            self.indent -= 1;
            self.line("}");
            let l0 = s.l0;
            self.flag("wait_flag", "M", "MTE1", self.l0_free(l0));
            self.flag("wait_flag", "MTE2", "MTE1", l1);
            self.line(&format!("TMOV(l{mm}_{l0}, m{}_{l1});", l.load));
            self.flag("wait_flag", "MTE2", "MTE1", n + l1);
            for h in 0..p.parts {
                self.line(&format!("TMOV(r{mm}_{l0}_{h}, m{}_{l1}_{h});", r.load));
            }
            self.flag("set_flag", "MTE1", "MTE2", l1);
            self.flag("set_flag", "MTE1", "M", l0);
        }
        self.line(&format!("// %{mm} = matmul"));
        // Part by part where a part waits for its store (the first group) or is stored next
        // (the last); elsewhere step by step, so each step's L0 buffers are free soonest.
        let by_part = steps.iter().any(|s| s.first || s.last);
        let mut order: Vec<(u32, usize)> = Vec::new();
        for a in 0..if by_part {
            p.parts as usize
        } else {
            steps.len()
        } {
            for b in 0..if by_part {
                steps.len()
            } else {
                p.parts as usize
            } {
                order.push(if by_part {
                    (a as u32, b)
                } else {
                    (b as u32, a)
                });
            }
        }
        for (n, &(h, i)) in order.iter().enumerate() {
            let s = &steps[i];
            let l0 = s.l0;
            if !order[..n].iter().any(|&(_, j)| j == i) {
                self.flag("wait_flag", "MTE1", "M", l0);
            }
            if s.first {
                // This part of L0C is free once the previous tile's part is stored.
                self.flag("wait_flag", "FIX", "M", self.acc_free(h));
                self.line(&format!("TMATMUL(c{mm}_{h}, l{mm}_{l0}, r{mm}_{l0}_{h});"));
            } else {
                self.line(&format!(
                    "TMATMUL_ACC(c{mm}_{h}, c{mm}_{h}, l{mm}_{l0}, r{mm}_{l0}_{h});"
                ));
            }
            if s.last && !order[n + 1..].iter().any(|&(g, j)| g == h && steps[j].last) {
                self.flag("set_flag", "M", "FIX", h);
            }
            if !order[n + 1..].iter().any(|&(_, j)| j == i) {
                self.flag("set_flag", "M", "MTE1", self.l0_free(l0));
            }
        }
    }

    /// Each part of the accumulator out through the fixpipe once its last step is done.
    fn store(&mut self) {
        let p = self.plan;
        self.line(&format!("// %{} = store", p.store));
        let (out, row, col) = (p.out.clone(), p.out_row.clone(), p.out_col.clone());
        let part = p.part(p.acc);
        for h in 0..p.parts {
            self.flag("wait_flag", "M", "FIX", h);
            let name = format!("{}_{h}", p.store);
            self.view(&name, &out, &row, &col, h as u64 * part.cols, part);
            let c = format!("c{}_{h}", p.matmul);
            if p.adds_into_out.is_some() {
                self.line(&format!(
                    "TSTORE<decltype({c}), decltype(g{name}), AtomicType::AtomicAdd>(g{name}, {c});"
                ));
            } else {
                self.line(&format!("TSTORE(g{name}, {c});"));
            }
            self.flag("set_flag", "FIX", "M", self.acc_free(h));
        }
    }
}

fn lcm(a: u32, b: u32) -> u32 {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    a / gcd(a, b).max(1) * b
}
