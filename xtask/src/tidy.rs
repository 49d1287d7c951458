//! `cargo xtask tidy`: the source checks that need no tests. rustfmt in check mode; clippy
//! with warnings denied, plus the lints that want a `// SAFETY:` comment on every `unsafe`
//! block and `unsafe impl` and a `# Safety` doc section on every public `unsafe fn`; and every
//! Rust file of the workspace's packages opening with a `//!` line saying what it is.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cargo, root, run};

/// One check: `Err` says what failed, after the offenders are printed.
type Check = fn() -> Result<(), String>;

/// Runs every check, even after one fails, so that one run lists all the offenders.
pub fn tidy() -> Result<(), String> {
    let checks: [(&str, Check); 3] = [
        ("rustfmt", rustfmt),
        ("clippy", clippy),
        ("//! doc lines", doc_lines),
    ];
    let mut failed = Vec::new();
    for (name, check) in checks {
        match check() {
            Ok(()) => eprintln!("xtask: tidy: {name} ok"),
            Err(e) => {
                eprintln!("xtask: tidy: {name} failed: {e}");
                failed.push(name);
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("tidy failed: {}", failed.join(", ")))
    }
}

/// Only `--check`: rustfmt prints the diffs and rewrites nothing.
fn rustfmt() -> Result<(), String> {
    run(cargo().args(["fmt", "--all", "--", "--check"]))
}

/// `undocumented_unsafe_blocks` covers `unsafe` blocks (so every call of an `unsafe fn`) and
/// `unsafe impl`s; `missing_safety_doc` covers `unsafe fn` declarations, but only public ones
/// unless clippy.toml sets `check-private-items`. `--keep-going`: a crate that fails does not
/// hide the findings in the crates that do not depend on it.
fn clippy() -> Result<(), String> {
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--keep-going",
        "--",
        "-D",
        "warnings",
        "-D",
        "clippy::undocumented_unsafe_blocks",
        "-D",
        "clippy::missing_safety_doc",
    ]))
}

/// Every `.rs` file of every workspace package must open with `//!` (blank lines and `#![...]`
/// attributes may come first). Prints each offender as `path:1: no //! doc line`.
fn doc_lines() -> Result<(), String> {
    let root = root();
    let mut files = Vec::new();
    for package in package_dirs()? {
        rust_files(&package, &mut files)?;
    }
    files.sort();
    let mut offenders = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        if !opens_with_doc_line(&text) {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            eprintln!("{}:1: no //! doc line", shown.display());
            offenders += 1;
        }
    }
    match offenders {
        0 => Ok(()),
        n => Err(format!("{n} of {} files have no //! doc line", files.len())),
    }
}

/// Whether the first line that is neither blank nor part of a `#![...]` attribute is a `//!`
/// line.
fn opens_with_doc_line(text: &str) -> bool {
    // Bracket depth of a `#![...]` attribute that spans lines.
    let mut depth = 0i32;
    for line in text.lines() {
        let line = line.trim();
        if depth > 0 || line.starts_with("#![") {
            depth += line.matches('[').count() as i32 - line.matches(']').count() as i32;
            continue;
        }
        if !line.is_empty() {
            return line.starts_with("//!");
        }
    }
    false
}

/// The folders of the workspace's packages, as cargo resolves `members` and `exclude` (so the
/// excluded fuzz crates are not among them). Read from `cargo metadata --no-deps`, whose
/// packages are exactly the members; xtask has no JSON parser, and each `"manifest_path"`
/// value is all it needs.
fn package_dirs() -> Result<Vec<PathBuf>, String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let json = String::from_utf8_lossy(&out.stdout);
    let key = "\"manifest_path\":\"";
    let mut dirs = Vec::new();
    for piece in json.split(key).skip(1) {
        let mut path = String::new();
        let mut chars = piece.chars();
        // A JSON string up to its closing quote; paths only need `\\` and `\"` undone.
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => path.extend(chars.next()),
                c => path.push(c),
            }
        }
        let manifest = PathBuf::from(path);
        let dir = manifest
            .parent()
            .ok_or("a manifest path without a folder")?;
        dirs.push(dir.to_path_buf());
    }
    if dirs.is_empty() {
        return Err("cargo metadata listed no packages".into());
    }
    Ok(dirs)
}

/// The `.rs` files under a package's folder: src/, tests/, benches/, examples/, build.rs and
/// wherever else it keeps them. Skipped: build output (`target`), hidden folders,
/// `node_modules`, and folders with their own Cargo.toml, which are other packages: members
/// are walked on their own, the rest (such as `fuzz/`) are not the workspace's.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            let skipped = name == "target"
                || name == "node_modules"
                || name.starts_with('.')
                || path.join("Cargo.toml").is_file();
            if !skipped {
                rust_files(&path, files)?;
            }
        } else if name.ends_with(".rs") {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::opens_with_doc_line;

    #[test]
    fn a_doc_line_may_follow_blank_lines_and_inner_attributes() {
        assert!(opens_with_doc_line("//! What it is.\nfn main() {}\n"));
        assert!(opens_with_doc_line(
            "\n#![allow(dead_code)]\n\n//! What it is.\n"
        ));
        assert!(opens_with_doc_line(
            "#![cfg_attr(\n    test,\n    allow(unused)\n)]\n//! x\n"
        ));
    }

    #[test]
    fn anything_else_first_is_an_offender() {
        assert!(!opens_with_doc_line("fn main() {}\n//! too late\n"));
        assert!(!opens_with_doc_line("// A plain comment.\n//! x\n"));
        assert!(!opens_with_doc_line("/// An outer doc.\nfn f() {}\n"));
        assert!(!opens_with_doc_line("\n\n"));
    }
}
