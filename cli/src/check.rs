//! `wsp check`: find the `.wsp` files, analyze them in parallel on one incremental database,
//! print what was found, set the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use codespan_reporting::term::termcolor::{self, WriteColor};
use rayon::prelude::*;
use wsp_analysis::{
    Database, File, Selection, Selectors, Severity, Target, Workspace, WorkspaceConfig,
};

use crate::Format;
use crate::report::{Checked, Stream, plural};

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Files or folders (searched for `*.wsp`); the current folder if none.
    paths: Vec<PathBuf>,
    /// How to print the diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Also check every program against this target's applicability rules
    /// (`cpu_sim` or `ascend_npu`); overrides `[check] targets` in `wsp.toml`.
    #[arg(long)]
    target: Option<String>,
    /// Report only these codes or prefixes (`WSP3,WSP501`), instead of `[check] select`.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    select: Option<Vec<String>>,
    /// Also report these codes or prefixes.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    extend_select: Vec<String>,
    /// Do not report these codes or prefixes.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    ignore: Vec<String>,
    /// Exit 0 even if errors are reported (a path that cannot be read still exits 2).
    #[arg(long)]
    exit_zero: bool,
    /// Print how many diagnostics each code has, instead of the diagnostics (text, or JSON
    /// with `--format json`).
    #[arg(long)]
    statistics: bool,
    /// Write the report to this file (atomically) instead of standard output.
    #[arg(long, value_name = "FILE")]
    output_file: Option<PathBuf>,
    /// Print the diagnostics and nothing else (no count of files, errors and warnings).
    #[arg(long, short)]
    quiet: bool,
    /// Apply the safe fixes, re-checking until none is left (at most 10 passes), write each
    /// changed file atomically, then report what remains.
    #[arg(long)]
    fix: bool,
    /// With `--fix` or `--diff`, also apply the fixes that are guesses (from spelling).
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print the fixes `--fix` would make as a unified diff and write nothing; exit 1 if
    /// there is any.
    #[arg(long, conflicts_with = "fix")]
    diff: bool,
}

/// Passes of fixing a file, each on the text the one before left: a fix may enable another
/// (or overlap one), and the bound keeps a fix that undoes another from looping.
const FIX_PASSES: usize = 10;

pub(crate) fn run(args: CheckArgs) -> ExitCode {
    match check(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn check(args: CheckArgs) -> Result<ExitCode, String> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    if args.statistics && matches!(args.format, Format::Sarif | Format::Github) {
        return Err("`--statistics` prints text or JSON (`--format human` or `json`)".into());
    }
    let start = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let config = WorkspaceConfig::find_with_folder(&start)?;
    let targets = targets(config.as_ref().map(|(c, _)| c), args.target.clone())?;
    let cli = Selectors {
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
    };
    let selection = Selection::new(config.as_ref().map(|(c, d)| (c, d.as_path())), cli)?;
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
    let fixing = args.fix || args.diff;
    // Files are independent: each worker analyzes some on its own handle to the database.
    let results: Vec<(Checked, Option<Fixed>)> = inputs
        .par_iter()
        .map_with(db.clone(), |db, &file| {
            let path = file.path(db).clone();
            let absolute = absolute(&path);
            let diagnostics = selection.apply(
                &absolute,
                wsp_analysis::diagnostics_with_data_files(db, file),
            );
            if fixing && wsp_analysis::applicable_fixes(&diagnostics, args.unsafe_fixes).1 > 0 {
                let original = file.text(db).clone();
                let (checked, fixed) = fix_file(
                    path,
                    &absolute,
                    original.clone(),
                    diagnostics,
                    &selection,
                    file.workspace(db).extra_targets(db).clone(),
                    args.unsafe_fixes,
                );
                return (
                    checked,
                    Some(Fixed {
                        original,
                        count: fixed,
                    }),
                );
            }
            let checked = Checked {
                path,
                // For the positions of the diagnostics; a clean file needs none (a copy of a
                // 50 MB file costs 50 MB).
                text: if diagnostics.is_empty() {
                    String::new()
                } else {
                    file.text(db).clone()
                },
                diagnostics,
            };
            (checked, None)
        })
        .collect();
    // Freeing the analysis, node by node, took a tenth of a check: the process is about to exit
    // and the system takes the memory back at once.
    std::mem::forget(db);
    let mut checked = Vec::with_capacity(results.len());
    let (mut fixes, mut files_fixed) = (0, 0);
    let mut diff = String::new();
    for (c, fixed) in results {
        if let Some(f) = fixed.filter(|f| f.original != c.text) {
            fixes += f.count;
            files_fixed += 1;
            if args.diff {
                diff.push_str(&unified_diff(&c.path, &f.original, &c.text));
            } else {
                wsp_files::write_atomically(&c.path, |out| out.write_all(c.text.as_bytes()))?;
            }
        }
        checked.push(c);
    }
    if args.diff {
        print!("{diff}");
        eprintln!(
            "{fixes} fix{} would change {files_fixed} file{}",
            if fixes == 1 { "" } else { "es" },
            plural(files_fixed)
        );
        return Ok(ExitCode::from(if files_fixed > 0 { 1 } else { 0 }));
    }
    if args.fix {
        eprintln!(
            "applied {fixes} fix{} in {files_fixed} file{}",
            if fixes == 1 { "" } else { "es" },
            plural(files_fixed)
        );
    }

    let errors = checked
        .iter()
        .flat_map(|c| &c.diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .count();
    let report = |out: &mut dyn WriteColor| {
        if args.statistics {
            crate::report::print_statistics(&checked, args.format, out);
            return;
        }
        match args.format {
            Format::Human => crate::report::print_human(&checked, unreadable, out, args.quiet),
            Format::Json => crate::report::print_json(&checked, out),
            Format::Sarif => crate::report::print_sarif(&checked, out),
            Format::Github => crate::report::print_github(&checked, out),
        }
    };
    match &args.output_file {
        Some(path) => {
            let mut buffer = termcolor::Buffer::no_color();
            report(&mut buffer);
            wsp_files::write_atomically(path, |out| out.write_all(buffer.as_slice()))?;
        }
        None => {
            let mut out = Stream::Stdout.buffered();
            report(&mut out);
            let _ = out.flush();
        }
    }
    Ok(if unreadable > 0 {
        ExitCode::from(2)
    } else if errors > 0 && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What `wsp run` and `wsp emit` report of `file`: the nearest `wsp.toml`'s selection.
pub(crate) fn selection_for(file: &Path) -> Result<Selection, String> {
    let folder = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(Selection::of_folder(folder)?.0)
}

/// A file `--fix` or `--diff` changed: its text before, and the fixes applied.
struct Fixed {
    original: String,
    count: usize,
}

/// `text` fixed pass after pass, each on its own analysis of the text the one before left,
/// until no fix is left or `FIX_PASSES` have run: the file as it ends, with what it still
/// reports, and how many fixes were applied.
fn fix_file(
    path: PathBuf,
    absolute: &Path,
    mut text: String,
    mut diagnostics: Vec<wsp_analysis::Diagnostic>,
    selection: &Selection,
    targets: Vec<Target>,
    unsafe_fixes: bool,
) -> (Checked, usize) {
    let db = Database::default();
    let workspace = Workspace::new(&db, targets);
    let mut count = 0;
    for _ in 0..FIX_PASSES {
        let (edits, n) = wsp_analysis::applicable_fixes(&diagnostics, unsafe_fixes);
        if n == 0 {
            break;
        }
        text = wsp_analysis::apply_edits(&text, &edits);
        count += n;
        let file = File::on_disk(&db, workspace, path.clone(), text.clone());
        diagnostics = selection.apply(
            absolute,
            wsp_analysis::diagnostics_with_data_files(&db, file),
        );
    }
    let checked = Checked {
        path,
        text,
        diagnostics,
    };
    (checked, count)
}

/// The unified diff of `path` from `before` to `after`, as `patch -p1` applies it.
fn unified_diff(path: &Path, before: &str, after: &str) -> String {
    let name = path.display().to_string();
    let name = name.trim_start_matches("./");
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// `path` from the root, for `per-file-ignores` globs relative to the `wsp.toml`'s folder.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The targets every program is also checked against: `--target`, else the `wsp.toml`'s
/// `[check] targets`.
fn targets(
    config: Option<&WorkspaceConfig>,
    target: Option<String>,
) -> Result<Vec<Target>, String> {
    if let Some(t) = target {
        return Target::from_name(&t)
            .map(|t| vec![t])
            .ok_or_else(|| format!("unknown target `{t}` (expected {})", Target::names()));
    }
    Ok(config.map_or_else(Vec::new, |c| c.targets()))
}

/// One file as `wsp run` and `wsp emit` take it: analyzed (also for `targets`, and for the
/// views `bindings` take out of bounds), then lowered; with its diagnostics, for the caller to
/// print. `None` when it has errors.
pub(crate) fn check_and_lower(
    path: &std::path::Path,
    text: &str,
    targets: Vec<Target>,
    bindings: &[(String, u64)],
    selection: &Selection,
) -> (
    Option<wsp_analysis::LoweredFile>,
    Vec<wsp_analysis::Diagnostic>,
) {
    let db = Database::default();
    let workspace = Workspace::new(&db, targets);
    let file = File::on_disk(&db, workspace, path.to_path_buf(), text.to_string());
    // What `wsp check` reports, at the codes' own severities: only errors stop the build.
    let raw = wsp_analysis::unsuppressed_diagnostics(&db, file);
    let absolute = absolute(path);
    let mut diagnostics: Vec<_> = wsp_analysis::apply_suppressions(&db, file, raw.clone(), true)
        .into_iter()
        .filter(|d| selection.is_selected(d.code, &absolute))
        .collect();
    // A suppression hides an error from reports, not from the build: a file with errors is not
    // lowered, so each suppressed error is shown here, saying why.
    let shown: std::collections::HashSet<&wsp_analysis::Diagnostic> = diagnostics.iter().collect();
    let hidden: Vec<_> = raw
        .into_iter()
        .filter(|d| d.severity == Severity::Error && !shown.contains(d))
        .map(|mut d| {
            d.message.push_str(
                " (suppressed in reports, by a `# noqa` comment or `wsp.toml`, but a file with errors does not run)",
            );
            d
        })
        .collect();
    diagnostics.extend(hidden);
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
