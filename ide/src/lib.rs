//! WSP editor features: what the language server and the notebook kernel show beside the
//! diagnostics. One file per feature; each reads the checker only through
//! `wsp_analysis::semantic`, so the features never evaluate or check anything themselves.

mod completion;
mod fixes;
mod folding;
mod highlight;
mod hover;
mod inlay_hints;
mod navigation;
mod signature_help;
mod symbols;

pub use crate::completion::{Completion, CompletionKind, completions};
pub use crate::fixes::{Fix, fix_all, fixes, suppressions};
pub use crate::folding::{FoldKind, folding_ranges};
pub use crate::highlight::{Highlight, TokenClass, highlights};
pub use crate::hover::{Hover, hover};
pub use crate::inlay_hints::{InlayHint, InlayKind, inlay_hints};
pub use crate::navigation::{NameRef, name_at, references, rename};
pub use crate::signature_help::{SignatureHelp, signature_help};
pub use crate::symbols::{FileSymbol, file_symbols};
pub use wsp_analysis::semantic::SymbolKind;
