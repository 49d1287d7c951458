//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// A folder relative to the syntax crate.
pub fn dir(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The `.wsp` files of a folder, sorted.
pub fn wsp_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "wsp"))
        .collect();
    files.sort();
    files
}

/// The examples as (path, text).
#[allow(dead_code, reason = "not every test file reads the examples")]
pub fn examples() -> Vec<(PathBuf, String)> {
    wsp_files(&dir("../examples"))
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable example");
            (p, text)
        })
        .collect()
}
