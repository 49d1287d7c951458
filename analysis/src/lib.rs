//! The WSP semantic analyzer: an incremental (salsa) database over a workspace's files that
//! finds every diagnostic of docs/language.md (names, tile types, workload tasks and views,
//! races, channels, layouts, schedule applicability) and lowers each compiled program to
//! `wsp_ir` (`lower_file`). Editor features live in `wsp-ide`, which reads the checker only
//! through `semantic`.
//!
//! Layers, each using only those above it:
//! - leaf facts: `db`, `work` (the step counter), `files`, `items` (one item per top-level
//!   statement), `diagnostics`, `selection` (what `wsp.toml` and the command line report),
//!   `types`, `vocabulary` (the builtin table), `symbols` (what a name refers to), `values`,
//!   `names` (module scope);
//! - `eval`: the evaluator of module-level values, split by concern;
//! - `kernels` (signatures, bodies, their IR) and `workloads` (plans of loops and tasks);
//! - `checks`: flow and program rules, one file each;
//! - `check` (`file_diagnostics`), `suppress` (`# noqa` comments), `lower` (`lower_file`) and
//!   `semantic` (the IDE's door).

mod check;
mod checks;
mod data_files;
mod db;
mod diagnostics;
mod eval;
mod files;
mod items;
mod kernels;
mod lower;
mod names;
mod selection;
pub mod semantic;
mod suppress;
mod symbols;
mod types;
mod values;
pub mod vocabulary;
mod work;
mod workloads;

pub use crate::check::lower_file;
pub use crate::check::{analyze_items_in_parallel, binding_diagnostics, file_diagnostics};
pub use crate::data_files::{
    NpyHeader, data_file_diagnostics, diagnostics_with_data_files, read_npy_header,
    unsuppressed_diagnostics,
};
pub use crate::db::Database;
pub use crate::diagnostics::{
    Applicability, Code, Diagnostic, FileFix, SHOWN_PER_FILE, Severity, applicable_fixes,
    apply_edits, not_shown, shown,
};
pub use crate::files::{File, Workspace, WorkspaceConfig, wsp_files};
pub use crate::lower::{LoweredFile, lower_program};
pub use crate::selection::{Selection, Selectors};
pub use crate::suppress::{apply_suppressions, suppress_edit};
pub use crate::types::{DType, TileType};
pub use crate::work::steps as work_steps;
pub use wsp_ir::schedule::Target;
pub use wsp_ir::{Action, Shown, ops};
pub use wsp_syntax::{TextRange, TextSize};
