//! `cargo xtask tidy`: the source checks that need no tests. rustfmt in check mode; clippy
//! with warnings denied, plus the lints that want a `// SAFETY:` comment on every `unsafe`
//! block and `unsafe impl` and a `# Safety` doc section on every public `unsafe fn`; and every
//! Rust file of the workspace's packages opening with a `//!` line saying what it is; and no
//! two top-level modules of a crate importing each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cargo, root, run};

/// One check: `Err` says what failed, after the offenders are printed.
type Check = fn() -> Result<(), String>;

/// Runs every check, even after one fails, so that one run lists all the offenders.
pub fn tidy() -> Result<(), String> {
    let checks: [(&str, Check); 4] = [
        ("rustfmt", rustfmt),
        ("clippy", clippy),
        ("//! doc lines", doc_lines),
        ("module circles", module_circles),
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
/// excluded fuzz crates are not among them): the packages of `cargo metadata --no-deps`.
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
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let mut dirs = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let manifest = package["manifest_path"]
            .as_str()
            .ok_or("cargo metadata: a package without a manifest_path")?;
        let dir = Path::new(manifest)
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

/// No two top-level modules of a crate import each other, directly or through others: each
/// crate's modules form layers a reader can take in order (docs/architecture.md). A module is
/// a file or folder of `src/`; it imports another when its code (not its comments) names
/// `crate::other`, or `super::other` from a file directly in `src/`.
fn module_circles() -> Result<(), String> {
    let mut circles = 0;
    for package in package_dirs()? {
        let src = package.join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = module_graph(&src)?;
        for circle in strongly_connected(&graph) {
            let shown = src.strip_prefix(root()).unwrap_or(&src);
            eprintln!(
                "{}: modules import each other in a circle: {}",
                shown.display(),
                circle.join(", ")
            );
            circles += 1;
        }
    }
    match circles {
        0 => Ok(()),
        n => Err(format!("{n} module circle(s)")),
    }
}

/// Each top-level module of `src` and the top-level modules it imports.
fn module_graph(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", src.display()))?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let module = name.strip_suffix(".rs").unwrap_or(&name).to_string();
        // The crate root and binaries are above every module.
        if matches!(module.as_str(), "lib" | "main" | "bin") {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files)?;
        } else if name.ends_with(".rs") {
            files.push(path.clone());
        } else {
            continue;
        }
        let mut imports = BTreeSet::new();
        for file in &files {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let top_level = file.parent() == Some(src);
            imports.extend(imported_modules(&text, top_level));
        }
        modules.insert(module, imports);
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    for (module, imports) in &mut modules {
        imports.retain(|m| m != module && names.contains(m));
    }
    Ok(modules)
}

/// The names after `crate::` (and after `super::` in a file directly in `src/`) in the code
/// of a file, comments left out.
fn imported_modules(text: &str, top_level: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for prefix in ["crate::", "super::"] {
            if prefix == "super::" && !top_level {
                continue;
            }
            for piece in code.split(prefix).skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The circles of a graph: its strongly connected components of more than one node
/// (Tarjan's algorithm), each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        circles: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.circles.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        circles: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.circles
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::{imported_modules, opens_with_doc_line, strongly_connected};

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

    #[test]
    fn imports_are_read_from_code_not_comments() {
        let text = "use crate::items::Item;\n// see crate::check\nlet x = crate::work::step(1);\n";
        let found: Vec<String> = imported_modules(text, false).into_iter().collect();
        assert_eq!(found, ["items", "work"]);
        assert!(imported_modules("use super::eval::Eval;", false).is_empty());
        assert!(imported_modules("use super::eval::Eval;", true).contains("eval"));
    }

    #[test]
    fn a_circle_is_reported_once_and_layers_are_not() {
        let graph = |edges: &[(&str, &str)]| {
            let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (a, b) in edges {
                g.entry(a.to_string()).or_default().insert(b.to_string());
                g.entry(b.to_string()).or_default();
            }
            g
        };
        let layers = graph(&[("check", "eval"), ("eval", "values"), ("check", "values")]);
        assert!(strongly_connected(&layers).is_empty());
        let circle = graph(&[
            ("eval", "workloads"),
            ("workloads", "checks"),
            ("checks", "eval"),
            ("eval", "values"),
        ]);
        assert_eq!(
            strongly_connected(&circle),
            [["checks", "eval", "workloads"]]
        );
    }
}
