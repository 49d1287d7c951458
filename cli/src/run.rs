//! `wsp run`: analyze, lower, build the kernels for cpu_sim (cached), then execute in a child
//! process (`wsp __exec`), so that a crash inside a kernel is reported and never takes this
//! process down.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use wsp_codegen::BuildError;
use wsp_runtime::process::ChildError;
use wsp_runtime::{Action, Job, RunError};

use crate::report::{Checked, RunDiagnostic, RunFormat};

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The `.wsp` file.
    file: PathBuf,
    /// Bind a run-time symbol (a DenseDyn axis) for every execution: `--bind seq=16`.
    #[arg(long, value_name = "NAME=VALUE")]
    bind: Vec<String>,
    /// Write a Chrome/Perfetto timeline of the simulated run.
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// Worker threads that run tasks, 1 to 1024 (results do not depend on it).
    #[arg(long, default_value_t = default_workers(),
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_WORKERS as u64))]
    workers: usize,
    /// Write task_count, total_cycles, compile_time_ms, execute_time_ms, io_ms, cache_hit,
    /// startup_ms and index_launches.
    #[arg(long, value_name = "OUT.json")]
    stats_json: Option<PathBuf>,
    /// A target description (TOML) for the simulated clock, over the 910B-like defaults.
    #[arg(long, value_name = "FILE.toml")]
    target_desc: Option<PathBuf>,
    /// Charge each kernel the cycles in FILE instead of the model's: a tree's Perf-Sim
    /// `kernel_cycles.json`, or the same shape written from a device profile.
    #[arg(long, value_name = "FILE.json")]
    kernel_cycles: Option<PathBuf>,
    /// Write the simulated run as hw-native-sys/simpler's profiles into DIR
    /// (chip_swimlane_records.json and deps.json), which its sched_overhead_analysis and
    /// swimlane_converter read.
    #[arg(long, value_name = "DIR")]
    swimlane: Option<PathBuf>,
    /// After the run, write every tensor as NAME.npy into this folder.
    #[arg(long, value_name = "DIR")]
    dump_tensors: Option<PathBuf>,
    /// After the run, write the executed task stream (kernel, index, AICPU, stream and
    /// dependencies of every task) to this file; `wsp emit`'s tree compares its replay with it.
    #[arg(long, value_name = "FILE")]
    dump_tasks: Option<PathBuf>,
    /// Enumerate every task one by one instead of taking a `P` loop as one index launch and
    /// a `P.seq` loop of one task as one sequential launch (slower, same results, timeline
    /// and task stream; for comparison).
    #[arg(long)]
    no_index_launches: bool,
    /// Run programs that compile for ascend_npu on the CPU simulator too, laid out as `wsp
    /// emit` lays them out for the 910B (a kernel mixing cube and vector work runs as a task
    /// per core): the reference `wsp emit`'s trees compare their replay with.
    #[arg(long)]
    simulate_npu: bool,
    /// How the diagnostics (check, build and run-time ones) are printed, on standard error:
    /// `json` is one array at the end, as `wsp check --format json` writes.
    #[arg(long, value_enum, default_value = "human")]
    format: RunFormat,
}

/// The diagnostics of one `wsp run`: printed as they come for people, or gathered into one
/// JSON document printed at the end.
pub(crate) struct Shown {
    format: RunFormat,
    path: PathBuf,
    pub(crate) text: String,
    gathered: Vec<RunDiagnostic>,
}

impl Shown {
    pub(crate) fn new(format: RunFormat, path: &Path) -> Shown {
        Shown {
            format,
            path: path.to_path_buf(),
            text: String::new(),
            gathered: Vec::new(),
        }
    }

    /// The analyzer's diagnostics of the file.
    pub(crate) fn check(&mut self, diagnostics: Vec<wsp_analysis::Diagnostic>) {
        match self.format {
            RunFormat::Human if diagnostics.is_empty() => {}
            RunFormat::Human => {
                let checked = Checked {
                    path: self.path.clone(),
                    text: self.text.clone(),
                    diagnostics,
                };
                crate::report::print_human_to_stderr(checked);
            }
            RunFormat::Json => self
                .gathered
                .extend(diagnostics.iter().map(RunDiagnostic::from_check)),
        }
    }

    /// A build's or the run's own (WSP601, WSP602).
    pub(crate) fn run(&mut self, diagnostics: Vec<RunDiagnostic>) {
        match self.format {
            RunFormat::Human => {
                crate::report::print_run(self.format, &self.path, &self.text, &diagnostics)
            }
            RunFormat::Json => self.gathered.extend(diagnostics),
        }
    }

    pub(crate) fn finish(self) {
        if self.format == RunFormat::Json {
            crate::report::print_run(self.format, &self.path, &self.text, &self.gathered);
        }
    }
}

/// The most `--workers` takes. A fixed bound, not one derived from this machine's cores, so
/// that a command line that works on one host works on every other; it is above any host's
/// core count this runs on, and below the thread counts (10^5) that take minutes to start and
/// exhaust the process's threads. Workers beyond the cores add no speed.
pub(crate) const MAX_WORKERS: usize = 1024;

pub(crate) fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WORKERS))
}

/// The stats `--stats-json` writes and `wsp run` prints.
#[derive(Serialize)]
struct Stats {
    task_count: u64,
    total_cycles: u64,
    /// The lower bound from dependencies alone.
    critical_path_cycles: u64,
    /// `total_cycles` at the target's clock.
    simulated_time_us: f64,
    /// Busy core-cycles over cores × `total_cycles`, per unit.
    core_utilization: CoreUtilization,
    compile_time_ms: f64,
    /// Enumerating and running the tasks.
    execute_time_ms: f64,
    /// Writing files (`save_npy`, `--dump-tensors`, `--trace`), apart from the execution.
    io_ms: f64,
    cache_hit: bool,
    /// From the start of `wsp run` until the first task is enumerated: analysis, the kernel
    /// build or cache lookup, the run process, loading and tensor initialisation.
    startup_ms: f64,
    /// Loops that ran as index or sequential launches.
    index_launches: u64,
    /// Each execution, in order; the fields above are the whole run's.
    executions: Vec<ExecutionStats>,
    /// Each kernel's cycles, and whether they were `measured` (`--kernel-cycles`),
    /// `modelled` from its AICore instructions or estimated from its ops.
    kernels: Vec<wsp_runtime::KernelCycles>,
    /// The scheduler-overhead shares of hw-native-sys/simpler's model (per engine, `all`,
    /// `has`), with `--trace` or `--swimlane`.
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduler_overhead: Option<wsp_runtime::clock::swimlane::Overhead>,
}

/// One `execute()` of one program.
#[derive(Serialize)]
struct ExecutionStats {
    program: String,
    /// Its number among the program's executions, from 1.
    execute: u32,
    task_count: u64,
    total_cycles: u64,
    critical_path_cycles: u64,
    simulated_time_us: f64,
    core_utilization: CoreUtilization,
    execute_time_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduler_overhead: Option<wsp_runtime::clock::swimlane::Overhead>,
}

#[derive(Serialize)]
struct CoreUtilization {
    cube: f64,
    vector: f64,
}

pub(crate) fn run(args: RunArgs) -> ExitCode {
    let mut shown = Shown::new(args.format, &args.file);
    let code = match run_inner(args, &mut shown) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    };
    shown.finish();
    code
}

/// A spinner on standard error, drawn only if the step takes more than a moment (its first
/// tick) and only on a terminal.
pub(crate) fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("template"));
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(150));
    pb
}

/// What `wsp run` and `wsp tune` build before they run: the lowered file, its programs with
/// their kernel libraries, and the run's inputs read and checked.
pub(crate) struct Prepared {
    pub lowered: wsp_analysis::LoweredFile,
    pub programs: Vec<(wsp_ir::Program, PathBuf)>,
    pub bindings: Vec<(String, u64)>,
    pub target: Option<String>,
    pub kernel_cycles: Option<(String, String)>,
    pub compile_time_ms: f64,
    pub cache_hit: bool,
    pub cache: PathBuf,
    pub base_dir: PathBuf,
}

/// The inputs of [`prepare`] that `wsp run` and `wsp tune` share.
pub(crate) struct Inputs<'a> {
    pub file: &'a Path,
    pub bind: &'a [String],
    pub target_desc: Option<&'a Path>,
    pub kernel_cycles: Option<&'a Path>,
    pub simulate_npu: bool,
    /// `wsp tune --space`: a search space whose statements are appended to the file.
    pub space: Option<&'a Path>,
}

/// Reads, checks and lowers the file and builds its kernels: `Err` for what stops it with
/// exit 2, `Ok(Err(code))` for diagnostics already shown.
pub(crate) fn prepare(
    args: Inputs<'_>,
    shown: &mut Shown,
) -> Result<Result<Prepared, ExitCode>, String> {
    let text = std::fs::read_to_string(args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    shown.text = text.clone();
    let bindings = args
        .bind
        .iter()
        .map(|b| parse_bind(b))
        .collect::<Result<Vec<_>, _>>()?;
    let target = match args.target_desc {
        Some(p) => {
            let t = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            wsp_runtime::target::TargetDesc::parse(&t)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            Some(t)
        }
        None => None,
    };

    let kernel_cycles = match args.kernel_cycles {
        Some(p) => {
            let t = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            let source = p.display().to_string();
            // A malformed file is refused before anything is built.
            let m = wsp_runtime::kernel_model::MeasuredCycles::parse(&t, &source)?;
            Some((m, source, t))
        }
        None => None,
    };

    let selection = crate::check::selection_for(args.file)?;
    let mut source = text.clone();
    if let Some(path) = args.space {
        let space = crate::space::read(path)?;
        // The programs the file compiles, before the space's statements are added.
        let (first, diagnostics) =
            crate::check::check_and_lower(args.file, &text, Vec::new(), &bindings, &selection);
        let Some(first) = first else {
            shown.check(diagnostics);
            return Ok(Err(ExitCode::from(1)));
        };
        let compiled: Vec<String> = first
            .programs
            .iter()
            .filter(|p| {
                !first
                    .actions
                    .iter()
                    .any(|(_, a)| matches!(a, Action::Explore(e) if e.program == p.name))
            })
            .map(|p| p.name.clone())
            .collect();
        let explored = space.programs(&compiled)?;
        if explored.is_empty() {
            return Err(format!(
                "{} compiles no program for the space to explore",
                args.file.display()
            ));
        }
        source.push_str(&space.statements(&explored));
    }
    let (lowered, diagnostics) =
        crate::check::check_and_lower(args.file, &source, Vec::new(), &bindings, &selection);
    // What the space's statements (past the file's text) found is the space file's.
    let (theirs, diagnostics): (Vec<_>, Vec<_>) = diagnostics
        .into_iter()
        .partition(|d| usize::from(d.range.start()) >= text.len());
    shown.check(diagnostics);
    if let Some(path) = args.space
        && !theirs.is_empty()
    {
        for d in &theirs {
            eprintln!(
                "{}[{}]: {}: {}",
                d.severity.as_str(),
                d.code.as_str(),
                path.display(),
                d.message
            );
        }
        if theirs
            .iter()
            .any(|d| d.severity == wsp_analysis::Severity::Error)
        {
            return Ok(Err(ExitCode::from(1)));
        }
    }
    let Some(mut lowered) = lowered else {
        return Ok(Err(ExitCode::from(1)));
    };
    // A file that only prints (the original's tests have some) runs its prints.
    if lowered.programs.is_empty() && lowered.actions.is_empty() {
        return Err(format!(
            "{} compiles no program and does nothing when it runs: write `program = workload(...).compile(target=\"cpu_sim\")` and `program.execute()`",
            args.file.display()
        ));
    }
    if let Some((m, ..)) = &kernel_cycles {
        let all: Vec<&wsp_ir::Kernel> = lowered.programs.iter().flat_map(|p| &p.kernels).collect();
        m.check_names(&all)?;
    }
    let kernel_cycles = kernel_cycles.map(|(_, source, text)| (source, text));
    for p in &mut lowered.programs {
        if args.simulate_npu {
            // As `wsp emit` lays the program out for the device: kernels split per core.
            *p = wsp_ir::split::split_program(p, &wsp_ir::arch::A2A3)?;
            p.target = wsp_ir::Target::CpuSim;
        }
        if p.target != wsp_ir::Target::CpuSim {
            return Err(format!(
                "program `{}` compiles for {}; `wsp run` runs cpu_sim programs (`wsp emit` writes NPU sources; `--simulate-npu` runs it on the CPU simulator)",
                p.name,
                p.target.name()
            ));
        }
    }

    // Before compiling: a misspelt or out-of-range binding must not cost a build.
    for (name, value) in &bindings {
        wsp_runtime::check_binding(
            &lowered.programs,
            name,
            *value,
            &format!("--bind {name}={value}"),
        )?;
    }

    let compile_start = Instant::now();
    let pb = spinner("compiling kernels");
    let cache = wsp_codegen::cache_dir();
    let mut programs = Vec::new();
    let mut cache_hit = true;
    for p in &lowered.programs {
        match wsp_codegen::build(p, args.file, &cache, crate::child::stop()) {
            Ok(a) => {
                cache_hit &= a.cache_hit;
                programs.push((p.clone(), a.library));
            }
            Err(BuildError::CustomKernel(errs)) => {
                pb.finish_and_clear();
                shown.run(cpp_errors(&text, &errs));
                return Ok(Err(ExitCode::from(1)));
            }
            Err(e) => {
                pb.finish_and_clear();
                return Err(e.to_string());
            }
        }
    }
    pb.finish_and_clear();
    let compile_time_ms = compile_start.elapsed().as_secs_f64() * 1e3;

    let base_dir = args
        .file
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    Ok(Ok(Prepared {
        lowered,
        programs,
        bindings,
        target,
        kernel_cycles,
        compile_time_ms,
        cache_hit,
        cache,
        base_dir,
    }))
}

fn run_inner(args: RunArgs, shown: &mut Shown) -> Result<ExitCode, String> {
    let started = SystemTime::now();
    wsp_runtime::process::without_huge_pages();
    // The run process starts while the file is read, checked, lowered and its kernels built.
    let run_process = wsp_runtime::process::start_child();
    let inputs = Inputs {
        file: &args.file,
        bind: &args.bind,
        target_desc: args.target_desc.as_deref(),
        kernel_cycles: args.kernel_cycles.as_deref(),
        simulate_npu: args.simulate_npu,
        space: None,
    };
    let Prepared {
        lowered,
        programs,
        bindings,
        target,
        kernel_cycles,
        compile_time_ms,
        cache_hit,
        cache,
        base_dir,
        ..
    } = match prepare(inputs, shown)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let job = Job {
        programs,
        actions: lowered.actions.iter().map(|(_, a)| a.clone()).collect(),
        base_dir,
        bindings,
        workers: args.workers,
        trace: args.trace.clone(),
        target,
        kernel_cycles,
        swimlane: args.swimlane.clone(),
        dump_tensors: args.dump_tensors.clone(),
        dump_tasks: args.dump_tasks.clone(),
        index_launches: !args.no_index_launches,
        tensors: Vec::new(),
        initial_values: None,
        compile_time_ms,
        traces: Default::default(),
        tune_cache: Some(wsp_runtime::explore::cache_dir(&cache)),
        explorations: Vec::new(),
        stats: Default::default(),
        shard: None,
        progress: false,
    };
    if !job.programs.is_empty()
        && !job
            .actions
            .iter()
            .any(|a| matches!(a, Action::Execute { .. } | Action::Explore(_)))
    {
        eprintln!(
            "note: {} never calls `.execute()`: nothing ran",
            args.file.display()
        );
    }

    let pb = spinner("running");
    let outcome = crate::child::execute_in_child(run_process, &job);
    pb.finish_and_clear();
    let report = match outcome {
        Ok(r) => r,
        Err(ChildError::Fault { what, .. }) => {
            let crash = wsp_runtime::Fault {
                what,
                cause: wsp_runtime::FaultCause::Crash,
                site: None,
            };
            shown.run(vec![fault(&crash, &lowered.task_calls)]);
            return Ok(ExitCode::from(1));
        }
        Err(ChildError::Run(failed)) => {
            // What the program printed before the error, as it would have.
            print!("{}", failed.output);
            match failed.error {
                RunError::Fault(f) => shown.run(vec![fault(&f, &lowered.task_calls)]),
                e => eprintln!("{e}"),
            }
            return Ok(ExitCode::from(1));
        }
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    print!("{}", report.output);
    let whole_run = report.stats(None, compile_time_ms);
    let mut executions = Vec::new();
    let mut lines = Vec::new();
    for (i, e) in report.executions.iter().enumerate() {
        let execute = report.executions[..=i]
            .iter()
            .filter(|o| o.program == e.program)
            .count() as u32;
        let s = report.stats(Some(e), compile_time_ms);
        // What the program printed itself is not printed again.
        if !report.stats_printed.contains(&i) {
            lines.push((format!("{}, execute #{execute}", e.program), s));
        }
        executions.push(ExecutionStats {
            program: e.program.clone(),
            execute,
            task_count: s.task_count,
            total_cycles: s.total_cycles,
            critical_path_cycles: s.critical_path_cycles,
            simulated_time_us: s.simulated_time_us,
            core_utilization: CoreUtilization {
                cube: s.cube_utilization,
                vector: s.vector_utilization,
            },
            execute_time_ms: s.execute_time_ms,
            scheduler_overhead: e.overhead,
        });
    }
    let stats = Stats {
        task_count: report.task_count,
        total_cycles: report.total_cycles,
        critical_path_cycles: whole_run.critical_path_cycles,
        simulated_time_us: whole_run.simulated_time_us,
        core_utilization: CoreUtilization {
            cube: whole_run.cube_utilization,
            vector: whole_run.vector_utilization,
        },
        compile_time_ms,
        execute_time_ms: report.execute_time_ms,
        io_ms: report.io_ms,
        cache_hit,
        startup_ms: report
            .began
            .and_then(|b| b.duration_since(started).ok())
            .map_or(0.0, |d| d.as_secs_f64() * 1e3),
        index_launches: report.index_launches,
        executions,
        kernels: report.kernels.clone(),
        scheduler_overhead: report.overhead,
    };
    let cache_hit = if stats.cache_hit { "True" } else { "False" };
    // `wsp run`'s own summary, on standard error, where standard output holds only what the
    // program prints. One line per execution the program did not print, labelled; with several executions,
    // the whole run's after them, with `cache_hit` (else on the one execution's line).
    let several = report.executions.len() > 1;
    for (label, s) in &lines {
        if several {
            eprintln!("{label}: {}", s.dict());
        } else {
            eprintln!("{label}: {}", s.dict_with(&[("cache_hit", cache_hit)]));
        }
    }
    if several {
        eprintln!(
            "whole run: {}",
            whole_run.dict_with(&[("cache_hit", cache_hit)])
        );
    }
    if let Some(path) = &args.kernel_cycles {
        let each: Vec<String> = report
            .kernels
            .iter()
            .map(|k| format!("{} {} ({})", k.name, k.cycles, k.source))
            .collect();
        eprintln!("kernel cycles with {}: {}", path.display(), each.join(", "));
    }
    if let Some(o) = &report.overhead {
        eprintln!(
            "scheduler overhead (simpler's model, of {} cycles): AIC {:.1}%, AIV {:.1}%, all {:.1}%, has {:.1}%",
            report.total_cycles,
            o.aic * 100.0,
            o.aiv * 100.0,
            o.all * 100.0,
            o.has * 100.0
        );
    }
    if let Some(path) = &args.stats_json {
        let json = serde_json::to_string_pretty(&stats).expect("stats serialize");
        wsp_files::write_atomically(path, |out| out.write_all((json + "\n").as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_bind(b: &str) -> Result<(String, u64), String> {
    let (name, value) = b
        .split_once('=')
        .ok_or_else(|| format!("`--bind {b}`: expected name=value"))?;
    // Parsed as u64 here; `check_binding` then bounds it to what a symbol takes.
    let value = value.trim().parse::<u64>().map_err(|_| {
        format!(
            "`--bind {b}`: the value must be an integer from 0 to {}",
            wsp_runtime::MAX_SYMBOL_VALUE
        )
    })?;
    Ok((name.trim().to_string(), value))
}

/// WSP602 at its source: the fault's own site (the task call or the predicate), else, for a
/// crash inside a kernel, which names only the task, each call of its kernel.
fn fault(fault: &wsp_runtime::Fault, calls: &[(String, wsp_syntax::TextRange)]) -> RunDiagnostic {
    let calls: Vec<(String, std::ops::Range<usize>)> = calls
        .iter()
        .map(|(k, r)| (k.clone(), usize::from(r.start())..usize::from(r.end())))
        .collect();
    RunDiagnostic {
        code: "WSP602",
        severity: wsp_analysis::Severity::Error,
        message: format!("{}; the run was stopped", fault.what),
        labels: fault
            .places(&calls)
            .into_iter()
            .map(|(r, primary, label)| (r, primary, label.to_string()))
            .collect(),
        notes: vec![fault.note().to_string()],
    }
}

/// WSP601: compiler errors inside `cpp_src` strings, at their `.wsp` lines.
fn cpp_errors(text: &str, errs: &[wsp_codegen::CppError]) -> Vec<RunDiagnostic> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    errs.iter()
        .map(|e| {
            let line_start = starts
                .get(e.line.saturating_sub(1) as usize)
                .copied()
                .unwrap_or(text.len());
            let line_end = text[line_start..]
                .find('\n')
                .map_or(text.len(), |i| line_start + i);
            let at = (line_start + e.column.saturating_sub(1) as usize).min(line_end);
            RunDiagnostic {
                code: "WSP601",
                severity: wsp_analysis::Severity::Error,
                message: format!(
                    "C++ error in `cpp_src` of kernel `{}`: {}",
                    e.kernel, e.message
                ),
                labels: vec![(at..line_end.max(at), true, String::new())],
                notes: Vec::new(),
            }
        })
        .collect()
}
