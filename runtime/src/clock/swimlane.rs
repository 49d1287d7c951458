//! A simulated run in hw-native-sys/simpler's profiling formats, so its tools read it as they
//! read a device run: `chip_swimlane_records.json` (level 3: AICore task records, AICPU
//! dispatch/finish records, scheduler phases; `docs/dfx/chip-swimlane-profiling.md`) and
//! `deps.json` (the task graph's edges; `docs/dfx/dep-gen.md`). And the scheduler-overhead
//! shares simpler's `sched_overhead_analysis` reports (`docs/dfx/sched-overhead-model.md`),
//! computed by the same definitions.
//!
//! Times are the clock's cycles with `clock_freq_hz` the target's clock, shifted by one cycle:
//! simpler's reader takes a zero stamp as missing.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Span, owner_of_cores};
use crate::clock::target::TargetDesc;
use crate::graph::{Graph, TaskKind};

/// One kernel task on the timeline, as the overhead model sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    pub task: u32,
    /// 0: a cube (AIC) core, 1: a vector (AIV) core.
    pub engine: usize,
    pub core: u32,
    pub dispatch: u64,
    pub start: u64,
    pub end: u64,
    pub finish: u64,
    /// When its last predecessor's kernel ended; its dispatch if it has none that ran.
    pub ready: u64,
}

/// The kernel tasks of `timelines` (each with its offset), with their ready times from the
/// graph's edges.
pub fn ran(graph: &Graph, timelines: &[(u64, &[Span])], target: &TargetDesc) -> Vec<Ran> {
    let mut out: Vec<Ran> = Vec::new();
    let mut at: HashMap<u32, usize> = HashMap::new();
    for (offset, spans) in timelines {
        for s in spans.iter().filter(|s| s.core != u32::MAX) {
            if !matches!(graph.tasks[s.task as usize].kind, TaskKind::Kernel(_)) {
                continue;
            }
            at.insert(s.task, out.len());
            out.push(Ran {
                task: s.task,
                engine: usize::from(s.core >= target.cube_cores),
                core: s.core,
                dispatch: offset + s.dispatch,
                start: offset + s.start,
                end: offset + s.end,
                finish: offset + s.finish,
                ready: 0,
            });
        }
    }
    let mut ready: Vec<Option<u64>> = vec![None; out.len()];
    for (p, s) in &graph.edges {
        if let (Some(&p), Some(&s)) = (at.get(p), at.get(s))
            && p != s
        {
            let e = out[p].end;
            ready[s] = Some(ready[s].map_or(e, |r: u64| r.max(e)));
        }
    }
    for (r, ready) in out.iter_mut().zip(ready) {
        r.ready = ready.unwrap_or(r.dispatch);
    }
    out
}

/// The scheduler-overhead shares of simpler's model, each a fraction of the window from the
/// first kernel start to the last kernel end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Per engine: some core of it idle while a task for it is ready and not yet dispatched.
    pub aic: f64,
    pub aiv: f64,
    /// Every engine present at once so.
    pub all: f64,
    /// Some engine has ready work, and every engine with ready work has an idle core.
    pub has: f64,
}

/// The shares for `tasks`; `None` without a task that took time.
pub fn overhead(tasks: &[Ran]) -> Option<Overhead> {
    let w0 = tasks.iter().map(|t| t.start).min()?;
    let w1 = tasks.iter().map(|t| t.end).max()?;
    if w1 <= w0 {
        return None;
    }
    // Cores of each engine that ran anything: simpler counts no other core as idle.
    let mut cores: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for t in tasks {
        cores[t.engine].push(t.core);
    }
    let k = cores.map(|mut c| {
        c.sort_unstable();
        c.dedup();
        c.len() as i64
    });
    // Step changes: (time, engine, running change, ready change).
    let mut steps: Vec<(u64, usize, i64, i64)> = Vec::new();
    for t in tasks {
        let (s, e) = (t.start.max(w0), t.end.min(w1));
        if e > s {
            steps.push((s, t.engine, 1, 0));
            steps.push((e, t.engine, -1, 0));
        }
        let (r, d) = (t.ready.max(w0), t.dispatch.min(w1));
        if t.dispatch > t.ready && d > r {
            steps.push((r, t.engine, 0, 1));
            steps.push((d, t.engine, 0, -1));
        }
    }
    steps.sort_unstable();
    let (mut running, mut ready) = ([0i64; 2], [0i64; 2]);
    let mut time = [0u64; 2];
    let (mut all, mut has) = (0u64, 0u64);
    let present: Vec<usize> = (0..2).filter(|&e| k[e] > 0).collect();
    let mut i = 0;
    while i < steps.len() {
        let now = steps[i].0;
        while i < steps.len() && steps[i].0 == now {
            let (_, e, dr, dq) = steps[i];
            running[e] += dr;
            ready[e] += dq;
            i += 1;
        }
        let next = steps.get(i).map_or(w1, |s| s.0);
        let span = next.saturating_sub(now);
        let over = |e: usize| k[e] - running[e] > 0 && ready[e] > 0;
        for (e, t) in time.iter_mut().enumerate() {
            if over(e) {
                *t += span;
            }
        }
        if present.iter().all(|&e| over(e)) {
            all += span;
        }
        let waiting: Vec<usize> = (0..2).filter(|&e| ready[e] > 0).collect();
        if !waiting.is_empty() && waiting.iter().all(|&e| k[e] - running[e] > 0) {
            has += span;
        }
    }
    let share = |t: u64| t as f64 / (w1 - w0) as f64;
    Some(Overhead {
        aic: share(time[0]),
        aiv: share(time[1]),
        all: share(all),
        has: share(has),
    })
}

/// Writes `chip_swimlane_records.json` and `deps.json` into `dir`: `tasks` are [`ran`] of
/// `timelines`.
pub fn write(
    dir: &Path,
    graph: &Graph,
    tasks: &[Ran],
    timelines: &[(u64, &[Span])],
    target: &TargetDesc,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let aicpu_of: HashMap<u32, u32> = timelines
        .iter()
        .flat_map(|(_, spans)| spans.iter())
        .map(|s| (s.task, s.aicpu))
        .collect();
    // A cycle on: simpler takes a zero stamp for a missing one.
    let at = |c: u64| c + 1;
    let cores = target.cube_cores + target.vector_cores;
    let mut reg: Vec<u32> = vec![0; cores as usize];
    let (mut aicore, mut aicpu) = (Vec::new(), Vec::new());
    let mut by_time = tasks.to_vec();
    by_time.sort_by_key(|t| (t.dispatch, t.task));
    for t in &by_time {
        let r = &mut reg[t.core as usize];
        *r += 1;
        aicore.push(json!([
            t.core,
            t.task,
            *r,
            at(t.start),
            at(t.end),
            target.core_pickup
        ]));
        aicpu.push(json!([t.core, *r, at(t.dispatch), at(t.finish)]));
    }
    let owners = owner_of_cores(target);
    let metadata = json!({
        "clock_freq_hz": (target.clock_ghz * 1e9).round() as u64,
        "num_cores": cores,
        "core_types": (0..cores)
            .map(|c| if c < target.cube_cores { "aic" } else { "aiv" })
            .collect::<Vec<_>>(),
        "core_to_thread": owners,
    });
    let phases = scheduler_phases(&by_time, &aicpu_of, target);
    let records = json!({
        "chip_swimlane_level": 3,
        "metadata": metadata,
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
        "aicpu_scheduler_phases": phases,
    });
    let mut edges: Vec<(u32, u32)> = {
        let ids: std::collections::HashSet<u32> = tasks.iter().map(|t| t.task).collect();
        graph
            .edges
            .iter()
            .filter(|(p, s)| p != s && ids.contains(p) && ids.contains(s))
            .copied()
            .collect()
    };
    edges.sort_unstable();
    edges.dedup();
    let deps = json!({
        "tasks": tasks.iter().map(|t| json!({
            "task_id": t.task.to_string(), "scope": "auto", "kernel_ids": [-1, -1, -1],
            "block_num": 1, "args": []
        })).collect::<Vec<_>>(),
        "tensors": [],
        "edges": edges.iter().map(|(p, s)| json!({
            "pred": p.to_string(), "succ": s.to_string(), "arg": -1, "source": "explicit",
            "flags": ["wait"]
        })).collect::<Vec<_>>(),
    });
    for (name, doc) in [("chip_swimlane_records.json", records), ("deps.json", deps)] {
        let path = dir.join(name);
        wsp_files::write_atomically(&path, |out| {
            serde_json::to_writer_pretty(out, &doc).map_err(std::io::Error::from)
        })?;
    }
    Ok(())
}

/// Each AICPU's scheduler loop as simpler records it: a `dispatch` phase for each batch it
/// handed out (its issue time), a `complete` phase where it saw each task end.
fn scheduler_phases(
    tasks: &[Ran],
    aicpu_of: &HashMap<u32, u32>,
    target: &TargetDesc,
) -> Vec<Vec<Value>> {
    // Per AICPU, per dispatch time: the tasks handed out then.
    let mut batches: BTreeMap<(u32, u64), u64> = BTreeMap::new();
    let mut completes: Vec<(u32, u64)> = Vec::new();
    for t in tasks {
        let a = aicpu_of.get(&t.task).copied().unwrap_or(0);
        *batches.entry((a, t.dispatch)).or_default() += 1;
        completes.push((a, t.finish));
    }
    let mut events: Vec<Vec<(u64, Value)>> = vec![Vec::new(); target.aicpus.max(1) as usize];
    for ((a, t), n) in batches {
        let issue = target.dispatch_latency + target.batch_issue * (n - 1);
        events[a as usize].push((
            t,
            json!({"kind": "dispatch", "start_cycles": t + 1, "end_cycles": t + issue + 1,
                "tasks_processed": n, "pop_hit": n, "pop_miss": 0}),
        ));
    }
    for (a, f) in completes {
        events[a as usize].push((
            f,
            json!({"kind": "complete", "start_cycles": f + 1, "end_cycles": f + 1,
                "tasks_processed": 1}),
        ));
    }
    events
        .into_iter()
        .map(|mut e| {
            e.sort_by_key(|(t, _)| *t);
            e.into_iter()
                .enumerate()
                .map(|(i, (_, mut v))| {
                    v["loop_iter"] = json!(i + 1);
                    v
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(engine: usize, core: u32, ready: u64, dispatch: u64, start: u64, end: u64) -> Ran {
        Ran {
            task: 0,
            engine,
            core,
            dispatch,
            start,
            end,
            finish: end,
            ready,
        }
    }

    /// simpler's definitions, worked by hand on a window of 100 cycles.
    #[test]
    fn overhead_shares_follow_simplers_definitions() {
        let tasks = [
            // Two AIC cores: core 0 busy 0..100; core 1 busy 0..40, then its next task was
            // ready at 40 but dispatched at 60 (it runs 70..100).
            task(0, 0, 0, 0, 0, 100),
            task(0, 1, 0, 0, 0, 40),
            task(0, 1, 40, 60, 70, 100),
            // One AIV core: busy 0..50; a task ready at 50, dispatched at 80 (runs 90..100).
            task(1, 2, 0, 0, 0, 50),
            task(1, 2, 50, 80, 90, 100),
        ];
        let o = overhead(&tasks).unwrap();
        // AIC: an idle core and ready work over 40..60; AIV: over 50..80.
        assert_eq!((o.aic, o.aiv), (0.2, 0.3));
        // Both at once over 50..60.
        assert_eq!(o.all, 0.1);
        // Some engine has ready work, each that has an idle core: 40..80.
        assert_eq!(o.has, 0.4);
    }

    #[test]
    fn no_task_no_shares() {
        assert_eq!(overhead(&[]), None);
    }
}
