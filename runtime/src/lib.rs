//! The CPU-sim runtime: loads the kernel libraries codegen built, enumerates each program's
//! tasks with run-time values, runs them on a worker pool in dependency order, and times them
//! on a simulated clock. It knows a program only through `wsp_ir`.

mod dump;
mod enumerate;
pub mod exec;
pub mod fault;
pub mod files;
mod graph;
pub mod preview;
pub mod process;
mod regions;
mod run;
pub mod sim;
pub mod target;
pub mod tensors;
mod trace;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use wsp_ir::kernel::{KernelBody, Operand, ParamType, ValueType};
use wsp_ir::ops::{self, Unit};
use wsp_ir::plan::TensorOrigin;
use wsp_ir::{Kernel, Program, Target, memory};

use crate::exec::KernelFn;
use crate::graph::TaskKind;
use crate::run::Run;
use crate::sim::KernelCost;
use crate::target::TargetDesc;
use crate::tensors::{TensorData, Tensors};

/// Everything one run needs: what `wsp run` hands the process that executes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Each program with the kernel library built for it.
    pub programs: Vec<(Program, PathBuf)>,
    pub actions: Vec<Action>,
    /// The `.wsp` file's folder: `load_npy` and `save_npy` paths are relative to it.
    pub base_dir: PathBuf,
    /// `--bind name=value`: run-time symbols for every execution (over `execute(...)`'s).
    pub bindings: Vec<(String, u64)>,
    pub workers: usize,
    pub trace: Option<PathBuf>,
    /// A target description (TOML text); `None` for the built-in 910B-like part.
    pub target: Option<String>,
    /// Writes every tensor as `NAME.npy` into this folder after the run.
    pub dump_tensors: Option<PathBuf>,
    /// Writes the executed task stream (tasks, placement, dependencies) to this file.
    #[serde(default)]
    pub dump_tasks: Option<PathBuf>,
    /// Whether a `P` loop may run as one index launch (see `enumerate`); off enumerates every
    /// task, for comparison.
    pub index_launches: bool,
    /// Tensors to hold beside the programs' (a notebook's, which a later cell may run).
    #[serde(default)]
    pub tensors: Vec<wsp_ir::Tensor>,
    /// A folder of `NAME.npy` values a tensor starts from instead of its `init` (a notebook's
    /// tensors, kept between runs). A file whose shape or dtype differs is an error.
    #[serde(default)]
    pub initial_values: Option<PathBuf>,
    /// The front end's compile time, for `program.stats`.
    #[serde(default)]
    pub compile_time_ms: f64,
}

pub use wsp_ir::{Action, Shown};

/// What a run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Kernel tasks run, over every execution.
    pub task_count: u64,
    pub total_cycles: u64,
    /// Wall-clock time of the executions: enumerating and running tasks, not writing files.
    pub execute_time_ms: f64,
    /// Wall-clock time writing files: `save_npy`, `--dump-tensors` and `--trace`.
    pub io_ms: f64,
    /// Loops that ran as one index launch each, over every execution.
    pub index_launches: u64,
    /// The wall-clock time execution began (libraries loaded, tensors initialised), so the
    /// process that asked for the run can tell how long start-up took.
    pub began: Option<std::time::SystemTime>,
    pub executions: Vec<ExecutionReport>,
    /// What `print(...)` printed, in order.
    pub output: String,
    /// The simulated part: its name and clock.
    pub target: String,
    pub clock_ghz: f64,
    /// Its cube and vector cores.
    pub cores: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecutionReport {
    pub program: String,
    pub task_count: u64,
    pub total_cycles: u64,
    /// Cycles cores spent running this execution's tasks, summed over cores.
    pub busy_core_cycles: u64,
    /// Wall-clock time enumerating and running this execution's tasks.
    pub execute_time_ms: f64,
}

impl ExecutionReport {
    /// Busy core-cycles over `cores × total_cycles`: 0 for an empty run.
    pub fn utilisation(&self, cores: u32) -> f64 {
        let capacity = self.total_cycles as f64 * f64::from(cores);
        if capacity > 0.0 {
            self.busy_core_cycles as f64 / capacity
        } else {
            0.0
        }
    }
}

/// One execution's `program.stats`, as `print` shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProgramStats {
    pub task_count: u64,
    pub total_cycles: u64,
    pub compile_time_ms: f64,
    pub execute_time_ms: f64,
}

impl ProgramStats {
    /// `program.stats.FIELD` as Python prints it, for a field of [`wsp_ir::STATS_FIELDS`].
    pub fn field(&self, name: &str) -> Option<String> {
        Some(match name {
            "task_count" => self.task_count.to_string(),
            "total_cycles" => self.total_cycles.to_string(),
            "compile_time_ms" => format!("{:.3}", self.compile_time_ms),
            "execute_time_ms" => format!("{:.3}", self.execute_time_ms),
            _ => return None,
        })
    }

    /// `print(program.stats)`: `{'task_count': 32, 'total_cycles': 2045, ...}`.
    pub fn dict(&self) -> String {
        self.dict_with(&[])
    }

    /// The dict with more entries after the fields (`wsp run` adds `'cache_hit': True`).
    pub fn dict_with(&self, extra: &[(&str, &str)]) -> String {
        let items: Vec<String> = wsp_ir::STATS_FIELDS
            .iter()
            .map(|k| format!("'{k}': {}", self.field(k).unwrap_or_default()))
            .chain(extra.iter().map(|(k, v)| format!("'{k}': {v}")))
            .collect();
        format!("{{{}}}", items.join(", "))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RunError {
    /// A fault inside a task (WSP602).
    Fault(String),
    /// Channel misuse at run time.
    Channel(String),
    /// Bad input: a file, a shape, a target description.
    Input(String),
    /// The program itself is inconsistent (the analyzer should have caught it).
    Invalid(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Fault(m) => write!(f, "error[WSP602]: {m}"),
            RunError::Channel(m) => write!(f, "error: channel misuse: {m}"),
            RunError::Input(m) | RunError::Invalid(m) => write!(f, "error: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The largest value a run-time symbol may be bound to: it bounds a loop, and loop variables
/// are `i64` in enumeration (a larger `u64` would wrap to a negative bound: a loop of no
/// iterations).
pub const MAX_SYMBOL_VALUE: u64 = i64::MAX as u64;

/// Checks a binding `name=value` against the run-time symbols of `programs`: `name` must be
/// one, `value` at most [`MAX_SYMBOL_VALUE`]. `shown` is how the user wrote it, for the message.
pub fn check_binding<'a>(
    programs: impl IntoIterator<Item = &'a Program>,
    name: &str,
    value: u64,
    shown: &str,
) -> Result<(), String> {
    let mut symbols: Vec<&wsp_ir::Symbol> = Vec::new();
    for p in programs {
        for s in &p.symbols {
            if !symbols.iter().any(|k| k.name == s.name) {
                symbols.push(s);
            }
        }
    }
    if !symbols.iter().any(|s| s.name == name) {
        let known = if symbols.is_empty() {
            "the program has no run-time symbols (a `DenseDyn` axis is one)".to_string()
        } else {
            let list: Vec<String> = symbols
                .iter()
                .map(|s| format!("`{}` (default {})", s.name, s.default))
                .collect();
            format!("the run-time symbols are {}", list.join(", "))
        };
        return Err(format!("`{shown}`: no run-time symbol `{name}`; {known}"));
    }
    if value > MAX_SYMBOL_VALUE {
        return Err(format!(
            "`{shown}`: {value} is out of range for `{name}`: a run-time symbol takes 0 to {MAX_SYMBOL_VALUE} (2^63 - 1)"
        ));
    }
    Ok(())
}

/// Runs a job in this process. Call [`fault::install`] first where a crash in a kernel must be
/// reported (the `wsp run` child does).
pub fn execute(job: &Job) -> Result<Report, RunError> {
    let programs = || job.programs.iter().map(|(p, _)| p);
    for (name, value) in &job.bindings {
        check_binding(programs(), name, *value, &format!("--bind {name}={value}"))
            .map_err(RunError::Input)?;
    }
    for action in &job.actions {
        if let Action::Execute { program, bindings } = action {
            let p = programs().filter(|p| &p.name == program);
            for (name, value) in bindings {
                let shown = format!("{program}.execute({name}={value})");
                check_binding(p.clone(), name, *value, &shown).map_err(RunError::Input)?;
            }
        }
    }
    let target = match &job.target {
        Some(text) => TargetDesc::parse(text)
            .map_err(|e| RunError::Input(format!("target description: {e}")))?,
        None => TargetDesc::default(),
    };
    // Load every library and resolve its kernels; the libraries stay loaded for the run.
    let mut libraries = Vec::new();
    let mut kernels: Vec<KernelFn> = Vec::new();
    let mut cycle_hooks: Vec<Option<exec::CyclesFn>> = Vec::new();
    let mut names = Vec::new();
    let mut costs = Vec::new();
    let mut kernel_base = HashMap::new();
    for (program, path) in &job.programs {
        let lib = load_library(path)?;
        kernel_base.insert(program.name.clone(), kernels.len() as u32);
        for k in &program.kernels {
            let symbol = format!("wsp_kernel_{}", k.name);
            // SAFETY: codegen exports every kernel under this name with the `KernelFn` ABI.
            let f: KernelFn = unsafe {
                *lib.get::<KernelFn>(symbol.as_bytes()).map_err(|e| {
                    RunError::Input(format!(
                        "`{}` lacks `{symbol}`: {}",
                        path.display(),
                        with_causes(&e)
                    ))
                })?
            };
            kernels.push(f);
            // A custom body may add cycles to its task (`pto::cpu_sim::add_cycles`); the
            // prelude of every library exports what reads them.
            let hook = match &k.body {
                KernelBody::Cpp { .. } => {
                    // SAFETY: the prelude exports `wsp_take_cycles` with the `CyclesFn` ABI.
                    unsafe { lib.get::<exec::CyclesFn>(b"wsp_take_cycles") }
                        .ok()
                        .map(|f| *f)
                }
                _ => None,
            };
            cycle_hooks.push(hook);
            names.push(k.name.clone());
            costs.push(kernel_cost(k, &target));
        }
        libraries.push(lib);
    }
    fault::install(names.clone());

    let all_tensors = || {
        job.programs
            .iter()
            .flat_map(|(p, _)| &p.tensors)
            .chain(&job.tensors)
    };
    let host_memory = Target::CpuSim.memory_bytes();
    let tensor_bytes = check_tensor_sizes(all_tensors(), host_memory).map_err(RunError::Input)?;
    let mut tensors = Tensors::default();
    // The hash of each value started from a kept file: an unchanged one is not written again.
    let mut kept_hashes: HashMap<String, blake3::Hash> = HashMap::new();
    for t in all_tensors() {
        if tensors.id(&t.name).is_some() {
            continue;
        }
        let mut data = TensorData::zeros(&t.name, t.dtype, &t.shape).map_err(RunError::Input)?;
        let kept = job
            .initial_values
            .as_ref()
            .map(|dir| dir.join(format!("{}.npy", t.name)))
            .filter(|p| p.is_file());
        if let Some(path) = kept {
            data.init(
                &wsp_ir::plan::Init::LoadNpy(path.display().to_string()),
                Path::new(""),
            )
            .map_err(RunError::Input)?;
            if job.dump_tensors.as_ref() == job.initial_values.as_ref() {
                kept_hashes.insert(t.name.clone(), blake3::hash(data.bytes()));
            }
        } else if let (Some(init), TensorOrigin::Declared) = (&t.init, &t.origin) {
            data.init(init, &job.base_dir).map_err(RunError::Input)?;
        }
        tensors.insert(data);
    }

    let mut run = Run::new(tensors, kernels, job.workers.max(1));
    run.cycle_hooks = cycle_hooks;
    run.index_launches = job.index_launches;
    (run.max_tasks, run.budget_reason) = run::task_budget(host_memory - tensor_bytes);
    let mut report = Report {
        target: target.name.clone(),
        clock_ghz: target.clock_ghz,
        cores: target.cube_cores + target.vector_cores,
        ..Report::default()
    };
    let mut ranges = Vec::new();
    // `print` output, with `program.stats` filled in once the clock has run.
    let mut printed: Vec<Printed> = Vec::new();
    let start = Instant::now();
    let mut io = std::time::Duration::ZERO;
    report.began = Some(std::time::SystemTime::now());
    for action in &job.actions {
        match action {
            Action::Execute { program, bindings } => {
                let Some((p, _)) = job.programs.iter().find(|(p, _)| &p.name == program) else {
                    return Err(RunError::Invalid(format!("no program `{program}`")));
                };
                let mut binds: HashMap<String, u64> = p
                    .symbols
                    .iter()
                    .map(|s| (s.name.clone(), s.default))
                    .collect();
                binds.extend(bindings.iter().cloned());
                binds.extend(job.bindings.iter().cloned());
                let began = Instant::now();
                // Tasks of earlier executions have run, and no task here waits for them.
                run.regions = regions::Regions::default();
                let lo = run.graph.next_id();
                let first_edge = run.graph.edges.len();
                let mut e = enumerate::Enumerator::new(&mut run, p, kernel_base[&p.name], &binds);
                e.composite(&p.root)?;
                run.flush();
                let hi = run.graph.next_id();
                ranges.push((p, lo, hi, first_edge, began.elapsed()));
            }
            Action::Print(values) => {
                run.flush();
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        printed.push(Printed::Text(" ".into()));
                    }
                    printed.push(match v {
                        Shown::Text(t) => Printed::Text(t.clone()),
                        Shown::Tensor(name) => {
                            let t = run
                                .tensors
                                .get(name)
                                .ok_or_else(|| RunError::Invalid(format!("no tensor `{name}`")))?;
                            Printed::Text(preview::array_text(t.dtype, &t.shape, &|i| t.get(i)))
                        }
                        Shown::Complete { program } => Printed::Text(
                            if ranges.iter().any(|r| r.0.name == *program) {
                                "True"
                            } else {
                                "False"
                            }
                            .into(),
                        ),
                        Shown::Stats { program } => Printed::Stats {
                            execution: last_execution(&ranges, program),
                            field: None,
                        },
                        Shown::StatsField { program, field } => Printed::Stats {
                            execution: last_execution(&ranges, program),
                            field: Some(field.clone()),
                        },
                    });
                }
                printed.push(Printed::Text("\n".into()));
            }
            // A value to show is the front end's to read once the run is over; whether to trace
            // is the front end's to decide (it sets `trace`).
            Action::Show(_) | Action::EnableTracing { .. } => {}
            Action::SaveNpy { tensor, path } => {
                run.flush();
                let t = run
                    .tensors
                    .get(tensor)
                    .ok_or_else(|| RunError::Invalid(format!("no tensor `{tensor}`")))?;
                let writing = Instant::now();
                t.save_npy(&job.base_dir.join(path))
                    .map_err(RunError::Input)?;
                io += writing.elapsed();
            }
        }
    }
    // The tasks' time: the writes in between are I/O, reported apart.
    report.execute_time_ms = start.elapsed().saturating_sub(io).as_secs_f64() * 1e3;

    report.index_launches = run.graph.launches.len() as u64;
    run.graph.expand();
    let collective_cycles: Vec<u64> = run
        .collectives
        .iter()
        .map(|c| {
            let bytes = |(_, d, s): &(*mut u8, wsp_ir::DType, Vec<u64>)| {
                s.iter().product::<u64>() * d.size_bytes() as u64
            };
            target.transfer_cycles(bytes(&c.src) + bytes(&c.dst))
        })
        .collect();
    // What custom kernels added, by task id (each slot written by its own task).
    let extra_cycles: Vec<u64> = run
        .extra_cycles
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    let mut timelines = Vec::new();
    let mut offset = 0;
    for &(p, lo, hi, _, elapsed) in &ranges {
        let tl = sim::simulate(
            &run.graph,
            lo,
            hi,
            &p.schedule,
            &costs,
            &extra_cycles,
            &collective_cycles,
            &target,
            job.trace.is_some(),
        );
        let task_count = run.graph.tasks[lo as usize..hi as usize]
            .iter()
            .filter(|t| matches!(t.kind, TaskKind::Kernel(_)))
            .count() as u64;
        report.executions.push(ExecutionReport {
            program: p.name.clone(),
            task_count,
            total_cycles: tl.total_cycles,
            busy_core_cycles: tl.busy_core_cycles,
            execute_time_ms: elapsed.as_secs_f64() * 1e3,
        });
        report.task_count += task_count;
        report.total_cycles += tl.total_cycles;
        timelines.push((offset, tl));
        offset = report.total_cycles;
    }
    for p in printed {
        match p {
            Printed::Text(t) => report.output.push_str(&t),
            Printed::Stats { execution, field } => {
                let e = execution.map(|i| &report.executions[i]);
                let stats = ProgramStats {
                    task_count: e.map_or(0, |e| e.task_count),
                    total_cycles: e.map_or(0, |e| e.total_cycles),
                    compile_time_ms: job.compile_time_ms,
                    execute_time_ms: e.map_or(0.0, |e| e.execute_time_ms),
                };
                let text = match field {
                    Some(f) => stats
                        .field(&f)
                        .ok_or_else(|| RunError::Invalid(format!("no stats field `{f}`")))?,
                    None => stats.dict(),
                };
                report.output.push_str(&text);
            }
        }
    }
    let writing = Instant::now();
    if let Some(path) = &job.dump_tasks {
        let executions: Vec<_> = ranges.iter().map(|&(p, lo, hi, ..)| (p, lo, hi)).collect();
        dump::write_tasks(
            path,
            &run.graph,
            &executions,
            &names,
            &run.collectives,
            target.aicpus,
        )
        .map_err(RunError::Input)?;
    }
    if let Some(path) = &job.trace {
        trace::write(path, &run.graph, &names, &timelines, &target).map_err(RunError::Input)?;
    }
    if let Some(dir) = &job.dump_tensors {
        for t in &run.tensors.data {
            if kept_hashes.get(&t.name) == Some(&blake3::hash(t.bytes())) {
                continue;
            }
            t.save_npy(&dir.join(format!("{}.npy", t.name)))
                .map_err(RunError::Input)?;
        }
    }
    io += writing.elapsed();
    report.io_ms = io.as_secs_f64() * 1e3;
    drop(run);
    drop(libraries);
    Ok(report)
}

/// A piece of `print` output.
enum Printed {
    Text(String),
    /// `program.stats` (or one field) of an execution, by its index; `None` before the
    /// program's first.
    Stats {
        execution: Option<usize>,
        field: Option<String>,
    },
}

/// The index of the program's latest execution so far.
fn last_execution<T>(
    ranges: &[(&Program, graph::TaskId, graph::TaskId, usize, T)],
    program: &str,
) -> Option<usize> {
    ranges.iter().rposition(|(p, ..)| p.name == program)
}

/// Refuses, before anything is allocated, a tensor or a set of tensors that needs more than
/// `memory` bytes (the host's: cpu_sim keeps every tensor resident for the whole run). A
/// tensor shared by programs counts once. Their total bytes.
fn check_tensor_sizes<'a>(
    tensors: impl IntoIterator<Item = &'a wsp_ir::Tensor>,
    memory: u64,
) -> Result<u64, String> {
    let host = format!(
        "this host's {} of memory, where cpu_sim keeps every tensor",
        memory::bytes_text(memory)
    );
    let mut seen: Vec<(&str, u64)> = Vec::new();
    {
        for t in tensors {
            if seen.iter().any(|(n, _)| *n == t.name) {
                continue;
            }
            let bytes = memory::tensor_bytes(&t.shape, t.dtype).filter(|&b| b <= memory);
            let Some(bytes) = bytes else {
                return Err(format!(
                    "tensor `{}`, {} {}, needs {}, more than {}",
                    t.name,
                    t.dtype.name(),
                    wsp_ir::shape_text(&t.shape),
                    memory::size_text(memory::tensor_bytes(&t.shape, t.dtype)),
                    host,
                ));
            };
            seen.push((&t.name, bytes));
        }
    }
    let total = seen.iter().fold(0u64, |n, (_, b)| n.saturating_add(*b));
    if total > memory {
        seen.sort_by_key(|(_, b)| std::cmp::Reverse(*b));
        let largest: Vec<String> = seen
            .iter()
            .take(3)
            .map(|(n, b)| format!("`{n}` {}", memory::bytes_text(*b)))
            .collect();
        return Err(format!(
            "the run's tensors need {} together, more than {} (the largest: {})",
            memory::size_text(Some(total)),
            host,
            largest.join(", ")
        ));
    }
    Ok(total)
}

/// A kernel's simulated cost: the sum of its ops' costs, plus loading every tile parameter
/// it uses as a value.
pub fn kernel_cost(k: &Kernel, target: &TargetDesc) -> KernelCost {
    let KernelBody::Ops(body) = &k.body else {
        // A custom C++ body: moving its tiles in and out is all the model knows of it.
        let cycles = k
            .params
            .iter()
            .filter_map(|p| match &p.ty {
                ParamType::Tile(_, t) => Some(target.transfer_cycles(t.bytes())),
                _ => None,
            })
            .sum();
        return KernelCost {
            cycles,
            cube: false,
        };
    };
    let mut cycles = 0;
    let mut cube = false;
    let mut loaded: Vec<&str> = Vec::new();
    for op in body {
        for a in &op.args {
            if let Operand::Param(p) = a
                && op.op != "load"
                && op.op != "store"
                && !loaded.contains(&p.as_str())
                && let Some(ParamType::Tile(_, t)) =
                    k.params.iter().find(|x| &x.name == p).map(|x| &x.ty)
            {
                loaded.push(p);
                cycles += target.transfer_cycles(t.bytes());
            }
        }
        let tile = |o: &Operand| match o {
            Operand::Value(i) => match body[*i as usize].ty {
                ValueType::Tile(t) => Some(t),
                _ => None,
            },
            Operand::Param(p) => match k.params.iter().find(|x| &x.name == p).map(|x| &x.ty) {
                Some(ParamType::Tile(_, t)) => Some(*t),
                _ => None,
            },
            _ => None,
        };
        let (elems, dtype, mnk) = match (op.op.as_str(), op.ty) {
            ("store", _) => match op.args.first().and_then(tile) {
                Some(t) => (t.elems(), t.dtype, None),
                None => continue,
            },
            ("matmul", ValueType::Tile(t)) => {
                let a = op.args.first().and_then(tile);
                let k_dim = a.map_or(0, |a| a.cols);
                (
                    t.elems(),
                    a.map_or(t.dtype, |a| a.dtype),
                    Some((t.rows, t.cols, k_dim)),
                )
            }
            (_, ValueType::Tile(t)) => (t.elems(), t.dtype, None),
            _ => continue,
        };
        if ops::lookup(&op.op).is_some_and(|o| o.unit == Unit::Cube) {
            cube = true;
        }
        cycles += target.op_cycles(&op.op, elems, dtype, mnk);
    }
    KernelCost { cycles, cube }
}

/// Loads a kernel library built by codegen; an error says why the loader refused it.
fn load_library(path: &Path) -> Result<libloading::Library, RunError> {
    // SAFETY: the library was built by codegen from this program; loading runs no code
    // of the user's (generated code has no static constructors).
    unsafe { libloading::Library::new(path) }.map_err(|e| {
        RunError::Input(format!(
            "cannot load `{}`: {}",
            path.display(),
            with_causes(&e)
        ))
    })
}

/// An error and its sources: libloading's own text is only "dlopen failed", the loader's
/// reason (`dlerror`) is its source.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsp_ir::DType;
    use wsp_ir::plan::{Layout, TensorOrigin};

    fn tensor(name: &str, shape: &[u64]) -> wsp_ir::Tensor {
        wsp_ir::Tensor {
            name: name.into(),
            shape: shape.to_vec(),
            dtype: DType::F32,
            layout: Layout::replicated(shape.len()),
            init: None,
            origin: TensorOrigin::Declared,
        }
    }

    #[test]
    fn a_library_the_loader_refuses_is_reported_with_its_reason() {
        let dir = std::env::temp_dir().join(format!("wsp-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("garbage.so");
        std::fs::write(&path, b"not a shared library, just some bytes of text").unwrap();
        let Err(RunError::Input(message)) = load_library(&path) else {
            panic!("garbage loaded");
        };
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(message.contains("dlopen failed: "), "{message}");
        assert!(
            message.contains("garbage.so: "),
            "the loader's reason: {message}"
        );
    }

    #[test]
    fn tensors_past_the_memory_are_refused_by_name_before_allocation() {
        let mib = 1 << 20;
        let (a, b) = (tensor("A", &[512, 512]), tensor("B", &[1024, 512]));
        check_tensor_sizes([&a, &b], 4 * mib).unwrap();
        let err = check_tensor_sizes([&a, &b, &a], 2 * mib - 1).unwrap_err();
        assert!(
            err.starts_with(
                "tensor `B`, F32 [1024,512], needs 2097152 bytes (2.0 MiB), more than this host's"
            ),
            "{err}"
        );
        let err = check_tensor_sizes([&a, &b], 2 * mib + mib / 2).unwrap_err();
        assert!(
            err.starts_with("the run's tensors need 3145728 bytes (3.0 MiB) together"),
            "{err}"
        );
        assert!(
            err.ends_with("(the largest: `B` 2.0 MiB, `A` 1.0 MiB)"),
            "{err}"
        );
        let huge = tensor("Huge", &[1 << 40, 1 << 40]);
        let err = check_tensor_sizes([&huge], u64::MAX).unwrap_err();
        assert!(
            err.starts_with(
                "tensor `Huge`, F32 [1099511627776,1099511627776], needs more than 2^64 bytes"
            ),
            "{err}"
        );
    }

    #[test]
    fn an_allocation_the_system_refuses_is_an_error_naming_the_tensor() {
        let err = TensorData::zeros("Big", DType::U8, &[1 << 62]).unwrap_err();
        assert!(
            err.starts_with("cannot allocate tensor `Big`, U8 [4611686018427387904]: "),
            "{err}"
        );
    }
}
