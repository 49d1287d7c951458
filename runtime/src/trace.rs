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
    let us = |cycles: u64| cycles as f64 / (target.clock_ghz * 1e3);
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
        events.push(flow("s", pc, ps));
        events.push(flow("f", sc, ss));
    }
    let doc = json!({"traceEvents": events, "displayTimeUnit": "ns",
        "otherData": {"target": target.name, "clock_ghz": target.clock_ghz}});
    wsp_files::write_atomically(path, |out| {
        serde_json::to_writer(out, &doc).map_err(std::io::Error::from)
    })
}
