//! The Ascend AICore architectures `wsp emit` writes kernels for, as presets in the manner of
//! cranelift's ISA presets: one value per architecture with its on-chip sizes and the
//! features that decide how a kernel is lowered. Everything that differs between parts reads
//! it from here (the kernel split, buffer planning, codegen, the analyzer's NPU checks).

/// The on-chip memories of one AICore, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnChip {
    /// Unified buffer: vector tiles.
    pub ub: u64,
    /// L1 (cube buffer): matmul operands staged from global memory or UB.
    pub l1: u64,
    /// L0A: the cube's left operand.
    pub l0a: u64,
    /// L0B: the cube's right operand.
    pub l0b: u64,
    /// L0C: the cube's accumulator.
    pub l0c: u64,
    /// The bias table: the row `TMATMUL_BIAS` starts the accumulator from.
    pub bias_table: u64,
}

/// What an architecture's AICores can do that another's cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// `TMOV` from an `Acc` tile (L0C) to a `Vec` tile (UB): a matmul result reaches the
    /// vector unit on the core.
    pub l0c_to_ub: bool,
    /// `TMOV` from a `Vec` tile (UB) to a `Mat` tile (L1): a vector result feeds the cube on
    /// the core.
    pub ub_to_l1: bool,
}

/// One AICore architecture.
#[derive(Clone, Copy)]
pub struct Arch {
    /// As users and docs name it.
    pub name: &'static str,
    /// The bisheng `--cce-aicore-arch` of its vector and cube cores.
    pub aicore_vec: &'static str,
    pub aicore_cube: &'static str,
    /// ... and of a mixed kernel: its cube core and their vector cores in one launch.
    pub aicore_mix: &'static str,
    /// PTO-ISA's `__NPU_ARCH__` for it.
    pub npu_arch: u32,
    /// The memories a kernel's planned tiles may use. UB stops below any region the
    /// instructions use as hidden scratch.
    pub on_chip: OnChip,
    /// Where instructions use UB as scratch they do not declare, if anywhere: planned tiles
    /// end below it.
    pub hidden_ub_scratch: Option<u64>,
    pub features: Features,
    /// Event IDs per pipe pair (`EVENT_ID0`, ...): each buffer in flight between two pipes
    /// signals on its own, so this bounds a pipeline's depth.
    pub events: u32,
    /// What its instructions need that its headers do not enforce.
    pub rules: &'static [Rule],
}

impl Arch {
    /// Whether one kernel can hold both cube and vector work: its values move between L0C,
    /// UB and L1 on the core. Where it cannot, such a kernel is split (`crate::split`).
    pub fn mixes_units(&self) -> bool {
        self.features.l0c_to_ub && self.features.ub_to_l1
    }
}

/// Ascend 910B (A2/A3, `dav-c220`). Sizes as PTO-ISA's `buffer_limits.hpp` states them, except
/// UB: the A2/A3 forms of `TROWEXPAND*` and other instructions use UB from `TMP_UB_OFFSET`
/// (184 KiB, `include/pto/npu/a2a3/`) as scratch they do not declare, so planned tiles stop
/// there. Its cube and vector cores are separate (AIC and AIV): no L0C→UB or UB→L1 move.
pub const A2A3: Arch = Arch {
    name: "A2/A3",
    aicore_vec: "dav-c220-vec",
    aicore_cube: "dav-c220-cube",
    aicore_mix: "dav-c220",
    npu_arch: 2201,
    on_chip: OnChip {
        ub: 184 * 1024,
        l1: 512 * 1024,
        l0a: 64 * 1024,
        l0b: 64 * 1024,
        l0c: 128 * 1024,
        bias_table: 1024,
    },
    hidden_ub_scratch: Some(184 * 1024),
    features: Features {
        l0c_to_ub: false,
        ub_to_l1: false,
    },
    // EVENT_ID0..EVENT_ID7, as `include/pto/npu/a2a3/` uses them.
    events: 8,
    rules: A2A3_RULES,
};

/// What an instruction needs of an architecture, one row per PTO-ISA instruction `wsp emit`
/// writes (by its name in the emitted code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub name: &'static str,
    /// PTO-ISA implements it for A2/A3 (`include/pto/npu/a2a3/`).
    pub a2a3: bool,
    /// Its destination must not share bytes with a source: the A2/A3 form writes the
    /// destination before it has read every source (`TDIVS(dst, s, src)` broadcasts `s` into
    /// `dst` first; `TRECIP` is that with 1; `TCVT` is not in place on A3; `TSCATTER`
    /// zero-fills its destination first).
    pub no_alias: bool,
    /// Takes bf16 operands on A2/A3 (data movement and conversion; the vector math does not).
    pub bf16: bool,
    /// The A2/A3 form of the three-operand call with a column (`[M,1]`, column-major) operand
    /// uses UB from `TMP_UB_OFFSET` as scratch it does not declare (`TRowExpandBinOp.hpp`).
    pub hidden_scratch: bool,
    /// Its A2/A3 form reads or writes UB from the scalar pipe, element by element
    /// (`TScatter.hpp`; `TRowExpand.hpp` but for one 32-byte block per row): correct, slow,
    /// and run for real by PTO-ISA's cost-model build, whose UB addresses are not memory, so
    /// Perf-Sim cannot time a kernel using it.
    pub scalar_loop: bool,
    /// Reduces each row to one element (`[M,N]` to `[M,1]`): its cost grows with the
    /// reduction across a row's repeats more than with its rows (Perf-Sim, `ragged_decode`'s
    /// `finish`: TROWSUM over `[8,64]` f32 51 cycles, over `[16,64]` 51).
    pub row_reduction: bool,
}

const fn ins(name: &'static str) -> Instruction {
    Instruction {
        name,
        a2a3: true,
        no_alias: false,
        bf16: false,
        hidden_scratch: false,
        scalar_loop: false,
        row_reduction: false,
    }
}

const fn row_reduction(mut i: Instruction) -> Instruction {
    i.row_reduction = true;
    i
}

const fn no_alias(mut i: Instruction) -> Instruction {
    i.no_alias = true;
    i
}

const fn bf16(mut i: Instruction) -> Instruction {
    i.bf16 = true;
    i
}

const fn scratch(mut i: Instruction) -> Instruction {
    i.hidden_scratch = true;
    i
}

const fn scalar_loop(mut i: Instruction) -> Instruction {
    i.scalar_loop = true;
    i
}

const fn a5_only(mut i: Instruction) -> Instruction {
    i.a2a3 = false;
    i
}

/// Every instruction the emitter writes.
pub const INSTRUCTIONS: &[Instruction] = &[
    bf16(ins("TLOAD")),
    bf16(ins("TSTORE")),
    bf16(ins("TMOV")),
    ins("TMATMUL"),
    ins("TMATMUL_ACC"),
    ins("TMATMUL_BIAS"),
    ins("TADD"),
    ins("TSUB"),
    ins("TMUL"),
    ins("TDIV"),
    ins("TMAX"),
    ins("TMIN"),
    ins("TADDS"),
    ins("TSUBS"),
    ins("TMULS"),
    no_alias(ins("TDIVS")),
    ins("TMAXS"),
    ins("TMINS"),
    ins("TEXP"),
    ins("TLOG"),
    ins("TSQRT"),
    ins("TRSQRT"),
    no_alias(ins("TRECIP")),
    ins("TRELU"),
    ins("TNEG"),
    ins("TABS"),
    row_reduction(ins("TROWSUM")),
    row_reduction(ins("TROWMAX")),
    ins("TCOLSUM"),
    ins("TCOLMAX"),
    scalar_loop(bf16(ins("TROWEXPAND"))),
    bf16(ins("TCOLEXPAND")),
    scratch(ins("TROWEXPANDADD")),
    scratch(ins("TROWEXPANDSUB")),
    scratch(ins("TROWEXPANDMUL")),
    scratch(ins("TROWEXPANDDIV")),
    scratch(ins("TROWEXPANDMAX")),
    scratch(ins("TROWEXPANDMIN")),
    ins("TCOLEXPANDADD"),
    ins("TCOLEXPANDSUB"),
    ins("TCOLEXPANDMUL"),
    ins("TCOLEXPANDDIV"),
    ins("TCOLEXPANDMAX"),
    ins("TCOLEXPANDMIN"),
    bf16(no_alias(ins("TCVT"))),
    bf16(ins("TTRANS")),
    bf16(ins("TEXPANDS")),
    bf16(ins("TGATHER")),
    scalar_loop(bf16(no_alias(ins("TSCATTER")))),
    bf16(ins("TOR")),
    scalar_loop(ins("TCI")),
    ins("TSORT32"),
    a5_only(ins("TINTERLEAVE")),
    a5_only(ins("TDEINTERLEAVE")),
];

pub fn instruction(name: &str) -> Option<&'static Instruction> {
    INSTRUCTIONS.iter().find(|i| i.name == name)
}

/// The kind of on-chip tile (PTO-ISA's `TileType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileKind {
    /// UB.
    Vec,
    /// L1.
    Mat,
    /// L0A.
    Left,
    /// L0B.
    Right,
    /// L0C.
    Acc,
    /// The bias table.
    Bias,
}

/// How a tile's elements are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileLayout {
    /// By rows (ND): a UB tile, an L1 row staged for the bias table, the bias table's row.
    RowMajor,
    /// A UB tile by columns (DN).
    ColMajor,
    /// An L1 tile of row-major fractals in column order (NZ), loaded from an ND tensor.
    Nz,
    /// An L1 tile of column-major fractals in row order (ZN), loaded from a DN tensor.
    Zn,
    /// The cube's own operand and accumulator layouts.
    Cube,
}

/// How a global tensor is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GmLayout {
    /// Row-major: contiguous columns, a row stride.
    Nd,
    /// Column-major: contiguous rows, a column stride.
    Dn,
}

/// One operand of an emitted instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Tile {
        name: String,
        kind: TileKind,
        layout: TileLayout,
        dtype: crate::DType,
        /// The laid-out shape and the valid one.
        rows: u64,
        cols: u64,
        valid: (u64, u64),
        /// Byte range in the tile's memory.
        offset: u64,
        bytes: u64,
    },
    Global {
        name: String,
        layout: GmLayout,
        dtype: crate::DType,
    },
    /// An immediate or scalar register.
    Scalar(String),
}

impl Operand {
    fn dtype(&self) -> Option<crate::DType> {
        match self {
            Operand::Tile { dtype, .. } | Operand::Global { dtype, .. } => Some(*dtype),
            Operand::Scalar(_) => None,
        }
    }

    fn bytes_range(&self) -> Option<(TileKind, u64, u64)> {
        match self {
            Operand::Tile {
                kind,
                offset,
                bytes,
                ..
            } => Some((*kind, *offset, offset + bytes)),
            _ => None,
        }
    }

    fn name(&self) -> &str {
        match self {
            Operand::Tile { name, .. } | Operand::Global { name, .. } => name,
            Operand::Scalar(s) => s,
        }
    }
}

/// One emitted instruction: its name and operands in the order written (the destination
/// first, as PTO-ISA writes them).
#[derive(Debug, Clone, PartialEq)]
pub struct Instr {
    pub name: String,
    pub operands: Vec<Operand>,
}

/// What a kernel as a whole has, which some rules need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelFacts {
    /// The end of the highest UB tile.
    pub ub_end: u64,
}

/// One rule of an architecture that PTO-ISA's headers do not enforce, or enforce only with
/// a `static_assert` deep in a template: checked against every instruction `wsp emit` writes.
pub struct Rule {
    pub id: &'static str,
    /// What it says, for messages and docs.
    pub doc: &'static str,
    pub check: fn(&Arch, &Instr, &KernelFacts) -> Option<String>,
}

/// A2/A3 (`include/pto/npu/a2a3/`, PTO-ISA d07bd4b6).
pub const A2A3_RULES: &[Rule] = &[
    Rule {
        id: "a2a3-instruction",
        doc: "the instruction has an A2/A3 form (TINTERLEAVE and TDEINTERLEAVE are A5's only)",
        check: |_, i, _| match instruction(&i.name) {
            None => Some(format!("`{}` is not in the instruction table", i.name)),
            Some(row) if !row.a2a3 => Some(format!("`{}` has no A2/A3 form", i.name)),
            Some(_) => None,
        },
    },
    Rule {
        id: "tmov-path",
        doc: "TMOV moves L1→L0A/L0B/bias table, UB→UB or L0C→L1 only: no L0C→UB, no UB→L1 (TMov.hpp)",
        check: |_, i, _| {
            if i.name != "TMOV" {
                return None;
            }
            let kind = |o: &Operand| match o {
                Operand::Tile { kind, .. } => Some(*kind),
                _ => None,
            };
            let (dst, src) = (
                i.operands.first().and_then(kind),
                i.operands.get(1).and_then(kind),
            );
            use TileKind::*;
            match (src, dst) {
                (Some(Mat), Some(Left | Right | Bias))
                | (Some(Vec), Some(Vec))
                | (Some(Acc), Some(Mat)) => None,
                (s, d) => Some(format!("TMOV from {s:?} to {d:?} has no A2/A3 path")),
            }
        },
    },
    Rule {
        id: "no-alias",
        doc: "TDIVS(dst, scalar, src), TRECIP, TCVT and TSCATTER write dst before reading every source: dst must not share bytes with one",
        check: |_, i, _| {
            if !instruction(&i.name).is_some_and(|r| r.no_alias) {
                return None;
            }
            let (dst, srcs) = i.operands.split_first()?;
            let (dk, dlo, dhi) = dst.bytes_range()?;
            srcs.iter().find_map(|s| {
                let (sk, slo, shi) = s.bytes_range()?;
                (sk == dk && slo < dhi && dlo < shi).then(|| {
                    format!(
                        "{}: its destination `{}` shares bytes with its source `{}`",
                        i.name,
                        dst.name(),
                        s.name()
                    )
                })
            })
        },
    },
    Rule {
        id: "hidden-scratch",
        doc: "the three-operand TROWEXPAND* with a column operand uses UB from TMP_UB_OFFSET (184 KiB) as scratch: no tile may lie there",
        check: |arch, i, facts| {
            let scratch = arch.hidden_ub_scratch?;
            let uses = instruction(&i.name).is_some_and(|r| r.hidden_scratch)
                && i.operands.len() == 3
                && i.operands.iter().any(|o| {
                    matches!(
                        o,
                        Operand::Tile {
                            layout: TileLayout::ColMajor,
                            ..
                        }
                    )
                });
            (uses && facts.ub_end > scratch).then(|| {
                format!(
                    "{} uses UB from {scratch} bytes as scratch, and the kernel's tiles reach {}",
                    i.name, facts.ub_end
                )
            })
        },
    },
    Rule {
        id: "load-store-layout",
        doc: "TLOAD/TSTORE pair an ND tensor with a row-major UB or L1 tile or an NZ L1 tile, a DN tensor with a column-major UB tile or a ZN L1 tile; an L0C tile stores to ND",
        check: |_, i, _| {
            if i.name != "TLOAD" && i.name != "TSTORE" {
                return None;
            }
            let (tile, gm) = match (i.operands.first()?, i.operands.get(1)?) {
                (t @ Operand::Tile { .. }, g @ Operand::Global { .. })
                | (g @ Operand::Global { .. }, t @ Operand::Tile { .. }) => (t, g),
                _ => return Some(format!("{} of no tile and global tensor", i.name)),
            };
            let (Operand::Tile { kind, layout, .. }, Operand::Global { layout: gl, .. }) =
                (tile, gm)
            else {
                return None;
            };
            use {GmLayout::*, TileKind as K, TileLayout as L};
            let ok = matches!(
                (kind, layout, gl),
                (K::Vec, L::RowMajor, Nd)
                    | (K::Vec, L::ColMajor, Dn)
                    | (K::Mat, L::Nz | L::RowMajor, Nd)
                    | (K::Mat, L::Zn, Dn)
                    | (K::Acc, _, Nd)
            );
            (!ok).then(|| {
                format!(
                    "{} pairs a {gl:?} tensor `{}` with a {kind:?} {layout:?} tile `{}`",
                    i.name,
                    gm.name(),
                    tile.name()
                )
            })
        },
    },
    Rule {
        id: "bf16-vector",
        doc: "A2/A3 vector math takes no bf16: only data movement, TCVT, TGATHER and the cube do",
        check: |_, i, _| {
            let row = instruction(&i.name)?;
            let cube = i.name.starts_with("TMATMUL");
            let bf = i
                .operands
                .iter()
                .any(|o| o.dtype() == Some(crate::DType::BF16));
            (bf && !row.bf16 && !cube).then(|| format!("{} on bf16 has no A2/A3 form", i.name))
        },
    },
    Rule {
        id: "cube-padding",
        doc: "cube tiles of 1-byte elements have columns padded to 32 (16 for wider ones)",
        check: |_, i, _| {
            i.operands.iter().find_map(|o| match o {
                Operand::Tile {
                    kind: TileKind::Mat | TileKind::Left | TileKind::Right,
                    dtype,
                    cols,
                    name,
                    ..
                } if dtype.size_bytes() == 1 && cols % 32 != 0 => Some(format!(
                    "{}: the 1-byte cube tile `{name}` has {cols} columns, not a multiple of 32",
                    i.name
                )),
                _ => None,
            })
        },
    },
    Rule {
        id: "gather-packed",
        doc: "TGATHER by mask packs its result's rows: the destination's rows are whole 32-byte blocks with no padding",
        check: |_, i, _| {
            if i.name != "TGATHER" {
                return None;
            }
            match i.operands.first()? {
                Operand::Tile {
                    cols, valid, name, ..
                } if *cols != valid.1 => Some(format!(
                    "TGATHER into `{name}`, whose rows of {} elements are padded to {cols}",
                    valid.1
                )),
                _ => None,
            }
        },
    },
];

/// The rules `instr` breaks on `arch`, each with what is wrong.
pub fn broken_rules(
    arch: &Arch,
    instr: &Instr,
    facts: &KernelFacts,
) -> Vec<(&'static str, String)> {
    arch.rules
        .iter()
        .filter_map(|r| Some((r.id, (r.check)(arch, instr, facts)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType::{self, BF16, F16, F32, I8};

    fn tile(name: &str, kind: TileKind, layout: TileLayout, dtype: DType, at: u64) -> Operand {
        Operand::Tile {
            name: name.into(),
            kind,
            layout,
            dtype,
            rows: 16,
            cols: 16,
            valid: (16, 16),
            offset: at,
            bytes: 16 * 16 * dtype.size_bytes() as u64,
        }
    }

    fn vec(name: &str, at: u64) -> Operand {
        tile(name, TileKind::Vec, TileLayout::RowMajor, F32, at)
    }

    fn gm(name: &str, layout: GmLayout) -> Operand {
        Operand::Global {
            name: name.into(),
            layout,
            dtype: F32,
        }
    }

    fn instr(name: &str, operands: Vec<Operand>) -> Instr {
        Instr {
            name: name.into(),
            operands,
        }
    }

    /// The ids of the rules `i` breaks on A2/A3.
    fn broken(i: &Instr, ub_end: u64) -> Vec<&'static str> {
        broken_rules(&A2A3, i, &KernelFacts { ub_end })
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    #[test]
    fn every_rule_catches_its_case_and_passes_the_right_form() {
        use TileKind::*;
        use TileLayout::*;
        let s = || Operand::Scalar("2.0f".into());
        let col = |name: &str, at| Operand::Tile {
            name: name.into(),
            kind: Vec,
            layout: ColMajor,
            dtype: F32,
            rows: 16,
            cols: 1,
            valid: (16, 1),
            offset: at,
            bytes: 64,
        };
        let cases: std::vec::Vec<(&str, Instr, u64, Instr)> = vec![
            (
                "a2a3-instruction",
                instr(
                    "TINTERLEAVE",
                    vec![vec("d", 0), vec("a", 1024), vec("b", 2048)],
                ),
                0,
                instr("TSCATTER", vec![vec("d", 0), vec("a", 1024)]),
            ),
            (
                "tmov-path",
                instr("TMOV", vec![vec("v", 0), tile("c", Acc, Cube, F32, 0)]),
                0,
                instr(
                    "TMOV",
                    vec![tile("l", Left, Cube, F16, 0), tile("m", Mat, Nz, F16, 0)],
                ),
            ),
            (
                "no-alias",
                instr("TDIVS", vec![vec("t", 0), s(), vec("t", 0)]),
                0,
                instr("TDIVS", vec![vec("u", 1024), s(), vec("t", 0)]),
            ),
            (
                "hidden-scratch",
                instr(
                    "TROWEXPANDMUL",
                    vec![vec("d", 0), vec("x", 1024), col("r", 2048)],
                ),
                190 * 1024,
                instr(
                    "TROWEXPANDMUL",
                    vec![vec("d", 0), vec("x", 1024), col("r", 2048)],
                ),
            ),
            (
                "load-store-layout",
                instr("TLOAD", vec![col("v", 0), gm("g", GmLayout::Nd)]),
                0,
                instr("TLOAD", vec![col("v", 0), gm("g", GmLayout::Dn)]),
            ),
            (
                "bf16-vector",
                instr(
                    "TEXP",
                    vec![
                        tile("d", Vec, RowMajor, BF16, 0),
                        tile("x", Vec, RowMajor, BF16, 1024),
                    ],
                ),
                0,
                instr(
                    "TCVT",
                    vec![vec("d", 0), tile("x", Vec, RowMajor, BF16, 1024)],
                ),
            ),
            (
                "cube-padding",
                instr(
                    "TMOV",
                    vec![tile("l", Left, Cube, I8, 0), tile("m", Mat, Nz, I8, 0)],
                ),
                0,
                instr(
                    "TMOV",
                    vec![
                        Operand::Tile {
                            name: "l".into(),
                            kind: Left,
                            layout: Cube,
                            dtype: I8,
                            rows: 16,
                            cols: 32,
                            valid: (16, 32),
                            offset: 0,
                            bytes: 512,
                        },
                        Operand::Tile {
                            name: "m".into(),
                            kind: Mat,
                            layout: Nz,
                            dtype: I8,
                            rows: 16,
                            cols: 32,
                            valid: (16, 32),
                            offset: 0,
                            bytes: 512,
                        },
                    ],
                ),
            ),
            (
                "gather-packed",
                instr(
                    "TGATHER",
                    vec![
                        Operand::Tile {
                            name: "d".into(),
                            kind: Vec,
                            layout: RowMajor,
                            dtype: F32,
                            rows: 16,
                            cols: 8,
                            valid: (16, 4),
                            offset: 0,
                            bytes: 512,
                        },
                        vec("x", 1024),
                    ],
                ),
                0,
                instr("TGATHER", vec![vec("d", 0), vec("x", 1024)]),
            ),
        ];
        let ids: std::vec::Vec<&str> = A2A3.rules.iter().map(|r| r.id).collect();
        let covered: std::vec::Vec<&str> = cases.iter().map(|c| c.0).collect();
        assert_eq!(ids, covered, "one case per rule, in the table's order");
        for (id, bad, ub_end, good) in &cases {
            assert_eq!(broken(bad, *ub_end), [*id], "{id} on {bad:?}");
            let ub = if *id == "hidden-scratch" {
                100 * 1024
            } else {
                *ub_end
            };
            assert!(
                broken(good, ub).is_empty(),
                "{id} on {good:?}: {:?}",
                broken(good, ub)
            );
        }
    }

    #[test]
    fn planned_tiles_stop_below_the_hidden_scratch() {
        assert!(A2A3.on_chip.ub <= A2A3.hidden_ub_scratch.unwrap());
        assert!(!A2A3.mixes_units());
    }
}
