//! Fixes as edits: the checker's fixes of the diagnostics that touch a range, each a title and
//! the text edits that apply it (an editor's quick fixes).

use wsp_analysis::{Applicability, Diagnostic, File, TextRange};

/// One fix: what it does and the edits, in file ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<(TextRange, String)>,
    /// Whether it surely keeps the meaning (an editor may prefer it) or is a spelling guess.
    pub applicability: Applicability,
    /// The diagnostic it fixes.
    pub diagnostic: Diagnostic,
}

/// The fixes of the diagnostics in `file` that touch `range`, in the diagnostics' order.
pub fn fixes(db: &dyn salsa::Database, file: File, range: TextRange) -> Vec<Fix> {
    wsp_analysis::file_diagnostics(db, file)
        .iter()
        .filter(|d| d.range.intersect(range).is_some())
        .filter_map(|d| {
            let fix = d.fix.as_ref()?;
            Some(Fix {
                title: fix.title.clone(),
                edits: fix.edits.clone(),
                applicability: fix.applicability,
                diagnostic: d.clone(),
            })
        })
        .collect()
}
