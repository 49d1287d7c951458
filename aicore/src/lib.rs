//! IR kernel → one PTO-ISA AICore translation unit (`aicore/<kernel>.cpp` of an emitted tree),
//! read back and checked against the architecture's rules ([`verify`]). `wsp emit` writes it;
//! the analyzer's NPU checks (`analysis/src/checks/npu_kernels.rs`) lower every kernel the
//! same way, so a kernel `wsp emit` would refuse is reported in the editor.
//!
//! The entry `wsp_aicore_NAME` takes the tile parameters as `__gm__` pointers, then their row
//! strides, then the scalars. Each tile parameter is a `GlobalTensor` view with its run-time
//! row stride (columns are contiguous, as TLOAD/TSTORE of an ND tensor require). Every buffer
//! `wsp_ir::buffers::plan` places is a `Tile` bound with `TASSIGN` to its planned offset; each
//! op becomes the instructions of its `instructions::TABLE` row. Pipes are ordered
//! conservatively: a `set_flag`/`wait_flag` pair wherever the next instruction runs on another
//! pipe than the previous one, and `pipe_barrier(PIPE_V)` between vector instructions, so each
//! instruction sees its operands complete and buffers reused after a value dies are free.
//!
//! Cube and vector work of one kernel meet through L0C → UB (`TMOV` from an `Acc` tile) and
//! UB → L1 (`TMOV` to a `Mat` tile), the data paths of A5 parts (and of PTO-ISA's CPU
//! simulation); a kernel that only loads, multiplies and stores (or accumulates into its
//! destination with an atomic-add store) stays on the cube unit, as A2/A3 require.
//!
//! Under `__CPU_SIM` the file also defines `wsp_kernel_NAME` with the CPU kernel ABI
//! (`codegen/src/cpp.rs`, [`cxx::symbol`]), calling the entry, so the host replay links it
//! instead of the CPU kernel and PTO-ISA's CPU simulation computes the task.

use std::borrow::Cow;
use std::fmt::Write;

use rayon::prelude::*;

use wsp_ir::arch::{Arch, GmLayout, OnChip};
use wsp_ir::buffers::{self, Broadcast, Buffer, BufferPlan, Lifetimes, Memory, Role, Value};
use wsp_ir::instructions::{self, Lowering, Slot};
use wsp_ir::kernel::{KernelBody, Op, Operand, ParamType, ValueType};
use wsp_ir::layout::Layouts;
use wsp_ir::ops::{self, Semantics};
use wsp_ir::{DType, Kernel, TileType};

use crate::cxx::compute;

mod barriers;
mod blocks;
pub mod cxx;
mod ends;
pub mod listing;
pub mod mixed;
mod parts;
mod pieces;
mod pipelined;
pub mod sync;
pub mod verify;

use listing::Pipe;

/// Whether a tile of `k` holds bf16: PTO-ISA's CPU simulation then needs C++23's
/// `std::bfloat16_t` (`PTO_CPU_SIM_ENABLE_BF16`), or it stands a 16-bit float in for it.
pub fn uses_bf16(k: &Kernel) -> bool {
    let tile = |t: &TileType| t.dtype == DType::BF16;
    k.params
        .iter()
        .any(|p| matches!(&p.ty, ParamType::Tile(_, t) if tile(t)))
        || matches!(&k.body, KernelBody::Ops(ops)
            if ops.iter().any(|o| matches!(&o.ty, ValueType::Tile(t) if tile(t))))
}

/// `mix` for one mixed launch of a cube core and its vector cores (a loop kernel with its
/// hand-off ring, `wsp_ir::mixed`), `cube` if the kernel runs a matmul (an AIC kernel), else
/// `vec` (AIV).
pub fn unit(k: &Kernel) -> &'static str {
    if wsp_ir::mixed::has_ring(k) {
        return "mix";
    }
    match &k.body {
        KernelBody::Ops(ops) if ops.iter().any(|o| o.op == "matmul") => "cube",
        _ => "vec",
    }
}

/// The AICore entry's symbol.
pub fn entry(kernel: &str) -> String {
    format!("wsp_aicore_{kernel}")
}

/// How tile parameter `p` of `k` lies in global memory: a column (`[M,1]`) is always
/// column-major; others as `layouts` says (`wsp_ir::layout`).
pub fn gm_layout(k: &Kernel, p: &str, t: TileType, layouts: &Layouts) -> GmLayout {
    if buffers::is_column(t) {
        GmLayout::Dn
    } else {
        layouts.of(&k.name, p)
    }
}

/// A tile parameter's stride argument: the row stride of a row-major (ND) tensor, the column
/// stride of a column-major (DN) one.
pub(crate) fn stride_name(k: &Kernel, p: &str, t: TileType, layouts: &Layouts) -> String {
    match gm_layout(k, p, t, layouts) {
        GmLayout::Nd => format!("p_{p}_rs"),
        GmLayout::Dn => format!("p_{p}_cs"),
    }
}

/// The entry's declaration: the tile parameters as `__gm__` pointers, then their strides (row
/// or column, by layout), then the scalars.
pub fn entry_signature(k: &Kernel, layouts: &Layouts) -> String {
    let mut ptrs = Vec::new();
    let mut strides = Vec::new();
    let mut scalars = Vec::new();
    for p in &k.params {
        match &p.ty {
            ParamType::Tile(_, t) => {
                ptrs.push(format!("__gm__ {}* p_{}", elem(t.dtype), p.name));
                strides.push(format!("int64_t {}", stride_name(k, &p.name, *t, layouts)));
            }
            ParamType::Scalar(d, _) => scalars.push(format!("{} p_{}", compute(*d), p.name)),
            ParamType::Constexpr(_) => scalars.push(format!("int64_t p_{}", p.name)),
        }
    }
    let params: Vec<String> = ptrs.into_iter().chain(strides).chain(scalars).collect();
    format!(
        "extern \"C\" __global__ AICORE void {}({})",
        entry(&k.name),
        params.join(", ")
    )
}

/// The element type PTO-ISA tiles of a dtype hold: its own half types, else what the CPU
/// kernels store.
pub fn elem(d: DType) -> &'static str {
    match d {
        DType::F16 => "half",
        DType::BF16 => "bfloat16_t",
        _ => crate::cxx::storage(d),
    }
}

fn buffer_name(role: &Role) -> String {
    match role {
        Role::Vec(Value::Op(i)) => format!("v{i}"),
        Role::Vec(Value::Param(p)) => format!("v_{p}"),
        Role::Mat(Value::Op(i)) => format!("m{i}"),
        Role::Mat(Value::Param(p)) => format!("m_{p}"),
        Role::Left(i) => format!("l{i}"),
        Role::Right(i) => format!("r{i}"),
        Role::Acc(i) => format!("c{i}"),
        Role::BiasRow(i) => format!("b{i}_row"),
        Role::Bias(i) => format!("b{i}"),
        Role::Tmp(i, k) => format!("t{i}_{k}"),
    }
}

/// A buffer's PTO-ISA tile type. `zn`: an L1 tile loaded from a column-major (DN) tensor,
/// in the ZN layout the cube's right operand takes as it is.
fn tile_type(b: &Buffer, zn: bool) -> String {
    let (t, rows, cols) = (b.tile, b.rows, b.cols);
    let e = elem(t.dtype);
    match b.memory {
        Memory::Ub => format!(
            "Tile<TileType::Vec, {e}, {rows}, {cols}, BLayout::{}, {}, {}>",
            if buffers::is_column(t) {
                "ColMajor"
            } else {
                "RowMajor"
            },
            t.rows,
            t.cols
        ),
        Memory::L1 if matches!(b.role, Role::BiasRow(_)) => format!(
            "Tile<TileType::Mat, {e}, 1, {cols}, BLayout::RowMajor, 1, {}>",
            t.cols
        ),
        Memory::Bt => format!(
            "Tile<TileType::Bias, {e}, 1, {cols}, BLayout::RowMajor, 1, {}>",
            t.cols
        ),
        Memory::L1 if zn => format!(
            "Tile<TileType::Mat, {e}, {rows}, {cols}, BLayout::RowMajor, {}, {}, SLayout::ColMajor, 512>",
            t.rows, t.cols
        ),
        Memory::L1 => format!(
            "Tile<TileType::Mat, {e}, {rows}, {cols}, BLayout::ColMajor, {}, {}, SLayout::RowMajor, 512>",
            t.rows, t.cols
        ),
        Memory::L0a => format!("TileLeft<{e}, {rows}, {cols}, {}, {}>", t.rows, t.cols),
        Memory::L0b => format!("TileRight<{e}, {rows}, {cols}, {}, {}>", t.rows, t.cols),
        Memory::L0c => format!("TileAcc<{e}, {rows}, {cols}, {}, {}>", t.rows, t.cols),
    }
}

/// An operand as the instructions see it.
enum Arg {
    Tile { name: String, tile: TileType },
    Scalar { expr: String },
}

/// One op as its instructions name it ([`Gen::view`]).
struct OpView<'o> {
    i: u32,
    op: &'o Op,
    row: Option<Lowering>,
    /// The result's buffer (a column's row-major alias for elementwise instructions).
    dst: String,
    out: Option<TileType>,
    args: Vec<Arg>,
    /// Whether elementwise instructions see the result, a column, through its row alias.
    column: bool,
}

impl OpView<'_> {
    /// Operand `n`, a tile, and its type.
    fn tile(&self, n: usize) -> Result<(String, TileType), String> {
        match self.args.get(n) {
            Some(Arg::Tile { name, tile }) => Ok((name.clone(), *tile)),
            _ => Err(format!(
                "op `{}` (%{}) expects a tile operand",
                self.op.op, self.i
            )),
        }
    }

    /// Scratch tile `n` of the op.
    fn tmp(&self, n: u8) -> String {
        let name = buffer_name(&Role::Tmp(self.i, n));
        if self.column && self.out.is_some_and(buffers::is_column) {
            format!("{name}_row")
        } else {
            name
        }
    }

    /// Why the op has no AICore form: its instruction row does not say how to write it.
    fn no_form(&self) -> String {
        format!("op `{}` (%{}) has no AICore form", self.op.op, self.i)
    }

    /// A constant in the result's element type.
    fn s(&self, e: &str) -> String {
        let ty = self.out.map(|t| elem(t.dtype)).unwrap_or("float");
        format!("({ty})({e})")
    }
}

/// Why a kernel has no AICore form, and the op it is at, if at one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub op: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The C++ translation unit of an IR kernel. `Err` names the op or memory that has no AICore
/// form (a `cpp_src` kernel, an op without an instruction row, buffers over the chip's size,
/// an instruction that breaks one of `arch`'s rules).
pub fn kernel_source(k: &Kernel, arch: &Arch, layouts: &Layouts) -> Result<String, Refusal> {
    let refuse = |op: Option<u32>, message: String| Refusal { op, message };
    let KernelBody::Ops(ops) = &k.body else {
        return Err(refuse(
            None,
            format!(
                "kernel `{}` has a C++ body (cpp_src): no AICore form",
                k.name
            ),
        ));
    };
    if k.iterates() {
        if wsp_ir::mixed::has_ring(k) {
            return mixed::kernel_source(k, arch, layouts);
        }
        return pipelined::kernel_source(k, arch, layouts);
    }
    for (i, op) in ops.iter().enumerate() {
        let at = Some(i as u32);
        if instructions::lookup(&op.op).is_none() {
            return Err(refuse(
                at,
                format!("op `{}` (%{i}) has no instruction row", op.op),
            ));
        }
        if let Some(why) = instructions::no_form(op, |o| buffers::tile_of(k, ops, o)) {
            return Err(refuse(
                at,
                format!("op `{}` (%{i}) has no AICore form: {why}", op.op),
            ));
        }
    }
    let src = written(k, k, arch, &arch.on_chip, layouts, Form::WHOLE)?;
    verify::check(&src, arch)?;
    Ok(src)
}

/// How [`written`] lays a kernel out.
#[derive(Clone, Copy)]
struct Form {
    /// Row blocks, and how far apart their buffer sets are.
    blocks: u64,
    set_bytes: u64,
    /// How long the plan keeps each buffer (`wsp_ir::buffers::plan_with`).
    lifetimes: Lifetimes,
    /// Flags written from dependencies ([`sync::by_dependency`]) rather than chained.
    by_dependency: bool,
    /// Vector instructions at each end over pieces of the kernel's rows ([`ends`]).
    ends: Option<ends::Ends>,
    /// The matmul in blocks of its product ([`parts`]).
    parts: Option<(pieces::Axis, u64)>,
}

impl Form {
    const WHOLE: Form = Form {
        blocks: 1,
        set_bytes: 0,
        lifetimes: Lifetimes::Tight,
        by_dependency: false,
        ends: None,
        parts: None,
    };
}

/// `k`'s AICore C++ as [`kernel_source`] writes it or, where `cost` (cycles of an emitted
/// text) finds one cheaper, in a form that overlaps its pipes: a one-tile matmul as a GEMM
/// over K steps (`wsp_ir::pipeline::k_steps`), a straight kernel with flags by dependency
/// ([`straight_forms`]), a vector kernel as row blocks ([`blocks`]).
/// What `wsp emit` writes and the clock costs.
pub fn kernel_source_costed(
    k: &Kernel,
    arch: &Arch,
    layouts: &Layouts,
    cost: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<String, Refusal> {
    let whole = kernel_source(k, arch, layouts)?;
    let mut best = (cost(&whole), whole);
    // Whether `src` is the fastest yet (and now `best`).
    let mut consider = |src: Result<String, Refusal>| match src {
        Ok(src) => {
            let c = cost(&src);
            let faster = c < best.0;
            if faster {
                best = (c, src);
            }
            faster
        }
        Err(_) => false,
    };
    // A GEMM's accumulator in more column parts; a one-tile matmul over K steps, and the
    // fastest of those with more parts.
    if k.iterates() {
        consider(pipelined::kernel_source_in_parts(k, arch, layouts, Some(4)));
    }
    let mut stepped = None;
    for steps in [2, 4, 8] {
        if let Some(looped) = wsp_ir::pipeline::k_steps(k, steps)
            && consider(pipelined::kernel_source(&looped, arch, layouts))
        {
            stepped = Some(looped);
        }
    }
    if let Some(looped) = stepped {
        consider(pipelined::kernel_source_in_parts(
            &looped,
            arch,
            layouts,
            Some(4),
        ));
    }
    // Straight forms and row blocks, each written and costed on its own (in parallel), and
    // checked (`verify::check`, which also finds instructions the flags leave unordered) only
    // once the cheapest is known: the fastest that passes, the first listed among equals.
    let mut jobs: Vec<(Cow<Kernel>, OnChip, Form)> = straight_forms(k)
        .into_iter()
        .map(|form| (Cow::Borrowed(k), arch.on_chip, form))
        .collect();
    if let Some(m) = blocks::rows(k) {
        // Each buffer set has half of UB, on the planner's alignment.
        let half = OnChip {
            ub: arch.on_chip.ub / 2 / 512 * 512,
            ..arch.on_chip
        };
        for n in blocks::counts(m) {
            let sub = blocks::sub_kernel(k, m, m / n);
            let Ok(plan) = buffers::plan(&sub, &half) else {
                continue;
            };
            let used = plan.peak(Memory::Ub);
            let form = Form {
                blocks: n,
                set_bytes: used.div_ceil(512) * 512,
                ..Form::WHOLE
            };
            jobs.push((Cow::Owned(sub), half, form));
        }
    }
    let mut unchecked: Vec<(u64, usize, String)> = jobs
        .par_iter()
        .enumerate()
        .filter_map(|(i, (sub, chip, form))| {
            let src = written(sub, k, arch, chip, layouts, *form).ok()?;
            Some((cost(&src), i, src))
        })
        .collect();
    unchecked.sort_by_key(|u| (u.0, u.1));
    if let Some((c, _, src)) = unchecked
        .into_iter()
        .take_while(|u| u.0 < best.0)
        .find(|u| verify::check(&u.2, arch).is_ok())
    {
        best = (c, src);
    }
    Ok(best.1)
}

/// The forms of a straight kernel with flags by dependency: buffers kept for as long as each
/// form allows; a matmul in blocks of its product's rows or columns ([`parts`]); a row-wise
/// kernel's ends in pieces of its rows, the middle whole ([`ends`]).
fn straight_forms(k: &Kernel) -> Vec<Form> {
    if k.iterates() {
        return Vec::new();
    }
    let form = |lifetimes| Form {
        lifetimes,
        by_dependency: true,
        ..Form::WHOLE
    };
    let mut forms: Vec<Form> = [Lifetimes::Tight, Lifetimes::Ahead, Lifetimes::Whole]
        .into_iter()
        .map(form)
        .collect();
    let matmuls = match &k.body {
        KernelBody::Ops(ops) => ops.iter().filter(|o| o.op == "matmul").count(),
        KernelBody::Cpp { .. } => 0,
    };
    if matmuls == 1 {
        for axis in [pieces::Axis::Rows, pieces::Axis::Cols] {
            for n in [2, 4, 8] {
                forms.push(Form {
                    parts: Some((axis, n)),
                    ..form(Lifetimes::Ahead)
                });
            }
        }
    }
    if let Some(rows) = blocks::rows(k) {
        for lifetimes in [Lifetimes::Ahead, Lifetimes::Whole] {
            for (ends, pieces) in [(1, 2), (2, 2), (1, 4), (2, 4)] {
                forms.push(Form {
                    ends: Some(ends::Ends { rows, ends, pieces }),
                    ..form(lifetimes)
                });
            }
        }
    }
    forms
}

/// The text of `k` (`full`, or its row block) as `blocks` blocks whose buffer sets are
/// `set_bytes` apart, planned in `chip`, checked against `arch`'s rules.
fn written(
    k: &Kernel,
    full: &Kernel,
    arch: &Arch,
    chip: &OnChip,
    layouts: &Layouts,
    form: Form,
) -> Result<String, Refusal> {
    let refuse = |op: Option<u32>, message: String| Refusal { op, message };
    let KernelBody::Ops(ops) = &k.body else {
        return Err(refuse(None, format!("kernel `{}` has a C++ body", k.name)));
    };
    let plan = buffers::plan_with(k, chip, form.lifetimes)
        .map_err(|o| refuse(Some(o.op), format!("kernel `{}`: {o}", k.name)))?;
    let mut g = Gen {
        out: String::new(),
        k,
        ops,
        plan: &plan,
        pipe: None,
        filled: Vec::new(),
        layouts,
        chip: &arch.on_chip,
        at: None,
        block: None,
        first_pipe: None,
        indent: 0,
        loads_first: form.lifetimes == Lifetimes::Ahead,
    };
    g.file(full, form.blocks, form.set_bytes)
        .map_err(|m| refuse(g.at, m))?;
    let mut out = g.out;
    if let Some(e) = form.ends {
        out = ends::split(&out, arch, e)
            .ok_or_else(|| refuse(None, "no ends to run in pieces".into()))?;
    }
    if let Some((axis, n)) = form.parts {
        out = parts::split(&out, n, axis)
            .ok_or_else(|| refuse(None, format!("no matmul to run as {n} blocks")))?;
    }
    if form.by_dependency {
        out = sync::by_dependency(&out, arch).ok_or_else(|| {
            refuse(
                None,
                "flags by dependency: a form this pass does not read".into(),
            )
        })?;
    }
    Ok(barriers::elide(&out, arch))
}

struct Gen<'a> {
    out: String,
    k: &'a Kernel,
    ops: &'a [Op],
    plan: &'a BufferPlan,
    /// The pipe of the last instruction written.
    pipe: Option<Pipe>,
    /// Buffers of parameters and L1 stagings already filled.
    filled: Vec<Role>,
    layouts: &'a Layouts,
    chip: &'a OnChip,
    /// The op being written.
    at: Option<u32>,
    /// The row block being written, if the kernel runs as blocks.
    block: Option<Block>,
    /// The pipe of the first instruction written (of the block).
    first_pipe: Option<Pipe>,
    /// Scopes open around the lines written.
    indent: usize,
    /// Every parameter's load at its buffer's first live op, which [`Lifetimes::Ahead`] makes
    /// the first; else at the first op that reads it.
    loads_first: bool,
}

/// One row block of a kernel written as blocks ([`blocks`]).
#[derive(Clone, Copy)]
struct Block {
    /// Its first row of the kernel's split tiles.
    first_row: u64,
    /// Its buffer set: 0 or 1.
    set: u32,
    /// Where its buffer set starts in UB.
    base: u64,
}

impl Gen<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..=self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// One instruction on `pipe`, ordered after the previous one.
    fn instr(&mut self, pipe: Pipe, s: String) {
        match self.pipe {
            Some(p) if p == pipe && p == Pipe::V => self.line("pipe_barrier(PIPE_V);"),
            Some(p) if p != pipe => {
                let (a, b) = (p.name(), pipe.name());
                let e = self.block.map_or(0, |b| b.set);
                self.line(&format!(
                    "set_flag({a}, {b}, EVENT_ID{e}); wait_flag({a}, {b}, EVENT_ID{e});"
                ));
            }
            _ => {}
        }
        self.first_pipe.get_or_insert(pipe);
        self.pipe = Some(pipe);
        self.line(&s);
    }

    fn v(&mut self, s: String) {
        self.instr(Pipe::V, s);
    }

    /// Whether `role` is an L1 tile loaded from a column-major tensor: a transpose the cube
    /// loads transposed, or a parameter given transposed views.
    fn loaded_transposed(&self, role: &Role) -> bool {
        match role {
            Role::Mat(Value::Op(t)) => buffers::cube_transpose(self.k, self.ops, *t as usize),
            Role::Mat(Value::Param(p)) => match self.param(p) {
                Some(ParamType::Tile(_, t)) => {
                    gm_layout(self.k, p, *t, self.layouts) == GmLayout::Dn
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn param(&self, name: &str) -> Option<&ParamType> {
        self.k.params.iter().find(|p| p.name == name).map(|p| &p.ty)
    }

    fn has(&self, role: &Role) -> bool {
        self.plan.get(role).is_some()
    }

    /// Each tile parameter as a `GlobalTensor` view of its run-time strides; a scalar no op
    /// reads, marked unused.
    fn globals(&mut self) {
        let k = self.k;
        let rows = self.block_rows();
        for p in &k.params {
            // A row block's view starts at its first row of a split tile.
            let at = |t: &TileType, layout: GmLayout| match self.block {
                Some(b) if t.rows == rows && b.first_row > 0 => match layout {
                    GmLayout::Nd => format!(
                        "p_{} + {} * {}",
                        p.name,
                        b.first_row,
                        stride_name(k, &p.name, *t, self.layouts)
                    ),
                    GmLayout::Dn => format!("p_{} + {}", p.name, b.first_row),
                },
                _ => format!("p_{}", p.name),
            };
            match &p.ty {
                ParamType::Tile(_, t) if buffers::is_column(*t) => {
                    // A column's UB tile is column-major, which A2/A3 loads and stores only
                    // from a column-major (DN) tensor: M contiguous elements. `wsp emit` gives
                    // such a parameter only views whose rows are one element apart
                    // (`wsp_ir::layout`); its column stride is of no use with one column.
                    let (shape, stride) = (
                        format!("pto::Shape<1, 1, 1, {}, 1>", t.rows),
                        "pto::Stride<1, 1, 1, 1, 1>",
                    );
                    self.line(&format!(
                        "GlobalTensor<{e}, {shape}, {stride}, Layout::DN> g_{n}({ptr}, {shape}(), {stride}());  (void)p_{n}_cs;",
                        e = elem(t.dtype),
                        n = p.name,
                        ptr = at(t, GmLayout::Dn)
                    ));
                }
                ParamType::Tile(_, t) => {
                    // Row-major: columns one element apart, rows `rs` apart. Column-major (a
                    // transposed view, which only the cube reads, into a ZN tile that is its
                    // right operand as it is): rows one element apart, columns `cs` apart.
                    let gm = gm_layout(k, &p.name, *t, self.layouts);
                    let (stride, layout) = match gm {
                        GmLayout::Nd => ("pto::Stride<1, 1, 1, -1, 1>", ""),
                        GmLayout::Dn => ("pto::Stride<1, 1, 1, 1, -1>", ", Layout::DN"),
                    };
                    let shape = format!("pto::Shape<1, 1, 1, {}, {}>", t.rows, t.cols);
                    self.line(&format!(
                        "GlobalTensor<{e}, {shape}, {stride}{layout}> g_{n}({ptr}, {shape}(), {stride}({s}));",
                        e = elem(t.dtype),
                        n = p.name,
                        ptr = at(t, gm),
                        s = stride_name(k, &p.name, *t, self.layouts)
                    ));
                }
                // A scalar no op reads.
                _ if !self
                    .ops
                    .iter()
                    .any(|o| o.args.contains(&Operand::Param(p.name.clone()))) =>
                {
                    self.line(&format!("(void)p_{};", p.name));
                }
                _ => {}
            }
        }
    }

    /// The kernel's file: `full`'s entry over this kernel's instructions, once or, for
    /// `blocks` > 1, once per row block ([`blocks`]) in two buffer sets `set_bytes` apart.
    fn file(&mut self, full: &Kernel, blocks: u64, set_bytes: u64) -> Result<(), String> {
        let _ = writeln!(
            self.out,
            "// AICore kernel `{}` ({}), generated by `wsp emit` from its IR: PTO-ISA tiles placed in\n\
             // UB/L1/L0 at planned offsets, one instruction sequence per op.",
            full.name,
            unit(full)
        );
        self.out.push_str("#include <cmath>\n#include <cstdint>\n#include <pto/pto-inst.hpp>\n\nusing namespace pto;\n\n");
        let _ = writeln!(self.out, "{}\n{{", entry_signature(full, self.layouts));
        if blocks == 1 {
            self.globals();
            self.body()?;
        } else {
            self.blocks(blocks, set_bytes)?;
        }
        if let Some(p) = self.pipe {
            let a = p.name();
            self.line(&format!(
                "set_flag({a}, PIPE_S, EVENT_ID0); wait_flag({a}, PIPE_S, EVENT_ID0);"
            ));
        }
        self.out.push_str("}\n");
        self.out.push_str(&adapter(full, self.layouts));
        Ok(())
    }

    /// Row blocks in turn, each in its own scope with its views and buffers. A block's
    /// instructions are chained as the whole kernel's are, on its buffer set's event ID; its
    /// first waits for the last of the block two before, which used the same buffers (event
    /// ID 2 + set), and a vector barrier keeps the blocks' undeclared UB scratch apart.
    fn blocks(&mut self, blocks: u64, set_bytes: u64) -> Result<(), String> {
        let rows = self.block_rows();
        let mut ends: Option<(Pipe, Pipe)> = None;
        for b in 0..blocks {
            let set = (b % 2) as u32;
            self.line(&format!(
                "{{  // rows [{}, {}) in buffer set {set}",
                b * rows,
                (b + 1) * rows
            ));
            self.indent += 1;
            self.block = Some(Block {
                first_row: b * rows,
                set,
                base: u64::from(set) * set_bytes,
            });
            self.pipe = None;
            self.first_pipe = None;
            self.filled.clear();
            if b >= 1 {
                self.line("pipe_barrier(PIPE_V);");
            }
            if let (true, Some((first, last))) = (b >= 2, ends) {
                self.line(&format!(
                    "wait_flag({}, {}, EVENT_ID{});",
                    last.name(),
                    first.name(),
                    2 + set
                ));
            }
            self.globals();
            self.body()?;
            let (Some(first), Some(last)) = (self.first_pipe, self.pipe) else {
                return Err("a row block with no instructions".into());
            };
            if first == last {
                return Err("a row block on one pipe cannot overlap another".into());
            }
            ends = Some((first, last));
            if b + 2 < blocks {
                self.line(&format!(
                    "set_flag({}, {}, EVENT_ID{});",
                    last.name(),
                    first.name(),
                    2 + set
                ));
            }
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }

    /// The rows of this (sub-)kernel's split tiles.
    fn block_rows(&self) -> u64 {
        blocks::most_rows(self.k, self.ops).unwrap_or(1)
    }

    /// The buffers' declarations, then each op's instructions.
    fn body(&mut self) -> Result<(), String> {
        let plan = self.plan;
        let base = self.block.map_or(0, |b| b.base);
        let mut aliases = Vec::new();
        for b in &plan.buffers {
            let name = buffer_name(&b.role);
            let at = b.offset + base;
            self.line(&format!(
                "{} {name}; TASSIGN({name}, 0x{at:x});  // {} [{at}, {})",
                tile_type(b, self.loaded_transposed(&b.role)),
                b.memory.name(),
                at + b.bytes()
            ));
            if b.memory == Memory::Ub && buffers::is_column(b.tile) {
                // Elementwise instructions take row-major tiles: the same bytes as [1, M].
                aliases.push((
                    format!("{name}_row"),
                    format!(
                        "{}Tile<TileType::Vec, {}, 1, {}, BLayout::RowMajor, 1, {}> {name}_row; TASSIGN({name}_row, 0x{at:x});  // {name} as a row\n",
                        "    ".repeat(1 + self.indent),
                        elem(b.tile.dtype),
                        b.rows,
                        b.tile.rows,
                    ),
                ));
            }
        }
        let body = self.out.len();
        for (i, op) in self.ops.iter().enumerate() {
            self.line(&format!("// %{i} = {}", op.op));
            self.at = Some(i as u32);
            self.op(i, op)?;
        }
        self.at = None;
        // Only the row views the instructions use are declared.
        let used: String = aliases
            .into_iter()
            .filter(|(name, _)| {
                self.out[body..]
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == name)
            })
            .map(|(_, line)| line)
            .collect();
        self.out.insert_str(body, &used);
        Ok(())
    }

    /// Loads a tile parameter read as a value into its UB or L1 buffer before op `i`: the
    /// first op its buffer is live at or, unless [`Gen::loads_first`], the first of those that
    /// reads it, so that loads are issued in the order ops read them.
    fn fill_params(&mut self, i: u32) {
        let plan = self.plan;
        let reads = |p: &str| {
            self.ops.get(i as usize).is_some_and(|o| {
                o.args
                    .iter()
                    .any(|a| matches!(a, Operand::Param(q) if q == p))
            })
        };
        for b in &plan.buffers {
            let (Role::Vec(Value::Param(p)) | Role::Mat(Value::Param(p))) = &b.role else {
                continue;
            };
            let due = match self.loads_first {
                true => b.live.0 == i,
                false => b.live.0 <= i && reads(p),
            };
            if due && !self.filled.contains(&b.role) {
                self.filled.push(b.role.clone());
                let pipe = Pipe::Mte2;
                self.instr(pipe, format!("TLOAD({}, g_{p});", buffer_name(&b.role)));
            }
        }
    }

    fn arg(&self, o: &Operand) -> Result<Arg, String> {
        Ok(match o {
            Operand::Value(v) => match self.ops.get(*v as usize).map(|o| o.ty) {
                Some(ValueType::Tile(tile)) => Arg::Tile {
                    name: buffer_name(&Role::Vec(Value::Op(*v))),
                    tile,
                },
                _ => Arg::Scalar {
                    expr: format!("s{v}"),
                },
            },
            Operand::Param(p) => match self.param(p) {
                Some(ParamType::Tile(_, tile)) => Arg::Tile {
                    name: buffer_name(&Role::Vec(Value::Param(p.clone()))),
                    tile: *tile,
                },
                _ => Arg::Scalar {
                    expr: format!("p_{p}"),
                },
            },
            Operand::Number(n) => Arg::Scalar {
                expr: crate::cxx::double(n.0),
            },
            Operand::DType(_) | Operand::Shape(..) | Operand::Index(_) => {
                return Err("a dtype, shape or slice start is not a value".into());
            }
        })
    }

    fn op(&mut self, i: usize, op: &Op) -> Result<(), String> {
        let i32 = i as u32;
        self.fill_params(i32);
        if let ValueType::Scalar(d) = op.ty {
            return self.scalar(i, op, d);
        }
        let v = self.view(i32, op)?;
        match op.op.as_str() {
            "load" | "store" | "constant" | "alloc" | "cast" | "transpose" | "matmul" => {
                self.structural(&v)
            }
            "add" if buffers::bias_add(self.k, self.ops, i, self.chip).is_some() => {
                self.line("// added by the matmul, which starts from the bias row");
                Ok(())
            }
            "slice_even"
            | "slice_odd"
            | "interleave"
            | "iota_u32"
            | "tsort32"
            | "extract_topk_indices" => self.rearrange(&v),
            "broadcast" => self.broadcast(&v),
            _ if matches!(v.row, Some(Lowering::Binary { .. })) => self.binary(&v),
            _ => self.table_row(&v),
        }
    }

    /// Op `i` as its instructions name it: its result's buffer and operands, elementwise
    /// instructions seeing a column (`[M,1]`) through its row-major alias.
    fn view<'o>(&self, i32: u32, op: &'o Op) -> Result<OpView<'o>, String> {
        let row = instructions::lookup(&op.op).map(|r| r.lowering);
        let dst = buffer_name(&Role::Vec(Value::Op(i32)));
        let out = match op.ty {
            ValueType::Tile(t) => Some(t),
            _ => None,
        };
        let args: Vec<Arg> = match op.op.as_str() {
            "load" | "store" | "alloc" | "constant" => Vec::new(),
            _ => op
                .args
                .iter()
                .filter(|a| !matches!(a, Operand::DType(_) | Operand::Shape(..)))
                .map(|a| self.arg(a))
                .collect::<Result<_, _>>()?,
        };
        let column = out.is_some_and(buffers::is_column)
            && !matches!(
                row,
                Some(Lowering::RowReduce { .. } | Lowering::Expand { .. } | Lowering::ColReduce(_))
            )
            && op.op != "broadcast"
            && op.op != "softmax"
            && op.op != "transpose";
        let ew = |name: String, t: TileType| {
            if column && buffers::is_column(t) {
                format!("{name}_row")
            } else {
                name
            }
        };
        let dst = match out {
            Some(t) => ew(dst, t),
            None => dst,
        };
        let args = args
            .into_iter()
            .map(|a| match a {
                Arg::Tile { name, tile } => Arg::Tile {
                    name: ew(name, tile),
                    tile,
                },
                s => s,
            })
            .collect();
        Ok(OpView {
            i: i32,
            op,
            row,
            dst,
            out,
            args,
            column,
        })
    }

    /// Loads, stores, allocations, conversions, transposes and the cube: code of their own.
    fn structural(&mut self, v: &OpView) -> Result<(), String> {
        let i32 = v.i;
        let i = v.i as usize;
        let op = v.op;
        let dst = &v.dst;
        let out = v.out;
        match v.op.op.as_str() {
            "load" => {
                let Some(Operand::Param(p)) = op.args.first() else {
                    return Err(format!("load (%{i}) of no parameter"));
                };
                if (0..self.ops.len()).any(|m| {
                    buffers::accumulates_in_place(self.ops, m).is_some_and(|(j, _)| j == i32)
                }) {
                    self.line("// the matmul accumulates into global memory: nothing to load");
                    return Ok(());
                }
                let mat = Role::Mat(Value::Op(i32));
                if self.has(&Role::Vec(Value::Op(i32))) {
                    self.instr(Pipe::Mte2, format!("TLOAD({dst}, g_{p});"));
                } else if self.has(&mat) {
                    self.filled.push(mat.clone());
                    self.instr(Pipe::Mte2, format!("TLOAD({}, g_{p});", buffer_name(&mat)));
                }
            }
            "store" => {
                let (Some(Operand::Param(p)), Some(v)) = (op.args.first(), op.args.get(1)) else {
                    return Err(format!("store (%{i}) to no parameter"));
                };
                let value = match v {
                    Operand::Value(v) => Value::Op(*v),
                    Operand::Param(q) => Value::Param(q.clone()),
                    _ => return Err(format!("store (%{i}) of a scalar")),
                };
                let vec = Role::Vec(value.clone());
                let atomic = (0..self.ops.len()).any(|m| {
                    buffers::accumulates_in_place(self.ops, m).is_some_and(|(_, s)| s == i32)
                });
                // A converted or biased matmul result goes out of the matmul's L0C tile.
                let value = match value {
                    Value::Op(c) => {
                        Value::Op(buffers::held_in_acc(self.k, self.ops, c, self.chip).unwrap_or(c))
                    }
                    v => v,
                };
                match value {
                    Value::Op(v) if atomic => {
                        let c = buffer_name(&Role::Acc(v));
                        self.instr(
                            Pipe::Fix,
                            format!("TSTORE<decltype({c}), decltype(g_{p}), AtomicType::AtomicAdd>(g_{p}, {c});"),
                        );
                    }
                    Value::Op(v) if !self.has(&vec) => {
                        self.instr(
                            Pipe::Fix,
                            format!("TSTORE(g_{p}, {});", buffer_name(&Role::Acc(v))),
                        );
                    }
                    _ => self.instr(Pipe::Mte3, format!("TSTORE(g_{p}, {});", buffer_name(&vec))),
                }
            }
            "constant" => {}
            "alloc" => self.v(format!("TEXPANDS({dst}, {});", v.s("0"))),
            "cast" if buffers::fixpipe_cast(self.ops, i) => {
                let mat = Role::Mat(Value::Op(i32));
                if self.has(&mat) {
                    // The fixpipe converts as it moves the result from L0C into L1.
                    let Some(Operand::Value(m)) = op.args.first() else {
                        return Err(format!("cast (%{i}) of no matmul"));
                    };
                    let (name, c) = (buffer_name(&mat), buffer_name(&Role::Acc(*m)));
                    self.filled.push(mat);
                    self.instr(Pipe::Fix, format!("TMOV({name}, {c});"));
                } else {
                    self.line("// converted by the fixpipe as the matmul result is stored");
                }
            }
            "transpose" if buffers::cube_transpose(self.k, self.ops, i) => {
                self.line("// loaded transposed for the matmul that reads it");
            }
            "cast" => {
                let (src, st) = v.tile(0)?;
                if Some(st.dtype) == out.map(|t| t.dtype) {
                    self.v(format!("TMOV({dst}, {src});"));
                } else {
                    self.v(format!("TCVT({dst}, {src}, RoundMode::CAST_RINT);"));
                }
            }
            "transpose" => {
                let (src, _) = v.tile(0)?;
                self.v(format!("TTRANS({dst}, {src}, {});", v.tmp(0)));
            }
            "matmul" => self.matmul(i32, op)?,
            _ => return Err(v.no_form()),
        }
        Ok(())
    }

    /// Ops that move elements within tiles: gathers, scatters, an index row, a sort.
    fn rearrange(&mut self, v: &OpView) -> Result<(), String> {
        let i32 = v.i;
        let i = v.i as usize;
        let op = v.op;
        let dst = &v.dst;
        let out = v.out;
        match v.op.op.as_str() {
            name @ ("slice_even" | "slice_odd") => {
                let (x, _) = v.tile(0)?;
                let pattern = if name == "slice_even" {
                    "P0101"
                } else {
                    "P1010"
                };
                self.v(format!(
                    "TGATHER<decltype({dst}), decltype({x}), MaskPattern::{pattern}>({dst}, {x});"
                ));
            }
            "interleave" => {
                let ((a, at), (b, _)) = (v.tile(0)?, v.tile(1)?);
                let Some(b_out) = self.plan.get(&Role::Vec(Value::Op(i32))) else {
                    return Err(format!("interleave (%{i}) has no buffer"));
                };
                let t = v.tmp(0);
                let Some(b_tmp) = self.plan.get(&Role::Tmp(i32, 0)) else {
                    return Err(format!("interleave (%{i}) has no tmp buffer"));
                };
                // The two halves' bits, ORed where one of them is zero.
                let bits = match at.dtype.size_bytes() {
                    2 => "uint16_t",
                    _ => "uint32_t",
                };
                for (name, b) in [(dst, b_out), (&t, b_tmp)] {
                    self.line(&format!(
                        "Tile<TileType::Vec, {bits}, {}, {}, BLayout::RowMajor, {}, {}> {name}_bits; TASSIGN({name}_bits, 0x{:x});",
                        b.rows, b.cols, b.tile.rows, b.tile.cols, b.offset
                    ));
                }
                self.v(format!("TSCATTER<MaskPattern::P0101>({dst}, {a});"));
                self.v(format!("TSCATTER<MaskPattern::P1010>({t}, {b});"));
                self.v(format!("TOR({dst}_bits, {dst}_bits, {t}_bits);"));
            }
            "iota_u32" => {
                // The scalar form: the vector form computes descending runs differently and
                // needs a tmp tile; 0..N ascending is a loop on the scalar pipe.
                self.instr(
                    Pipe::S,
                    format!("TCI<decltype({dst}), uint32_t, 0>({dst}, (uint32_t)0);"),
                );
            }
            "tsort32" => {
                let ((scores, _), (idx, _)) = (v.tile(0)?, v.tile(1)?);
                self.v(format!("TSORT32({dst}, {scores}, {idx});"));
            }
            "extract_topk_indices" => {
                let (pairs, pt) = v.tile(0)?;
                let (Some(o), Some(b_out), Some(b_pairs)) = (
                    out,
                    self.plan.get(&Role::Vec(Value::Op(i32))),
                    match op.args.first() {
                        Some(Operand::Value(v)) => self.plan.get(&Role::Vec(Value::Op(*v))),
                        _ => None,
                    },
                ) else {
                    return Err(format!("extract_topk_indices (%{i}) has no buffers"));
                };
                // The first k pairs, and the result as the pairs' element type: the gather
                // moves bits.
                let e = elem(pt.dtype);
                let (k2, k) = (2 * o.cols, o.cols);
                self.line(&format!(
                    "Tile<TileType::Vec, {e}, 1, {k2}, BLayout::RowMajor, 1, {k2}> {pairs}_head; TASSIGN({pairs}_head, 0x{:x});",
                    b_pairs.offset
                ));
                self.line(&format!(
                    "Tile<TileType::Vec, {e}, 1, {k}, BLayout::RowMajor, 1, {k}> {dst}_bits; TASSIGN({dst}_bits, 0x{:x});",
                    b_out.offset
                ));
                self.v(format!(
                    "TGATHER<decltype({dst}_bits), decltype({pairs}_head), MaskPattern::P1010>({dst}_bits, {pairs}_head);"
                ));
            }
            _ => return Err(v.no_form()),
        }
        Ok(())
    }

    /// `broadcast(x, (M, N))`: expanded along rows, columns, or both.
    fn broadcast(&mut self, v: &OpView) -> Result<(), String> {
        let dst = &v.dst;
        let (x, xt) = v.tile(0)?;
        let Some(o) = v.out else {
            return Err("broadcast of no tile".into());
        };
        if xt.shape() == o.shape() {
            self.v(format!("TMOV({dst}, {x});"));
        } else if xt.rows == 1 && xt.cols == 1 && o.rows > 1 && o.cols > 1 {
            let t = v.tmp(0);
            self.v(format!("TROWEXPAND({t}, {x});"));
            self.v(format!("TCOLEXPAND({dst}, {t});"));
        } else if xt.cols == 1 && o.cols > 1 {
            self.v(format!("TROWEXPAND({dst}, {x});"));
        } else {
            self.v(format!("TCOLEXPAND({dst}, {x});"));
        }
        Ok(())
    }

    /// An op whose instruction row says what to write: one instruction, a reduction, an expansion or fixed steps.
    fn table_row(&mut self, v: &OpView) -> Result<(), String> {
        let dst = &v.dst;
        let out = v.out;
        match (v.op.op.as_str(), v.row) {
            (_, Some(Lowering::Unary(instr))) => {
                let (x, _) = v.tile(0)?;
                self.v(format!("{instr}({dst}, {x});"));
            }
            (_, Some(Lowering::RowReduce { instr, mean })) => {
                let (x, xt) = v.tile(0)?;
                self.v(format!("{instr}({dst}, {x}, {});", v.tmp(0)));
                if mean {
                    let d = match out {
                        Some(t) if buffers::is_column(t) => format!("{dst}_row"),
                        _ => dst.clone(),
                    };
                    self.v(format!(
                        "TMULS({d}, {d}, {});",
                        v.s(&format!("1.0 / {}", xt.cols))
                    ));
                }
            }
            (_, Some(Lowering::ColReduce(instr))) => {
                let (x, _) = v.tile(0)?;
                self.v(format!("{instr}({dst}, {x});"));
            }
            (name, Some(Lowering::Expand { row: true, .. }))
                if v.tile(1).is_ok_and(|(_, r)| !buffers::is_column(r))
                    && out.is_some_and(|o| o.cols > 1) =>
            {
                // A single row's [1,1] factor: the fused form takes a column only.
                let ((x, _), (r, _)) = (v.tile(0)?, v.tile(1)?);
                let t = v.tmp(0);
                self.v(format!("TROWEXPAND({t}, {r});"));
                let instr = if name == "rowmul" { "TMUL" } else { "TADD" };
                self.v(format!("{instr}({dst}, {x}, {t});"));
            }
            (_, Some(Lowering::Expand { instr, .. })) => {
                let ((x, _), (r, _)) = (v.tile(0)?, v.tile(1)?);
                self.v(format!("{instr}({dst}, {x}, {r});"));
            }
            (_, Some(Lowering::Steps { steps, .. })) => {
                let (x, _) = v.tile(0)?;
                for step in steps {
                    let operands: Vec<String> = step
                        .operands
                        .iter()
                        .map(|o| match o {
                            Slot::Dst => dst.clone(),
                            Slot::X => x.clone(),
                            Slot::Tmp(n) => v.tmp(*n),
                            Slot::Scalar(e) => v.s(e),
                        })
                        .collect();
                    self.v(format!("{}({});", step.instr, operands.join(", ")));
                }
            }
            _ => return Err(v.no_form()),
        }
        Ok(())
    }

    /// An elementwise op of two operands: tiles of one shape, a tile and a scalar, or a broadcast.
    fn binary(&mut self, v: &OpView) -> Result<(), String> {
        let i32 = v.i;
        let i = v.i as usize;
        let dst = &v.dst;
        let out = v.out;
        let args = &v.args;
        let Some(Lowering::Binary {
            tiles,
            scalar,
            row,
            col,
        }) = v.row
        else {
            return Err(v.no_form());
        };
        let name = v.op.op.as_str();
        let Some(o) = out else {
            return Err(format!("{name} of no tile"));
        };
        match (&args[0], &args[1]) {
            (Arg::Tile { name: a, tile: at }, Arg::Tile { name: b, tile: bt }) => {
                match buffers::broadcast(name, *at, *bt, o) {
                    Broadcast::None => self.v(format!("{tiles}({dst}, {a}, {b});")),
                    Broadcast::Row { swapped } | Broadcast::Col { swapped } => {
                        let instr = if matches!(
                            buffers::broadcast(name, *at, *bt, o),
                            Broadcast::Row { .. }
                        ) {
                            row
                        } else {
                            col
                        };
                        let (f, r) = if swapped { (b, a) } else { (a, b) };
                        self.v(format!("{instr}({dst}, {f}, {r});"));
                    }
                    Broadcast::Expand => {
                        let mut n = 0u8;
                        let a = self.expand(a, *at, o, i32, &mut n);
                        let b = self.expand(b, *bt, o, i32, &mut n);
                        self.v(format!("{tiles}({dst}, {a}, {b});"));
                    }
                }
            }
            (Arg::Tile { name: a, .. }, Arg::Scalar { expr }) => {
                self.v(format!("{scalar}({dst}, {a}, {});", v.s(expr)));
            }
            (Arg::Scalar { expr }, Arg::Tile { name: b, .. }) => match name {
                "sub" => {
                    self.v(format!("TMULS({dst}, {b}, {});", v.s("-1")));
                    self.v(format!("TADDS({dst}, {dst}, {});", v.s(expr)));
                }
                "div" => self.v(format!("TDIVS({dst}, {}, {b});", v.s(expr))),
                _ => self.v(format!("{scalar}({dst}, {b}, {});", v.s(expr))),
            },
            _ => return Err(format!("op `{name}` (%{i}) of two scalars yields a tile")),
        }
        Ok(())
    }

    /// Expands operand `x` of shape `xt` to `out`'s shape in the op's next scratch tiles.
    fn expand(&mut self, x: &str, xt: TileType, out: TileType, i: u32, n: &mut u8) -> String {
        let mut cur = x.to_string();
        let mut shape = xt;
        for step in buffers::expand_steps(xt, out) {
            let t = buffer_name(&Role::Tmp(i, *n));
            *n += 1;
            let instr = if shape.cols == 1 && step.cols > 1 {
                "TROWEXPAND"
            } else {
                "TCOLEXPAND"
            };
            self.v(format!("{instr}({t}, {cur});"));
            cur = t;
            shape = step;
        }
        cur
    }

    /// Stages a matmul operand in L1 (once): straight from global memory for a parameter or a
    /// load not overwritten since, else from its UB tile.
    fn stage(&mut self, o: &Operand, i: u32) -> Result<String, String> {
        let value = match o {
            Operand::Value(v) => Value::Op(*v),
            Operand::Param(p) => Value::Param(p.clone()),
            _ => return Err(format!("matmul (%{i}) of a scalar")),
        };
        let mat = Role::Mat(value.clone());
        let name = buffer_name(&mat);
        if self.filled.contains(&mat) {
            return Ok(name);
        }
        self.filled.push(mat.clone());
        if let Value::Op(t) = value
            && buffers::cube_transpose(self.k, self.ops, t as usize)
        {
            // The source's rows are the columns of a column-major tensor over the same bytes.
            let Some(p) = buffers::transposed_param(self.k, self.ops, t as usize) else {
                return Err(format!("transpose (%{t}) of no parameter"));
            };
            let Some(ParamType::Tile(_, src)) = self.param(p) else {
                return Err(format!("transpose (%{t}) of no tile parameter"));
            };
            let (shape, stride) = (
                format!("pto::Shape<1, 1, 1, {}, {}>", src.cols, src.rows),
                "pto::Stride<1, 1, 1, 1, -1>",
            );
            self.line(&format!(
                "GlobalTensor<{e}, {shape}, {stride}, Layout::DN> g_{p}_t(p_{p}, {shape}(), {stride}(p_{p}_rs));",
                e = elem(src.dtype)
            ));
            self.instr(Pipe::Mte2, format!("TLOAD({name}, g_{p}_t);"));
            return Ok(name);
        }
        let gm = match &value {
            Value::Param(p) => Some((p.clone(), 0)),
            Value::Op(v) => match self.ops.get(*v as usize) {
                Some(Op { op, args, .. }) if op == "load" => match args.first() {
                    Some(Operand::Param(p)) => Some((p.clone(), *v)),
                    _ => None,
                },
                _ => None,
            },
        };
        // A store to the parameter between the load and here makes global memory stale.
        let stale = |p: &str, from: u32| {
            self.ops[from as usize..i as usize].iter().any(|o| {
                o.op == "store" && matches!(o.args.first(), Some(Operand::Param(q)) if q == p)
            })
        };
        match gm {
            Some((p, from)) if !stale(&p, from) => {
                self.instr(Pipe::Mte2, format!("TLOAD({name}, g_{p});"));
            }
            _ => {
                let vec = buffer_name(&Role::Vec(value));
                self.instr(Pipe::Mte3, format!("TMOV({name}, {vec});"));
            }
        }
        Ok(name)
    }

    fn matmul(&mut self, i: u32, op: &Op) -> Result<(), String> {
        let (Some(a), Some(b)) = (op.args.first(), op.args.get(1)) else {
            return Err(format!("matmul (%{i}) needs two operands"));
        };
        let ma = self.stage(a, i)?;
        let mb = self.stage(b, i)?;
        let (l, r, c) = (
            buffer_name(&Role::Left(i)),
            buffer_name(&Role::Right(i)),
            buffer_name(&Role::Acc(i)),
        );
        let bias = (0..self.ops.len())
            .filter_map(|n| buffers::bias_add(self.k, self.ops, n, self.chip))
            .find(|(m, _)| *m == i);
        if let Some((_, p)) = bias {
            self.instr(
                Pipe::Mte2,
                format!("TLOAD({}, g_{p});", buffer_name(&Role::BiasRow(i))),
            );
        }
        self.instr(Pipe::Mte1, format!("TMOV({l}, {ma});"));
        self.instr(Pipe::Mte1, format!("TMOV({r}, {mb});"));
        if bias.is_some() {
            let (row, b) = (buffer_name(&Role::BiasRow(i)), buffer_name(&Role::Bias(i)));
            self.instr(Pipe::Mte1, format!("TMOV({b}, {row});"));
            self.instr(Pipe::M, format!("TMATMUL_BIAS({c}, {l}, {r}, {b});"));
        } else {
            self.instr(Pipe::M, format!("TMATMUL({c}, {l}, {r});"));
        }
        let vec = Role::Vec(Value::Op(i));
        if self.has(&vec) {
            let v = buffer_name(&vec);
            self.instr(Pipe::Fix, format!("TMOV({v}, {c});"));
            if let Some(acc) = op
                .args
                .get(2)
                .filter(|_| buffers::accumulates_in_place(self.ops, i as usize).is_none())
            {
                let Arg::Tile { name, .. } = self.arg(acc)? else {
                    return Err(format!("matmul (%{i}) accumulator is not a tile"));
                };
                self.v(format!("TADD({v}, {v}, {name});"));
            }
        }
        Ok(())
    }

    /// A scalar-valued op: a C++ constant, computed as the CPU kernels do.
    fn scalar(&mut self, i: usize, op: &Op, d: DType) -> Result<(), String> {
        let ct = compute(d);
        if op.op == "constant" {
            let n = match op.args.first() {
                Some(Operand::Number(n)) => n.0,
                _ => 0.0,
            };
            self.line(&format!("const {ct} s{i} = ({ct}){n:?};"));
            return Ok(());
        }
        let Some(row) = ops::lookup(&op.op) else {
            return Err(format!("unknown op `{}`", op.op));
        };
        let mut lets = String::new();
        let names: &[&str] = match row.semantics {
            Semantics::Map(_) => &["x"],
            Semantics::Zip(_) => &["a", "b"],
            _ => return Err(format!("op `{}` (%{i}) has no scalar form", op.op)),
        };
        for (n, a) in names.iter().zip(&op.args) {
            let Arg::Scalar { expr } = self.arg(a)? else {
                return Err(format!("op `{}` (%{i}) mixes a tile into a scalar", op.op));
            };
            let _ = write!(lets, "const {ct} {n} = ({ct})({expr}); ");
        }
        let (Semantics::Map(e) | Semantics::Zip(e)) = row.semantics else {
            return Ok(());
        };
        self.line(&format!(
            "const {ct} s{i} = [&] {{ {lets}return ({ct})({e}); }}();"
        ));
        Ok(())
    }
}

/// Under `__CPU_SIM`, `wsp_kernel_NAME` with the CPU kernel ABI, calling the entry; and the
/// bf16 guard.
pub(crate) fn adapter(k: &Kernel, layouts: &Layouts) -> String {
    let mut out = String::new();
    let mut ptrs = Vec::new();
    let mut strides = Vec::new();
    let mut scalars = Vec::new();
    let (mut ti, mut si) = (0, 0);
    for p in &k.params {
        match &p.ty {
            ParamType::Tile(_, t) => {
                ptrs.push(format!("({}*)wsp_t[{ti}]", elem(t.dtype)));
                // The CPU ABI passes a row and a column stride per tile.
                let col = gm_layout(k, &p.name, *t, layouts) == GmLayout::Dn;
                strides.push(format!("wsp_s[{}]", 2 * ti + usize::from(col)));
                ti += 1;
            }
            ParamType::Scalar(d, _) => {
                scalars.push(format!("({})wsp_sc[{si}]", compute(*d)));
                si += 1;
            }
            ParamType::Constexpr(_) => {
                scalars.push(format!("(int64_t)wsp_sc[{si}]"));
                si += 1;
            }
        }
    }
    let args: Vec<String> = ptrs.into_iter().chain(strides).chain(scalars).collect();
    let mut unused = String::new();
    for (used, n) in [(ti > 0, "wsp_t"), (ti > 0, "wsp_s"), (si > 0, "wsp_sc")] {
        if !used {
            let _ = writeln!(unused, "    (void){n};");
        }
    }
    if uses_bf16(k) {
        // Without it PTO-ISA's CPU simulation stands a 16-bit float in for bf16.
        let _ = write!(
            out,
            "\n#if defined(__CPU_SIM) && !defined(PTO_CPU_SIM_ENABLE_BF16)\n\
             #error \"kernel `{}` computes in bf16: the CPU simulation needs -DPTO_CPU_SIM_ENABLE_BF16=1 and C++23\"\n\
             #endif\n",
            k.name
        );
    }
    let _ = write!(
        out,
        "\n#if defined(__CPU_SIM)\n\
         // The CPU kernel ABI (codegen/src/cpp.rs), so the host replay runs this kernel on\n\
         // PTO-ISA's CPU simulation. Column strides are 1 for AICore views.\n\
         extern \"C\" void {}(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc)\n{{\n{unused}    {}({});\n}}\n#endif\n",
        crate::cxx::symbol(&k.name),
        entry(&k.name),
        args.join(", ")
    );
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{expect, expect_file};
    use wsp_ir::arch::A2A3;
    use wsp_ir::kernel::{Param, ParamType};
    use wsp_ir::plan::{Direction, F64};

    use super::*;

    fn tile(name: &str, dir: Direction, rows: u64, cols: u64, dtype: DType) -> Param {
        Param {
            name: name.into(),
            ty: ParamType::Tile(dir, TileType::new(rows, cols, dtype)),
        }
    }

    fn op(name: &str, args: Vec<Operand>, ty: ValueType) -> Op {
        Op {
            op: name.into(),
            args,
            ty,
        }
    }

    fn t(rows: u64, cols: u64, dtype: DType) -> ValueType {
        ValueType::Tile(TileType::new(rows, cols, dtype))
    }

    fn p(name: &str) -> Operand {
        Operand::Param(name.into())
    }

    fn kernel(name: &str, params: Vec<Param>, ops: Vec<Op>) -> Kernel {
        Kernel {
            name: name.into(),
            params,
            body: KernelBody::Ops(ops),
            loops: Vec::new(),
        }
    }

    /// `examples/rmsnorm.wsp`'s kernel: a scalar parameter, a column tile, a row expand.
    fn rmsnorm() -> Kernel {
        use DType::F32;
        kernel(
            "rmsnorm_tile",
            vec![
                tile("x", Direction::In, 16, 128, F32),
                tile("out", Direction::Out, 16, 128, F32),
                Param {
                    name: "eps".into(),
                    ty: ParamType::Scalar(F32, Some(F64(1e-6))),
                },
            ],
            vec![
                op("mul", vec![p("x"), p("x")], t(16, 128, F32)),
                op("rowmean", vec![Operand::Value(0)], t(16, 1, F32)),
                op("add", vec![Operand::Value(1), p("eps")], t(16, 1, F32)),
                op("rsqrt", vec![Operand::Value(2)], t(16, 1, F32)),
                op("rowmul", vec![p("x"), Operand::Value(3)], t(16, 128, F32)),
                op("store", vec![p("out"), Operand::Value(4)], ValueType::Unit),
            ],
        )
    }

    /// `rmsnorm` times a `[1,128]` gain row.
    fn rmsnorm_gain() -> Kernel {
        use DType::F32;
        let mut k = rmsnorm();
        k.params.insert(1, tile("gain", Direction::In, 1, 128, F32));
        let KernelBody::Ops(ops) = &mut k.body else {
            unreachable!()
        };
        ops.insert(
            5,
            op("mul", vec![Operand::Value(4), p("gain")], t(16, 128, F32)),
        );
        ops[6].args[1] = Operand::Value(5);
        k
    }

    /// A matmul that accumulates into its `InOut` tile (as `examples/tiled_matmul.wsp`'s did
    /// before its K loop moved into the kernel): f16 operands from global memory, an f32
    /// accumulator loaded from the tile.
    fn matmul_acc() -> Kernel {
        use DType::{F16, F32};
        kernel(
            "matmul_acc",
            vec![
                tile("a", Direction::In, 64, 64, F16),
                tile("b", Direction::In, 64, 64, F16),
                tile("c", Direction::InOut, 64, 64, F32),
            ],
            vec![
                op("load", vec![p("c")], t(64, 64, F32)),
                op(
                    "matmul",
                    vec![p("a"), p("b"), Operand::Value(0)],
                    t(64, 64, F32),
                ),
                op("store", vec![p("c"), Operand::Value(1)], ValueType::Unit),
            ],
        )
    }

    #[test]
    fn vector_kernel() {
        let src = kernel_source(&rmsnorm(), &A2A3, &Layouts::default()).unwrap();
        expect![[r#"
            // AICore kernel `rmsnorm_tile` (vec), generated by `wsp emit` from its IR: PTO-ISA tiles placed in
            // UB/L1/L0 at planned offsets, one instruction sequence per op.
            #include <cmath>
            #include <cstdint>
            #include <pto/pto-inst.hpp>

            using namespace pto;

            extern "C" __global__ AICORE void wsp_aicore_rmsnorm_tile(__gm__ float* p_x, __gm__ float* p_out, int64_t p_x_rs, int64_t p_out_rs, float p_eps)
            {
                GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<1, 1, 1, -1, 1>> g_x(p_x, pto::Shape<1, 1, 1, 16, 128>(), pto::Stride<1, 1, 1, -1, 1>(p_x_rs));
                GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<1, 1, 1, -1, 1>> g_out(p_out, pto::Shape<1, 1, 1, 16, 128>(), pto::Stride<1, 1, 1, -1, 1>(p_out_rs));
                Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, 16, 128> v_x; TASSIGN(v_x, 0x0);  // UB [0, 8192)
                Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, 16, 128> v0; TASSIGN(v0, 0x2000);  // UB [8192, 16384)
                Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1> v1; TASSIGN(v1, 0x6000);  // UB [24576, 24640)
                Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, 16, 128> t1_0; TASSIGN(t1_0, 0x4000);  // UB [16384, 24576)
                Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1> v2; TASSIGN(v2, 0x2000);  // UB [8192, 8256)
                Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1> v3; TASSIGN(v3, 0x2040);  // UB [8256, 8320)
                Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, 16, 128> v4; TASSIGN(v4, 0x2080);  // UB [8320, 16512)
                Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, 1, 16> v1_row; TASSIGN(v1_row, 0x6000);  // v1 as a row
                Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, 1, 16> v2_row; TASSIGN(v2_row, 0x2000);  // v2 as a row
                Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, 1, 16> v3_row; TASSIGN(v3_row, 0x2040);  // v3 as a row
                // %0 = mul
                TLOAD(v_x, g_x);
                set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
                TMUL(v0, v_x, v_x);
                // %1 = rowmean
                pipe_barrier(PIPE_V);
                TROWSUM(v1, v0, t1_0);
                pipe_barrier(PIPE_V);
                TMULS(v1_row, v1_row, (float)(1.0 / 128));
                // %2 = add
                pipe_barrier(PIPE_V);
                TADDS(v2_row, v1_row, (float)(p_eps));
                // %3 = rsqrt
                pipe_barrier(PIPE_V);
                TRSQRT(v3_row, v2_row);
                // %4 = rowmul
                pipe_barrier(PIPE_V);
                TROWEXPANDMUL(v4, v_x, v3);
                // %5 = store
                set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0); wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
                TSTORE(g_out, v4);
                set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0); wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
            }

            #if defined(__CPU_SIM)
            // The CPU kernel ABI (codegen/src/cpp.rs), so the host replay runs this kernel on
            // PTO-ISA's CPU simulation. Column strides are 1 for AICore views.
            extern "C" void wsp_kernel_rmsnorm_tile(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc)
            {
                wsp_aicore_rmsnorm_tile((float*)wsp_t[0], (float*)wsp_t[1], wsp_s[0], wsp_s[2], (float)wsp_sc[0]);
            }
            #endif
        "#]]
        .assert_eq(&src);
        assert_eq!(unit(&rmsnorm()), "vec");
    }

    #[test]
    fn the_ends_in_halves_when_cheaper() {
        // The load and first vector instruction, and the last and the store, over rows
        // [0, 8) and [8, 16); the row-wise middle over the whole tile.
        let halved = |src: &str| u64::from(!src.contains("__h1"));
        let src = kernel_source_costed(&rmsnorm(), &A2A3, &Layouts::default(), &halved).unwrap();
        expect_file!["../tests/snapshots/rmsnorm_halves.cpp"].assert_eq(&src);
        assert_eq!(sync::unordered(&src, &A2A3), None);
        // The second half of x starts 8 rows of 128 f32 (4 KiB) into x; of the [16,1]
        // column v3, 8 elements in.
        assert!(src.contains("TASSIGN(v_x__h1, 0x1000)"), "{src}");
        assert!(src.contains("Tile<TileType::Vec, float, 8, 1, BLayout::ColMajor, 8, 1> v3__h1; TASSIGN(v3__h1, 0x2060)"), "{src}");
        assert!(src.contains("g_out__h1(p_out + 8 * p_out_rs, "), "{src}");
    }

    /// `s = q @ k^T`, as attention's first matmul: `k` loaded transposed.
    fn q_k_transposed() -> Kernel {
        use DType::{F16, F32};
        kernel(
            "qk",
            vec![
                tile("q", Direction::In, 32, 64, F16),
                tile("k", Direction::In, 256, 64, F16),
                tile("s", Direction::Out, 32, 256, F32),
            ],
            vec![
                op("transpose", vec![p("k")], t(64, 256, F16)),
                op("matmul", vec![p("q"), Operand::Value(0)], t(32, 256, F32)),
                op("store", vec![p("s"), Operand::Value(1)], ValueType::Unit),
            ],
        )
    }

    #[test]
    fn the_matmul_in_column_blocks_when_cheaper() {
        // Four blocks of k^T's columns (k's rows), each loaded, moved, multiplied and stored
        // on its own tiles; q loaded first and moved after the first block, once.
        let four = |src: &str| u64::from(!src.contains("__p3") || src.contains("__p4"));
        let src =
            kernel_source_costed(&q_k_transposed(), &A2A3, &Layouts::default(), &four).unwrap();
        expect_file!["../tests/snapshots/qk_column_blocks.cpp"].assert_eq(&src);
        assert_eq!(sync::unordered(&src, &A2A3), None);
        assert!(
            src.contains("Layout::DN> g_k_t__p1(p_k + 64 * p_k_rs, "),
            "{src}"
        );
        assert!(src.contains("> g_s__p1(p_s + 64, "), "{src}");
        let at = |s: &str| src.find(s).unwrap();
        assert!(at("TLOAD(m_q, g_q);") < at("TLOAD(m0__p0, "), "{src}");
        assert!(at("TMOV(r1__p0, m0__p0);") < at("TMOV(l1, m_q);"), "{src}");
        assert!(at("TMOV(l1, m_q);") < at("TMOV(r1__p1, m0__p1);"), "{src}");
    }

    #[test]
    fn the_matmul_in_row_blocks_when_cheaper() {
        // Two blocks of a's rows, each added into its rows of c; b loaded before them.
        let two = |src: &str| u64::from(!src.contains("m_a__p1") || src.contains("__p2"));
        let src = kernel_source_costed(&matmul_acc(), &A2A3, &Layouts::default(), &two).unwrap();
        assert_eq!(sync::unordered(&src, &A2A3), None);
        assert!(src.contains("> g_a__p1(p_a + 32 * p_a_rs, "), "{src}");
        assert!(
            src.contains("TileLeft<half, 32, 64, 32, 64> l1__p1; TASSIGN(l1__p1, 0x1000);"),
            "{src}"
        );
        assert!(
            src.contains("TSTORE<decltype(c1__p1), decltype(g_c__p1), AtomicType::AtomicAdd>(g_c__p1, c1__p1);"),
            "{src}"
        );
        let at = |s: &str| src.find(s).unwrap();
        assert!(
            at("TLOAD(m_b, g_b);") < at("TLOAD(m_a__p0, g_a__p0);"),
            "{src}"
        );
        assert!(at("TMOV(l1__p0, m_a__p0);") < at("TMOV(r1, m_b);"), "{src}");
    }

    /// Where the cost favours them, row blocks: each block's views start at its rows (the
    /// gain row, read whole, does not move), its buffers in its own half of UB, its flags on
    /// its own event ID.
    #[test]
    fn row_blocks_when_cheaper() {
        use DType::F32;
        let blocked = |src: &str| u64::from(!src.contains("buffer set 1"));
        let src =
            kernel_source_costed(&rmsnorm_gain(), &A2A3, &Layouts::default(), &blocked).unwrap();
        expect_file!["../tests/snapshots/rmsnorm_row_blocks.cpp"].assert_eq(&src);
        // Of equal costs, the fewest blocks; no block has fewer than 8 rows.
        assert_eq!(src.matches("// rows [").count(), 2);
        // Columns down the rows (a column sum) cannot be split by rows.
        let mut colsum = rmsnorm_gain();
        let KernelBody::Ops(ops) = &mut colsum.body else {
            unreachable!()
        };
        ops[1] = op("colsum", vec![Operand::Value(0)], t(1, 128, F32));
        assert_eq!(blocks::rows(&colsum), None);
        assert_eq!(blocks::rows(&rmsnorm_gain()), Some(16));
    }

    #[test]
    fn cube_kernel() {
        let src = kernel_source(&matmul_acc(), &A2A3, &Layouts::default()).unwrap();
        expect![[r#"
            // AICore kernel `matmul_acc` (cube), generated by `wsp emit` from its IR: PTO-ISA tiles placed in
            // UB/L1/L0 at planned offsets, one instruction sequence per op.
            #include <cmath>
            #include <cstdint>
            #include <pto/pto-inst.hpp>

            using namespace pto;

            extern "C" __global__ AICORE void wsp_aicore_matmul_acc(__gm__ half* p_a, __gm__ half* p_b, __gm__ float* p_c, int64_t p_a_rs, int64_t p_b_rs, int64_t p_c_rs)
            {
                GlobalTensor<half, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<1, 1, 1, -1, 1>> g_a(p_a, pto::Shape<1, 1, 1, 64, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_a_rs));
                GlobalTensor<half, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<1, 1, 1, -1, 1>> g_b(p_b, pto::Shape<1, 1, 1, 64, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_b_rs));
                GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<1, 1, 1, -1, 1>> g_c(p_c, pto::Shape<1, 1, 1, 64, 64>(), pto::Stride<1, 1, 1, -1, 1>(p_c_rs));
                Tile<TileType::Mat, half, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512> m_a; TASSIGN(m_a, 0x0);  // L1 [0, 8192)
                Tile<TileType::Mat, half, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512> m_b; TASSIGN(m_b, 0x2000);  // L1 [8192, 16384)
                TileLeft<half, 64, 64, 64, 64> l1; TASSIGN(l1, 0x0);  // L0A [0, 8192)
                TileRight<half, 64, 64, 64, 64> r1; TASSIGN(r1, 0x0);  // L0B [0, 8192)
                TileAcc<float, 64, 64, 64, 64> c1; TASSIGN(c1, 0x0);  // L0C [0, 16384)
                // %0 = load
                // the matmul accumulates into global memory: nothing to load
                // %1 = matmul
                TLOAD(m_a, g_a);
                TLOAD(m_b, g_b);
                set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0); wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
                TMOV(l1, m_a);
                TMOV(r1, m_b);
                set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0); wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
                TMATMUL(c1, l1, r1);
                // %2 = store
                set_flag(PIPE_M, PIPE_FIX, EVENT_ID0); wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
                TSTORE<decltype(c1), decltype(g_c), AtomicType::AtomicAdd>(g_c, c1);
                set_flag(PIPE_FIX, PIPE_S, EVENT_ID0); wait_flag(PIPE_FIX, PIPE_S, EVENT_ID0);
            }

            #if defined(__CPU_SIM)
            // The CPU kernel ABI (codegen/src/cpp.rs), so the host replay runs this kernel on
            // PTO-ISA's CPU simulation. Column strides are 1 for AICore views.
            extern "C" void wsp_kernel_matmul_acc(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc)
            {
                (void)wsp_sc;
                wsp_aicore_matmul_acc((half*)wsp_t[0], (half*)wsp_t[1], (float*)wsp_t[2], wsp_s[0], wsp_s[2], wsp_s[4]);
            }
            #endif
        "#]]
        .assert_eq(&src);
        assert_eq!(unit(&matmul_acc()), "cube");
    }

    #[test]
    fn matmul_stored_from_the_accumulator() {
        use DType::{F16, F32};
        let k = kernel(
            "shard_matmul",
            vec![
                tile("x", Direction::In, 64, 128, F16),
                tile("w", Direction::In, 128, 128, F16),
                tile("out", Direction::Out, 64, 128, F32),
            ],
            vec![
                op("matmul", vec![p("x"), p("w")], t(64, 128, F32)),
                op("store", vec![p("out"), Operand::Value(0)], ValueType::Unit),
            ],
        );
        let src = kernel_source(&k, &A2A3, &Layouts::default()).unwrap();
        let body: Vec<&str> = src
            .lines()
            .filter(|l| {
                l.contains("TLOAD")
                    || l.contains("TMOV")
                    || l.contains("TMATMUL")
                    || l.contains("TSTORE")
            })
            .map(str::trim)
            .collect();
        expect![[r#"
            [
                "TLOAD(m_x, g_x);",
                "TLOAD(m_w, g_w);",
                "TMOV(l0, m_x);",
                "TMOV(r0, m_w);",
                "TMATMUL(c0, l0, r0);",
                "TSTORE(g_out, c0);",
            ]
        "#]]
        .assert_debug_eq(&body);
    }

    /// The instructions and tile declarations of `k`'s A2/A3 source, without the flags.
    fn cube_lines(k: &Kernel) -> Vec<String> {
        let src = kernel_source(k, &A2A3, &Layouts::default()).unwrap();
        src.lines()
            .map(str::trim)
            .filter(|l| {
                ["Tile", "TLOAD", "TMOV", "TMATMUL", "TSTORE", "// added"]
                    .iter()
                    .any(|i| l.starts_with(i))
            })
            .map(|l| l.split("  //").next().unwrap_or(l).to_string())
            .collect()
    }

    #[test]
    fn the_cube_converts_into_l1_and_adds_a_bias_row_itself() {
        use DType::{F16, F32};
        let chain = kernel(
            "chain",
            vec![
                tile("x", Direction::In, 16, 32, F16),
                tile("w", Direction::In, 32, 32, F16),
                tile("out", Direction::Out, 16, 32, F32),
            ],
            vec![
                op("matmul", vec![p("x"), p("w")], t(16, 32, F32)),
                op(
                    "cast",
                    vec![Operand::Value(0), Operand::DType(F16)],
                    t(16, 32, F16),
                ),
                op("matmul", vec![Operand::Value(1), p("w")], t(16, 32, F32)),
                op("store", vec![p("out"), Operand::Value(2)], ValueType::Unit),
            ],
        );
        expect![[r#"
            [
                "Tile<TileType::Mat, half, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 512> m_x; TASSIGN(m_x, 0x800);",
                "Tile<TileType::Mat, half, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 512> m_w; TASSIGN(m_w, 0x0);",
                "TileLeft<half, 16, 32, 16, 32> l0; TASSIGN(l0, 0x0);",
                "TileRight<half, 32, 32, 32, 32> r0; TASSIGN(r0, 0x0);",
                "TileAcc<float, 16, 32, 16, 32> c0; TASSIGN(c0, 0x0);",
                "Tile<TileType::Mat, half, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 512> m1; TASSIGN(m1, 0x800);",
                "TileLeft<half, 16, 32, 16, 32> l2; TASSIGN(l2, 0x0);",
                "TileRight<half, 32, 32, 32, 32> r2; TASSIGN(r2, 0x0);",
                "TileAcc<float, 16, 32, 16, 32> c2; TASSIGN(c2, 0x0);",
                "TLOAD(m_x, g_x);",
                "TLOAD(m_w, g_w);",
                "TMOV(l0, m_x);",
                "TMOV(r0, m_w);",
                "TMATMUL(c0, l0, r0);",
                "TMOV(m1, c0);",
                "TMOV(l2, m1);",
                "TMOV(r2, m_w);",
                "TMATMUL(c2, l2, r2);",
                "TSTORE(g_out, c2);",
            ]
        "#]].assert_debug_eq(&cube_lines(&chain));
        let biased = kernel(
            "biased",
            vec![
                tile("x", Direction::In, 16, 32, F16),
                tile("w", Direction::In, 32, 32, F16),
                tile("b", Direction::In, 1, 32, F32),
                tile("out", Direction::Out, 16, 32, F32),
            ],
            vec![
                op("matmul", vec![p("x"), p("w")], t(16, 32, F32)),
                op("add", vec![p("b"), Operand::Value(0)], t(16, 32, F32)),
                op("store", vec![p("out"), Operand::Value(1)], ValueType::Unit),
            ],
        );
        expect![[r#"
            [
                "Tile<TileType::Mat, half, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 512> m_x; TASSIGN(m_x, 0x800);",
                "Tile<TileType::Mat, half, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 512> m_w; TASSIGN(m_w, 0x0);",
                "TileLeft<half, 16, 32, 16, 32> l0; TASSIGN(l0, 0x0);",
                "TileRight<half, 32, 32, 32, 32> r0; TASSIGN(r0, 0x0);",
                "TileAcc<float, 16, 32, 16, 32> c0; TASSIGN(c0, 0x0);",
                "Tile<TileType::Mat, float, 1, 32, BLayout::RowMajor, 1, 32> b0_row; TASSIGN(b0_row, 0xc00);",
                "Tile<TileType::Bias, float, 1, 32, BLayout::RowMajor, 1, 32> b0; TASSIGN(b0, 0x0);",
                "TLOAD(m_x, g_x);",
                "TLOAD(m_w, g_w);",
                "TLOAD(b0_row, g_b);",
                "TMOV(l0, m_x);",
                "TMOV(r0, m_w);",
                "TMOV(b0, b0_row);",
                "TMATMUL_BIAS(c0, l0, r0, b0);",
                "// added by the matmul, which starts from the bias row",
                "TSTORE(g_out, c0);",
            ]
        "#]].assert_debug_eq(&cube_lines(&biased));
    }

    /// Each of two biased matmuls starts from its own bias row.
    #[test]
    fn every_biased_matmul_gets_its_bias() {
        use DType::{F16, F32};
        let k = kernel(
            "two",
            vec![
                tile("x", Direction::In, 16, 32, F16),
                tile("w", Direction::In, 32, 32, F16),
                tile("b", Direction::In, 1, 32, F32),
                tile("c", Direction::In, 1, 32, F32),
                tile("y", Direction::Out, 16, 32, F32),
                tile("z", Direction::Out, 16, 32, F32),
            ],
            vec![
                op("matmul", vec![p("x"), p("w")], t(16, 32, F32)),
                op("add", vec![Operand::Value(0), p("b")], t(16, 32, F32)),
                op("store", vec![p("y"), Operand::Value(1)], ValueType::Unit),
                op("matmul", vec![p("x"), p("w")], t(16, 32, F32)),
                op("add", vec![Operand::Value(3), p("c")], t(16, 32, F32)),
                op("store", vec![p("z"), Operand::Value(4)], ValueType::Unit),
            ],
        );
        let lines = cube_lines(&k);
        let biased: Vec<&String> = lines.iter().filter(|l| l.starts_with("TMATMUL")).collect();
        assert_eq!(
            biased,
            [
                "TMATMUL_BIAS(c0, l0, r0, b0);",
                "TMATMUL_BIAS(c3, l3, r3, b3);"
            ],
            "{lines:#?}"
        );
    }

    #[test]
    fn errors_name_the_op_or_memory() {
        use DType::F32;
        let k = kernel(
            "waves",
            vec![
                tile("x", Direction::In, 16, 16, F32),
                tile("y", Direction::Out, 16, 16, F32),
            ],
            vec![
                op("sin", vec![p("x")], t(16, 16, F32)),
                op("store", vec![p("y"), Operand::Value(0)], ValueType::Unit),
            ],
        );
        let err = kernel_source(&k, &A2A3, &Layouts::default()).unwrap_err();
        expect![
            "op `sin` (%0) has no AICore form: PTO-ISA has no sine instruction on the vector unit"
        ]
        .assert_eq(&err.message);
        assert_eq!(err.op, Some(0));
        let big = kernel(
            "big",
            vec![
                tile("x", Direction::In, 256, 256, F32),
                tile("y", Direction::Out, 256, 256, F32),
            ],
            vec![
                op("exp", vec![p("x")], t(256, 256, F32)),
                op("store", vec![p("y"), Operand::Value(0)], ValueType::Unit),
            ],
        );
        expect!["kernel `big`: UB overflows at %0: 524288 bytes needed, 188416 available"]
            .assert_eq(
                &kernel_source(&big, &A2A3, &Layouts::default())
                    .unwrap_err()
                    .message,
            );
        let custom = Kernel {
            name: "custom".into(),
            params: Vec::new(),
            body: KernelBody::Cpp {
                code: String::new(),
                includes: Vec::new(),
                first_line: 1,
            },
            loops: Vec::new(),
        };
        let err = kernel_source(&custom, &A2A3, &Layouts::default()).unwrap_err();
        assert!(err.message.contains("cpp_src") && err.op.is_none());
    }

    #[test]
    fn every_planned_buffer_is_declared() {
        for k in [rmsnorm(), matmul_acc()] {
            let src = kernel_source(&k, &A2A3, &Layouts::default()).unwrap();
            let plan = buffers::plan(&k, &A2A3.on_chip).unwrap();
            for b in &plan.buffers {
                assert!(src.contains(&format!(" {};", buffer_name(&b.role))));
            }
        }
    }
}
