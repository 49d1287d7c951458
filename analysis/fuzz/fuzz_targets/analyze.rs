//! `cargo fuzz run analyze` (from analysis/): the whole analysis of any UTF-8 text finishes
//! without panicking, checked against every target, with every diagnostic inside the text; so
//! do hover at every character boundary and lowering.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wsp_analysis::{Database, File, Target, Workspace};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let db = Database::default();
        let workspace = Workspace::new(&db, Target::ALL.to_vec());
        let file = File::new(&db, workspace, "fuzz.wsp".into(), text.to_string());
        let len = text.len();
        for d in wsp_analysis::file_diagnostics(&db, file) {
            assert!(usize::from(d.range.end()) <= len);
            assert!(!d.message.is_empty());
        }
        let _ = wsp_analysis::lower_file(&db, file);
        for (at, _) in text.char_indices() {
            let offset = wsp_analysis::TextSize::try_from(at).unwrap();
            if let Some(h) = wsp_ide::hover(&db, file, offset) {
                assert!(usize::from(h.range.end()) <= len);
            }
        }
    }
});
