//! The WSP language for tree-sitter: `LANGUAGE` and the editor queries.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser.set_language(&tree_sitter_wsp::LANGUAGE.into()).expect("compatible ABI");
//! let tree = parser.parse("x = pto.add(a, b)\n", None).expect("a tree");
//! assert!(!tree.root_node().has_error());
//! ```

use tree_sitter_language::LanguageFn;

unsafe extern "C" {
    fn tree_sitter_wsp() -> *const ();
}

/// The tree-sitter language of WSP files.
// SAFETY: `tree_sitter_wsp` is the generated language function of src/parser.c.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_wsp) };

pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");
pub const INDENTS_QUERY: &str = include_str!("../../queries/indents.scm");
pub const LOCALS_QUERY: &str = include_str!("../../queries/locals.scm");

/// blake3 of the `grammar.js` that `src/` was generated from (written by `cargo xtask tree-sitter`).
pub const GRAMMAR_HASH: &str = include_str!("../../src/grammar.js.blake3");
