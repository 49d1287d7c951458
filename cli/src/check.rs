//! `wsp check`: find the `.wsp` files, analyze each, print what was found, set the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::Format;
use crate::report::{Diagnostic, Severity, SourceFile};

pub(crate) fn run(paths: Vec<PathBuf>, format: Format) -> ExitCode {
    let paths = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    };
    let mut unreadable = false;
    let mut files = Vec::new();
    for path in &paths {
        match collect(path) {
            Ok(found) => files.extend(found),
            Err(e) => {
                eprintln!("error: {e}");
                unreadable = true;
            }
        }
    }

    let mut checked = Vec::new();
    for path in files {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let diagnostics = check_text(&text);
                checked.push((SourceFile::new(path, text), diagnostics));
            }
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                unreadable = true;
            }
        }
    }

    let errors = checked
        .iter()
        .flat_map(|(_, ds)| ds)
        .filter(|d| d.severity == Severity::Error)
        .count();
    match format {
        Format::Human => crate::report::print_human(&checked, errors),
        Format::Json => crate::report::print_json(&checked),
    }
    if unreadable {
        ExitCode::from(2)
    } else if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The diagnostics of one file's text.
fn check_text(text: &str) -> Vec<Diagnostic> {
    wsp_syntax::parse(text)
        .errors()
        .iter()
        .map(|e| Diagnostic {
            code: "WSP001",
            severity: Severity::Error,
            range: e.range,
            message: e.message.clone(),
        })
        .collect()
}

/// A file as given, or the `.wsp` files under a folder, in a stable order.
fn collect(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            // Skip hidden folders and build output, never the folder the user named.
            e.depth() == 0
                || !e
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with('.') || n == "target")
        });
    for entry in walk {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "wsp") {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}
