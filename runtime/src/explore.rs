//! Schedule exploration: a program's tasks are enumerated and run once per task graph (one
//! per set of bindings), on a copy of the tensors, and every configuration is scored by the
//! simulated clock alone over that graph. A schedule changes neither the tasks nor their
//! numbers, only when and where each runs, so the graph serves every configuration; keys a
//! configuration dispatches or streams by are evaluated for every task while it is enumerated.
//!
//! Configurations are scored in parallel, each by its own call of the clock over the shared,
//! read-only graph: workers share nothing per configuration (results are collected per chunk,
//! and progress is counted once per chunk), so the scoring scales with cores. Scores are cached on disk by the content hash of
//! everything they depend on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use wsp_ir::explore::{Config, Exploration, Metric, Outcome, Results, Score, Scored, apply};
use wsp_ir::{Directive, Program, ScalarExpr};

use crate::clock::target::TargetDesc;
use crate::clock::{self, KernelCost};
use crate::exec::{CyclesFn, KernelFn};
use crate::graph::TaskId;
use crate::run::Run;
use crate::tensors::Tensors;
use crate::{RunError, enumerate};

/// What an exploration runs tasks with: the job's kernels, costs and target.
pub(crate) struct Machine<'a> {
    pub kernels: &'a [KernelFn],
    pub cycle_hooks: &'a [Option<CyclesFn>],
    pub costs: &'a [KernelCost],
    pub target: &'a TargetDesc,
    pub workers: usize,
    pub index_launches: bool,
    /// Host memory beside the run's tensors: the copy of the tensors and the tasks come out
    /// of it.
    pub memory: u64,
    /// What the scores depend on beyond the program and the tensors: the target description
    /// and measured kernel cycles as given, and the runtime's own identity.
    pub identity: String,
    /// `(i, n)`: only the configurations `k` with `k mod n = i - 1` are scored.
    pub shard: Option<(u32, u32)>,
    /// Called with the configurations scored so far and how many there are to score.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

/// One file of the score cache (`Job::tune_cache`): the scores of one exploration's inputs.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    /// By the hash of a configuration and its exploration's inputs.
    scores: HashMap<String, Outcome>,
}

/// Explores `e` over `program`: the results, the kernel tasks run, and what `verbose` prints.
pub(crate) fn explore(
    m: &Machine,
    e: &Exploration,
    program: &Program,
    kernel_base: u32,
    defaults: &HashMap<String, u64>,
    tensors: &Tensors,
    cache: Option<&Path>,
) -> Result<(Results, String), RunError> {
    let mut verbose = String::new();
    if e.verbose {
        verbose += &match e.metric {
            Metric::Wall => format!(
                "Exploring {} configurations ({} trials each)\n",
                e.configs.len(),
                e.trials
            ),
            Metric::Cycles => format!(
                "Exploring {} configurations (by simulated cycles: one trial each is exact)\n",
                e.configs.len()
            ),
        };
    }
    let binds: Vec<HashMap<String, u64>> = e
        .bindings
        .iter()
        .map(|set| {
            let mut b = defaults.clone();
            b.extend(set.iter().cloned());
            b
        })
        .collect();
    // The configurations this run scores: the baseline (0), then the shard's (k + 1 for
    // configuration k).
    let mine: Vec<usize> = (0..=e.configs.len())
        .filter(|&i| {
            i == 0
                || m.shard
                    .is_none_or(|(s, n)| (i as u32 - 1) % n.max(1) == s.saturating_sub(1))
        })
        .collect();
    let all: Vec<&Config> = mine
        .iter()
        .map(|&i| {
            if i == 0 {
                &e.baseline
            } else {
                &e.configs[i - 1]
            }
        })
        .collect();
    let schedules: Vec<Vec<Directive>> = all
        .iter()
        .map(|c| apply(&program.schedule, &c.directives))
        .collect();
    let mut outcomes: Vec<Option<Outcome>> = all
        .iter()
        .map(|c| c.rejected.clone().map(Outcome::Rejected))
        .collect();
    let cached = cache.filter(|_| e.metric == Metric::Cycles).map(|dir| {
        let inputs = inputs_hash(m, program, &binds, tensors);
        let path = dir.join(format!("{}.json", &inputs.to_hex()[..32]));
        let file: CacheFile = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        (path, inputs, file)
    });
    let key_of = |inputs: &blake3::Hash, s: &[Directive]| {
        let mut h = blake3::Hasher::new();
        h.update(inputs.as_bytes());
        h.update(serde_json::to_string(s).unwrap_or_default().as_bytes());
        h.finalize().to_hex()[..32].to_string()
    };
    let mut cache_hits = 0;
    if let Some((_, inputs, file)) = &cached {
        for (i, s) in schedules.iter().enumerate() {
            if outcomes[i].is_none()
                && let Some(o) = file.scores.get(&key_of(inputs, s))
            {
                outcomes[i] = Some(o.clone());
                cache_hits += u32::from(i > 0);
            }
        }
    }
    let pending: Vec<usize> = (0..all.len()).filter(|&i| outcomes[i].is_none()).collect();
    let mut kernel_executions = 0;
    if !pending.is_empty() {
        let scored = match e.metric {
            Metric::Cycles => {
                let (scores, ran) = by_cycles(
                    m,
                    program,
                    kernel_base,
                    &binds,
                    tensors,
                    &schedules,
                    &pending,
                )?;
                kernel_executions += ran;
                scores
            }
            Metric::Wall => {
                let (scores, ran) = by_wall(
                    m,
                    e,
                    program,
                    kernel_base,
                    &binds,
                    tensors,
                    &schedules,
                    &pending,
                )?;
                kernel_executions += ran;
                scores
            }
        };
        for (&i, o) in pending.iter().zip(scored) {
            outcomes[i] = Some(o);
        }
        if let Some((path, inputs, mut file)) = cached {
            // What another run (a shard on this machine) wrote meanwhile is kept.
            let since: Option<CacheFile> = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            file.scores.extend(since.into_iter().flat_map(|f| f.scores));
            for &i in &pending {
                if let Some(o @ Outcome::Ran(_)) = &outcomes[i] {
                    file.scores
                        .insert(key_of(&inputs, &schedules[i]), o.clone());
                }
            }
            // A cache that cannot be written costs the next run its scores, nothing more.
            let _ = wsp_files::write_atomically(&path, |out| {
                serde_json::to_writer(out, &file).map_err(std::io::Error::other)
            });
        }
    }
    let mut outcomes = outcomes
        .into_iter()
        .map(|o| o.expect("every configuration scored"));
    let baseline = Scored {
        config: None,
        outcome: outcomes.next().expect("the baseline"),
    };
    let scored: Vec<Scored> = outcomes
        .zip(&mine[1..])
        .map(|(outcome, &i)| Scored {
            config: Some(i as u32 - 1),
            outcome,
        })
        .collect();
    let mut results = Results {
        id: e.id,
        metric: e.metric,
        scored,
        baseline,
        best: None,
        kernel_executions,
        cache_hits,
    };
    results.best = results.pick_best();
    if e.verbose {
        for s in &results.scored {
            let i = s.config.unwrap_or(0) as usize;
            let c = &e.configs[i];
            verbose += &format!(
                "  [{}/{}] Testing {}({}) streams={} timing={}\n",
                i + 1,
                e.configs.len(),
                c.dispatch,
                c.dispatch_param,
                c.streams_shown(),
                c.timing
            );
            verbose += &match &s.outcome {
                Outcome::Ran(score) => match e.metric {
                    Metric::Cycles => format!(
                        "    Simulated: {:.3}ms ({} cycles)\n",
                        score.time_ms, score.total_cycles
                    ),
                    Metric::Wall => format!("    Average: {:.3}ms\n", score.time_ms),
                },
                Outcome::Rejected(why) => format!("    Rejected: {why}\n"),
                Outcome::Failed(why) => format!("    Failed: {why}\n"),
            };
        }
    }
    Ok((results, verbose))
}

/// The hash of everything a score depends on but the configuration: the program, the
/// bindings, the tensors' values (predicates and slots read them), the target, the kernel
/// costs and this runtime.
fn inputs_hash(
    m: &Machine,
    program: &Program,
    binds: &[HashMap<String, u64>],
    tensors: &Tensors,
) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update(b"wsp explore 1\0");
    h.update(m.identity.as_bytes());
    h.update(
        serde_json::to_string(program)
            .unwrap_or_default()
            .as_bytes(),
    );
    for b in binds {
        let mut b: Vec<_> = b.iter().collect();
        b.sort();
        h.update(format!("{b:?}\0").as_bytes());
    }
    h.update(format!("{:?}\0{}", m.costs, m.index_launches).as_bytes());
    for t in &tensors.data {
        h.update(t.name.as_bytes());
        h.update(t.bytes());
    }
    h.finalize()
}

/// The identity of the running binary, for cache keys: scores from another build of the
/// clock are not reused.
pub fn runtime_identity() -> String {
    let exe = std::env::current_exe().ok();
    let meta = exe.as_ref().and_then(|e| std::fs::metadata(e).ok());
    format!(
        "{} {:?} {:?}",
        env!("CARGO_PKG_VERSION"),
        meta.as_ref().map(|m| m.len()),
        meta.and_then(|m| m.modified().ok())
    )
}

/// A fresh run over a copy of the tensors, for one graph.
fn fresh_run(m: &Machine, tensors: &Tensors, keyed: bool) -> Result<Run, RunError> {
    let bytes: u64 = tensors.data.iter().map(|t| t.bytes().len() as u64).sum();
    if bytes > m.memory {
        return Err(RunError::Input(format!(
            "exploring needs a copy of the tensors ({}), more than the {} of host memory left",
            wsp_ir::memory::bytes_text(bytes),
            wsp_ir::memory::bytes_text(m.memory)
        )));
    }
    let copy = tensors.try_clone().map_err(RunError::Input)?;
    let mut run = Run::new(copy, m.kernels.to_vec(), m.workers.max(1));
    run.cycle_hooks = m.cycle_hooks.to_vec();
    run.index_launches = m.index_launches && !keyed;
    (run.max_tasks, run.budget_reason) = crate::run::task_budget(m.memory - bytes);
    Ok(run)
}

/// Enumerates and runs the program's tasks, evaluating `keys` for each: the id after the
/// last, and per key the first error evaluating it.
fn build<'p>(
    run: &mut Run,
    program: &'p Program,
    kernel_base: u32,
    binds: &'p HashMap<String, u64>,
    keys: &[&'p ScalarExpr],
) -> Result<(TaskId, Vec<Option<String>>), RunError> {
    let mut en = enumerate::Enumerator::new(run, program, kernel_base, binds);
    en.explore_keys = keys.to_vec();
    en.composite(&program.root)?;
    let mut errors = std::mem::take(&mut en.explore_key_errors);
    errors.resize(keys.len(), None);
    run.flush();
    Ok((run.graph.next_id(), errors))
}

/// A schedule's dispatch and stream keys: columns of `Graph::key_table`.
type Columns = (Option<usize>, Option<usize>);

/// Scores the `pending` schedules by the simulated clock: one graph per set of bindings, each
/// configuration's cycles summed over them. Also the kernel tasks run.
fn by_cycles<'s>(
    m: &Machine,
    program: &Program,
    kernel_base: u32,
    binds: &[HashMap<String, u64>],
    tensors: &Tensors,
    schedules: &'s [Vec<Directive>],
    pending: &[usize],
) -> Result<(Vec<Outcome>, u64), RunError> {
    // The distinct keys, and each schedule's (dispatch, stream) columns among them.
    let mut columns: Vec<&ScalarExpr> = Vec::new();
    let mut column = |k: Option<&'s ScalarExpr>| {
        k.map(|k| match columns.iter().position(|c| *c == k) {
            Some(i) => i,
            None => {
                columns.push(k);
                columns.len() - 1
            }
        })
    };
    let cols: Vec<Columns> = pending
        .iter()
        .map(|&i| {
            let (d, s) = clock::schedule_keys(&schedules[i]);
            (column(d), column(s))
        })
        .collect();
    let needs_instances = pending
        .iter()
        .any(|&i| clock::needs_instances(&schedules[i]));
    let mut totals: Vec<Result<Score, String>> = vec![
        Ok(Score {
            total_cycles: 0,
            critical_path_cycles: 0,
            cube_utilization: 0.0,
            vector_utilization: 0.0,
            time_ms: 0.0,
            task_count: 0,
        });
        pending.len()
    ];
    // Per configuration, the busy cycles of the cube cores and of the vector cores.
    let mut busy = vec![[0u64; 2]; pending.len()];
    let mut ran = 0;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(m.workers.max(1))
        .build()
        .map_err(|e| RunError::Input(format!("cannot start the scoring workers: {e}")))?;
    let mut done_before = 0;
    for b in binds {
        let mut run = fresh_run(m, tensors, !columns.is_empty())?;
        let (hi, key_errors) = build(&mut run, program, kernel_base, b, &columns)?;
        ran += run.graph.kernel_tasks(0, hi);
        if needs_instances {
            run.graph.expand();
        }
        let collective_cycles = run.collective_cycles(m.target);
        let extra_cycles = run.added_cycles();
        let latency = b.get(wsp_ir::CHANNEL_LATENCY_SYMBOL).copied().unwrap_or(0);
        let graph = &run.graph;
        let n = columns.len();
        let task_count = graph.kernel_tasks(0, hi);
        // Progress is counted per chunk of configurations, not per configuration: a hundred
        // reports in all.
        let chunk = (pending.len() / 100).max(1);
        let scored = std::sync::atomic::AtomicU64::new(0);
        // The baseline (index 0) is not one of the space's configurations.
        let counted = |i: usize| u64::from(i != 0);
        let total = pending.iter().map(|&i| counted(i)).sum::<u64>() * binds.len() as u64;
        // One configuration's timeline over the shared graph, or why it has none.
        let score = |i: usize, (dc, sc): Columns| -> Result<clock::Timeline, String> {
            let failed = [dc, sc]
                .into_iter()
                .flatten()
                .find_map(|c| key_errors[c].as_ref());
            if let Some(e) = failed {
                return Err(e.clone());
            }
            let key = |t: usize, c: Option<usize>, none: i64| {
                c.and_then(|c| graph.key_table.get(t * n + c).copied())
                    .unwrap_or(none)
            };
            let keys: Vec<(i64, i64)> = (0..hi as usize)
                .map(|t| (key(t, dc, 0), key(t, sc, -1)))
                .collect();
            let costs = clock::Costs {
                kernels: m.costs,
                extra_cycles: &extra_cycles,
                collectives: &collective_cycles,
                channel_latency: latency,
                keys: Some(&keys),
            };
            let schedule = &schedules[i];
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                clock::simulate(graph, 0, hi, schedule, costs, m.target, false)
            }))
            .map_err(|p| {
                let what = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("the simulated clock failed: {what}")
            })
        };
        let timelines: Vec<Result<clock::Timeline, String>> = pool.install(|| {
            let items: Vec<(usize, Columns)> =
                pending.iter().copied().zip(cols.iter().copied()).collect();
            items
                .par_chunks(chunk)
                .flat_map_iter(|part| {
                    let out: Vec<_> = part.iter().map(|&(i, c)| score(i, c)).collect();
                    if let Some(report) = m.progress {
                        let n = part.iter().map(|&(i, _)| counted(i)).sum::<u64>();
                        let done = scored.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
                        report(done_before + done, total);
                    }
                    out
                })
                .collect()
        });
        done_before += pending.iter().map(|&i| counted(i)).sum::<u64>();
        for ((total, busy), tl) in totals.iter_mut().zip(&mut busy).zip(timelines) {
            let Ok(t) = total else { continue };
            match tl {
                Ok(tl) if tl.undispatched > 0 => {
                    *total = Err(format!(
                        "the schedule stalls: {} of {task_count} tasks are never dispatched",
                        tl.undispatched
                    ))
                }
                Ok(tl) => {
                    t.total_cycles += tl.total_cycles;
                    t.critical_path_cycles += tl.critical_path_cycles;
                    t.task_count += task_count;
                    busy[0] += tl.busy_cycles[0];
                    busy[1] += tl.busy_cycles[1];
                }
                Err(why) => *total = Err(why),
            }
        }
    }
    let outcomes = totals
        .into_iter()
        .zip(busy)
        .map(|(t, busy)| match t {
            Ok(mut s) => {
                s.time_ms = s.total_cycles as f64 / (m.target.clock_ghz * 1e6);
                // As `wsp run`'s `core_utilization` (ProgramStats) measures it.
                s.cube_utilization =
                    crate::busy_share(busy[0], s.total_cycles, m.target.cube_cores);
                s.vector_utilization =
                    crate::busy_share(busy[1], s.total_cycles, m.target.vector_cores);
                Outcome::Ran(s)
            }
            Err(why) => Outcome::Failed(why),
        })
        .collect();
    Ok((outcomes, ran))
}

/// Scores the `pending` schedules by the wall clock, the original's way: each runs whole,
/// `warmup` times untimed and then `trials` times, one after another; the score is the mean.
#[allow(clippy::too_many_arguments)]
fn by_wall(
    m: &Machine,
    e: &Exploration,
    program: &Program,
    kernel_base: u32,
    binds: &[HashMap<String, u64>],
    tensors: &Tensors,
    schedules: &[Vec<Directive>],
    pending: &[usize],
) -> Result<(Vec<Outcome>, u64), RunError> {
    let mut ran = 0;
    let mut out = Vec::new();
    for &i in pending {
        let scheduled = Program {
            schedule: schedules[i].clone(),
            ..program.clone()
        };
        let (keys_d, keys_s) = clock::schedule_keys(&scheduled.schedule);
        let keyed = keys_d.is_some() || keys_s.is_some();
        let mut times = Vec::new();
        let mut tasks = 0;
        let mut failed = None;
        for trial in 0..e.warmup + e.trials.max(1) {
            let mut ms = 0.0;
            for b in binds {
                let mut run = fresh_run(m, tensors, keyed)?;
                let began = Instant::now();
                match build(&mut run, &scheduled, kernel_base, b, &[]) {
                    Ok((hi, _)) => {
                        ms += began.elapsed().as_secs_f64() * 1e3;
                        let n = run.graph.kernel_tasks(0, hi);
                        ran += n;
                        if trial == 0 {
                            tasks += n;
                        }
                    }
                    Err(err) => failed = Some(err.to_string()),
                }
            }
            if trial >= e.warmup {
                times.push(ms);
            }
        }
        out.push(match failed {
            Some(why) => Outcome::Failed(why),
            None => Outcome::Ran(Score {
                total_cycles: 0,
                critical_path_cycles: 0,
                cube_utilization: 0.0,
                vector_utilization: 0.0,
                time_ms: times.iter().sum::<f64>() / times.len().max(1) as f64,
                task_count: tasks,
            }),
        });
    }
    Ok((out, ran))
}

/// Where scores are cached: `WSP_TUNE_CACHE`, else `tune/` beside the kernel cache.
pub fn cache_dir(kernel_cache: &Path) -> PathBuf {
    std::env::var_os("WSP_TUNE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| kernel_cache.join("tune"))
}
