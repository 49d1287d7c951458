//! Chrome/Perfetto trace: one track per AICPU (dispatch) and per core (execution), times in
//! simulated microseconds.

use std::path::Path;

use serde_json::{Value, json};

use crate::graph::{Graph, TaskKind};
use crate::sim::Timeline;
use crate::target::TargetDesc;

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
                events.push(json!({"ph": "X", "name": name, "pid": CORE_PID, "tid": cube + target.vector_cores,
                    "ts": us(offset + s.start), "dur": us(s.end - s.start), "args": args}));
                continue;
            }
            events.push(
                json!({"ph": "X", "name": name, "pid": AICPU_PID, "tid": s.aicpu,
                "ts": us(offset + s.dispatch), "dur": us(target.dispatch_latency), "args": args}),
            );
            events.push(
                json!({"ph": "X", "name": name, "pid": CORE_PID, "tid": s.core,
                "ts": us(offset + s.start), "dur": us(s.end - s.start), "args": args}),
            );
        }
    }
    let doc = json!({"traceEvents": events, "displayTimeUnit": "ns",
        "otherData": {"target": target.name, "clock_ghz": target.clock_ghz}});
    crate::files::write_atomically(path, |out| {
        serde_json::to_writer(out, &doc).map_err(std::io::Error::from)
    })
}
