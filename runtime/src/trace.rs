//! Chrome/Perfetto trace: one track per AICPU (dispatch) and per core (execution), times in
//! simulated microseconds. Each slice has a category (`dispatch`, `kernel`, `collective`), and
//! every dependency between two tasks that ran on cores is a flow arrow from the first's slice
//! to the second's: category `channel` for a channel's edges (a sent task to its consumer,
//! back-pressure), `dependency` for the others.

use std::path::Path;

use serde_json::{Value, json};

use crate::clock::Timeline;
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, TaskKind};

const AICPU_PID: u32 = 1;
const CORE_PID: u32 = 2;

pub fn write(
    path: &Path,
    graph: &Graph,
    names: &[String],
    timelines: &[(u64, Timeline)],
    target: &TargetDesc,
) -> Result<(), String> {
    let timelines: Vec<(u64, &Timeline)> = timelines.iter().map(|(o, t)| (*o, t)).collect();
    let (slices, flows) = parts(graph, names, &timelines, target);
    let doc = document(
        &Machine::of(target),
        [(slices.as_slice(), flows.as_slice())],
    );
    wsp_files::write_atomically(path, |out| {
        serde_json::to_writer(out, &doc).map_err(std::io::Error::from)
    })
}

/// The document of runs' slices and flow arrows (`parts` of each): the tracks, then every
/// run's slices, then every run's flows, numbered across the runs. A run that would begin
/// before the one before it ends (a notebook cell's, whose clock starts at 0 again) is moved
/// to begin where that one ends, so runs follow one another and no slices overlap.
pub(crate) fn document<'a>(
    target: &Machine,
    runs: impl IntoIterator<Item = (&'a [Value], &'a [Value])>,
) -> Value {
    let mut events: Vec<Value> = tracks(target);
    let mut flows_out = Vec::new();
    let mut base = 0;
    let mut end = 0.0f64;
    for (slices, flows) in runs {
        let ts = |e: &Value| e["ts"].as_f64().unwrap_or(0.0);
        let Some(first) = slices.iter().map(ts).min_by(f64::total_cmp) else {
            continue;
        };
        let shift = (end - first).max(0.0);
        let moved = |e: &Value| {
            let mut e = e.clone();
            if shift > 0.0 {
                e["ts"] = json!(ts(&e) + shift);
            }
            e
        };
        for e in slices {
            end = end.max(ts(e) + shift + e["dur"].as_f64().unwrap_or(0.0));
            events.push(moved(e));
        }
        // Each run's flows are numbered from 0, a start and a finish each.
        for f in flows {
            let mut f = moved(f);
            f["id"] = json!(base + f["id"].as_u64().unwrap_or(0));
            flows_out.push(f);
        }
        base += flows.len() as u64 / 2;
    }
    events.extend(flows_out);
    json!({"traceEvents": events, "displayTimeUnit": "ns",
        "otherData": {"target": target.name, "clock_ghz": target.clock_ghz}})
}

/// What a trace's tracks and times are of: the target's name, clock and units.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    pub name: String,
    pub clock_ghz: f64,
    pub aicpus: u32,
    pub cube_cores: u32,
    pub vector_cores: u32,
}

impl Machine {
    pub fn of(t: &TargetDesc) -> Machine {
        Machine {
            name: t.name.clone(),
            clock_ghz: t.clock_ghz,
            aicpus: t.aicpus,
            cube_cores: t.cube_cores,
            vector_cores: t.vector_cores,
        }
    }
}

/// The named tracks: one per AICPU, one per core.
fn tracks(target: &Machine) -> Vec<Value> {
    let mut events: Vec<Value> = vec![
        json!({"ph": "M", "name": "process_name", "pid": AICPU_PID, "args": {"name": "AICPUs"}}),
        json!({"ph": "M", "name": "process_name", "pid": CORE_PID, "args": {"name": "Cores"}}),
    ];
    for a in 0..target.aicpus {
        events.push(json!({"ph": "M", "name": "thread_name", "pid": AICPU_PID, "tid": a, "args": {"name": format!("AICPU {a}")}}));
    }
    let cube = target.cube_cores;
    for c in 0..cube + target.vector_cores {
        let name = if c < cube {
            format!("cube {c}")
        } else {
            format!("vector {}", c - cube)
        };
        events.push(json!({"ph": "M", "name": "thread_name", "pid": CORE_PID, "tid": c, "args": {"name": name}}));
    }
    events
}

/// The slices of timelines (each with its offset on the run's clock), and the flow arrows
/// between them numbered from 0.
pub(crate) fn parts(
    graph: &Graph,
    names: &[String],
    timelines: &[(u64, &Timeline)],
    target: &TargetDesc,
) -> (Vec<Value>, Vec<Value>) {
    let us = |cycles: u64| cycles as f64 / (target.clock_ghz * 1e3);
    let cube = target.cube_cores;
    let mut events: Vec<Value> = Vec::new();
    // Where each task ran on a core, for the flow arrows.
    let mut ran: std::collections::HashMap<u32, (u32, u64, u64)> = std::collections::HashMap::new();
    for (offset, tl) in timelines {
        for s in &tl.spans {
            if s.core != u32::MAX {
                ran.insert(s.task, (s.core, offset + s.start, offset + s.end));
            }
        }
    }
    for (offset, tl) in timelines {
        for s in &tl.spans {
            let task = &graph.tasks[s.task as usize];
            let name = match task.kind {
                TaskKind::Kernel(k) => {
                    let mut idx = Vec::new();
                    graph.index_of(s.task, |v| idx.push(v.to_string()));
                    format!("{}[{}]", names[k as usize], idx.join(", "))
                }
                TaskKind::Collective(c) => format!("collective #{c}"),
                TaskKind::Barrier => "barrier".into(),
                // The trace is written from the expanded graph, where no launch is left.
                TaskKind::Launch(l) => format!("launch #{l}"),
            };
            let args = json!({"task": s.task, "start_cycle": offset + s.start, "end_cycle": offset + s.end});
            if s.core == u32::MAX {
                events.push(json!({"ph": "X", "name": name, "cat": "collective", "pid": CORE_PID, "tid": cube + target.vector_cores,
                    "ts": us(offset + s.start), "dur": us(s.end - s.start), "args": args}));
                continue;
            }
            events.push(
                json!({"ph": "X", "name": name, "cat": "dispatch", "pid": AICPU_PID, "tid": s.aicpu,
                "ts": us(offset + s.dispatch), "dur": us(target.dispatch_latency), "args": args}),
            );
            events.push(
                json!({"ph": "X", "name": name, "cat": "kernel", "pid": CORE_PID, "tid": s.core,
                "ts": us(offset + s.start), "dur": us(s.end - s.start), "args": args}),
            );
        }
    }
    // Dependencies between tasks that ran on cores, in edge order (duplicates once).
    let mut edges: Vec<(u32, u32)> = graph
        .edges
        .iter()
        .filter(|(p, s)| ran.contains_key(p) && ran.contains_key(s))
        .copied()
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let channel: std::collections::HashSet<&(u32, u32)> = graph.channel_edges.iter().collect();
    let mut flows = Vec::new();
    for (id, (p, s)) in edges.into_iter().enumerate() {
        let cat = if channel.contains(&(p, s)) {
            "channel"
        } else {
            "dependency"
        };
        // Each end binds to the slice it lies in: the predecessor's from its start, the
        // successor's at its start.
        let (pc, ps, _) = ran[&p];
        let (sc, ss, _) = ran[&s];
        let flow = |ph: &str, core: u32, t: u64| {
            json!({"ph": ph, "id": id, "name": cat, "cat": cat,
                "pid": CORE_PID, "tid": core, "ts": us(t), "bp": "e"})
        };
        flows.push(flow("s", pc, ps));
        flows.push(flow("f", sc, ss));
    }
    (events, flows)
}
