//! The inputs: a workspace (its settings) and its files. Notebook cells are files too.

use std::path::{Path, PathBuf};

use wsp_syntax::{Parse, TextRange};

use wsp_ir::schedule::Target;

/// What applies to every file: the targets whose applicability rules every program is checked
/// against, besides the target its own `compile(target=...)` names (`wsp.toml` or `--target`).
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub extra_targets: Vec<Target>,
}

/// A file and its parse. The two change together (`edit`, `apply_edit`), which is why they are
/// private: an edit re-parses only the statements it touches, so the parse is kept with the
/// text rather than derived by a query that would parse the whole file each time.
#[salsa::input(debug, constructor = from_parts)]
pub struct File {
    #[returns(copy)]
    pub workspace: Workspace,
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    #[get(stored_text)]
    text: String,
    #[returns(ref)]
    #[get(stored_parse)]
    parse: Parse,
}

/// `wsp.toml` at a workspace root.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    #[serde(default)]
    pub check: CheckConfig,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckConfig {
    /// Targets every program is checked against, e.g. `["cpu_sim", "ascend_npu"]`.
    #[serde(default)]
    pub targets: Vec<String>,
    /// The codes (or prefixes) reported; every code when absent (`selection`).
    #[serde(default)]
    pub select: Option<Vec<String>>,
    /// Codes (or prefixes) reported besides `select`'s.
    #[serde(default)]
    pub extend_select: Vec<String>,
    /// Codes (or prefixes) not reported.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Globs (relative to the `wsp.toml`'s folder, or file names) and the codes not reported
    /// in the files they match.
    #[serde(default)]
    pub per_file_ignores: std::collections::BTreeMap<String, Vec<String>>,
    /// Every warning is reported as an error (unless `severity` says otherwise for its code).
    #[serde(default)]
    pub warnings_as_errors: bool,
    /// Per code or prefix: `"error"` or `"warning"`.
    #[serde(default)]
    pub severity: std::collections::BTreeMap<String, String>,
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

    /// The nearest `wsp.toml` at or above `start`, read and checked, with its folder (what
    /// `per-file-ignores` globs are relative to).
    pub fn find_with_folder(start: &Path) -> Result<Option<(WorkspaceConfig, PathBuf)>, String> {
        let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            let candidate = dir.join("wsp.toml");
            if candidate.is_file() {
                let text = std::fs::read_to_string(&candidate)
                    .map_err(|e| format!("cannot read {}: {e}", candidate.display()))?;
                let config = WorkspaceConfig::parse(&text)
                    .map_err(|e| format!("{}: {e}", candidate.display()))?;
                return Ok(Some((config, dir.to_path_buf())));
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
    /// A file being edited.
    pub fn new(
        db: &dyn salsa::Database,
        workspace: Workspace,
        path: PathBuf,
        text: String,
    ) -> File {
        let parse = wsp_syntax::parse(&text);
        File::from_parts(db, workspace, path, text, parse)
    }

    /// A file as read from disk: its text changes rarely, so queries of other files need not be
    /// re-verified when only an edited file changes (salsa durability).
    pub fn on_disk(
        db: &dyn salsa::Database,
        workspace: Workspace,
        path: PathBuf,
        text: String,
    ) -> File {
        let parse = wsp_syntax::parse(&text);
        File::builder(workspace, path, text, parse)
            .workspace_durability(salsa::Durability::HIGH)
            .path_durability(salsa::Durability::HIGH)
            .text_durability(salsa::Durability::MEDIUM)
            .parse_durability(salsa::Durability::MEDIUM)
            .new(db)
    }

    pub fn text(self, db: &dyn salsa::Database) -> &String {
        self.stored_text(db)
    }

    /// The file's syntax tree and syntax errors.
    pub fn parse(self, db: &dyn salsa::Database) -> &Parse {
        self.stored_parse(db)
    }

    /// Replaces the whole text of a file being edited.
    pub fn edit(self, db: &mut crate::Database, text: String) {
        let parse = wsp_syntax::parse(&text);
        self.set(db, text, parse);
    }

    /// Replaces `range` of the text with `insert`, re-parsing only what the edit touches. A
    /// range past the end or off a character boundary is clamped to the text.
    pub fn apply_edit(self, db: &mut crate::Database, range: TextRange, insert: &str) {
        let old = self.stored_text(db);
        let floor = |at: usize| {
            let mut at = at.min(old.len());
            while !old.is_char_boundary(at) {
                at -= 1;
            }
            at
        };
        let start = floor(range.start().into());
        let end = floor(range.end().into()).max(start);
        let mut text = old.clone();
        text.replace_range(start..end, insert);
        let range = TextRange::new((start as u32).into(), (end as u32).into());
        let parse = self.stored_parse(db).reparse(old, range, insert, &text);
        self.set(db, text, parse);
    }

    fn set(self, db: &mut crate::Database, text: String, parse: Parse) {
        use salsa::Setter;
        self.set_text(db)
            .with_durability(salsa::Durability::LOW)
            .to(text);
        self.set_parse(db)
            .with_durability(salsa::Durability::LOW)
            .to(parse);
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
