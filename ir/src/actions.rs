//! A file's top-level statements that do something when it runs, in file order: the analyzer
//! lowers them, the runtime carries them out, and a front end shows what they produce.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// `NAME.enable_tracing(TraceLevel.X)` (`disable_tracing()` is `TraceLevel.NONE`): what the
    /// program's later runs record in `program.trace` (a notebook also shows their timeline).
    EnableTracing { program: String, level: TraceLevel },
    /// `NAME.clear_trace()`: `program.trace` forgets the runs recorded so far.
    ClearTrace { program: String },
    /// `with open(path, "w") as f: json.dump(value, f, indent=...)`; the path is relative to the
    /// `.wsp` file's folder.
    WriteJson {
        value: JsonValue,
        path: String,
        indent: Option<u32>,
    },
    /// `scheduler.explore(space)`, `find_best()`, `auto_schedule(w)`: score the configurations.
    Explore(Box<crate::explore::Exploration>),
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
    /// What `program.trace` holds at that point of the run: the trace itself (shown as its
    /// summary), one of its methods' values, or the lines of `print_summary()`.
    Trace { program: String, query: TraceQuery },
    /// What an exploration found (by its id), read once it has run.
    Explored {
        exploration: u32,
        query: crate::explore::ExploreQuery,
    },
}

/// `TraceLevel.X`, ordered as the original's `IntEnum`: each level records what the one before
/// it does, and more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TraceLevel {
    /// Nothing is recorded.
    None,
    /// Each run's totals: `summary()`.
    Summary,
    /// Each task's events: where and when it was dispatched and ran.
    Timing,
    /// Also each task's arguments (views) and the tasks it waited for.
    Full,
}

impl TraceLevel {
    pub const MEMBERS: [(&'static str, TraceLevel); 4] = [
        ("NONE", TraceLevel::None),
        ("SUMMARY", TraceLevel::Summary),
        ("TIMING", TraceLevel::Timing),
        ("FULL", TraceLevel::Full),
    ];

    pub fn from_name(name: &str) -> Option<TraceLevel> {
        Self::MEMBERS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, l)| l)
    }

    pub fn name(self) -> &'static str {
        Self::MEMBERS[self as usize].0
    }
}

/// What a statement reads of `program.trace`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TraceQuery {
    /// `program.trace`
    Trace,
    /// `program.trace.print_summary()`: its lines.
    PrintSummary,
    /// `program.trace.summary()`: a dict of `TRACE_SUMMARY_FIELDS`.
    Summary,
    /// `program.trace.summary()["FIELD"]`
    SummaryField(String),
    /// `get_task_events()`: one event per task, from its dispatch to when its AICPU saw it end.
    TaskEvents,
    /// `get_kernel_events(name)`: one event per kernel run on a core, of one kernel or all.
    KernelEvents(Option<String>),
    /// `to_chrome_trace()`: the document `wsp run --trace` writes, of the traced runs.
    ChromeTrace,
    /// `total_time_ms()`: simulated time from the first event to the last.
    TotalTimeMs,
    /// `kernel_time_ms()`: simulated time summed over kernel runs.
    KernelTimeMs,
    /// `len(...)` of an event list.
    Len(Box<TraceQuery>),
}

/// The keys of `program.trace.summary()`, in its order: the original's, then per-kernel
/// totals and the clock's fields.
pub const TRACE_SUMMARY_FIELDS: [&str; 13] = [
    "total_events",
    "task_count",
    "kernel_invocations",
    "total_time_ms",
    "kernel_time_ms",
    "avg_task_time_us",
    "unique_kernels",
    "kernels",
    "total_cycles",
    "critical_path_cycles",
    "core_utilization",
    "clock_ghz",
    "trace_level",
];

/// A value `json.dump` writes: known when the file is checked, or read from `program.trace`
/// when the statement runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum JsonValue {
    Known(KnownJson),
    Trace { program: String, query: TraceQuery },
}

/// A constant as JSON holds it: tuples are lists, as Python's `json` writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KnownJson {
    Null,
    Bool(bool),
    Int(i64),
    Float(crate::plan::F64),
    Str(String),
    List(Vec<KnownJson>),
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
    /// `{program.trace.summary()["FIELD"]:spec}` and other trace values, formatted when the
    /// statement runs.
    Trace {
        program: String,
        query: TraceQuery,
        debug: Option<String>,
        conversion: Option<char>,
        spec: String,
    },
    /// `{summary.speedup:.2f}` and other values of an exploration's results.
    Explored {
        exploration: u32,
        query: crate::explore::ExploreQuery,
        debug: Option<String>,
        conversion: Option<char>,
        spec: String,
    },
}
