//! The inputs: a workspace (its settings) and its files. Notebook cells are files too.

use std::path::{Path, PathBuf};

use crate::schedules::Target;

/// What applies to every file: the targets whose applicability rules every program is checked
/// against, besides the target its own `compile(target=...)` names (`wsp.toml` or `--target`).
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub extra_targets: Vec<Target>,
}

#[salsa::input(debug)]
pub struct File {
    #[returns(copy)]
    pub workspace: Workspace,
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: String,
}

/// `wsp.toml` at a workspace root.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    #[serde(default)]
    pub check: CheckConfig,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Targets every program is checked against, e.g. `["cpu_sim", "ascend_npu"]`.
    #[serde(default)]
    pub targets: Vec<String>,
}

impl WorkspaceConfig {
    pub fn parse(text: &str) -> Result<WorkspaceConfig, String> {
        let config: WorkspaceConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        for t in &config.check.targets {
            if Target::from_name(t).is_none() {
                return Err(format!(
                    "unknown target `{t}` in [check] targets (expected one of {})",
                    Target::names()
                ));
            }
        }
        Ok(config)
    }

    /// The nearest `wsp.toml` at or above `start`, read and checked.
    pub fn find(start: &Path) -> Result<Option<WorkspaceConfig>, String> {
        let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            let candidate = dir.join("wsp.toml");
            if candidate.is_file() {
                let text = std::fs::read_to_string(&candidate)
                    .map_err(|e| format!("cannot read {}: {e}", candidate.display()))?;
                let config = WorkspaceConfig::parse(&text)
                    .map_err(|e| format!("{}: {e}", candidate.display()))?;
                return Ok(Some(config));
            }
        }
        Ok(None)
    }

    pub fn targets(&self) -> Vec<Target> {
        self.check
            .targets
            .iter()
            .filter_map(|t| Target::from_name(t))
            .collect()
    }
}

impl File {
    /// A file as read from disk: its text changes rarely, so queries of other files need not be
    /// re-verified when only an edited file changes (salsa durability).
    pub fn on_disk(
        db: &dyn salsa::Database,
        workspace: Workspace,
        path: PathBuf,
        text: String,
    ) -> File {
        File::builder(workspace, path, text)
            .workspace_durability(salsa::Durability::HIGH)
            .path_durability(salsa::Durability::HIGH)
            .text_durability(salsa::Durability::MEDIUM)
            .new(db)
    }

    /// Replaces the text of a file being edited.
    pub fn edit(self, db: &mut crate::Database, text: String) {
        use salsa::Setter;
        self.set_text(db)
            .with_durability(salsa::Durability::LOW)
            .to(text);
    }
}

/// A file as given, or the `.wsp` files under a folder in a stable order, skipping hidden
/// folders and build output (never the folder named).
pub fn wsp_files(path: &Path) -> Result<Vec<PathBuf>, String> {
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
