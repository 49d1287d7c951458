//! Schedule exploration, the original's `AutoScheduler`: the configurations a file asks to
//! score, how a configuration applies to a schedule, and the text of what the summary shows.
//! The analyzer builds them, the runtime scores them, the front ends show the results.

use serde::{Deserialize, Serialize};

use crate::pyformat::{PyValue, float_repr};
use crate::schedule::{Directive, DirectiveKind, WindowMode};

/// `scheduler.explore(space)`, `scheduler.find_best()` or `auto_schedule(w)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exploration {
    /// Its number among the file's explorations, in file order: what a `best_config` and a
    /// program compiled with it refer to.
    pub id: u32,
    /// What the file wrote, for messages: `scheduler.explore(space)`.
    pub label: String,
    /// The program (in the job's) whose tasks run: the explored workload with its own schedule.
    pub program: String,
    /// In the order of the space: ties keep the first.
    pub configs: Vec<Config>,
    /// The program's own schedule, as written: always scored, and what the speedup is over.
    pub baseline: Config,
    /// The sets of run-time symbol bindings each configuration is scored over, its score the
    /// sum: one task graph each. One empty set is the program's defaults.
    pub bindings: Vec<Vec<(String, u64)>>,
    pub metric: Metric,
    /// Runs per configuration timed by the wall clock (`metric="wall"`); the simulated clock is
    /// deterministic, so with cycles there is one.
    pub trials: u32,
    pub warmup: u32,
    /// `verbose=True`: each configuration's score is printed as the original prints it.
    pub verbose: bool,
}

/// What configurations are ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// The simulated clock's total cycles.
    Cycles,
    /// Wall-clock time of a whole run, the mean of `trials`: the original's measure.
    Wall,
}

impl Metric {
    pub const MEMBERS: [(&'static str, Metric); 2] =
        [("cycles", Metric::Cycles), ("wall", Metric::Wall)];

    pub fn name(self) -> &'static str {
        Self::MEMBERS[self as usize].0
    }
}

/// One configuration: the original's `ScheduleConfig` fields, ours beyond them, and the
/// directives they make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// `None`: as the program has it.
    pub streams: Option<u32>,
    /// `round_robin`, `work_steal`, `affinity`, `hash` or `dispatch_by`.
    pub dispatch: String,
    /// Its AICPU count (`num_aicpus`); written but unused for `work_steal`, as in the original.
    pub dispatch_param: u32,
    /// `immediate`, `batched` or `interleaved`.
    pub timing: String,
    pub timing_param: Option<u32>,
    /// A keyed policy's key, as written (`lambda t: t.b`).
    pub dispatch_key: Option<String>,
    /// `stream_by`'s key, as written.
    pub stream_by: Option<String>,
    /// `TaskWindow(size, "tasks", mode)`.
    pub window: Option<(u64, WindowMode)>,
    /// What the configuration sets: each replaces the schedule's directive of its slot
    /// ([`apply`]).
    pub directives: Vec<Directive>,
    /// Why the target rejects one of its directives (WSP502): it is not run.
    pub rejected: Option<String>,
    /// The program's own schedule: it sets nothing, and its fields say what the schedule has.
    pub as_written: bool,
}

impl Config {
    /// The program's own schedule as a configuration that sets nothing: its fields are what
    /// the schedule's directives say, the clock's defaults where it has none.
    pub fn as_written(schedule: &[Directive]) -> Config {
        use crate::schedule::{Dispatch, Timing};
        let mut c = Config {
            streams: None,
            dispatch: "round_robin".into(),
            dispatch_param: 0,
            timing: "immediate".into(),
            timing_param: None,
            dispatch_key: None,
            stream_by: None,
            window: None,
            directives: Vec::new(),
            rejected: None,
            as_written: true,
        };
        for d in schedule {
            match d {
                Directive::Dispatch(p) => {
                    let (name, n) = match p {
                        Dispatch::RoundRobin(n) => ("round_robin", *n),
                        Dispatch::Affinity(_, n) => ("affinity", *n),
                        Dispatch::Hash(_, n) => ("hash", *n),
                        Dispatch::DispatchBy(_, n) => ("dispatch_by", *n),
                        Dispatch::WorkSteal => ("work_steal", 0),
                    };
                    (c.dispatch, c.dispatch_param) = (name.into(), n);
                }
                Directive::Streams(n) => c.streams = Some(*n),
                Directive::Timing(t) => {
                    (c.timing, c.timing_param) = match t {
                        Timing::Immediate => ("immediate".into(), None),
                        Timing::Batched(n) => ("batched".into(), Some(*n)),
                        Timing::Interleaved(n) => ("interleaved".into(), Some(*n)),
                        Timing::RateLimit(_) => ("rate_limit".into(), None),
                    }
                }
                Directive::Window { size, mode, .. } => c.window = Some((*size, *mode)),
                _ => {}
            }
        }
        c
    }

    /// Python's `repr()`: the original's dataclass fields, then ours that are set.
    pub fn repr(&self) -> String {
        let opt = |v: &Option<u32>| v.map_or("None".to_string(), |v| v.to_string());
        let mut s = format!(
            "ScheduleConfig(streams={}, dispatch={}, dispatch_param={}, timing={}, timing_param={}",
            opt(&self.streams),
            PyValue::Str(self.dispatch.clone()).repr(),
            self.dispatch_param,
            PyValue::Str(self.timing.clone()).repr(),
            opt(&self.timing_param),
        );
        if let Some(k) = &self.dispatch_key {
            s += &format!(", dispatch_key={}", PyValue::Str(k.clone()).repr());
        }
        if let Some(k) = &self.stream_by {
            s += &format!(", stream_by={}", PyValue::Str(k.clone()).repr());
        }
        if let Some((size, mode)) = &self.window {
            s += &format!(
                ", window=({size}, {})",
                PyValue::Str(mode.name().into()).repr()
            );
        }
        s + ")"
    }

    /// A field as `config.FIELD` reads it.
    pub fn field(&self, name: &str) -> Option<PyValue> {
        let opt = |v: Option<u32>| v.map_or(PyValue::None, |v| PyValue::Int(v.into()));
        let text = |v: &Option<String>| v.clone().map_or(PyValue::None, PyValue::Str);
        Some(match name {
            "streams" => opt(self.streams),
            "dispatch" => PyValue::Str(self.dispatch.clone()),
            "dispatch_param" => PyValue::Int(self.dispatch_param.into()),
            "timing" => PyValue::Str(self.timing.clone()),
            "timing_param" => opt(self.timing_param),
            "dispatch_key" => text(&self.dispatch_key),
            "stream_by" => text(&self.stream_by),
            "window_size" => opt(self.window.map(|w| w.0.min(u32::MAX.into()) as u32)),
            _ => return None,
        })
    }

    /// The stream count as tables and summaries show it: `as written` where a configuration
    /// leaves it, `unset` where the program as written has none.
    pub fn streams_shown(&self) -> String {
        match (self.streams, self.as_written) {
            (Some(n), _) => n.to_string(),
            (None, true) => "unset".into(),
            (None, false) => "as written".into(),
        }
    }

    /// One line for tables: `streams=2 work_steal(4) immediate`, then ours that are set;
    /// `streams=as written` where the configuration leaves them.
    pub fn label(&self) -> String {
        let streams = self.streams_shown();
        // A policy's AICPU count 0 is all of them (the program's default dispatch).
        let param = match self.dispatch_param {
            0 => "all".to_string(),
            n => n.to_string(),
        };
        let mut s = format!(
            "{}streams={streams} {}({param})",
            if self.as_written { "as written: " } else { "" },
            self.dispatch,
        );
        if let Some(k) = &self.dispatch_key {
            s += &format!(" key=`{k}`");
        }
        if let Some(k) = &self.stream_by {
            s += &format!(" stream_by=`{k}`");
        }
        s += &format!(" {}", self.timing);
        if let Some(p) = self.timing_param {
            s += &format!("({p})");
        }
        if let Some((size, mode)) = self.window {
            s += &format!(" window={size}/{}", mode.name());
        }
        s
    }
}

/// The fields `config.FIELD` reads, in the dataclass's order, then ours.
pub const CONFIG_FIELDS: [&str; 8] = [
    "streams",
    "dispatch",
    "dispatch_param",
    "timing",
    "timing_param",
    "dispatch_key",
    "stream_by",
    "window_size",
];

/// Which directive of a schedule a configuration's directive replaces: a schedule has one
/// dispatch policy, one stream count, one stream key, one timing policy and one window.
pub fn slot(kind: DirectiveKind) -> Option<u8> {
    use DirectiveKind as D;
    Some(match kind {
        D::RoundRobin | D::Affinity | D::HashKey | D::DispatchBy | D::WorkSteal => 0,
        D::Streams => 1,
        D::StreamBy => 2,
        D::Immediate | D::Batched | D::Interleaved | D::RateLimit => 3,
        D::WindowStall | D::WindowAbort | D::WindowBenchmark => 4,
        _ => return None,
    })
}

/// A schedule with a configuration applied, as the original's `_apply_config` chains
/// `.dispatch(...).streams(n).timing(...)` onto the workload: each of the configuration's
/// directives replaces the schedule's of its slot; the schedule's others stay.
pub fn apply(schedule: &[Directive], config: &[Directive]) -> Vec<Directive> {
    let set: Vec<u8> = config.iter().filter_map(|d| slot(d.kind())).collect();
    schedule
        .iter()
        .filter(|d| slot(d.kind()).is_none_or(|s| !set.contains(&s)))
        .chain(config)
        .cloned()
        .collect()
}

/// What a statement reads of an exploration's results.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExploreQuery {
    /// `summary` itself.
    Summary,
    /// `summary.print_summary()`: its lines.
    PrintSummary,
    /// `best_config`, `summary.best_config`, `scheduler.find_best()`.
    BestConfig,
    /// `best_config.FIELD`
    BestConfigField(String),
    /// `summary.FIELD`: `best_time_ms`, `baseline_time_ms`, `speedup`, `best_cycles`,
    /// `baseline_cycles`.
    Field(String),
    /// `summary.top_configs(n)`
    TopConfigs(u32),
    /// `summary.results`
    Results,
    /// `len(...)` of a list.
    Len(Box<ExploreQuery>),
}

/// The numeric fields of `summary`: the original's, then the clock's.
pub const SUMMARY_FIELDS: [&str; 5] = [
    "best_time_ms",
    "baseline_time_ms",
    "speedup",
    "best_cycles",
    "baseline_cycles",
];

/// One configuration's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    /// Its index in the exploration's configurations; `None` for the baseline.
    pub config: Option<u32>,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    Ran(Score),
    /// The target rejects one of its directives.
    Rejected(String),
    /// It failed when run (a window that deadlocks, say): the error.
    Failed(String),
}

/// A configuration's measures, summed over the exploration's task graphs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub total_cycles: u64,
    pub critical_path_cycles: u64,
    /// Busy cycles of the cube cores over their count × total cycles, and of the vector
    /// cores: `wsp run`'s `core_utilization`.
    pub cube_utilization: f64,
    pub vector_utilization: f64,
    /// Simulated milliseconds at the target's clock, or, with `metric="wall"`, the mean
    /// wall-clock milliseconds of a run.
    pub time_ms: f64,
    pub task_count: u64,
}

/// An exploration's results: what `summary` and `best_config` read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub id: u32,
    pub metric: Metric,
    /// One per configuration, in the space's order.
    pub scored: Vec<Scored>,
    pub baseline: Scored,
    /// The configuration with the least score, the first of equals, if it is no slower than
    /// the program as written; `None` if none ran or the program as written is faster.
    pub best: Option<u32>,
    /// Kernel tasks the exploration ran (every graph it built, every wall-clock trial):
    /// with cycles, independent of how many configurations there are.
    pub kernel_executions: u64,
    /// Configurations whose score was read from the cache.
    pub cache_hits: u32,
}

impl Results {
    fn score(s: &Scored) -> Option<&Score> {
        match &s.outcome {
            Outcome::Ran(score) => Some(score),
            _ => None,
        }
    }

    /// The metric's value: cycles, or wall-clock ms.
    pub fn key(&self, s: &Score) -> f64 {
        match self.metric {
            Metric::Cycles => s.total_cycles as f64,
            Metric::Wall => s.time_ms,
        }
    }

    /// The best configuration: the least score, the first of equals, unless the program as
    /// written beats it.
    pub fn pick_best(&self) -> Option<u32> {
        let (i, s) = self.fastest()?;
        match self.baseline_score() {
            Some(base) if self.key(&base) < self.key(&s) => None,
            _ => Some(i),
        }
    }

    /// The fastest configuration of the space whatever the program as written takes.
    pub fn fastest(&self) -> Option<(u32, Score)> {
        self.ranked().first().copied()
    }

    /// The configurations that ran (by index) with their scores, least first, ties in the
    /// space's order.
    pub fn ranked(&self) -> Vec<(u32, Score)> {
        let mut ran: Vec<(u32, Score)> = self
            .scored
            .iter()
            .filter_map(|s| Some((s.config?, *Self::score(s)?)))
            .collect();
        ran.sort_by(|a, b| {
            self.key(&a.1)
                .total_cmp(&self.key(&b.1))
                .then(a.0.cmp(&b.0))
        });
        ran
    }

    /// The best configuration's score; the program as written's when it is the best.
    pub fn best_score(&self) -> Option<Score> {
        let Some(best) = self.best else {
            return self.baseline_score();
        };
        let s = self.scored.iter().find(|s| s.config == Some(best))?;
        Self::score(s).copied()
    }

    pub fn baseline_score(&self) -> Option<Score> {
        Self::score(&self.baseline).copied()
    }

    /// `summary.FIELD` for a field of [`SUMMARY_FIELDS`]; the original's `inf` where nothing
    /// ran.
    pub fn field(&self, name: &str) -> Option<PyValue> {
        let best = self.best_score();
        let base = self.baseline_score();
        let ms = |s: Option<Score>| PyValue::Float(s.map_or(f64::INFINITY, |s| s.time_ms));
        let cycles =
            |s: Option<Score>| s.map_or(PyValue::None, |s| PyValue::Int(s.total_cycles as i64));
        Some(match name {
            "best_time_ms" => ms(best),
            "baseline_time_ms" => ms(base),
            "speedup" => PyValue::Float(match (best, base) {
                (Some(b), Some(base)) if self.key(&b) > 0.0 => self.key(&base) / self.key(&b),
                (Some(_), None) => f64::INFINITY,
                _ => 1.0,
            }),
            "best_cycles" => cycles(best),
            "baseline_cycles" => cycles(base),
            _ => return None,
        })
    }

    /// The value a query reads, as `str()` shows it and as an f-string field formats it.
    pub fn value(&self, e: &Exploration, query: &ExploreQuery) -> Option<PyValue> {
        let config = |i: u32| &e.configs[i as usize];
        let best = self.best.map(config).unwrap_or(&e.baseline);
        Some(match query {
            ExploreQuery::BestConfig => PyValue::Str(best.repr()),
            ExploreQuery::BestConfigField(f) => best.field(f)?,
            ExploreQuery::Field(f) => self.field(f)?,
            ExploreQuery::PrintSummary => {
                PyValue::Str(self.print_summary(e).trim_end_matches('\n').to_string())
            }
            ExploreQuery::Summary => PyValue::Str(format!(
                "ExplorationSummary(results=[{} results], best_config={}, best_time_ms={}, baseline_time_ms={}, speedup={})",
                self.scored.len(),
                best.repr(),
                self.field("best_time_ms")?.repr(),
                self.field("baseline_time_ms")?.repr(),
                self.field("speedup")?.repr(),
            )),
            ExploreQuery::TopConfigs(n) => {
                let top: Vec<String> = self
                    .ranked()
                    .iter()
                    .take(*n as usize)
                    .map(|(i, s)| format!("({}, {})", config(*i).repr(), float_repr(s.time_ms)))
                    .collect();
                PyValue::Str(format!("[{}]", top.join(", ")))
            }
            ExploreQuery::Results => {
                let all: Vec<String> = self.scored.iter().map(|s| self.result_repr(e, s)).collect();
                PyValue::Str(format!("[{}]", all.join(", ")))
            }
            ExploreQuery::Len(q) => PyValue::Int(match &**q {
                ExploreQuery::TopConfigs(n) => self.ranked().len().min(*n as usize) as i64,
                ExploreQuery::Results => self.scored.len() as i64,
                _ => return None,
            }),
        })
    }

    /// `repr()` of what a query reads, as a notebook shows a cell's value.
    pub fn repr(&self, e: &Exploration, query: &ExploreQuery) -> Option<String> {
        let value = self.value(e, query)?;
        Some(match query {
            // A field's value is a string or a number; the rest are objects shown as text.
            ExploreQuery::BestConfigField(_) | ExploreQuery::Field(_) | ExploreQuery::Len(_) => {
                value.repr()
            }
            _ => value.str(),
        })
    }

    /// `ExplorationResult(...)`: the original's fields, then the clock's.
    fn result_repr(&self, e: &Exploration, s: &Scored) -> String {
        let config = s.config.map_or(&e.baseline, |i| &e.configs[i as usize]);
        match &s.outcome {
            Outcome::Ran(score) => format!(
                "ExplorationResult(config={}, execute_time_ms={}, task_count={}, error=None, total_cycles={})",
                config.repr(),
                float_repr(score.time_ms),
                score.task_count,
                score.total_cycles
            ),
            Outcome::Rejected(why) | Outcome::Failed(why) => format!(
                "ExplorationResult(config={}, execute_time_ms=0.0, task_count=0, error={})",
                config.repr(),
                PyValue::Str(why.clone()).repr()
            ),
        }
    }

    /// `print_summary()`'s lines, the original's, with the clock's measure where it timed.
    pub fn print_summary(&self, e: &Exploration) -> String {
        let ran = self
            .scored
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Ran(_)))
            .count();
        let field = |f: &str| match self.field(f) {
            Some(PyValue::Float(v)) => v,
            _ => 0.0,
        };
        let time = |ms: f64, s: Option<Score>| match (self.metric, s) {
            (Metric::Cycles, Some(s)) => {
                format!("{ms:.3} ms ({} cycles, simulated)", s.total_cycles)
            }
            _ => format!("{ms:.3} ms"),
        };
        let mut out = String::new();
        out += "Scheduling Exploration Summary\n";
        out += &format!("{}\n", "=".repeat(50));
        out += &format!("Configurations tested: {}\n", self.scored.len());
        out += &format!("Successful trials: {ran}\n");
        out += &format!(
            "Baseline time (the program as written): {}\n",
            time(field("baseline_time_ms"), self.baseline_score())
        );
        out += &format!(
            "Best time: {}\n",
            time(field("best_time_ms"), self.best_score())
        );
        out += &format!("Speedup: {:.2}x\n", field("speedup"));
        out += "\n";
        if let (None, Some(base), Some((i, fastest))) =
            (self.best, self.baseline_score(), self.fastest())
        {
            out += &format!(
                "Best configuration: the program as written. No configuration of the space beats it: the fastest, {}, is {:.2}x slower.\n",
                e.configs[i as usize].label(),
                self.key(&fastest) / self.key(&base).max(f64::MIN_POSITIVE)
            );
        }
        if let Some(b) = self.best {
            let c = &e.configs[b as usize];
            out += "Best configuration:\n";
            out += &format!("  Streams: {}\n", c.streams_shown());
            out += &format!("  Dispatch: {}({})\n", c.dispatch, c.dispatch_param);
            out += &format!("  Timing: {}\n", c.timing);
            if let Some(k) = &c.dispatch_key {
                out += &format!("  Dispatch key: {k}\n");
            }
            if let Some(k) = &c.stream_by {
                out += &format!("  Stream key: {k}\n");
            }
            if let Some((size, mode)) = c.window {
                out += &format!("  Window: {size} tasks, {}\n", mode.name());
            }
        }
        let skipped: Vec<String> = self
            .scored
            .iter()
            .filter_map(|s| match (&s.outcome, s.config) {
                (Outcome::Rejected(why), Some(i)) => Some(format!(
                    "  {}: rejected: {why}\n",
                    e.configs[i as usize].label()
                )),
                (Outcome::Failed(why), Some(i)) => Some(format!(
                    "  {}: failed: {why}\n",
                    e.configs[i as usize].label()
                )),
                _ => None,
            })
            .collect();
        if !skipped.is_empty() {
            out += &format!("Not ranked ({}):\n", skipped.len());
            out += &skipped.concat();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Dispatch, Timing};

    #[test]
    fn a_configuration_replaces_the_directives_of_its_slots_only() {
        let base = vec![
            Directive::Dispatch(Dispatch::WorkSteal),
            Directive::Streams(8),
            Directive::SpatialMap(vec![2]),
            Directive::Timing(Timing::Batched(4)),
        ];
        let config = vec![
            Directive::Dispatch(Dispatch::RoundRobin(2)),
            Directive::Streams(1),
        ];
        assert_eq!(
            apply(&base, &config),
            vec![
                Directive::SpatialMap(vec![2]),
                Directive::Timing(Timing::Batched(4)),
                Directive::Dispatch(Dispatch::RoundRobin(2)),
                Directive::Streams(1),
            ]
        );
    }
}
