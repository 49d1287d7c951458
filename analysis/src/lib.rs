//! The WSP analyzer: an incremental (salsa) database over a workspace's files that finds
//! every diagnostic of docs/language.md — names, tile types, workload tasks and views, races,
//! channels, layouts, schedule applicability — the facts an editor shows (`hover`), and each
//! compiled program lowered to `wsp_ir` (`lower_file`).
//!
//! Data flow: `File` text → `parse` → `module_items` (one item per top-level statement) →
//! `module_scope` (names) → `item_value` (module-level values), `kernel_signature`,
//! `kernel_body` (tile types), `workload_generic` / `workload_instance` (plans of loops and
//! tasks) → `program_checks` (schedules), `file_dependencies` (races, channels) →
//! `file_diagnostics`; and, on a file without errors, → `lower_program` → `lower_file`.

mod check;
mod checks;
mod completion;
mod db;
mod diagnostics;
mod eval;
mod files;
mod highlight;
mod hover;
mod inlay_hints;
mod items;
mod kernels;
mod lower;
mod names;
pub use wsp_ir::ops;
mod symbols;
mod types;
mod values;
pub mod vocabulary;
mod work;
mod workloads;

pub use crate::check::file_diagnostics;
pub use crate::completion::{
    Completion, CompletionKind, SignatureHelp, completions, signature_help,
};
pub use crate::db::Database;
pub use crate::diagnostics::{
    Code, Diagnostic, FileFix, SHOWN_PER_FILE, Severity, not_shown, shown,
};
pub use crate::files::{File, Workspace, WorkspaceConfig, wsp_files};
pub use crate::highlight::{FoldKind, Highlight, TokenClass, folding_ranges, highlights};
pub use crate::hover::{Hover, hover};
pub use crate::inlay_hints::{InlayHint, InlayKind, inlay_hints};
pub use crate::lower::{LoweredFile, lower_file, lower_program};
pub use wsp_ir::schedule::Target;
pub use crate::symbols::{
    FileSymbol, NameRef, SymbolKind, file_symbols, name_at, references, rename,
};
pub use crate::types::{DType, TileType};
pub use crate::work::steps as work_steps;
pub use wsp_ir::{Action, Shown};
pub use wsp_syntax::{TextRange, TextSize};
