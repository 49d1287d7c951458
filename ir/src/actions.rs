//! A file's top-level statements that do something when it runs, in file order: the analyzer
//! lowers them, the runtime carries them out, and a front end shows what they produce.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// `NAME.execute(symbol=value, ...)`
    Execute {
        program: String,
        bindings: Vec<(String, u64)>,
    },
    /// `save_npy(T, "path")`; the path is relative to the `.wsp` file's folder.
    SaveNpy { tensor: String, path: String },
    /// `print(a, b, ...)`: the values' texts joined by spaces, as Python prints them.
    Print(Vec<Shown>),
    /// `NAME.enable_tracing(TraceLevel.X)`: whether the program's runs record their simulated
    /// timeline (a notebook shows it; `wsp run --trace` writes it).
    EnableTracing { program: String, on: bool },
    /// A bare expression statement. A run does nothing with it (as Python does with a script's);
    /// a notebook shows the value of a cell's last one.
    Show(Shown),
}

/// The fields of `program.stats`, in the order `print(program.stats)` shows them.
pub const STATS_FIELDS: [&str; 7] = [
    "task_count",
    "total_cycles",
    "critical_path_cycles",
    "simulated_time_us",
    "core_utilization",
    "compile_time_ms",
    "execute_time_ms",
];

/// A value as a statement that runs sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shown {
    /// Known when the file is checked: Python's `str()` of a constant.
    Text(String),
    /// `program.stats`: the program's last execution.
    Stats { program: String },
    /// `program.stats.FIELD`
    StatsField { program: String, field: String },
    /// A tensor's values at that point of the run.
    Tensor(String),
    /// `program.is_complete()`: `True` once the program has run at that point of the run.
    Complete { program: String },
    /// `f"..."` with fields read when the statement runs: its pieces, concatenated.
    Format(Vec<FormatPiece>),
}

/// A piece of a printed f-string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FormatPiece {
    /// Literal text and fields known when the file was checked, already formatted.
    Text(String),
    /// `{program.stats.FIELD!conversion:spec}` (`field: None` for `{program.stats}`), after
    /// the `{expr=}` text if any, formatted by `pyformat::format` when the statement runs.
    Stats {
        program: String,
        field: Option<String>,
        debug: Option<String>,
        conversion: Option<char>,
        spec: String,
    },
}
