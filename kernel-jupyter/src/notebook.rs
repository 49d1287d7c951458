//! A notebook as one program. Executed cells are concatenated in the order they were first
//! executed into one file of the analyzer's database; a cell executed again replaces its text
//! in place, so its names are redefined for every cell after it, and every cell is checked in
//! the context of the cells before it, exactly as the same text in a `.wsp` file would be.
//!
//! A cell with an error is not taken in: the program stays as it was. A cell that a change
//! breaks (a later cell using a kernel whose signature changed) is taken out of the program,
//! with its diagnostics, until it is run again. Tensor values are kept between runs as `.npy`
//! files in a folder of the kernel's, written only when a run completes: a run that crashes or
//! is interrupted leaves them as they were.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use codespan_reporting::diagnostic::{Diagnostic as Rendered, Label, Severity as Level};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use wsp_analysis::{
    Applicability, Database, Diagnostic, File, Severity, Shown, TextRange, TextSize, Workspace,
};

use wsp_codegen::BuildError;
use wsp_runtime::process::ChildError;
use wsp_runtime::{Action, Job};

use crate::magics::{self, Settings};
use crate::render::{self, MimeBundle, RunStats};

/// The name the program file has for the analyzer and in generated sources.
const PROGRAM_PATH: &str = "notebook.wsp";
/// How long an interrupted run gets to end on SIGINT before it is killed.
const GRACE: Duration = Duration::from_millis(300);

/// One executed cell of the program.
#[derive(Debug, Clone)]
struct Cell {
    /// The front end's cell id (`metadata.cellId`), when it sends one.
    id: Option<String>,
    text: String,
    /// `In[count]`: the execution that gave the cell its text.
    count: u32,
}

/// What executing a cell produced, in the order a front end shows it.
#[derive(Debug, Default)]
pub struct Outcome {
    pub outputs: Vec<Output>,
    /// The value of the cell's last expression.
    pub result: Option<MimeBundle>,
    pub error: Option<CellError>,
}

#[derive(Debug)]
pub enum Output {
    Stdout(String),
    Stderr(String),
    Display(MimeBundle),
}

/// A failed cell: `ename` is a diagnostic code (`WSP201`) or what stopped the run.
#[derive(Debug)]
pub struct CellError {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

impl CellError {
    fn plain(ename: &str, evalue: impl Into<String>) -> CellError {
        let evalue = evalue.into();
        CellError {
            ename: ename.into(),
            traceback: vec![format!("\x1b[0;31m{ename}\x1b[0m: {evalue}")],
            evalue,
        }
    }
}

pub struct Notebook {
    db: Database,
    file: File,
    /// The program with a cell being typed in it, for completion and inspection.
    draft: File,
    cells: Vec<Cell>,
    /// Relative paths (`load_npy`, `save_npy`) are relative to it: the kernel's working folder,
    /// which Jupyter sets to the notebook's.
    base_dir: PathBuf,
    /// Kept tensor values, `NAME.npy`.
    values: tempfile::TempDir,
    settings: Settings,
    /// Programs whose runs record their timeline (`program.enable_tracing(...)`).
    traced: std::collections::HashSet<String>,
    /// Cells a change took out of the program, until they run again.
    taken_out: Vec<Cell>,
    /// The run process, kept between cells.
    runner: wsp_runtime::process::Runner,
    /// Called with an exploration's progress while a cell runs (the kernel shows it live).
    pub on_progress: Option<Box<dyn FnMut(wsp_runtime::process::Progress) + Send>>,
    /// Each program's last execution, for `program.stats` as a cell's value.
    last_stats: std::collections::HashMap<String, RunStats>,
    /// Each program's `program.stats` of its last execution, for `program.stats.FIELD`.
    last_fields: std::collections::HashMap<String, wsp_runtime::ProgramStats>,
    /// Each program's `program.trace` and trace level, carried from cell to cell.
    traces: wsp_runtime::Traces,
    /// What the cells' explorations found, for later cells.
    explorations: Vec<(wsp_ir::explore::Exploration, wsp_ir::explore::Results)>,
    count: u32,
}

impl Notebook {
    /// The selection of the `wsp.toml` nearest the notebook's folder; everything when there is
    /// none or it is bad.
    fn selection(&self) -> wsp_analysis::Selection {
        wsp_analysis::Selection::of_folder(&self.base_dir)
            .map_or_else(|_| Default::default(), |(s, _)| s)
    }

    pub fn new(base_dir: PathBuf) -> std::io::Result<Notebook> {
        let db = Database::default();
        let workspace = Workspace::new(&db, Vec::new());
        let file = File::new(&db, workspace, PathBuf::from(PROGRAM_PATH), String::new());
        let draft = File::new(&db, workspace, PathBuf::from("draft.wsp"), String::new());
        Ok(Notebook {
            db,
            file,
            draft,
            cells: Vec::new(),
            base_dir,
            values: tempfile::Builder::new().prefix("wsp-notebook-").tempdir()?,
            settings: Settings::default(),
            traced: Default::default(),
            last_stats: Default::default(),
            last_fields: Default::default(),
            traces: Default::default(),
            explorations: Vec::new(),
            runner: Default::default(),
            on_progress: None,
            taken_out: Vec::new(),
            count: 0,
        })
    }

    pub fn execution_count(&self) -> u32 {
        self.count
    }

    /// Checks the cell in the context of the cells before it, takes it into the program and
    /// runs what it runs. `interrupted` stops a run (or a kernel build) once set.
    pub fn execute(&mut self, code: &str, cell_id: Option<&str>, stop: &AtomicUsize) -> Outcome {
        self.count += 1;
        let mut out = Outcome::default();
        let (code, magic_lines) = magics::split(code);
        for line in magic_lines {
            match self.settings.apply(&line, &self.base_dir) {
                Ok(Some(note)) => out.outputs.push(Output::Stdout(note + "\n")),
                Ok(None) => {}
                Err(e) => {
                    out.error = Some(CellError::plain("UsageError", e));
                    return out;
                }
            }
        }
        if code.trim().is_empty() {
            return out;
        }
        let (mut cells, at) = placed(
            &self.cells,
            Cell {
                id: cell_id.map(str::to_string),
                text: code,
                count: self.count,
            },
        );
        // Check; take out other cells this one breaks, one at a time (each may break another).
        let mut at = at;
        let mut removed = Vec::new();
        loop {
            self.set_text(&cells);
            // `.npy` files load from the notebook's folder, as the run reads them (WSP211).
            self.db.make_items(self.file);
            let mut diagnostics = wsp_analysis::file_diagnostics(&self.db, self.file).clone();
            let base = &self.base_dir;
            let header = |p: &Path| wsp_analysis::read_npy_header(&base.join(p));
            diagnostics.extend(wsp_analysis::data_file_diagnostics(
                &self.db, self.file, &header,
            ));
            diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
            let diagnostics =
                wsp_analysis::apply_suppressions(&self.db, self.file, diagnostics, true);
            // The warnings `wsp check` would report in the notebook's folder (its `wsp.toml`);
            // errors always show, since a cell with errors does not run.
            let selection = self.selection();
            let diagnostics: Vec<Diagnostic> = diagnostics
                .into_iter()
                .filter(|d| {
                    d.severity == Severity::Error || selection.is_selected(d.code, &self.base_dir)
                })
                .collect();
            let spans = spans(&cells);
            let in_cell = |i: usize, d: &Diagnostic| {
                spans[i].contains(&usize::from(d.range.start()))
                    || (i == at && in_no_cell(&spans, d))
            };
            let errors_in = |i: usize| {
                diagnostics
                    .iter()
                    .any(|d| d.severity == Severity::Error && in_cell(i, d))
            };
            if errors_in(at) {
                let mine: Vec<&Diagnostic> =
                    diagnostics.iter().filter(|d| in_cell(at, d)).collect();
                let first = mine
                    .iter()
                    .find(|d| d.severity == Severity::Error)
                    .expect("an error in the cell");
                let mut traceback = vec![render_diagnostics(&cells, &mine)];
                traceback.extend(self.taken_out_notes(&mine));
                out.error = Some(CellError {
                    ename: first.code.as_str().to_string(),
                    evalue: first.message.clone(),
                    traceback,
                });
                // The program stays as it was.
                let kept = self.cells.clone();
                self.set_text(&kept);
                return out;
            }
            let Some(broken) = (0..cells.len()).find(|&i| i != at && errors_in(i)) else {
                let warnings: Vec<&Diagnostic> =
                    diagnostics.iter().filter(|d| in_cell(at, d)).collect();
                if !warnings.is_empty() {
                    out.outputs
                        .push(Output::Stderr(render_diagnostics(&cells, &warnings)));
                }
                break;
            };
            let theirs: Vec<&Diagnostic> =
                diagnostics.iter().filter(|d| in_cell(broken, d)).collect();
            out.outputs.push(Output::Stderr(format!(
                "{}note: In[{}] no longer checks after this change and is taken out of the program; run it again once it is fixed\n",
                render_diagnostics(&cells, &theirs),
                cells[broken].count
            )));
            removed.push(cells.remove(broken));
            if broken < at {
                at -= 1;
            }
        }
        // A cell run again is no longer out; the ones this change broke are.
        self.taken_out
            .retain(|c| !cells.iter().any(|k| k.id.is_some() && k.id == c.id));
        self.taken_out.extend(removed);
        self.take_in(cells, at, out, stop)
    }

    /// The checked program with the new cell at `at`: forget the values of tensors the cell
    /// (re)defines, and run what the cell runs.
    fn take_in(
        &mut self,
        cells: Vec<Cell>,
        at: usize,
        mut out: Outcome,
        stop: &AtomicUsize,
    ) -> Outcome {
        for name in bound_names(&cells[at].text) {
            let _ = std::fs::remove_file(self.values.path().join(format!("{name}.npy")));
        }
        self.cells = cells;
        let span = spans(&self.cells)[at].clone();
        let Some(lowered) = wsp_analysis::lower_file(&self.db, self.file).clone() else {
            out.error = Some(CellError::plain(
                "InternalError",
                "the program checks but could not be lowered",
            ));
            return out;
        };
        let actions: Vec<(TextRange, Action)> = lowered
            .actions
            .iter()
            .filter(|(r, _)| span.contains(&usize::from(r.start())))
            .cloned()
            .collect();
        // The value of the cell's last statement, if that statement is an expression.
        let last_end = span.start + self.file.text(&self.db)[span.clone()].trim_end().len();
        let shown = match actions.last() {
            Some((r, Action::Show(s))) if usize::from(r.end()) == last_end => Some(s.clone()),
            _ => None,
        };
        for (_, a) in &actions {
            if let Action::EnableTracing { program, level } = a {
                // The timeline is shown from `TIMING` on; the level also holds for later
                // cells' runs.
                if *level >= wsp_ir::TraceLevel::Timing {
                    self.traced.insert(program.clone());
                } else {
                    self.traced.remove(program);
                }
                self.traces.levels.insert(program.clone(), *level);
            }
        }
        // What a run does (a value to show and tracing are the kernel's own).
        let runs: Vec<&Action> = actions
            .iter()
            .map(|(_, a)| a)
            .filter(|a| !matches!(a, Action::Show(_) | Action::EnableTracing { .. }))
            .collect();
        let needs_run =
            !runs.is_empty() || matches!(&shown, Some(Shown::Tensor(t)) if !self.kept(t));
        // What `%bind` makes this cell's executions reach is known now, before a build.
        let bound = wsp_analysis::binding_diagnostics(
            &self.db,
            self.file,
            &self.settings.bindings,
            &|n, v| format!("`%bind {n}={v}`"),
        );
        let ours: Vec<&Diagnostic> = bound
            .iter()
            .filter(|d| {
                d.related
                    .iter()
                    .any(|(r, _)| span.contains(&usize::from(r.start())))
            })
            .collect();
        if let Some(first) = ours.first() {
            out.error = Some(CellError {
                ename: first.code.as_str().to_string(),
                evalue: first.message.clone(),
                traceback: vec![render_diagnostics(&self.cells, &ours)],
            });
            return out;
        }
        // `print` of values known now needs no run process.
        let printed: Option<String> = runs
            .iter()
            .map(|a| match a {
                Action::Print(values) => values
                    .iter()
                    .map(|v| match v {
                        Shown::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect::<Option<Vec<&str>>>()
                    .map(|texts| texts.join(" ") + "\n"),
                _ => None,
            })
            .collect();
        if let Some(text) =
            printed.filter(|_| needs_run && !matches!(shown, Some(Shown::Tensor(_))))
        {
            out.outputs.push(Output::Stdout(text));
        } else if needs_run {
            let run_actions: Vec<Action> = actions.into_iter().map(|(_, a)| a).collect();
            if let Err(e) = self.run(&lowered, run_actions, &mut out, stop) {
                out.error = Some(e);
                return out;
            }
        }
        match shown {
            Some(Shown::Text(t)) => out.result = Some(MimeBundle(vec![("text/plain", t)])),
            // A cell's f-string is known when it is checked (one of `program.stats` is only
            // printed): its repr, as Python shows a string.
            Some(Shown::Format(pieces)) => {
                let text: String = pieces
                    .iter()
                    .map(|p| match p {
                        wsp_ir::FormatPiece::Text(t) => t.as_str(),
                        wsp_ir::FormatPiece::Stats { .. }
                        | wsp_ir::FormatPiece::Trace { .. }
                        | wsp_ir::FormatPiece::Explored { .. } => "",
                    })
                    .collect();
                let repr = wsp_ir::pyformat::PyValue::Str(text).repr();
                out.result = Some(MimeBundle(vec![("text/plain", repr)]));
            }
            Some(Shown::Tensor(name)) => {
                let path = self.values.path().join(format!("{name}.npy"));
                match render::tensor_npy(&name, &path) {
                    Ok(b) => out.result = Some(b),
                    Err(e) => out.error = Some(CellError::plain("Error", e)),
                }
            }
            Some(Shown::Complete { program }) => {
                let ran = if self.last_stats.contains_key(&program) {
                    "True"
                } else {
                    "False"
                };
                out.result = Some(MimeBundle(vec![("text/plain", ran.into())]));
            }
            Some(Shown::Stats { program }) => {
                out.result = self
                    .last_stats
                    .get(&program)
                    .map(|row| render::stats(std::slice::from_ref(row)));
            }
            Some(Shown::Trace { program, query }) => {
                let runs: Vec<&wsp_runtime::profile::TracedRun> = self
                    .traces
                    .runs
                    .get(&program)
                    .map(|r| r.iter().collect())
                    .unwrap_or_default();
                let value = wsp_runtime::profile::value(&runs, &query);
                out.result = Some(match query {
                    wsp_ir::TraceQuery::Trace => {
                        let text =
                            wsp_runtime::profile::value(&runs, &wsp_ir::TraceQuery::PrintSummary);
                        render::trace_summary(&program, text.as_str().unwrap_or(""), &value)
                    }
                    _ => MimeBundle(vec![(
                        "text/plain",
                        wsp_runtime::profile::python_repr(&value),
                    )]),
                });
            }
            Some(Shown::StatsField { program, field }) => {
                out.result = self.last_fields.get(&program).and_then(|stats| {
                    // As Python shows the value: its repr (a float in full).
                    let value = stats.value(&field)?;
                    let text = wsp_ir::pyformat::format_field(&value, None, None, "").ok()?;
                    Some(MimeBundle(vec![("text/plain", text)]))
                });
            }
            Some(Shown::Explored { exploration, query }) => {
                match self.explorations.iter().rfind(|(e, _)| e.id == exploration) {
                    Some((e, results)) => {
                        out.result = match query {
                            wsp_ir::explore::ExploreQuery::Summary => {
                                Some(render::exploration(e, results))
                            }
                            _ => results
                                .repr(e, &query)
                                .map(|text| MimeBundle(vec![("text/plain", text)])),
                        }
                    }
                    // Explorations are known by their statement's place among the cells.
                    None => {
                        out.error = Some(CellError::plain(
                            "RunError",
                            "the exploration this reads has not run where its cell now stands: run that cell again",
                        ))
                    }
                }
            }
            None => {}
        }
        out
    }

    /// WSP602 at the task call or the predicate read, in its cell, as the checker's
    /// diagnostics are shown.
    fn fault(&self, lowered: &wsp_analysis::LoweredFile, f: &wsp_runtime::Fault) -> CellError {
        let calls: Vec<(String, std::ops::Range<usize>)> = lowered
            .task_calls
            .iter()
            .map(|(k, r)| (k.clone(), usize::from(r.start())..usize::from(r.end())))
            .collect();
        let text_len = self.file.text(&self.db).len();
        let range = |r: std::ops::Range<usize>| {
            TextRange::new(TextSize::from(r.start as u32), TextSize::from(r.end as u32))
        };
        let mut places = f.places(&calls);
        places.retain(|(r, ..)| r.end <= text_len);
        // The primary place (the first one if none is) and the others as notes.
        let first = places.iter().position(|p| p.1).unwrap_or(0);
        let message = format!("{}; the run was stopped", f.what);
        let notes = vec![
            f.note().to_string(),
            "every definition and tensor value is kept as it was before this cell".into(),
        ];
        if places.is_empty() {
            return CellError::plain("WSP602", format!("{message}; {}", notes.join("; ")));
        }
        let (primary, _, label) = places.remove(first);
        let related: Vec<(TextRange, String)> = places
            .into_iter()
            .map(|(r, _, l)| (range(r), l.to_string()))
            .collect();
        let located = Located {
            error: true,
            code: "WSP602",
            message: message.clone(),
            range: range(primary),
            label: Some(label),
            related: &related,
            notes,
        };
        CellError {
            ename: "WSP602".into(),
            evalue: message,
            traceback: vec![render_located(&self.cells, &[located])],
        }
    }

    /// For each unknown name that a taken-out cell defines: where, and what to do.
    fn taken_out_notes(&self, diagnostics: &[&Diagnostic]) -> Vec<String> {
        // The file holds the candidate program the diagnostics are of.
        let text = self.file.text(&self.db);
        let mut notes = Vec::new();
        for d in diagnostics {
            if d.code.as_str() != "WSP101" {
                continue;
            }
            let Some(name) = text.get(std::ops::Range::<usize>::from(d.range)) else {
                continue;
            };
            if let Some(c) = self
                .taken_out
                .iter()
                .rev()
                .find(|c| bound_names(&c.text).iter().any(|n| n == name))
            {
                notes.push(format!(
                    "note: `{name}` is defined by In[{}], which a change to an earlier cell took out of the program; fix and run it again",
                    c.count
                ));
            }
        }
        notes
    }

    fn kept(&self, tensor: &str) -> bool {
        self.values.path().join(format!("{tensor}.npy")).is_file()
    }

    /// Builds (cached) the programs the actions execute and runs the actions in a child
    /// process, from the kept tensor values; on success keeps the new values.
    fn run(
        &mut self,
        lowered: &wsp_analysis::LoweredFile,
        actions: Vec<Action>,
        out: &mut Outcome,
        stop: &AtomicUsize,
    ) -> Result<(), CellError> {
        let compile_start = Instant::now();
        let cache = wsp_codegen::cache_dir();
        let mut programs = Vec::new();
        let mut cache_hit = true;
        for p in &lowered.programs {
            let used = actions.iter().any(|a| match a {
                Action::Execute { program, .. } => *program == p.name,
                Action::Explore(e) => e.program == p.name,
                _ => false,
            });
            if !used {
                continue;
            }
            if p.target != wsp_ir::Target::CpuSim {
                return Err(CellError::plain(
                    "TargetError",
                    format!(
                        "program `{}` compiles for {}; the notebook runs cpu_sim programs (`wsp emit` writes NPU sources)",
                        p.name,
                        p.target.name()
                    ),
                ));
            }
            for (name, value) in &self.settings.bindings {
                if p.symbols.iter().any(|s| &s.name == name) {
                    wsp_runtime::check_binding([p], name, *value, &format!("%bind {name}={value}"))
                        .map_err(|e| CellError::plain("UsageError", e))?;
                }
            }
            match wsp_codegen::build(p, Path::new(PROGRAM_PATH), &cache, stop) {
                Ok(a) => {
                    cache_hit &= a.cache_hit;
                    programs.push((p.clone(), a.library));
                }
                Err(BuildError::CustomKernel(errs)) => {
                    // WSP601 at its line in `cpp_src`, shown in its cell as every diagnostic.
                    let text = self.file.text(&self.db);
                    let lines = wsp_syntax::LineIndex::new(text);
                    let located: Vec<Located> = errs
                        .iter()
                        .map(|e| {
                            let line_start = lines
                                .offset(wsp_syntax::LineCol {
                                    line: e.line.saturating_sub(1),
                                    col: 0,
                                })
                                .map_or(text.len(), usize::from);
                            let line_end = text[line_start..]
                                .find('\n')
                                .map_or(text.len(), |i| line_start + i);
                            let mut start =
                                (line_start + e.column.saturating_sub(1) as usize).min(line_end);
                            while !text.is_char_boundary(start) {
                                start -= 1;
                            }
                            Located {
                                error: true,
                                code: "WSP601",
                                message: format!(
                                    "C++ error in `cpp_src` of kernel `{}`: {}",
                                    e.kernel, e.message
                                ),
                                range: TextRange::new(
                                    TextSize::from(start as u32),
                                    TextSize::from(line_end as u32),
                                ),
                                label: None,
                                related: &[],
                                notes: Vec::new(),
                            }
                        })
                        .collect();
                    return Err(CellError {
                        ename: "WSP601".into(),
                        evalue: errs.first().map(|e| e.message.clone()).unwrap_or_default(),
                        traceback: vec![render_located(&self.cells, &located)],
                    });
                }
                Err(e) => return Err(CellError::plain("BuildError", e.to_string())),
            }
        }
        let compile_time_ms = compile_start.elapsed().as_secs_f64() * 1e3;
        let traced =
            self.settings.trace || programs.iter().any(|(p, _)| self.traced.contains(&p.name));
        let trace = traced.then(|| self.values.path().join("trace.json"));
        let bindings: Vec<(String, u64)> = self
            .settings
            .bindings
            .iter()
            .filter(|(name, _)| {
                programs
                    .iter()
                    .any(|(p, _)| p.symbols.iter().any(|s| &s.name == name))
            })
            .cloned()
            .collect();
        let job = Job {
            programs,
            actions,
            base_dir: self.base_dir.clone(),
            bindings,
            workers: self.settings.workers,
            trace: trace.clone(),
            target: self.settings.target.as_ref().map(|(_, text)| text.clone()),
            kernel_cycles: self.settings.kernel_cycles.clone(),
            swimlane: None,
            dump_tensors: Some(self.values.path().to_path_buf()),
            dump_tasks: None,
            index_launches: true,
            tensors: lowered.tensors.clone(),
            initial_values: Some(self.values.path().to_path_buf()),
            compile_time_ms,
            traces: self.traces.clone(),
            tune_cache: Some(wsp_runtime::explore::cache_dir(&wsp_codegen::cache_dir())),
            explorations: self.explorations.clone(),
            stats: self.last_fields.clone(),
            shard: None,
            progress: true,
        };
        let on_progress = &mut self.on_progress;
        let mut progress = |p| {
            if let Some(f) = on_progress.as_mut() {
                f(p);
            }
        };
        let outcome = self
            .runner
            .execute_with_progress(&job, stop, GRACE, &mut progress);
        let (report, stdout, stderr) = match outcome {
            Ok(r) => r,
            Err(ChildError::Fault { what, printed }) => {
                // What the cell printed before the crash.
                if !printed.is_empty() {
                    out.outputs.push(Output::Stdout(printed));
                }
                let crash = wsp_runtime::Fault {
                    what,
                    cause: wsp_runtime::FaultCause::Crash,
                    site: None,
                };
                return Err(self.fault(lowered, &crash));
            }
            Err(ChildError::Interrupted) => {
                return Err(CellError::plain(
                    "KeyboardInterrupt",
                    "the run was interrupted; tensor values are as they were before this cell",
                ));
            }
            Err(ChildError::Run(failed)) => {
                use wsp_runtime::RunError;
                // What the cell printed before the error.
                if !failed.output.is_empty() {
                    out.outputs.push(Output::Stdout(failed.output));
                }
                return Err(match failed.error {
                    RunError::Fault(f) => self.fault(lowered, &f),
                    RunError::Channel(m) => CellError::plain("ChannelError", m),
                    RunError::Input(m) => CellError::plain("InputError", m),
                    RunError::Invalid(m) => CellError::plain("RunError", m),
                });
            }
            Err(ChildError::Process(m)) => return Err(CellError::plain("RunError", m)),
        };
        self.traces = report.traces.clone();
        self.explorations = report.explorations.clone();
        if !stderr.is_empty() {
            out.outputs.push(Output::Stderr(stderr));
        }
        if !stdout.is_empty() {
            out.outputs.push(Output::Stdout(stdout));
        }
        if !report.output.is_empty() {
            out.outputs.push(Output::Stdout(report.output.clone()));
        }
        if !report.executions.is_empty() {
            let rows: Vec<RunStats> = report
                .executions
                .iter()
                .map(|e| RunStats {
                    program: e.program.clone(),
                    task_count: e.task_count,
                    total_cycles: e.total_cycles,
                    clock_ghz: report.clock_ghz,
                    target: report.target.clone(),
                    utilisation: e.utilisation(report.cores),
                    compile_time_ms,
                    execute_time_ms: e.execute_time_ms,
                    cache_hit,
                })
                .collect();
            out.outputs.push(Output::Display(render::stats(&rows)));
            for e in &report.executions {
                let stats = report.stats(Some(e), compile_time_ms);
                self.last_fields.insert(e.program.clone(), stats);
            }
            for row in rows {
                self.last_stats.insert(row.program.clone(), row);
            }
            if let Some(path) = trace {
                let timeline = std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| {
                        serde_json::from_slice::<serde_json::Value>(&bytes)
                            .map_err(|e| e.to_string())
                    })
                    .and_then(|json| render::timeline(&json));
                match timeline {
                    Ok(b) => out.outputs.push(Output::Display(b)),
                    Err(e) => out
                        .outputs
                        .push(Output::Stderr(format!("warning: no timeline: {e}\n"))),
                }
                let _ = std::fs::remove_file(path);
                // The timeline's scheduler overhead, as simpler's sched_overhead_analysis
                // reports a device run's.
                let lines: Vec<String> = report
                    .executions
                    .iter()
                    .filter_map(|e| {
                        let o = e.overhead?;
                        Some(format!(
                            "{}: scheduler overhead (simpler's model) AIC {:.1}%, AIV {:.1}%, all {:.1}%, has {:.1}% of {} cycles",
                            e.program,
                            o.aic * 100.0,
                            o.aiv * 100.0,
                            o.all * 100.0,
                            o.has * 100.0,
                            e.total_cycles
                        ))
                    })
                    .collect();
                if !lines.is_empty() {
                    out.outputs.push(Output::Display(render::MimeBundle(vec![(
                        "text/plain",
                        lines.join("\n"),
                    )])));
                }
            }
        }
        Ok(())
    }

    fn set_text(&mut self, cells: &[Cell]) {
        let text = program_text(cells);
        replace_text(&mut self.db, self.file, &text);
    }

    /// The program as it would be with `code` in the place of the cell `cell_id` (or after the
    /// last cell), in a scratch file of the same database, and where `code` starts in it: what
    /// completion and inspection see.
    pub fn with_draft(&mut self, code: &str, cell_id: Option<&str>) -> (File, usize) {
        let (code, _) = magics::split(code);
        let (cells, at) = placed(
            &self.cells,
            Cell {
                id: cell_id.map(str::to_string),
                text: code,
                count: self.count + 1,
            },
        );
        let start = spans(&cells)[at].start;
        let text = program_text(&cells);
        replace_text(&mut self.db, self.draft, &text);
        (self.draft, start)
    }

    pub fn db(&self) -> &Database {
        &self.db
    }
}

/// The cell (`In[n]`) and the line in it of a line of the program text (1-based).
fn cell_line(cells: &[Cell], line: u32) -> Option<(u32, u32)> {
    let mut first = 1u32;
    for c in cells {
        let lines = c.text.matches('\n').count() as u32 + u32::from(!c.text.ends_with('\n'));
        if line < first + lines {
            return Some((c.count, line - first + 1));
        }
        first += lines;
    }
    None
}

/// A message that names a place of the program text by line ("to close the `(` at 52:9"),
/// with the place in its cell ("at In[3]:2:9").
fn cell_message(cells: &[Cell], message: &str) -> String {
    let Some((head, place)) = message.rsplit_once(" at ") else {
        return message.to_string();
    };
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(place);
    let Some(rest) = place[n..].strip_prefix(':') else {
        return message.to_string();
    };
    let m = digits(rest);
    let (Ok(line), true) = (place[..n].parse::<u32>(), m > 0) else {
        return message.to_string();
    };
    match cell_line(cells, line) {
        Some((count, line)) => format!("{head} at In[{count}]:{line}:{}", &rest),
        None => message.to_string(),
    }
}

/// The cells with `cell` in the place of the cell with its id, or after the last; and its
/// index.
fn placed(cells: &[Cell], cell: Cell) -> (Vec<Cell>, usize) {
    let mut cells = cells.to_vec();
    let same = |c: &Cell| cell.id.is_some() && c.id == cell.id;
    match cells.iter().position(same) {
        Some(i) => {
            cells[i] = cell;
            (cells, i)
        }
        None => {
            cells.push(cell);
            let at = cells.len() - 1;
            (cells, at)
        }
    }
}

/// Gives `file` the text `new` as one edit of the part that differs, so that only the
/// statements it touches are parsed again (a notebook grows by a cell at a time).
fn replace_text(db: &mut Database, file: File, new: &str) {
    let old = file.text(db);
    if old == new {
        return;
    }
    let prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old[prefix..]
        .bytes()
        .rev()
        .zip(new[prefix..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    // On character boundaries of both texts.
    let mut start = prefix;
    while !(old.is_char_boundary(start) && new.is_char_boundary(start)) {
        start -= 1;
    }
    let (mut old_end, mut new_end) = (old.len() - suffix, new.len() - suffix);
    while !(old.is_char_boundary(old_end) && new.is_char_boundary(new_end)) {
        old_end += 1;
        new_end += 1;
    }
    let range = TextRange::new(TextSize::from(start as u32), TextSize::from(old_end as u32));
    let insert = new[start..new_end].to_string();
    file.apply_edit(db, range, &insert);
    debug_assert_eq!(file.text(db), new);
}

fn program_text(cells: &[Cell]) -> String {
    let mut text = String::new();
    for c in cells {
        text.push_str(&c.text);
        if !c.text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// Where each cell's text is in the program text.
fn spans(cells: &[Cell]) -> Vec<Range<usize>> {
    let mut at = 0;
    cells
        .iter()
        .map(|c| {
            let len = c.text.len() + usize::from(!c.text.ends_with('\n'));
            let span = at..at + len;
            at += len;
            span
        })
        .collect()
}

/// A diagnostic at the very end of the text (an unclosed block) belongs to no cell's span.
fn in_no_cell(spans: &[Range<usize>], d: &Diagnostic) -> bool {
    let end = spans.last().map_or(0, |s| s.end);
    usize::from(d.range.start()) >= end
}

/// The module-level names a cell assigns (`X = ...`): the tensors whose kept values it resets,
/// the names a taken-out cell would define.
fn bound_names(code: &str) -> Vec<String> {
    use wsp_syntax::ast::{AstNode, Expr, Stmt};
    let parse = wsp_syntax::parse(code);
    let mut names = Vec::new();
    for stmt in parse.tree().statements() {
        if let Stmt::AssignStmt(a) = stmt {
            for t in a.targets() {
                if let Expr::NameExpr(n) = t {
                    names.push(n.syntax().text().to_string());
                }
            }
        }
    }
    names
}

/// Renders diagnostics with their snippets, each in its cell (`In[3]`), ANSI-coloured as
/// ipykernel colours its tracebacks.
fn render_diagnostics(cells: &[Cell], diagnostics: &[&Diagnostic]) -> String {
    let located: Vec<Located> = diagnostics
        .iter()
        .map(|d| Located {
            error: d.severity == Severity::Error,
            code: d.code.as_str(),
            message: cell_message(cells, &d.message),
            range: d.range,
            label: None,
            related: &d.related,
            notes: d
                .fix
                .iter()
                .map(|f| match f.applicability {
                    Applicability::MachineApplicable => format!("fix: {}", f.title),
                    Applicability::MaybeIncorrect => {
                        format!("help: {} (a guess from spelling)", f.title)
                    }
                })
                .collect(),
        })
        .collect();
    render_located(cells, &located)
}

/// A diagnostic of the analyzer's or of a build (WSP601), placed in the program text.
struct Located<'a> {
    error: bool,
    code: &'a str,
    message: String,
    range: TextRange,
    /// The primary label's message, if any.
    label: Option<&'a str>,
    related: &'a [(TextRange, String)],
    notes: Vec<String>,
}

fn render_located(cells: &[Cell], diagnostics: &[Located]) -> String {
    let mut files = SimpleFiles::new();
    let spans = spans(cells);
    let ids: Vec<usize> = cells
        .iter()
        .map(|c| files.add(format!("In[{}]", c.count), c.text.clone()))
        .collect();
    // A range in the program text → (cell file, range in the cell).
    let locate = |r: TextRange| -> Option<(usize, Range<usize>)> {
        let start = usize::from(r.start());
        let i = spans
            .iter()
            .position(|s| s.contains(&start))
            .or_else(|| spans.len().checked_sub(1))?;
        let len = cells[i].text.len();
        let lo = (start - spans[i].start).min(len);
        let hi = (usize::from(r.end()).saturating_sub(spans[i].start)).clamp(lo, len);
        Some((ids[i], lo..hi))
    };
    let mut buffer = termcolor::Buffer::ansi();
    let config = term::Config::default();
    // As `wsp check` and the editor: a flood of diagnostics is cut, and counted.
    let hidden = diagnostics
        .len()
        .saturating_sub(wsp_analysis::SHOWN_PER_FILE);
    for d in &diagnostics[..diagnostics.len() - hidden] {
        let level = if d.error {
            Level::Error
        } else {
            Level::Warning
        };
        let mut labels = Vec::new();
        if let Some((file, range)) = locate(d.range) {
            let l = Label::primary(file, range);
            labels.push(match d.label {
                Some(m) => l.with_message(m),
                None => l,
            });
        }
        for (r, message) in d.related {
            if let Some((file, range)) = locate(*r) {
                labels.push(Label::secondary(file, range).with_message(message));
            }
        }
        let rendered = Rendered::new(level)
            .with_code(d.code)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(d.notes.clone());
        let _ = term::emit_to_write_style(&mut buffer, &config, &files, &rendered);
    }
    let mut text = String::from_utf8_lossy(buffer.as_slice()).into_owned();
    if hidden > 0 {
        text.push_str(&format!(
            "note: {}\n",
            wsp_analysis::not_shown(hidden, "this cell")
        ));
    }
    text
}
