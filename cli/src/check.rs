//! `wsp check`: find the `.wsp` files, analyze them in parallel on one incremental database,
//! print what was found, set the exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;
use wsp_analysis::{Database, File, Severity, Target, Workspace, WorkspaceConfig};

use crate::Format;
use crate::report::{Checked, Stream};

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
    let mut unreadable = 0;
    let mut found = Vec::new();
    for path in &paths {
        match wsp_analysis::wsp_files(path) {
            Ok(files) => found.extend(files),
            Err(e) => {
                eprintln!("error: {e}");
                unreadable += 1;
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
                unreadable += 1;
            }
        }
    }
    // Files are independent: each worker analyzes some on its own handle to the database.
    let checked: Vec<Checked> = inputs
        .par_iter()
        .map_with(db.clone(), |db, &file| {
            let diagnostics = wsp_analysis::diagnostics_with_data_files(db, file);
            Checked {
                path: file.path(db).clone(),
                // For the positions of the diagnostics; a clean file needs none (a copy of a
                // 50 MB file costs 50 MB).
                text: if diagnostics.is_empty() {
                    String::new()
                } else {
                    file.text(db).clone()
                },
                diagnostics,
            }
        })
        .collect();

    let errors = checked
        .iter()
        .flat_map(|c| &c.diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .count();
    match format {
        Format::Human => crate::report::print_human(&checked, unreadable, Stream::Stdout),
        Format::Json => crate::report::print_json(&checked, Stream::Stdout),
        Format::Sarif => crate::report::print_sarif(&checked),
        Format::Github => crate::report::print_github(&checked),
    }
    if unreadable > 0 {
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
    Ok(WorkspaceConfig::find(&start)?.map_or_else(Vec::new, |c| c.targets()))
}

/// One file as `wsp run` and `wsp emit` take it: analyzed (also for `targets`, and for the
/// views `bindings` take out of bounds), then lowered; with its diagnostics, for the caller to
/// print. `None` when it has errors.
pub(crate) fn check_and_lower(
    path: &std::path::Path,
    text: &str,
    targets: Vec<Target>,
    bindings: &[(String, u64)],
) -> (
    Option<wsp_analysis::LoweredFile>,
    Vec<wsp_analysis::Diagnostic>,
) {
    let db = Database::default();
    let workspace = Workspace::new(&db, targets);
    let file = File::on_disk(&db, workspace, path.to_path_buf(), text.to_string());
    let mut diagnostics = wsp_analysis::diagnostics_with_data_files(&db, file);
    // A suppression comment hides an error from reports, not from the build: a file with errors
    // is not lowered, so each suppressed error is shown here, saying why.
    let mut raw = wsp_analysis::file_diagnostics(&db, file).clone();
    raw.extend(wsp_analysis::data_file_diagnostics(
        &db,
        file,
        &wsp_analysis::read_npy_header,
    ));
    for mut d in raw {
        if d.severity == Severity::Error && !diagnostics.contains(&d) {
            d.message.push_str(
                " (a `# noqa` comment suppresses it in reports, but a file with errors does not run)",
            );
            diagnostics.push(d);
        }
    }
    diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    if !diagnostics.iter().any(|d| d.severity == Severity::Error) {
        // What `--bind` makes the run reach is known now, before a build.
        let bound = wsp_analysis::binding_diagnostics(&db, file, bindings, &|n, v| {
            format!("`--bind {n}={v}`")
        });
        diagnostics.extend(wsp_analysis::apply_suppressions(&db, file, bound, false));
    }
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        return (None, diagnostics);
    }
    (wsp_analysis::lower_file(&db, file).clone(), diagnostics)
}
