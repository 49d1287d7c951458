//! `cargo xtask calibrate --pto-isa PATH`: measures every AICore kernel of `examples/`,
//! `examples/ported/`, `examples/perf/`, `cli/tests/data/a2a3_{forms,bf16}.wsp` and the probe
//! grid (`runtime/calibration/probes.wsp`) with PTO-ISA's A2/A3 Perf-Sim, writes the
//! measurements to `runtime/calibration/perf_sim.json`, fits the simulated clock's instruction
//! table to them (`wsp_runtime::kernel_model::fit`) and writes it into
//! `runtime/targets/ascend_910b.toml`, with the PTO-ISA commit and the date.
//!
//! Each program is emitted (`wsp emit`) and its tree's own A2/A3 check (`cmake/a2a3.cmake`)
//! compiles the kernels under the cost-model build and runs Perf-Sim on each. Perf-Sim's
//! trace gives every instruction's cycles; they are matched, in order, with the instructions
//! of the emitted kernel as `wsp_aicore::listing` reads them, so a mismatch is an error, not
//! a silently shifted table.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use wsp_runtime::kernel_model::{self, Measured};

use crate::{cargo, root, run};

/// The file the measurements go to, relative to the workspace.
pub const DATA: &str = "runtime/calibration/perf_sim.json";
const PROBES: &str = "runtime/calibration/probes.wsp";
/// Programs that hold kernels in forms and dtypes the examples do not.
const FORMS: &[&str] = &[
    "cli/tests/data/a2a3_forms.wsp",
    "cli/tests/data/a2a3_bf16.wsp",
];
const TARGET: &str = "runtime/targets/ascend_910b.toml";

/// With `pto_isa`, measures and fits; without, refits the table to the committed
/// measurements (the kernels are emitted again, to be read).
pub fn calibrate(pto_isa: Option<&Path>, cxx: &str) -> Result<(), String> {
    run(cargo().args(["build", "--locked", "-p", "wsp-cli", "--bin", "wsp"]))?;
    let wsp = root().join("target/debug/wsp");
    let work = root().join("target/calibrate");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let data = match pto_isa {
        Some(p) => measure(p, cxx, &wsp, &work)?,
        None => {
            for program in programs()? {
                emit(&wsp, &program, &work)?;
            }
            read_json(&root().join(DATA))?
        }
    };
    let commit = data["pto_isa_commit"]
        .as_str()
        .unwrap_or("unknown")
        .to_string();
    let measured: Vec<Measured> =
        serde_json::from_value(data["kernels"].clone()).map_err(|e| e.to_string())?;
    let fit = kernel_model::fit(&measured, |m| {
        let src = std::fs::read_to_string(
            work.join(slug(&m.program))
                .join(format!("aicore/{}.cpp", m.kernel)),
        )
        .ok()?;
        Some(wsp_aicore::listing::listing(&src))
    })?;
    let date = today()?;
    let target = root().join(TARGET);
    let old = std::fs::read_to_string(&target).map_err(|e| format!("{TARGET}: {e}"))?;
    let new = kernel_model::replace_table(&old, &fit.table_toml(&commit, &date))?;
    write(&target, &new)?;
    eprintln!("xtask: wrote the instruction table into {TARGET}");
    eprintln!("{}", fit.report);
    Ok(())
}

pub(crate) fn slug(program: &str) -> String {
    program.replace(['/', '.'], "_")
}

/// `wsp emit`s `program` into `work`; its path from the workspace and the tree.
pub(crate) fn emit(wsp: &Path, program: &Path, work: &Path) -> Result<(String, PathBuf), String> {
    let rel = program
        .strip_prefix(root())
        .unwrap_or(program)
        .to_string_lossy()
        .into_owned();
    let tree = work.join(slug(&rel));
    run(Command::new(wsp)
        .arg("emit")
        .arg(program)
        .arg("-o")
        .arg(&tree))?;
    Ok((rel, tree))
}

/// Perf-Sim on every kernel of every program; the data file's contents, also written.
fn measure(pto_isa: &Path, cxx: &str, wsp: &Path, work: &Path) -> Result<Value, String> {
    let pto_isa = pto_isa
        .canonicalize()
        .map_err(|e| format!("--pto-isa {}: {e}", pto_isa.display()))?;
    let commit = git_commit(&pto_isa)?;
    let mut kernels = Vec::new();
    for program in programs()? {
        let (rel, tree) = emit(wsp, &program, work)?;
        let names = aicore_kernels(&tree)?;
        let perf = work.join(format!("{}.perf", slug(&rel)));
        let cycles = perf_sim(&pto_isa, cxx, &tree, &names, &perf)?;
        for name in &names {
            let entry = &cycles["kernels"][name];
            let src = std::fs::read_to_string(tree.join(format!("aicore/{name}.cpp")))
                .map_err(|e| format!("{name}: {e}"))?;
            let mut k = json!({"program": rel, "kernel": name, "core": entry["core"]});
            if let Some(why) = entry["not_simulated"].as_str() {
                k["not_simulated"] = json!(why);
            } else if is_mixed(&tree, name) {
                // A mixed launch: its total and each core's pipes; its instructions are not
                // one core's, and the table is not fitted to them.
                k["total_cycles"] = entry["total_cycles"].clone();
                k["busy_cycles"] = entry["busy_cycles"].clone();
            } else {
                let trace = perf.join(format!("perf_sim_output/wsp_perf_{name}.json"));
                let instrs = instruction_cycles(&read_json(&trace)?, &src, name)?;
                k["total_cycles"] = entry["total_cycles"].clone();
                k["busy_cycles"] = entry["busy_cycles"].clone();
                k["instructions"] = json!(instrs);
            }
            kernels.push(k);
        }
    }
    let data = json!({
        "about": "PTO-ISA Perf-Sim (A2/A3 cost-model build, one block, no L2) on every AICore kernel `wsp emit` writes for the programs named; written by `cargo xtask calibrate`. `instructions`: each instruction of the emitted kernel, in order, with its cycles in Perf-Sim's trace.",
        "pto_isa_commit": commit,
        "compiler": cxx,
        "kernels": kernels,
    });
    let text = serde_json::to_string_pretty(&data).map_err(|e| e.to_string())? + "\n";
    write(&root().join(DATA), &text)?;
    eprintln!("xtask: wrote {DATA} ({} kernels)", kernels.len());
    Ok(data)
}

/// The AICore kernels of an emitted tree (`aicore/NAME.cpp`), by name.
pub(crate) fn aicore_kernels(tree: &Path) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = std::fs::read_dir(tree.join("aicore"))
        .map_err(|e| format!("{}: {e}", tree.display()))?
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "cpp").then_some(stem)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// The tree's own A2/A3 check (`cmake/a2a3.cmake`) on its kernels `names`: each compiled under
/// PTO-ISA's cost-model build and run through Perf-Sim in `work`; its `kernel_cycles.json`.
pub(crate) fn perf_sim(
    pto_isa: &Path,
    cxx: &str,
    tree: &Path,
    names: &[String],
    work: &Path,
) -> Result<Value, String> {
    let mixed: Vec<&str> = names
        .iter()
        .filter(|n| is_mixed(tree, n))
        .map(String::as_str)
        .collect();
    run(Command::new("cmake")
        .arg(format!("-DPTO_ISA_PATH={}", pto_isa.display()))
        .arg(format!("-DCXX={cxx}"))
        .arg("-DPYTHON=python3")
        .arg(format!("-DTREE={}", tree.display()))
        .arg(format!("-DKERNELS={}", names.join(",")))
        .arg(format!("-DMIXED={}", mixed.join(",")))
        .arg("-DNPU_ARCH=2201")
        .arg(format!("-DWORK={}", work.display()))
        .arg("-P")
        .arg(tree.join("cmake/a2a3.cmake")))?;
    read_json(&work.join("kernel_cycles.json"))
}

/// Whether the tree's AICore kernel `name` is one mixed launch of a cube core and its vector
/// cores (`wsp_aicore::mixed`), as its file says.
pub(crate) fn is_mixed(tree: &Path, name: &str) -> bool {
    std::fs::read_to_string(tree.join(format!("aicore/{name}.cpp")))
        .is_ok_and(|src| src.contains(wsp_aicore::mixed::HEADER))
}

/// The programs measured: the examples, the ported ones, the loop kernels of `examples/perf/`,
/// the emitter's tests of its forms and of bf16, then the probe grid.
fn programs() -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for dir in ["examples", "examples/ported", "examples/perf"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .map_err(|e| format!("{dir}: {e}"))?
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out.extend(FORMS.iter().map(|p| root().join(p)));
    out.push(root().join(PROBES));
    Ok(out)
}

/// Each instruction of the emitted kernel `src`, in order, with its cycles from the Perf-Sim
/// trace: the events of one vector subblock (`AIV-0`; the two run the same tile) or of the
/// cube core, by their sequence number, which must name the same instructions.
fn instruction_cycles(trace: &Value, src: &str, kernel: &str) -> Result<Vec<Value>, String> {
    let events = trace["traceEvents"]
        .as_array()
        .or_else(|| trace.as_array())
        .ok_or(format!("{kernel}: the Perf-Sim trace has no events"))?;
    let mut timed: Vec<(u64, String, u64)> = Vec::new();
    for e in events {
        if e["ph"] != "X" {
            continue;
        }
        let (Some(name), Some(tid), Some(dur)) =
            (e["name"].as_str(), e["tid"].as_str(), e["dur"].as_u64())
        else {
            continue;
        };
        if tid.contains("AIV-1") || tid.ends_with("Scalar") {
            continue;
        }
        let (head, seq) = name.rsplit_once(':').unwrap_or((name, "0"));
        let op = head.split('(').next().unwrap_or(head).to_string();
        let seq: u64 = seq
            .parse()
            .map_err(|_| format!("{kernel}: event `{name}`"))?;
        timed.push((seq, op, dur));
    }
    timed.sort();
    let listing = wsp_aicore::listing::listing(src);
    let instrs: Vec<&str> = listing
        .run_instrs()
        .into_iter()
        .map(|(_, _, i)| i.name.as_str())
        .collect();
    let names: Vec<&str> = timed.iter().map(|(_, n, _)| n.as_str()).collect();
    let traced = |emitted: &str, name: &str| {
        let as_traced = TRACED_AS.iter().find(|(e, _)| *e == emitted);
        name == as_traced.map_or(emitted, |(_, t)| *t)
    };
    if names.len() != instrs.len() || names.iter().zip(&instrs).any(|(n, i)| !traced(i, n)) {
        return Err(format!(
            "{kernel}: Perf-Sim timed {names:?}, the emitted kernel has {instrs:?}"
        ));
    }
    // Each measurement under the emitted instruction's name, whose row it fits.
    Ok(instrs
        .iter()
        .zip(timed)
        .map(|(i, (_, _, d))| json!([i, d]))
        .collect())
}

/// Instructions PTO-ISA's cost-model build runs as another, and its trace names so
/// (`include/pto/costmodel/pto_instr.hpp`): TRECIP is TDIVS of 1.
const TRACED_AS: &[(&str, &str)] = &[("TRECIP", "TDIVS")];

pub(crate) fn git_commit(repo: &Path) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "--short=8", "HEAD"])
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{} is not a git checkout of PTO-ISA (its commit goes into the table): {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn today() -> Result<String, String> {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map_err(|e| format!("date: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub(crate) fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Written beside, then renamed.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}
