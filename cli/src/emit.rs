//! `wsp emit FILE [--target ascend_npu] -o DIR`: analyze the file as an `ascend_npu` program
//! (so WSP501/502 and the on-chip buffer check apply), lower it, and write the NPU source
//! tree: generated sources from codegen, initial tensor values from the runtime.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use wsp_ir::Target;
use wsp_ir::plan::Init;

#[derive(clap::Args)]
pub(crate) struct EmitArgs {
    /// The `.wsp` file.
    file: PathBuf,
    /// The target to emit for (only `ascend_npu` has a source tree).
    #[arg(long, default_value = "ascend_npu")]
    target: String,
    /// The folder to write the tree to: new, empty, or an earlier tree, which is replaced (its
    /// `build*` folders kept).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
}

/// The most initial tensor data a tree carries in `data/`: past it the tree would be a data
/// set more than a source tree.
const MAX_DATA_BYTES: u64 = 4 << 30;

pub(crate) fn emit(args: EmitArgs) -> ExitCode {
    match emit_inner(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn emit_inner(args: &EmitArgs) -> Result<ExitCode, String> {
    let target = Target::from_name(&args.target).ok_or_else(|| {
        format!(
            "unknown target `{}` (expected {})",
            args.target,
            Target::names()
        )
    })?;
    if target != Target::AscendNpu {
        return Err(format!(
            "`wsp emit` writes source trees for ascend_npu; {} programs run with `wsp run`",
            target.name()
        ));
    }
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let (lowered, diagnostics) = crate::check::check_and_lower(
        &args.file,
        &text,
        vec![target],
        &[],
        &crate::check::selection_for(&args.file)?,
    );
    if !diagnostics.is_empty() {
        let checked = crate::report::Checked {
            path: args.file.clone(),
            text: text.clone(),
            diagnostics,
        };
        crate::report::print_human_to_stderr(checked);
    }
    let Some(lowered) = lowered else {
        return Ok(ExitCode::from(1));
    };
    // An exploration's program is scored by the simulated clock (`wsp run`, `wsp tune`), not
    // emitted; a program whose schedule an exploration chooses has none until it runs.
    let explored: Vec<&str> = lowered
        .actions
        .iter()
        .filter_map(|(_, a)| match a {
            wsp_ir::Action::Explore(e) => Some(e.program.as_str()),
            _ => None,
        })
        .collect();
    if let Some(p) = lowered.programs.iter().find(|p| p.explored.is_some()) {
        return Err(format!(
            "program `{}` takes the best configuration of an exploration, which only a run finds: run `wsp tune {}` and write the configuration it prints with `.with_config(ScheduleConfig(...))` or the schedule's own directives",
            p.name,
            args.file.display()
        ));
    }
    let mut programs: Vec<wsp_ir::Program> = lowered
        .programs
        .iter()
        .filter(|p| !explored.contains(&p.name.as_str()))
        .cloned()
        .collect();
    if programs.is_empty() {
        return Err(format!(
            "{} compiles no program: write `program = workload(...).compile(target=\"ascend_npu\")`",
            args.file.display()
        ));
    }
    for p in &mut programs {
        *p = wsp_ir::split::split_program(p, &wsp_ir::arch::A2A3)?;
        p.target = target;
    }
    let actions: Vec<_> = lowered.actions.iter().map(|(_, a)| a.clone()).collect();
    let name = args.file.file_name().map_or_else(
        || "program.wsp".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let source = wsp_codegen::npu::Source {
        name: &name,
        text: &text,
    };
    let table = wsp_runtime::target::TargetDesc::default().instructions;
    let mut tree = wsp_codegen::npu::tree(
        &programs,
        &actions,
        &source,
        &wsp_ir::arch::A2A3,
        &|k, layouts| wsp_runtime::kernel_model::source(k, layouts, &table),
    )?;
    let base_dir = args
        .file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for (tensor, bytes) in initial_data(&programs, base_dir)? {
        tree.add(format!("data/{tensor}.npy"), bytes);
    }
    // The tree's tests run `wsp run` on its copy of the file, whose `load_npy` paths are
    // relative to it: the files go beside the copy.
    for path in load_npy_paths(&programs) {
        if Path::new(path).is_absolute() {
            continue; // read from where it is
        }
        // Where `source/PATH` lands in the tree; `..` may climb to the tree's root, no further.
        let mut at: Vec<String> = vec!["source".into()];
        let mut inside = true;
        for c in Path::new(path).components() {
            match c {
                std::path::Component::Normal(n) => at.push(n.to_string_lossy().into_owned()),
                std::path::Component::ParentDir => inside &= at.pop().is_some(),
                _ => {}
            }
        }
        let at = at.join("/");
        if !inside || at.is_empty() || tree.files.iter().any(|(p, _)| *p == at) {
            eprintln!(
                "note: `load_npy(\"{path}\")` is outside what the tree can hold beside its copy of the file (source/): the tree's tests, which run `wsp run` on that copy, cannot read it; use a path in the file's folder"
            );
            continue;
        }
        let from = base_dir.join(path);
        let bytes =
            std::fs::read(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        tree.add(at, bytes);
    }
    expected_outputs(&mut tree, &programs)?;
    if let (Ok(file), Ok(out)) = (
        std::fs::canonicalize(&args.file),
        std::fs::canonicalize(&args.out),
    ) && file.starts_with(&out)
    {
        return Err(format!(
            "{} is inside `{}`, which the tree would replace: write the tree to another folder",
            args.file.display(),
            args.out.display()
        ));
    }
    tree.write(&args.out)?;
    let kernels = tree
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("aicore/"))
        .count();
    let out = args.out.display();
    println!(
        "wrote {out}: {} program{}, {kernels} AICore kernel{}, {} files",
        programs.len(),
        if programs.len() == 1 { "" } else { "s" },
        if kernels == 1 { "" } else { "s" },
        tree.files.len()
    );
    // The tests compare the replays with the expected outputs written into the tree; they
    // need no `wsp` (-DWSP_EXECUTABLE=... compares with `wsp run` live instead).
    println!(
        "build and test: cmake -S {out} -B {out}/build && cmake --build {out}/build && ctest --test-dir {out}/build"
    );
    Ok(ExitCode::SUCCESS)
}

/// The outputs the tree's tests compare its replays with, so that they need no `wsp`: the
/// task stream and tensors of `wsp run --simulate-npu` (the program as the tree lays it out)
/// in `expected/`, and with each run-time symbol rebound to the value its test binds, in
/// `expected/bind_<symbol>/`. Run on the tree's own copy of the source, in a copy of the tree
/// in a temporary folder (so the files its `load_npy` calls read are where the copy finds
/// them, and the run's `save_npy` writes land there, not beside the user's file).
fn expected_outputs(
    tree: &mut wsp_codegen::npu::Tree,
    programs: &[wsp_ir::Program],
) -> Result<(), String> {
    let work = tempfile::Builder::new()
        .prefix(".wsp-emit-expected-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let mut source = None;
    for (path, bytes) in &tree.files {
        let to = work.path().join(path);
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create `{}`: {e}", d.display()))?;
        }
        std::fs::write(&to, bytes).map_err(|e| format!("cannot write `{}`: {e}", to.display()))?;
        if path.starts_with("source/") && path.ends_with(".wsp") && path.matches('/').count() == 1 {
            source = Some(to);
        }
    }
    let source = source.ok_or("the tree holds no copy of the source")?;
    let mut runs = vec![("expected".to_string(), None)];
    for s in wsp_codegen::npu::file_symbols(programs) {
        let value = wsp_codegen::npu::alternative_value(s.default);
        runs.push((
            format!("expected/bind_{}", s.name),
            Some(format!("{}={value}", s.name)),
        ));
    }
    for (dir, bind) in runs {
        let out = work.path().join(&dir);
        let tensors = out.join("tensors");
        std::fs::create_dir_all(&tensors)
            .map_err(|e| format!("cannot create `{}`: {e}", tensors.display()))?;
        let mut cmd = wsp_runtime::process::self_command()?;
        cmd.arg("run").arg(&source).arg("--simulate-npu");
        if let Some(b) = &bind {
            cmd.args(["--bind", b]);
        }
        cmd.arg("--dump-tasks")
            .arg(out.join("tasks.txt"))
            .arg("--dump-tensors")
            .arg(&tensors)
            .current_dir(work.path());
        let done = cmd
            .output()
            .map_err(|e| format!("cannot run `wsp run` for the expected outputs: {e}"))?;
        if !done.status.success() {
            let with = bind.map_or(String::new(), |b| format!(" --bind {b}"));
            return Err(format!(
                "computing the tree's expected outputs (`wsp run --simulate-npu{with}`) failed:\n{}",
                String::from_utf8_lossy(&done.stderr)
            ));
        }
        let read =
            |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read `{}`: {e}", p.display()));
        tree.add(format!("{dir}/tasks.txt"), read(&out.join("tasks.txt"))?);
        let mut names: Vec<_> = std::fs::read_dir(&tensors)
            .map_err(|e| format!("cannot read `{}`: {e}", tensors.display()))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            tree.add(format!("{dir}/tensors/{name}"), read(&tensors.join(&name))?);
        }
    }
    Ok(())
}

/// The files `load_npy` initialisations read, once each.
fn load_npy_paths(programs: &[wsp_ir::Program]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in wsp_codegen::npu::file_tensors(programs) {
        if let Some(Init::LoadNpy(path)) = &t.init
            && !out.contains(&path.as_str())
        {
            out.push(path);
        }
    }
    out
}

/// The `.npy` bytes of every declared tensor that starts from something other than zeros,
/// computed by the runtime exactly as `wsp run` starts it (same seeds, same files).
fn initial_data(
    programs: &[wsp_ir::Program],
    base_dir: &Path,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let tensors: Vec<&wsp_ir::Tensor> = wsp_codegen::npu::file_tensors(programs)
        .into_iter()
        .filter(|t| wsp_codegen::npu::starts_from_data(t))
        .collect();
    let total = tensors.iter().try_fold(0u64, |sum, t| {
        wsp_ir::memory::tensor_bytes(&t.shape, t.dtype).and_then(|b| sum.checked_add(b))
    });
    if total.is_none_or(|b| b > MAX_DATA_BYTES) {
        return Err(format!(
            "the initial tensor values would take {} in the tree's data/ folder, more than the {} a tree carries: emit a smaller configuration of the program",
            wsp_ir::memory::size_text(total),
            wsp_ir::memory::bytes_text(MAX_DATA_BYTES)
        ));
    }
    let mut out = Vec::new();
    for t in tensors {
        let mut data = wsp_runtime::tensors::TensorData::zeros(&t.name, t.dtype, &t.shape)?;
        if let Some(init) = &t.init {
            data.init(init, base_dir)?;
        }
        let mut bytes = Vec::new();
        data.write_npy(&mut bytes)
            .map_err(|e| format!("tensor `{}`: {e}", t.name))?;
        out.push((t.name.clone(), bytes));
    }
    Ok(out)
}
