//! `cargo xtask bench npu`: our emitted GEMMs and flash attention against PTO-ISA's
//! hand-written ones, side by side in one run, into `target/bench/npu.json`. Needs `PTO_ISA_PATH` (a checkout whose A2/A3 cost
//! model builds: d07bd4b6), clang++-19 and Debian's `libgtest-dev` (PTO-ISA's test links it).
//!
//! - PTO-ISA's own `tests/costmodel/perf_sim_st` targets `gemm_perf_sim` and `fa_perf_sim` are
//!   built and run: their three cases' Perf-Sim totals and pipes each.
//! - `examples/perf/fa_{small,standard,long}.wsp`, the flash attention cases as one mixed launch
//!   each, through Perf-Sim the same way, and on our clock (`wsp run`'s kernel report).
//! - `examples/perf/gemm_{small,medium,large_k}.wsp`, the same three cases as one kernel each,
//!   are emitted and run through Perf-Sim by their tree's own check (`cmake/a2a3.cmake`), and
//!   costed by our clock's kernel model from the same emitted code.
//! - Every example kernel's Perf-Sim total against its busiest pipe, from the measurements of
//!   the last `cargo xtask calibrate` (`runtime/calibration/perf_sim.json`).
//!
//! A benchmark, not a test: it asserts nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use wsp_runtime::kernel_model::{MIXED, run_listing};
use wsp_runtime::target::TargetDesc;

use crate::calibrate::{DATA, aicore_kernels, emit, git_commit, perf_sim, read_json, write};
use crate::{release_wsp, root, run};

/// PTO-ISA's flash attention cases (`runTFA_S0xHEADxS1`, its `fa_perf_sim`) and our program
/// for each: one mixed launch of a cube core and its vector cores.
const FA_CASES: &[(&str, &str)] = &[
    ("runTFA_64x64x512", "examples/perf/fa_small.wsp"),
    ("runTFA_128x128x1024", "examples/perf/fa_standard.wsp"),
    ("runTFA_256x64x2048", "examples/perf/fa_long.wsp"),
];

/// The gtest cases of `fa_perf_sim` that time those, on one core.
const FA_TESTS: &str =
    "FAPerfSim.Small_64x64x512:FAPerfSim.Standard_128x128x1024:FAPerfSim.LongSeq_256x64x2048";

/// PTO-ISA's case name (`runGemm_MxKxN`) and our program for it.
const CASES: &[(&str, &str)] = &[
    ("runGemm_128x64x256", "examples/perf/gemm_small.wsp"),
    ("runGemm_1536x256x1024", "examples/perf/gemm_medium.wsp"),
    ("runGemm_256x4096x256", "examples/perf/gemm_large_k.wsp"),
];

const CXX: &str = "clang++-19";

/// Our clock's cycles for each AICore kernel of `tree`.
pub fn clock(tree: &Path) -> Result<(), String> {
    let table = TargetDesc::default().instructions;
    let dir = tree.join("aicore");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    files.sort();
    for f in files {
        let src = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let cycles = run_listing(&wsp_aicore::listing::listing(&src), &table).total;
        let name = f.file_stem().unwrap_or_default().to_string_lossy();
        println!("{name}\t{cycles}");
    }
    Ok(())
}

pub fn bench() -> Result<(), String> {
    let pto_isa = std::env::var_os("PTO_ISA_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .ok_or("bench npu needs PTO_ISA_PATH: a PTO-ISA checkout whose A2/A3 cost model builds (d07bd4b6)")?;
    let pto_isa = pto_isa
        .canonicalize()
        .map_err(|e| format!("PTO_ISA_PATH {}: {e}", pto_isa.display()))?;
    let commit = git_commit(&pto_isa)?;
    let out_dir = root().join("target/bench");
    let work = out_dir.join("npu");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;

    let reference = hand_written(&pto_isa, &work)?;
    let wsp = release_wsp()?;
    let table = TargetDesc::default().instructions;
    let cx = Compare {
        pto_isa: &pto_isa,
        wsp: &wsp,
        work: &work,
        reference: &reference,
    };
    // A GEMM's clock from its emitted kernel; a mixed launch's from `wsp run`, which has
    // the kernel it runs.
    let gemms = cx.cases("GEMM", "gemm_perf_sim", CASES, &|tree, name, _| {
        let src = std::fs::read_to_string(tree.join(format!("aicore/{name}.cpp")))
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(run_listing(&wsp_aicore::listing::listing(&src), &table).total)
    })?;
    println!();
    let attention = cx.cases(
        "flash attention",
        "fa_perf_sim",
        FA_CASES,
        &|_, _, program| clock_cycles(&wsp, program, &work),
    )?;

    let (examples, median) = busiest_pipes()?;
    println!("example kernels: median busiest pipe / total = {median:.3}");
    let data = json!({
        "about": "PTO-ISA's hand-written GEMMs and flash attention (tests/costmodel/perf_sim_st gemm_perf_sim, fa_perf_sim) against ours (examples/perf/), both in Perf-Sim at the same commit, ours also on our clock; and every example kernel's busiest pipe against its total, from runtime/calibration/perf_sim.json. Written by `cargo xtask bench npu`.",
        "pto_isa_commit": commit,
        "compiler": CXX,
        "gemm": gemms,
        "flash_attention": attention,
        "example_kernels": examples,
        "median_busiest_over_total": median,
    });
    let text = serde_json::to_string_pretty(&data).map_err(|e| e.to_string())? + "\n";
    write(&out_dir.join("npu.json"), &text)?;
    eprintln!("xtask: wrote target/bench/npu.json");
    Ok(())
}

/// What each case is measured with.
struct Compare<'a> {
    pto_isa: &'a Path,
    wsp: &'a Path,
    work: &'a Path,
    /// PTO-ISA's hand-written kernels' reports, by case.
    reference: &'a Value,
}

impl Compare<'_> {
    /// Each case's program emitted and run through Perf-Sim, its cycles on our clock (`clock`
    /// of its tree, kernel and program) and PTO-ISA's (from `target`), printed as a table
    /// headed `what` and returned as JSON rows.
    fn cases(
        &self,
        what: &str,
        target: &str,
        cases: &[(&str, &str)],
        clock: &dyn Fn(&Path, &str, &Path) -> Result<u64, String>,
    ) -> Result<Vec<Value>, String> {
        println!(
            "| {what} | PTO-ISA | ours, Perf-Sim | ratio | ours, our clock | clock / Perf-Sim |"
        );
        println!("| --- | --- | --- | --- | --- | --- |");
        let mut rows = Vec::new();
        for (case, program) in cases {
            let path = root().join(program);
            let (_, tree) = emit(self.wsp, &path, self.work)?;
            let name = kernel_of(&tree)?;
            let cycles = perf_sim(
                self.pto_isa,
                CXX,
                &tree,
                std::slice::from_ref(&name),
                &self.work.join(format!("{case}.perf")),
            )?;
            let k = &cycles["kernels"][&name];
            let ours = k["total_cycles"]
                .as_u64()
                .ok_or(format!("{name}: no Perf-Sim total"))?;
            let clock = clock(&tree, &name, &path)?;
            let theirs = self.reference[case]["total_cycles"]
                .as_u64()
                .ok_or(format!("PTO-ISA's {target} printed no total for {case}"))?;
            let ratio = ours as f64 / theirs as f64;
            let clock_err = clock as f64 / ours as f64;
            println!("| {case} | {theirs} | {ours} | {ratio:.3} | {clock} | {clock_err:.3} |");
            rows.push(json!({
                "case": case,
                "program": program,
                "pto_isa_cycles": theirs,
                "pto_isa_busy_cycles": self.reference[case]["busy_cycles"],
                "ours_perf_sim_cycles": ours,
                "ours_busy_cycles": k["busy_cycles"],
                "ours_clock_cycles": clock,
                "ratio": ratio,
                "clock_over_perf_sim": clock_err,
            }));
        }
        Ok(rows)
    }
}

/// Our clock's cycles for the one kernel of `program` (`wsp run`'s kernel report).
fn clock_cycles(wsp: &Path, program: &Path, work: &Path) -> Result<u64, String> {
    let stats = work.join("stats.json");
    run(Command::new(wsp)
        .arg("run")
        .arg(program)
        .arg("--stats-json")
        .arg(&stats))?;
    let v = read_json(&stats)?;
    v["kernels"][0]["cycles"]
        .as_u64()
        .ok_or(format!("{}: no kernel cycles", program.display()))
}

/// The one AICore kernel of an emitted tree.
fn kernel_of(tree: &Path) -> Result<String, String> {
    let mut names = aicore_kernels(tree)?;
    match names.len() {
        1 => Ok(names.remove(0)),
        n => Err(format!(
            "{}: {n} AICore kernels, one expected",
            tree.display()
        )),
    }
}

/// PTO-ISA's `gemm_perf_sim`, built and run: per case, its total and each pipe's cycles.
fn hand_written(pto_isa: &Path, work: &Path) -> Result<Value, String> {
    for backend in ["a2a3", "a5"] {
        let dir = pto_isa.join(format!("include/pto/costmodel/{backend}/formula_costmodel"));
        if !dir.join("formula_params_generated.hpp").exists() {
            run(Command::new("python3")
                .arg("gen_formula_params_header.py")
                .current_dir(&dir))?;
        }
    }
    let build = work.join("pto-isa-perf-sim");
    run(Command::new("cmake")
        .arg("-S")
        .arg(pto_isa.join("tests/costmodel/perf_sim_st"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_CXX_COMPILER={CXX}"))
        .arg("-DCMAKE_C_COMPILER=clang-19")
        .arg("-DCMAKE_CXX_FLAGS=-O1"))?;
    let mut reports = String::new();
    for (target, filter) in [("gemm_perf_sim", None), ("fa_perf_sim", Some(FA_TESTS))] {
        run(Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .args(["--target", target, "-j", "2"]))?;
        let bin = build.join("bin");
        let mut cmd = Command::new(bin.join(target));
        if let Some(f) = filter {
            cmd.arg(format!("--gtest_filter={f}"));
        }
        let out = cmd
            .current_dir(&bin)
            .output()
            .map_err(|e| format!("{target}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{target} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        reports.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    Ok(parse_report(&reports))
}

/// Perf-Sim's reports (`===== Perf-Sim Report: NAME =====`, `Total cycles : N`, then a table of
/// pipes and their cycles per core) by name.
fn parse_report(text: &str) -> Value {
    let mut out = serde_json::Map::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("===== Perf-Sim Report: ") {
            let name = rest.trim_end_matches('=').trim().to_string();
            out.insert(name.clone(), json!({"busy_cycles": {}}));
            current = Some(name);
            continue;
        }
        let Some(name) = &current else { continue };
        let entry = &mut out[name];
        if let Some(total) = line.strip_prefix("Total cycles :") {
            entry["total_cycles"] = json!(total.trim().parse::<u64>().ok());
        } else if let Some((pipe, cycles)) = line.split_once('|') {
            let cycles = cycles.trim().trim_end_matches('|').trim();
            if let Ok(c) = cycles.parse::<u64>() {
                entry["busy_cycles"][pipe.trim()] = json!(c);
            }
        }
    }
    Value::Object(out)
}

/// Each measured example kernel's total, busiest pipe and their ratio; and the median ratio.
fn busiest_pipes() -> Result<(Vec<Value>, f64), String> {
    let data = read_json(&root().join(DATA))?;
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for k in data["kernels"].as_array().into_iter().flatten() {
        let program = k["program"].as_str().unwrap_or("");
        let (Some(total), Some(busy)) = (k["total_cycles"].as_u64(), k["busy_cycles"].as_object())
        else {
            continue;
        };
        // A mixed launch spans three cores; it is compared with PTO-ISA's flash attention
        // above.
        if !program.starts_with("examples/") || total == 0 || k["core"] == MIXED {
            continue;
        }
        let Some((pipe, cycles)) = busy
            .iter()
            .filter_map(|(p, c)| Some((p.clone(), c.as_u64()?)))
            .max_by_key(|(_, c)| *c)
        else {
            continue;
        };
        let ratio = cycles as f64 / total as f64;
        ratios.push(ratio);
        rows.push(json!({
            "program": program,
            "kernel": k["kernel"],
            "total_cycles": total,
            "busiest_pipe": pipe,
            "busiest_cycles": cycles,
            "busiest_over_total": ratio,
        }));
    }
    ratios.sort_by(f64::total_cmp);
    let median = match ratios.len() {
        0 => 0.0,
        n if n % 2 == 1 => ratios[n / 2],
        n => (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0,
    };
    Ok((rows, median))
}
