//! `wsp tune`: runs a file's explorations (`AutoScheduler(w).explore(space)`, `find_best`,
//! `auto_schedule`) and reports every configuration's simulated cycles: a table, and with
//! `--json` a document a Ray driver or a Slurm array merges shard by shard.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use wsp_ir::explore::{Config, Exploration, Outcome, Results, Score};
use wsp_runtime::process::ChildError;
use wsp_runtime::{Action, Job, RunError};

use crate::report::RunFormat;
use crate::run::{Inputs, MAX_WORKERS, Prepared, Shown, default_workers, prepare};

#[derive(clap::Args)]
pub(crate) struct TuneArgs {
    /// The `.wsp` file.
    pub file: PathBuf,
    /// Worker threads scoring configurations, 1 to 1024 (results do not depend on it).
    #[arg(long, short = 'j', default_value_t = default_workers(),
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_WORKERS as u64))]
    pub jobs: usize,
    /// Write every configuration's score and the best as JSON (`-`: standard output).
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Explore each compiled program of a file that declares no exploration over this space.
    #[arg(long, value_name = "SPACE.toml")]
    pub space: Option<PathBuf>,
    /// How many of the best configurations each table shows.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Score only shard I of N: the configurations k with k mod N = I - 1 (and the
    /// baseline). The shards of 1/N .. N/N partition the space.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
    /// Spread the configurations over a Ray cluster (its address, or `auto`) through the
    /// `wsp-ray` driver (`python/` in the repository).
    #[arg(long, value_name = "ADDRESS", conflicts_with = "shard")]
    pub ray: Option<String>,
    /// Bind a run-time symbol for every execution and exploration without its own value.
    #[arg(long, value_name = "NAME=VALUE")]
    pub bind: Vec<String>,
    /// A target description (TOML) for the simulated clock, over the 910B-like defaults.
    #[arg(long, value_name = "FILE.toml")]
    pub target_desc: Option<PathBuf>,
    /// Charge each kernel the cycles in FILE instead of the model's.
    #[arg(long, value_name = "FILE.json")]
    pub kernel_cycles: Option<PathBuf>,
    /// Score every configuration again instead of reading earlier scores from the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Write what the run did: kernel tasks executed, cache hits, compile and tune time.
    #[arg(long, value_name = "OUT.json")]
    pub stats_json: Option<PathBuf>,
    /// Print the tables of a document `--json` wrote (the Ray driver's merge) and exit.
    #[arg(long, value_name = "FILE.json", hide = true)]
    pub render: Option<PathBuf>,
}

/// `I/N` with 1 <= I <= N.
fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/N (e.g. 2/4)"))?;
    let (i, n): (u32, u32) = (
        i.trim()
            .parse()
            .map_err(|_| format!("`{i}` is not a shard number"))?,
        n.trim()
            .parse()
            .map_err(|_| format!("`{n}` is not a shard count"))?,
    );
    if n == 0 || i == 0 || i > n {
        return Err(format!("shard {i}/{n}: I is 1 to N"));
    }
    Ok((i, n))
}

/// The JSON `--json` writes: what a merge of shards rebuilds exactly.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct TuneJson {
    pub file: String,
    pub target: String,
    pub explorations: Vec<ExplorationJson>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct ExplorationJson {
    /// The exploration's number in the file: what a merge matches shards by.
    pub id: u32,
    /// The call as written.
    pub label: String,
    /// Its line in the file; `None` for an exploration of `--space`.
    pub line: Option<usize>,
    pub metric: String,
    /// Configurations in the whole space (a shard scores some of them).
    pub space_size: usize,
    /// The sets of run-time symbols each configuration is scored over, summed.
    pub bindings: Vec<BTreeMap<String, u64>>,
    pub baseline: ConfigJson,
    /// The index of the best configuration scored: least cycles, the first of equals; `None`
    /// when none ran or the program as written (the baseline) is faster than all.
    pub best: Option<u32>,
    /// The baseline (the program as written) over the best; 1 when the baseline is the best.
    pub speedup: Option<f64>,
    /// Those scored, by index.
    pub configurations: Vec<ConfigJson>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct ConfigJson {
    /// The configuration's place in the space; `None` for the baseline.
    pub index: Option<u32>,
    pub config: FieldsJson,
    /// `ran`, `rejected` (by the target's applicability table) or `failed`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_path_cycles: Option<u64>,
    /// As `wsp run`'s stats name it: each kind of core's busy share of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_utilization: Option<CoreUtilization>,
    /// Simulated milliseconds (wall-clock with `metric="wall"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct CoreUtilization {
    pub cube: f64,
    pub vector: f64,
}

/// The fields of a configuration, the original's `ScheduleConfig` and ours.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct FieldsJson {
    /// `None`: the program's own (the baseline's: the program has none).
    pub streams: Option<u32>,
    pub dispatch: String,
    pub dispatch_param: u32,
    pub timing: String,
    pub timing_param: Option<u32>,
    pub dispatch_key: Option<String>,
    pub stream_by: Option<String>,
    pub window: Option<u64>,
    pub window_mode: Option<String>,
    /// `repr()`, as the file prints it.
    pub repr: String,
    /// On one line, for tables: `streams=2 work_steal(4) immediate`.
    pub label: String,
}

impl FieldsJson {
    fn of(c: &Config) -> FieldsJson {
        FieldsJson {
            streams: c.streams,
            dispatch: c.dispatch.clone(),
            dispatch_param: c.dispatch_param,
            timing: c.timing.clone(),
            timing_param: c.timing_param,
            dispatch_key: c.dispatch_key.clone(),
            stream_by: c.stream_by.clone(),
            window: c.window.map(|w| w.0),
            window_mode: c.window.map(|w| w.1.name().to_string()),
            repr: c.repr(),
            label: c.label(),
        }
    }
}

impl ConfigJson {
    fn of(index: Option<u32>, c: &Config, outcome: &Outcome) -> ConfigJson {
        let (status, score, error) = match outcome {
            Outcome::Ran(s) => ("ran", Some(s), None),
            Outcome::Rejected(why) => ("rejected", None, Some(why.clone())),
            Outcome::Failed(why) => ("failed", None, Some(why.clone())),
        };
        ConfigJson {
            index,
            config: FieldsJson::of(c),
            status: status.into(),
            total_cycles: score.map(|s| s.total_cycles),
            critical_path_cycles: score.map(|s| s.critical_path_cycles),
            core_utilization: score.map(|s| CoreUtilization {
                cube: s.cube_utilization,
                vector: s.vector_utilization,
            }),
            time_ms: score.map(|s| s.time_ms),
            task_count: score.map(|s: &Score| s.task_count),
            error,
        }
    }
}

/// What the run did, for `--stats-json`.
#[derive(Serialize)]
struct TuneStats {
    compile_time_ms: f64,
    /// Running the explorations: building each task graph and scoring every configuration.
    tune_time_ms: f64,
    explorations: Vec<ExplorationStats>,
}

#[derive(Serialize)]
struct ExplorationStats {
    id: u32,
    configurations: usize,
    /// Kernel tasks run to build the task graphs: with cycles, the same however many
    /// configurations there are.
    kernel_executions: u64,
    cache_hits: u32,
}

pub(crate) fn tune(args: TuneArgs) -> ExitCode {
    if let Some(path) = &args.render {
        let read = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|t| {
                serde_json::from_str::<TuneJson>(&t).map_err(|e| format!("{}: {e}", path.display()))
            });
        return match read {
            Ok(doc) => {
                for x in &doc.explorations {
                    print!("{}", table(x, args.top));
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut shown = Shown::new(RunFormat::Human, &args.file);
    let code = match tune_inner(&args, &mut shown) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    };
    shown.finish();
    code
}

fn tune_inner(args: &TuneArgs, shown: &mut Shown) -> Result<ExitCode, String> {
    let inputs = Inputs {
        file: &args.file,
        bind: &args.bind,
        target_desc: args.target_desc.as_deref(),
        kernel_cycles: args.kernel_cycles.as_deref(),
        simulate_npu: false,
        space: args.space.as_deref(),
    };
    let Prepared {
        lowered,
        programs,
        bindings,
        target,
        kernel_cycles,
        compile_time_ms,
        cache,
        base_dir,
        ..
    } = match prepare(inputs, shown)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    // What the explorations depend on runs (executions change tensors); prints and files do
    // not, and nothing after the last exploration matters.
    let last = lowered
        .actions
        .iter()
        .rposition(|(_, a)| matches!(a, Action::Explore(_)));
    let Some(last) = last else {
        return Err(format!(
            "{} declares no exploration: write `best_config, summary = AutoScheduler(w).explore(space)`, or give `--space SPACE.toml`",
            args.file.display()
        ));
    };
    let actions: Vec<Action> = lowered.actions[..=last]
        .iter()
        .filter(|(_, a)| matches!(a, Action::Execute { .. } | Action::Explore(_)))
        .map(|(_, a)| a.clone())
        .collect();
    // Each exploration's line in the file; none for those of `--space`, past its text.
    let index = wsp_syntax::LineIndex::new(&shown.text);
    let lines: BTreeMap<u32, Option<usize>> = lowered
        .actions
        .iter()
        .filter_map(|(r, a)| match a {
            Action::Explore(e) => {
                let within = usize::from(r.start()) <= shown.text.len();
                let line = within.then(|| wsp_syntax::line_col(&index, r.start()).0 as usize);
                Some((e.id, line))
            }
            _ => None,
        })
        .collect();
    let job = Job {
        programs,
        actions,
        base_dir,
        bindings,
        workers: args.jobs,
        trace: None,
        target,
        kernel_cycles,
        swimlane: None,
        dump_tensors: None,
        dump_tasks: None,
        index_launches: true,
        tensors: Vec::new(),
        initial_values: None,
        compile_time_ms,
        traces: Default::default(),
        tune_cache: (!args.no_cache).then(|| wsp_runtime::explore::cache_dir(&cache)),
        explorations: Vec::new(),
        stats: Default::default(),
        shard: args.shard,
        progress: true,
    };
    let began = Instant::now();
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} configurations {elapsed}")
            .expect("template")
            .progress_chars("=> "),
    );
    let shown_bar = bar.clone();
    let outcome = wsp_runtime::process::execute_in_child_with_progress(
        &job,
        crate::child::stop(),
        crate::child::GRACE,
        move |p| {
            shown_bar.set_length(p.total);
            shown_bar.set_position(p.done);
            shown_bar.set_message(p.label);
        },
    );
    bar.finish_and_clear();
    let tune_time_ms = began.elapsed().as_secs_f64() * 1e3;
    let report = match outcome {
        Ok((r, err)) => {
            eprint!("{err}");
            r
        }
        Err(ChildError::Run(failed)) => {
            match failed.error {
                RunError::Fault(f) => eprintln!("error: {}", f.what),
                e => eprintln!("error: {e}"),
            }
            return Ok(ExitCode::from(1));
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let document = TuneJson {
        file: args.file.display().to_string(),
        target: report.target.clone(),
        explorations: report
            .explorations
            .iter()
            .map(|(e, r)| exploration_json(e, r, lines.get(&e.id).copied().flatten()))
            .collect(),
    };
    // `--json -` is the document alone on standard output.
    if args.json.as_deref() != Some(Path::new("-")) {
        for x in &document.explorations {
            print!("{}", table(x, args.top));
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&document).expect("serializes") + "\n";
        write_out(path, &text)?;
    }
    if let Some(path) = &args.stats_json {
        let stats = TuneStats {
            compile_time_ms,
            tune_time_ms,
            explorations: report
                .explorations
                .iter()
                .map(|(e, r)| ExplorationStats {
                    id: e.id,
                    configurations: r.scored.len(),
                    kernel_executions: r.kernel_executions,
                    cache_hits: r.cache_hits,
                })
                .collect(),
        };
        let text = serde_json::to_string_pretty(&stats).expect("serializes") + "\n";
        write_out(path, &text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a file atomically, or standard output for `-`.
fn write_out(path: &Path, text: &str) -> Result<(), String> {
    if path == Path::new("-") {
        print!("{text}");
        return Ok(());
    }
    wsp_files::write_atomically(path, |out| out.write_all(text.as_bytes()))
}

pub(crate) fn exploration_json(
    e: &Exploration,
    r: &Results,
    line: Option<usize>,
) -> ExplorationJson {
    let configurations = r
        .scored
        .iter()
        .filter_map(|s| {
            let i = s.config?;
            Some(ConfigJson::of(Some(i), &e.configs[i as usize], &s.outcome))
        })
        .collect();
    ExplorationJson {
        id: e.id,
        label: e.label.clone(),
        line,
        metric: e.metric.name().into(),
        space_size: e.configs.len(),
        bindings: e
            .bindings
            .iter()
            .map(|set| set.iter().cloned().collect())
            .collect(),
        baseline: ConfigJson::of(None, &e.baseline, &r.baseline.outcome),
        best: r.best,
        // `best_score` is the baseline's when it is the best.
        speedup: match (r.best_score(), r.baseline_score()) {
            (Some(b), Some(base)) if r.key(&b) > 0.0 => Some(r.key(&base) / r.key(&b)),
            _ => None,
        },
        configurations,
    }
}

/// The table of one exploration: its best `top` configurations, then what was not ranked.
pub(crate) fn table(x: &ExplorationJson, top: usize) -> String {
    let mut out = format!(
        "{} ({}): {} of {} configurations scored, {} task graph{}, by {}\n",
        x.label,
        x.line
            .map_or("the space file".to_string(), |l| format!("line {l}")),
        x.configurations.len(),
        x.space_size,
        x.bindings.len(),
        if x.bindings.len() == 1 { "" } else { "s" },
        if x.metric == "wall" {
            "wall-clock time"
        } else {
            "simulated cycles"
        }
    );
    let mut ran: Vec<&ConfigJson> = x
        .configurations
        .iter()
        .filter(|c| c.status == "ran")
        .collect();
    let key = |c: &ConfigJson| match x.metric.as_str() {
        "wall" => c.time_ms.unwrap_or(f64::INFINITY),
        _ => c.total_cycles.unwrap_or(u64::MAX) as f64,
    };
    ran.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.index.cmp(&b.index)));
    // The columns are `wsp run`'s stats of the same names.
    let (time, scale) = match x.metric.as_str() {
        "wall" => ("wall ms", 1.0),
        _ => ("simulated us", 1e3),
    };
    out += &format!(
        "  {:>4}  {:>12}  {:>20}  {:>16}  {:>12}  configuration\n",
        "rank", "total_cycles", "critical_path_cycles", "core_util c / v", time
    );
    let row = |rank: &str, c: &ConfigJson| {
        let util = c.core_utilization.as_ref().map_or(String::new(), |u| {
            format!("{:.3} / {:.3}", u.cube, u.vector)
        });
        format!(
            "  {:>4}  {:>12}  {:>20}  {:>16}  {:>12.3}  {}\n",
            rank,
            c.total_cycles.unwrap_or(0),
            c.critical_path_cycles.unwrap_or(0),
            util,
            c.time_ms.unwrap_or(0.0) * scale,
            c.config.label
        )
    };
    // The program as written first: the baseline every rank is measured against.
    if x.baseline.status == "ran" {
        out += &row("base", &x.baseline);
    }
    for (rank, c) in ran.iter().take(top).enumerate() {
        out += &row(&(rank + 1).to_string(), c);
    }
    if ran.len() > top {
        out += &format!("  ... {} more\n", ran.len() - top);
    }
    let best = x
        .best
        .and_then(|b| x.configurations.iter().find(|c| c.index == Some(b)));
    match (best, ran.first()) {
        (Some(c), _) => out += &format!("  best: {}\n", c.config.repr),
        (None, Some(fastest)) if x.baseline.status == "ran" => {
            out += &format!(
                "  best: the program as written. No configuration of the space beats it: the fastest, {}, is {:.2}x slower\n",
                fastest.config.label,
                key(fastest) / key(&x.baseline).max(f64::MIN_POSITIVE)
            )
        }
        _ => {}
    }
    if let (Some(s), Some(_)) = (x.speedup, best) {
        out += &format!("  speedup over the program as written: {s:.2}x\n");
    }
    for c in x.configurations.iter().filter(|c| c.status != "ran") {
        out += &format!(
            "  {} {}: {}\n",
            c.status,
            c.config.label,
            c.error.as_deref().unwrap_or("")
        );
    }
    out
}
