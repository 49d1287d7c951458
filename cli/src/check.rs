//! `wsp check`: find the `.wsp` files, analyze them in parallel on one incremental database,
//! print what was found, set the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;
use wsp_analysis::{Database, File, Severity, Target, Workspace, WorkspaceConfig};

use crate::Format;
use crate::report::Checked;

pub(crate) fn run(paths: Vec<PathBuf>, format: Format, target: Option<String>) -> ExitCode {
    let paths = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    };
    let targets = match targets(&paths, target) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut unreadable = false;
    let mut found = Vec::new();
    for path in &paths {
        match collect(path) {
            Ok(files) => found.extend(files),
            Err(e) => {
                eprintln!("error: {e}");
                unreadable = true;
            }
        }
    }

    let db = Database::default();
    let workspace = Workspace::new(&db, targets);
    let mut inputs = Vec::new();
    for path in found {
        match std::fs::read_to_string(&path) {
            Ok(text) => inputs.push(File::on_disk(&db, workspace, path, text)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                unreadable = true;
            }
        }
    }
    // Files are independent: each worker analyzes some on its own handle to the database.
    let checked: Vec<Checked> = inputs
        .par_iter()
        .map_with(db.clone(), |db, &file| Checked {
            path: file.path(db).clone(),
            text: file.text(db).clone(),
            diagnostics: wsp_analysis::file_diagnostics(db, file).clone(),
        })
        .collect();

    let errors = checked
        .iter()
        .flat_map(|c| &c.diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .count();
    match format {
        Format::Human => crate::report::print_human(&checked),
        Format::Json => crate::report::print_json(&checked),
        Format::Sarif => crate::report::print_sarif(&checked),
        Format::Github => crate::report::print_github(&checked),
    }
    if unreadable {
        ExitCode::from(2)
    } else if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The targets every program is also checked against: `--target`, else the nearest
/// `wsp.toml`'s `[check] targets`.
fn targets(paths: &[PathBuf], target: Option<String>) -> Result<Vec<Target>, String> {
    if let Some(t) = target {
        return Target::from_name(&t)
            .map(|t| vec![t])
            .ok_or_else(|| format!("unknown target `{t}` (expected {})", Target::names()));
    }
    let start = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let start = std::fs::canonicalize(&start).unwrap_or(start);
    for dir in start.ancestors() {
        let candidate = dir.join("wsp.toml");
        if candidate.is_file() {
            let text = std::fs::read_to_string(&candidate)
                .map_err(|e| format!("cannot read {}: {e}", candidate.display()))?;
            let config = WorkspaceConfig::parse(&text)
                .map_err(|e| format!("{}: {e}", candidate.display()))?;
            return Ok(config.targets());
        }
    }
    Ok(Vec::new())
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
