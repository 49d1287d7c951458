//! Which diagnostics are reported, and how severe: `[check]` in `wsp.toml` (`select`,
//! `extend-select`, `ignore`, `per-file-ignores`, `warnings-as-errors`, `severity`), with the
//! command line's `--select`, `--extend-select` and `--ignore` over it. ruff's rules, so that
//! habits carry over:
//! - a selector is a code (`WSP306`) or a prefix of codes (`WSP3`, `WSP`);
//! - within one source, the most specific selector that matches a code decides, and an `ignore`
//!   wins a tie; a `select` list turns off every code it does not match, where `extend-select`
//!   only adds;
//! - the command line decides every code one of its selectors matches; the configuration, the
//!   rest;
//! - `per-file-ignores` turns codes off in the files its globs match, whatever selects them.
//!
//! Syntax errors (WSP001) are always reported. The language server and the notebook read the
//! same `wsp.toml`, so the editor shows what `wsp check` says.

use std::path::{Path, PathBuf};

use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::files::WorkspaceConfig;

/// One source's selectors: the configuration's, or the command line's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// `None`: not given (nothing turned off by it).
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selectors {
    /// Whether these selectors decide `code`, and how: the most specific match, `ignore`
    /// winning a tie; a given `select` matches every code at the least specificity.
    fn decide(&self, code: &str) -> Option<bool> {
        let mut best: Option<(usize, bool)> = None;
        let mut consider = |len: usize, on: bool| {
            best = match best {
                Some((l, o)) if l > len || (l == len && !o) => Some((l, o)),
                _ => Some((len, on)),
            };
        };
        if let Some(select) = &self.select {
            consider(0, false);
            for s in select.iter().filter(|s| code.starts_with(s.as_str())) {
                consider(s.len(), true);
            }
        }
        for s in self
            .extend_select
            .iter()
            .filter(|s| code.starts_with(s.as_str()))
        {
            consider(s.len(), true);
        }
        for s in self.ignore.iter().filter(|s| code.starts_with(s.as_str())) {
            consider(s.len(), false);
        }
        best.map(|(_, on)| on)
    }

    /// Each selector names a code or a prefix of one.
    fn validate(&self, source: &str) -> Result<(), String> {
        let all = self
            .select
            .iter()
            .flatten()
            .chain(&self.extend_select)
            .chain(&self.ignore);
        for s in all {
            validate_selector(s).map_err(|e| format!("{source}: {e}"))?;
        }
        Ok(())
    }
}

fn validate_selector(s: &str) -> Result<(), String> {
    if s.is_empty() || !Code::ALL.iter().any(|c| c.as_str().starts_with(s)) {
        return Err(format!(
            "`{s}` is no WSP code nor a prefix of one (a code is `WSP` and three digits: `WSP306`, or a prefix such as `WSP3`)"
        ));
    }
    Ok(())
}

/// What a workspace reports: its selection and severities.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The configuration's selectors, then the command line's.
    layers: Vec<Selectors>,
    /// Globs, relative to `base`, and the selectors they turn off.
    per_file: Vec<(glob::Pattern, Vec<String>)>,
    base: PathBuf,
    warnings_as_errors: bool,
    /// Per code or prefix, most specific first.
    severity: Vec<(String, Severity)>,
}

impl Selection {
    /// The selection of `config` (found in `base`, the folder of its `wsp.toml`), under the
    /// command line's `cli`.
    pub fn new(
        config: Option<(&WorkspaceConfig, &Path)>,
        cli: Selectors,
    ) -> Result<Selection, String> {
        cli.validate("the command line")?;
        let mut out = Selection::default();
        if let Some((config, base)) = config {
            let c = &config.check;
            let selectors = Selectors {
                select: c.select.clone(),
                extend_select: c.extend_select.clone(),
                ignore: c.ignore.clone(),
            };
            selectors.validate("wsp.toml [check]")?;
            out.layers.push(selectors);
            for (pattern, codes) in &c.per_file_ignores {
                let glob = glob::Pattern::new(pattern).map_err(|e| {
                    format!("wsp.toml [check] per-file-ignores: `{pattern}` is no glob: {e}")
                })?;
                for code in codes {
                    validate_selector(code).map_err(|e| {
                        format!("wsp.toml [check] per-file-ignores `{pattern}`: {e}")
                    })?;
                }
                out.per_file.push((glob, codes.clone()));
            }
            out.base = base.to_path_buf();
            out.warnings_as_errors = c.warnings_as_errors;
            for (code, level) in &c.severity {
                validate_selector(code).map_err(|e| format!("wsp.toml [check.severity]: {e}"))?;
                let severity = match level.as_str() {
                    "error" => Severity::Error,
                    "warning" => Severity::Warning,
                    other => {
                        return Err(format!(
                            "wsp.toml [check.severity]: `{code}` is `error` or `warning`, not `{other}`"
                        ));
                    }
                };
                out.severity.push((code.clone(), severity));
            }
            out.severity
                .sort_by_key(|(c, _)| std::cmp::Reverse(c.len()));
        }
        out.layers.push(cli);
        Ok(out)
    }

    /// The selection of the `wsp.toml` nearest `folder` (at or above it), with no command
    /// line: with its targets, for the readers that take both from the one file.
    pub fn of_folder(folder: &Path) -> Result<(Selection, Vec<wsp_ir::schedule::Target>), String> {
        let config = WorkspaceConfig::find_with_folder(folder)?;
        let selection = Selection::new(
            config.as_ref().map(|(c, d)| (c, d.as_path())),
            Selectors::default(),
        )?;
        Ok((
            selection,
            config.map_or_else(Vec::new, |(c, _)| c.targets()),
        ))
    }

    /// Whether `code`'s diagnostics in the file at `path` are reported.
    pub fn is_selected(&self, code: Code, path: &Path) -> bool {
        if code == Code::Syntax {
            return true;
        }
        let code = code.as_str();
        let on = self
            .layers
            .iter()
            .rev()
            .find_map(|l| l.decide(code))
            .unwrap_or(true);
        on && !self.ignored_in(code, path)
    }

    fn ignored_in(&self, code: &str, path: &Path) -> bool {
        if self.per_file.is_empty() {
            return false;
        }
        let relative = path.strip_prefix(&self.base).unwrap_or(path);
        let name = path.file_name().map(Path::new);
        self.per_file.iter().any(|(glob, codes)| {
            (glob.matches_path(relative) || name.is_some_and(|n| glob.matches_path(n)))
                && codes.iter().any(|c| code.starts_with(c.as_str()))
        })
    }

    /// The severity a diagnostic of `code` is reported with, given its own (its code's, or a
    /// warning for an advisory one): the configured one for the code, else its own, a warning
    /// made an error under `warnings_as_errors`.
    pub fn severity(&self, code: Code, own: Severity) -> Severity {
        if code == Code::Syntax {
            return Severity::Error;
        }
        if let Some((_, s)) = self
            .severity
            .iter()
            .find(|(c, _)| code.as_str().starts_with(c.as_str()))
        {
            return *s;
        }
        match own {
            Severity::Warning if self.warnings_as_errors => Severity::Error,
            s => s,
        }
    }

    /// The diagnostics of the file at `path` that are reported, with their severities.
    pub fn apply(&self, path: &Path, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        diagnostics
            .into_iter()
            .filter(|d| self.is_selected(d.code, path))
            .map(|mut d| {
                d.severity = self.severity(d.code, d.severity);
                d
            })
            .collect()
    }
}
