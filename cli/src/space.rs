//! `wsp tune --space SPACE.toml`: a search space for a file that declares none. It means the
//! statements it is turned into, appended to the file: a `SearchSpace()` with the same `add_*`
//! calls, explored by `AutoScheduler(program).explore(...)` for each compiled program (or the
//! one named), so the space has exactly the `.wsp` API's meaning and checks.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// The file's contents.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpaceFile {
    /// The compiled programs to explore, by name; every one when absent.
    #[serde(default)]
    program: Option<Vec<String>>,
    /// Stream counts, or `"None"` for the program's own.
    streams: Option<Vec<IntOrNone>>,
    dispatch: Option<Vec<String>>,
    dispatch_params: Option<Vec<i64>>,
    /// Keys of keyed policies, as Python lambdas (`"lambda t: t.b"`).
    dispatch_keys: Option<Vec<String>>,
    timing: Option<Vec<String>>,
    timing_params: Option<Vec<i64>>,
    /// Stream keys as Python lambdas, or `"None"` for streams in turn.
    stream_by: Option<Vec<String>>,
    windows: Option<Vec<i64>>,
    window_modes: Option<Vec<String>>,
    metric: Option<String>,
    target: Option<String>,
    #[serde(default)]
    bindings: BTreeMap<String, Vec<i64>>,
}

/// A count, or the string `"None"` (TOML has no null) for what the program has.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum IntOrNone {
    Int(i64),
    Name(String),
}

/// Reads and checks a space file; its statements are made by [`SpaceFile::statements`].
pub(crate) fn read(path: &Path) -> Result<SpaceFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let space: SpaceFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |what: &str| Err(format!("{}: {what}", path.display()));
    let keys = space
        .dispatch_keys
        .iter()
        .flatten()
        .chain(space.stream_by.iter().flatten());
    for k in keys {
        let k = k.trim();
        if k != "None" && !k.starts_with("lambda") || k.contains(['\n', '\r']) {
            return bad(&format!(
                "`{k}` is not a key: keys are one-line Python lambdas (`\"lambda t: t.b\"`), or \"None\" in `stream_by`"
            ));
        }
    }
    let names = space
        .dispatch
        .iter()
        .flatten()
        .chain(space.timing.iter().flatten())
        .chain(space.window_modes.iter().flatten())
        .chain(space.metric.iter())
        .chain(space.target.iter());
    for n in names {
        if !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return bad(&format!("`{n}` is not a name"));
        }
    }
    for v in space.streams.iter().flatten() {
        if let IntOrNone::Name(n) = v
            && n != "None"
        {
            return bad(&format!(
                "`{n}` is not a stream count: write a count, or \"None\" for the program's own"
            ));
        }
    }
    for name in space.bindings.keys() {
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return bad(&format!("`{name}` is not a run-time symbol's name"));
        }
    }
    Ok(space)
}

impl SpaceFile {
    /// The programs it explores among the file's.
    pub(crate) fn programs(&self, compiled: &[String]) -> Result<Vec<String>, String> {
        match &self.program {
            None => Ok(compiled.to_vec()),
            Some(named) => {
                for n in named {
                    if !compiled.contains(n) {
                        return Err(format!(
                            "the space names the program `{n}`, which the file does not compile; it compiles {}",
                            compiled
                                .iter()
                                .map(|p| format!("`{p}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
                Ok(named.clone())
            }
        }
    }

    /// The statements the space means, exploring each of `programs`.
    pub(crate) fn statements(&self, programs: &[String]) -> String {
        let list = |v: &[String], quote: bool| {
            let items: Vec<String> = v
                .iter()
                .map(|s| if quote { format!("{s:?}") } else { s.clone() })
                .collect();
            format!("[{}]", items.join(", "))
        };
        let ints = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        let mut s = String::from("\n\n# wsp tune --space\n__wsp_space = SearchSpace()\n");
        if let Some(v) = &self.streams {
            let items: Vec<String> = v
                .iter()
                .map(|c| match c {
                    IntOrNone::Int(n) => n.to_string(),
                    IntOrNone::Name(_) => "None".into(),
                })
                .collect();
            s += &format!("__wsp_space.add_streams([{}])\n", items.join(", "));
        }
        if let Some(v) = &self.dispatch {
            let params = self
                .dispatch_params
                .as_ref()
                .map_or("None".into(), |p| ints(p));
            let keys = self
                .dispatch_keys
                .as_ref()
                .map_or("None".into(), |k| list(k, false));
            s += &format!(
                "__wsp_space.add_dispatch({}, params={params}, keys={keys})\n",
                list(v, true)
            );
        }
        if let Some(v) = &self.timing {
            let params = self
                .timing_params
                .as_ref()
                .map_or("None".into(), |p| ints(p));
            s += &format!(
                "__wsp_space.add_timing({}, params={params})\n",
                list(v, true)
            );
        }
        if let Some(v) = &self.stream_by {
            s += &format!("__wsp_space.add_stream_by({})\n", list(v, false));
        }
        if let Some(v) = &self.windows {
            let modes: Vec<String> = self
                .window_modes
                .iter()
                .flatten()
                .map(|m| format!("WindowMode.{m}"))
                .collect();
            let modes = if modes.is_empty() {
                String::new()
            } else {
                format!(", modes=[{}]", modes.join(", "))
            };
            s += &format!("__wsp_space.add_window({}{modes})\n", ints(v));
        }
        if !self.bindings.is_empty() {
            let kw: Vec<String> = self
                .bindings
                .iter()
                .map(|(n, v)| format!("{n}={}", ints(v)))
                .collect();
            s += &format!("__wsp_space.add_bindings({})\n", kw.join(", "));
        }
        let mut options = String::new();
        if let Some(m) = &self.metric {
            options += &format!(", metric={m:?}");
        }
        if let Some(t) = &self.target {
            options += &format!(", target={t:?}");
        }
        for p in programs {
            s += &format!(
                "__wsp_best_{p}, __wsp_summary_{p} = AutoScheduler({p}).explore(__wsp_space{options})\n"
            );
        }
        s
    }
}
