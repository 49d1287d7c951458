//! Line magics, for what has no Python spelling: `%bind name=value`, `%workers N`,
//! `%target FILE.toml|default`, `%kernel_cycles FILE.json|model`, `%trace on|off`. They set how later runs go; they are not part
//! of the program.

use std::path::Path;

/// How cells run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Run-time symbols bound for every execution (over `execute(...)`'s own).
    pub bindings: Vec<(String, u64)>,
    pub workers: usize,
    /// The target description's name as given and its TOML text; `None` for the default part.
    pub target: Option<(String, String)>,
    /// Measured kernel cycles (`kernel_cycles.json`): the file as given and its text; `None`
    /// for the model's.
    pub kernel_cycles: Option<(String, String)>,
    /// Whether runs record and show their simulated timeline.
    pub trace: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            bindings: Vec::new(),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            target: None,
            kernel_cycles: None,
            trace: false,
        }
    }
}

/// The most `%workers` takes, as `wsp run --workers`.
const MAX_WORKERS: usize = 1024;

/// Splits a cell into its code, with each magic line blanked (so offsets and line numbers stay
/// those of the cell), and its magic lines (without the `%`). A magic line starts with `%` in
/// the first column.
pub fn split(cell: &str) -> (String, Vec<String>) {
    let mut code = String::with_capacity(cell.len());
    let mut magics = Vec::new();
    for line in cell.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix('%') {
            magics.push(rest.trim().to_string());
            let body = line.trim_end_matches(['\n', '\r']);
            code.extend(std::iter::repeat_n(' ', body.len()));
            code.push_str(&line[body.len()..]);
        } else {
            code.push_str(line);
        }
    }
    (code, magics)
}

impl Settings {
    /// Applies one magic line; returns a note to print, or a usage error.
    pub fn apply(&mut self, line: &str, base_dir: &Path) -> Result<Option<String>, String> {
        let (name, arg) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let arg = arg.trim();
        match name {
            "bind" => {
                if arg.is_empty() {
                    return Ok(Some(if self.bindings.is_empty() {
                        "no symbols bound".into()
                    } else {
                        let b: Vec<String> = self
                            .bindings
                            .iter()
                            .map(|(n, v)| format!("{n}={v}"))
                            .collect();
                        format!("bound: {}", b.join(" "))
                    }));
                }
                for pair in arg.split_whitespace() {
                    let (n, v) = pair
                        .split_once('=')
                        .ok_or_else(|| format!("`%bind {pair}`: expected name=value"))?;
                    let v: u64 = v
                        .trim()
                        .parse()
                        .ok()
                        .filter(|v| *v <= wsp_runtime::MAX_SYMBOL_VALUE)
                        .ok_or_else(|| {
                            format!(
                                "`%bind {pair}`: the value must be an integer from 0 to {}",
                                wsp_runtime::MAX_SYMBOL_VALUE
                            )
                        })?;
                    let n = n.trim().to_string();
                    self.bindings.retain(|(m, _)| *m != n);
                    self.bindings.push((n, v));
                }
                Ok(None)
            }
            "workers" => {
                let n: usize = arg
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_WORKERS).contains(n))
                    .ok_or_else(|| {
                        format!("`%workers {arg}`: expected a number from 1 to {MAX_WORKERS}")
                    })?;
                self.workers = n;
                Ok(None)
            }
            "target" => {
                if arg.is_empty() || arg == "default" {
                    self.target = None;
                    return Ok(Some("target: the built-in 910B-like description".into()));
                }
                let path = base_dir.join(arg);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("`%target {arg}`: cannot read {}: {e}", path.display()))?;
                let desc = wsp_runtime::target::TargetDesc::parse(&text)
                    .map_err(|e| format!("`%target {arg}`: {e}"))?;
                let note = format!("target: {} at {} GHz", desc.name, desc.clock_ghz);
                self.target = Some((arg.to_string(), text));
                Ok(Some(note))
            }
            "kernel_cycles" => {
                if arg.is_empty() || arg == "model" {
                    self.kernel_cycles = None;
                    return Ok(Some("kernel cycles: the model's".into()));
                }
                let path = base_dir.join(arg);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    format!(
                        "`%kernel_cycles {arg}`: cannot read {}: {e}",
                        path.display()
                    )
                })?;
                wsp_runtime::kernel_model::MeasuredCycles::parse(&text, arg)
                    .map_err(|e| format!("`%kernel_cycles {arg}`: {e}"))?;
                let note = format!(
                    "kernel cycles: measured ones from {arg}, the model's for the kernels it leaves out"
                );
                self.kernel_cycles = Some((arg.to_string(), text));
                Ok(Some(note))
            }
            "trace" => {
                self.trace = match arg {
                    "" | "on" => true,
                    "off" => false,
                    _ => return Err(format!("`%trace {arg}`: expected on or off")),
                };
                Ok(None)
            }
            _ => Err(format!(
                "unknown magic `%{name}`; the magics are %bind name=value, %workers N, %target FILE.toml|default, %kernel_cycles FILE.json|model, %trace on|off"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lines_are_blanked_in_place() {
        let (code, magics) = split("%trace on\nx = 1\n%bind seq=16\n");
        assert_eq!(code, "         \nx = 1\n            \n");
        assert_eq!(magics, ["trace on", "bind seq=16"]);
    }

    #[test]
    fn settings_take_valid_values_and_refuse_others() {
        let mut s = Settings::default();
        let dir = Path::new(".");
        s.apply("bind seq=16 n=2", dir).unwrap();
        s.apply("bind seq=8", dir).unwrap();
        assert_eq!(s.bindings, [("n".to_string(), 2), ("seq".to_string(), 8)]);
        assert!(s.apply("bind seq", dir).unwrap_err().contains("name=value"));
        assert!(s.apply("bind seq=-1", dir).is_err());
        s.apply("workers 3", dir).unwrap();
        assert_eq!(s.workers, 3);
        assert!(s.apply("workers 0", dir).is_err());
        s.apply("trace", dir).unwrap();
        assert!(s.trace);
        s.apply("trace off", dir).unwrap();
        assert!(!s.trace);
        assert!(
            s.apply("target missing.toml", dir)
                .unwrap_err()
                .contains("cannot read")
        );
        assert!(
            s.apply("frobnicate", dir)
                .unwrap_err()
                .contains("unknown magic")
        );
    }
}
