//! Helpers shared by the analyzer's test files.

use std::fmt::Write;

use wsp_analysis::{Database, File, Workspace, file_diagnostics};

/// `text`'s diagnostics, one a line: the code, the text it points at, the message.
pub fn diagnostics_shown(text: &str) -> String {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "m.wsp".into(), text.to_string());
    let mut shown = String::new();
    for d in file_diagnostics(&db, file) {
        let _ = writeln!(
            shown,
            "{} `{}`: {}",
            d.code.as_str(),
            &text[d.range],
            d.message
        );
    }
    shown
}
