//! The WSP program IR: plain data that the analyzer lowers a compiled program to and that
//! codegen and the runtime consume; they know nothing else about a program. Serializable
//! (serde) and printable as text (`Display`) for snapshots.
//!
//! A `Program` holds the kernels (SSA ops on tiles), the tensors, axes and channels, each
//! workload call's plan (loops and their kinds, predicates and keys as `ScalarExpr`, tasks
//! with views as affine maps of loop variables), their composition, and the schedule.

mod actions;
mod affine;
pub mod arch;
pub mod buffers;
pub mod explore;
pub mod instructions;
pub mod kernel;
pub mod layout;
pub mod memory;
pub mod mixed;
pub mod ops;
pub mod pipeline;
pub mod plan;
pub mod pyformat;
mod scalar;
pub mod schedule;
pub mod split;
pub mod text;
mod types;
mod units;
pub mod widen;

use serde::{Deserialize, Serialize};

pub use crate::actions::{
    Action, FormatPiece, JsonValue, KnownJson, STATS_FIELDS, Shown, TRACE_SUMMARY_FIELDS,
    TraceLevel, TraceQuery,
};
pub use crate::affine::Affine;
pub use crate::kernel::Kernel;
pub use crate::plan::{Axis, Channel, Composite, Tensor, Workload};
pub use crate::scalar::{ScalarExpr, ScalarOp};
pub use crate::schedule::{Directive, Target};
pub use crate::types::{DType, TileType, shape_text};

/// The IR's format version: bumped on any change to these types, checked by consumers.
pub const VERSION: u32 = 3;

/// The original's program symbol for the simulated latency of a channel hand-off. Channels
/// here deliver a task the moment it finishes, so 0, its default, is the only value accepted.
pub const CHANNEL_LATENCY_SYMBOL: &str = "__pto_wsp_channel_latency_cycles";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    pub version: u32,
    /// The module-level name the compiled program is bound to.
    pub name: String,
    pub target: Target,
    /// Run-time symbols (DenseDyn axes) with their defaults: bound at `execute` or `--bind`.
    pub symbols: Vec<Symbol>,
    pub tensors: Vec<Tensor>,
    pub axes: Vec<Axis>,
    pub channels: Vec<Channel>,
    /// Every kernel a task of the program runs.
    pub kernels: Vec<Kernel>,
    /// Each workload call of the composition, in the order `root` names them.
    pub workloads: Vec<Workload>,
    pub root: Composite,
    pub schedule: Vec<Directive>,
    /// `w.with_config(best_config)` and `auto_schedule(w)`: the exploration (by
    /// [`explore::Exploration::id`]) whose best configuration is applied to `schedule` when
    /// the program runs.
    #[serde(default)]
    pub explored: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    pub default: u64,
}
