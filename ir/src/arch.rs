//! The Ascend AICore architectures `wsp emit` writes kernels for, as presets in the manner of
//! cranelift's ISA presets: one value per architecture with its on-chip sizes and the
//! features that decide how a kernel is lowered. Everything that differs between parts reads
//! it from here (the kernel split, buffer planning, codegen, the analyzer's NPU checks).

use crate::buffers::OnChip;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// As users and docs name it.
    pub name: &'static str,
    /// The bisheng `--cce-aicore-arch` of its vector and cube cores.
    pub aicore_vec: &'static str,
    pub aicore_cube: &'static str,
    /// PTO-ISA's `__NPU_ARCH__` for it.
    pub npu_arch: u32,
    /// The memories a kernel's planned tiles may use. UB stops below any region the
    /// instructions use as hidden scratch.
    pub on_chip: OnChip,
    pub features: Features,
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
    npu_arch: 2201,
    on_chip: OnChip {
        ub: 184 * 1024,
        l1: 512 * 1024,
        l0a: 64 * 1024,
        l0b: 64 * 1024,
        l0c: 128 * 1024,
    },
    features: Features {
        l0c_to_ub: false,
        ub_to_l1: false,
    },
};
