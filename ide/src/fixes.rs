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

/// The diagnostics shown for `file`: a suppressed one offers no fix; an unused suppression
/// (WSP003) does.
fn shown(db: &dyn salsa::Database, file: File) -> Vec<Diagnostic> {
    wsp_analysis::apply_suppressions(
        db,
        file,
        wsp_analysis::file_diagnostics(db, file).clone(),
        true,
    )
}

/// The fixes of the diagnostics in `file` that touch `range`, in the diagnostics' order.
pub fn fixes(db: &dyn salsa::Database, file: File, range: TextRange) -> Vec<Fix> {
    shown(db, file)
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

/// "Suppress WSPnnn on this line" (a `# noqa: WSPnnn` comment) for each code of the shown
/// diagnostics that touch `range`, once per line and code. Never preferred: it hides a
/// diagnostic rather than fixing it.
pub fn suppressions(db: &dyn salsa::Database, file: File, range: TextRange) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    for d in shown(db, file) {
        if d.range.intersect(range).is_none() {
            continue;
        }
        let Some(edit) = wsp_analysis::suppress_edit(db, file, d.range.start(), d.code) else {
            continue;
        };
        if out.iter().any(|f| f.edits[0] == edit) {
            continue;
        }
        out.push(Fix {
            title: format!("suppress {} on this line", d.code.as_str()),
            edits: vec![edit],
            applicability: Applicability::MaybeIncorrect,
            diagnostic: d,
        });
    }
    out
}

/// "Fix all": the safe fixes of the shown diagnostics that `keep` reports, as one set of
/// edits that apply together, and how many fixes they are (`wsp_analysis::applicable_fixes`,
/// as `wsp check --fix` takes them; a fix that overlaps one taken waits for the next request).
/// `None` when there is none.
pub fn fix_all(
    db: &dyn salsa::Database,
    file: File,
    keep: &dyn Fn(&Diagnostic) -> bool,
) -> Option<(Vec<(TextRange, String)>, usize)> {
    let shown: Vec<Diagnostic> = shown(db, file).into_iter().filter(|d| keep(d)).collect();
    let (edits, n) = wsp_analysis::applicable_fixes(&shown, false);
    (n > 0).then_some((edits, n))
}
