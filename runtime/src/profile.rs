//! `program.trace`, the original's `ExecutionTrace`: what each traced run of a program recorded
//! (`TracedRun`, at its `TraceLevel`), and the values its methods give over the runs recorded
//! so far (`value`), all on the simulated clock: a time is cycles at the target's clock.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wsp_ir::pyformat::{PyValue, float_repr};
use wsp_ir::{TraceLevel, TraceQuery};

use crate::clock::Timeline;
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, TaskKind};
use crate::trace::{self, Machine};

/// One run of a program as its trace level recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedRun {
    pub level: TraceLevel,
    pub machine: Machine,
    pub total_cycles: u64,
    pub critical_path_cycles: u64,
    pub busy_core_cycles: u64,
    /// The run's first dispatch and last finish, on the clock of the whole file's run.
    pub first_cycle: u64,
    pub last_cycle: u64,
    /// Tasks (kernel tasks and collectives), and their cycles from dispatch to finish.
    pub tasks: u64,
    pub task_cycles: u64,
    /// Per kernel, in the order the run first ran it: its runs on cores and their cycles.
    pub kernels: Vec<(String, u64, u64)>,
    /// `TIMING` and above: one event per task, then one per kernel run on a core.
    pub task_events: Vec<Event>,
    pub kernel_events: Vec<Event>,
    /// `TIMING` and above: the run's slices and flow arrows of the Chrome trace.
    pub slices: Vec<Value>,
    pub flows: Vec<Value>,
}

/// A trace event: a task (from its dispatch to when its AICPU saw it end) or a kernel's run on
/// a core. Printed and written as a dict of these fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub name: String,
    pub category: String,
    pub task_id: u32,
    pub indices: Vec<i64>,
    pub aicpu: Option<u32>,
    pub core: Option<u32>,
    pub start_cycle: u64,
    pub end_cycle: u64,
    pub start_us: f64,
    pub end_us: f64,
    pub duration_us: f64,
    /// `FULL`: the task's tiles (`param: tensor[lo:hi, ...]`) and the tasks it waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deps: Option<Vec<u32>>,
}

/// What one run records at `level`: `offset` places its timeline on the file's clock; `args`
/// gives a task's tiles (recorded at `FULL` only).
pub(crate) fn record(
    level: TraceLevel,
    graph: &Graph,
    names: &[String],
    (offset, tl): (u64, &Timeline),
    target: &TargetDesc,
    args: &dyn Fn(u32) -> Option<Vec<String>>,
) -> TracedRun {
    let us = |cycles: u64| cycles as f64 / (target.clock_ghz * 1e3);
    let timing = level >= TraceLevel::Timing;
    let full = level >= TraceLevel::Full;
    let mut run = TracedRun {
        level,
        machine: Machine::of(target),
        total_cycles: tl.total_cycles,
        critical_path_cycles: tl.critical_path_cycles,
        busy_core_cycles: tl.busy_core_cycles,
        first_cycle: u64::MAX,
        last_cycle: 0,
        tasks: 0,
        task_cycles: 0,
        kernels: Vec::new(),
        task_events: Vec::new(),
        kernel_events: Vec::new(),
        slices: Vec::new(),
        flows: Vec::new(),
    };
    let deps = if full {
        let mut by_task: std::collections::HashMap<u32, Vec<u32>> = Default::default();
        for &(p, s) in &graph.edges {
            by_task.entry(s).or_default().push(p);
        }
        for d in by_task.values_mut() {
            d.sort_unstable();
            d.dedup();
        }
        by_task
    } else {
        Default::default()
    };
    for s in &tl.spans {
        let task = &graph.tasks[graph.entry_of(s.task) as usize];
        let collective = s.core == u32::MAX;
        let (start, end) = if collective {
            (s.start, s.end)
        } else {
            (s.dispatch, s.finish)
        };
        let (start, end) = (offset + start, offset + end.max(start));
        run.first_cycle = run.first_cycle.min(start);
        run.last_cycle = run.last_cycle.max(end);
        run.tasks += 1;
        run.task_cycles += end - start;
        let name = match task.kind {
            TaskKind::Kernel(k) => names.get(k as usize).cloned().unwrap_or_default(),
            TaskKind::Launch(l) => names
                .get(graph.launches[l as usize].kernel as usize)
                .cloned()
                .unwrap_or_default(),
            TaskKind::Collective(_) => "collective".into(),
            TaskKind::Barrier => "barrier".into(),
        };
        if !collective {
            let cycles = s.end - s.start;
            match run.kernels.iter_mut().find(|k| k.0 == name) {
                Some(k) => {
                    k.1 += 1;
                    k.2 += cycles;
                }
                None => run.kernels.push((name.clone(), 1, cycles)),
            }
        }
        if !timing {
            continue;
        }
        let mut indices = Vec::new();
        graph.index_of(s.task, |v| indices.push(v));
        let event = |category: &str, start: u64, end: u64| Event {
            name: name.clone(),
            category: category.into(),
            task_id: s.task,
            indices: indices.clone(),
            aicpu: (!collective).then_some(s.aicpu),
            core: (!collective).then_some(s.core),
            start_cycle: start,
            end_cycle: end,
            start_us: us(start),
            end_us: us(end),
            duration_us: us(end - start),
            args: if full { args(s.task) } else { None },
            deps: full.then(|| deps.get(&s.task).cloned().unwrap_or_default()),
        };
        run.task_events.push(event("task", start, end));
        if !collective {
            let k = event("kernel", offset + s.start, offset + s.end);
            run.kernel_events.push(k);
        }
    }
    if run.first_cycle == u64::MAX {
        run.first_cycle = offset;
    }
    if timing {
        (run.slices, run.flows) = trace::parts(graph, names, &[(offset, tl)], target);
    }
    run
}

/// The keys of a summary are `wsp_ir::TRACE_SUMMARY_FIELDS`, in that order.
fn summary(runs: &[&TracedRun]) -> Map<String, Value> {
    let ms = |r: &TracedRun, cycles: u64| cycles as f64 / (r.machine.clock_ghz * 1e6);
    let tasks: u64 = runs.iter().map(|r| r.tasks).sum();
    let invocations: u64 = runs.iter().flat_map(|r| &r.kernels).map(|k| k.1).sum();
    let mut kernels: Map<String, Value> = Map::new();
    for r in runs {
        for (name, count, cycles) in &r.kernels {
            let entry = kernels
                .entry(name.clone())
                .or_insert_with(|| json!({"count": 0, "cycles": 0, "time_ms": 0.0}));
            entry["count"] = json!(entry["count"].as_u64().unwrap_or(0) + count);
            entry["cycles"] = json!(entry["cycles"].as_u64().unwrap_or(0) + cycles);
            entry["time_ms"] = json!(entry["time_ms"].as_f64().unwrap_or(0.0) + ms(r, *cycles));
        }
    }
    // From the first run's first dispatch to the last run's last finish. Runs of one file
    // share its clock; a later cell's starts at 0 again, so it is taken to follow the one
    // before, as the Chrome trace draws it.
    let mut end = runs.first().map_or(0, |r| r.first_cycle);
    for r in runs {
        end = end.max(r.first_cycle) + (r.last_cycle - r.first_cycle.min(r.last_cycle));
    }
    let total_ms = runs
        .first()
        .map_or(0.0, |a| ms(a, end.saturating_sub(a.first_cycle)));
    let kernel_ms: f64 = runs
        .iter()
        .map(|r| ms(r, r.kernels.iter().map(|k| k.2).sum()))
        .sum();
    let task_us: f64 = runs.iter().map(|r| ms(r, r.task_cycles) * 1e3).sum();
    let total_cycles: u64 = runs.iter().map(|r| r.total_cycles).sum();
    let capacity: f64 = runs
        .iter()
        .map(|r| {
            let cores = r.machine.cube_cores + r.machine.vector_cores;
            f64::from(cores) * r.total_cycles as f64
        })
        .sum();
    let busy: u64 = runs.iter().map(|r| r.busy_core_cycles).sum();
    let values = [
        json!(tasks + invocations),
        json!(tasks),
        json!(invocations),
        json!(total_ms),
        json!(kernel_ms),
        json!(if tasks == 0 {
            0.0
        } else {
            task_us / tasks as f64
        }),
        json!(kernels.len()),
        Value::Object(kernels),
        json!(total_cycles),
        json!(runs.iter().map(|r| r.critical_path_cycles).sum::<u64>()),
        json!(if capacity > 0.0 {
            busy as f64 / capacity
        } else {
            0.0
        }),
        json!(runs.last().map_or(0.0, |r| r.machine.clock_ghz)),
        json!(runs.last().map_or(TraceLevel::None, |r| r.level).name()),
    ];
    wsp_ir::TRACE_SUMMARY_FIELDS
        .iter()
        .map(|k| k.to_string())
        .zip(values)
        .collect()
}

/// The value of a query over the runs recorded so far.
pub fn value(runs: &[&TracedRun], query: &TraceQuery) -> Value {
    let events = |kernel: bool, name: Option<&str>| -> Value {
        let list: Vec<Value> = runs
            .iter()
            .flat_map(|r| {
                if kernel {
                    &r.kernel_events
                } else {
                    &r.task_events
                }
            })
            .filter(|e| name.is_none_or(|n| e.name == n))
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        Value::Array(list)
    };
    match query {
        TraceQuery::Trace | TraceQuery::Summary => Value::Object(summary(runs)),
        TraceQuery::SummaryField(k) => summary(runs).remove(k).unwrap_or(Value::Null),
        TraceQuery::TotalTimeMs => summary(runs).remove("total_time_ms").unwrap_or_default(),
        TraceQuery::KernelTimeMs => summary(runs).remove("kernel_time_ms").unwrap_or_default(),
        TraceQuery::TaskEvents => events(false, None),
        TraceQuery::KernelEvents(name) => events(true, name.as_deref()),
        TraceQuery::Len(inner) => json!(value(runs, inner).as_array().map_or(0, Vec::len)),
        TraceQuery::PrintSummary => Value::String(summary_text(runs)),
        TraceQuery::ChromeTrace => {
            let machine = runs.last().map(|r| r.machine.clone());
            let machine = machine.unwrap_or(Machine {
                name: String::new(),
                clock_ghz: 1.0,
                aicpus: 0,
                cube_cores: 0,
                vector_cores: 0,
            });
            let parts: Vec<(&[Value], &[Value])> = runs
                .iter()
                .map(|r| (r.slices.as_slice(), r.flows.as_slice()))
                .collect();
            trace::document(&machine, parts.iter().copied())
        }
    }
}

/// `print_summary()`: the original's lines, then the clock's figures and each kernel's totals.
fn summary_text(runs: &[&TracedRun]) -> String {
    let s = summary(runs);
    let int = |k: &str| s[k].as_u64().unwrap_or(0);
    let float = |k: &str| s[k].as_f64().unwrap_or(0.0);
    let mut lines = vec![
        "Execution Trace Summary:".to_string(),
        format!("  Total events: {}", int("total_events")),
        format!("  Tasks executed: {}", int("task_count")),
        format!("  Kernel invocations: {}", int("kernel_invocations")),
        format!("  Unique kernels: {}", int("unique_kernels")),
        format!("  Total time: {:.3} ms", float("total_time_ms")),
        format!("  Kernel time: {:.3} ms", float("kernel_time_ms")),
        format!("  Avg task time: {:.2} us", float("avg_task_time_us")),
    ];
    if let Some(last) = runs.last() {
        lines.push(format!(
            "  Simulated on {} at {} GHz: {} cycles, critical path {} cycles, core utilization {:.1}%",
            last.machine.name,
            last.machine.clock_ghz,
            int("total_cycles"),
            int("critical_path_cycles"),
            float("core_utilization") * 100.0
        ));
    } else {
        lines.push(
            "  No run recorded (enable_tracing(TraceLevel.SUMMARY) or above, then execute())"
                .into(),
        );
    }
    if let Some(Value::Object(kernels)) = s.get("kernels") {
        for (name, k) in kernels {
            lines.push(format!(
                "  {name}: {} runs, {} cycles, {:.3} ms",
                k["count"].as_u64().unwrap_or(0),
                k["cycles"].as_u64().unwrap_or(0),
                k["time_ms"].as_f64().unwrap_or(0.0)
            ));
        }
    }
    lines.join("\n")
}

/// A value as Python's `str()` shows it (`print`): a dict `{'key': 1}`, a list, a float in
/// full (`0.5`), a string as itself at the top and quoted inside.
pub fn python_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => python_repr(v),
    }
}

pub fn python_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), ..) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (.., Some(f)) => float_repr(f),
            _ => n.to_string(),
        },
        Value::String(s) => PyValue::Str(s.clone()).repr(),
        Value::Array(vs) => {
            let items: Vec<String> = vs.iter().map(python_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", PyValue::Str(k.clone()).repr(), python_repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// A value as an f-string field formats it: a number or a string by its spec, anything else
/// by its `str()`.
pub fn py_value(v: &Value) -> PyValue {
    match v {
        Value::Null => PyValue::None,
        Value::Bool(b) => PyValue::Bool(*b),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            PyValue::Int(n.as_i64().unwrap_or(i64::MAX))
        }
        Value::Number(n) => PyValue::Float(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => PyValue::Str(s.clone()),
        v => PyValue::Str(python_repr(v)),
    }
}

/// Writes `value` as Python's `json.dump(value, f, indent=indent)` does: `", "` and `": "`
/// between items without an indent, one item per line with one.
pub fn write_json(
    path: &std::path::Path,
    value: &Value,
    indent: Option<u32>,
) -> Result<(), String> {
    wsp_files::write_atomically(path, |out| {
        let r = match indent {
            Some(n) => {
                let spaces = " ".repeat(n as usize);
                let f = serde_json::ser::PrettyFormatter::with_indent(spaces.as_bytes());
                let mut ser = serde_json::Serializer::with_formatter(out, f);
                value.serialize(&mut ser)
            }
            None => {
                let mut ser = serde_json::Serializer::with_formatter(out, PythonCompact);
                value.serialize(&mut ser)
            }
        };
        r.map_err(std::io::Error::from)
    })
}

/// Python's default separators: `", "` between items, `": "` after a key.
struct PythonCompact;

impl serde_json::ser::Formatter for PythonCompact {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}
