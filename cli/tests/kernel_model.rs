//! The simulated clock's kernel model against PTO-ISA's Perf-Sim, from the committed
//! measurements (`runtime/calibration/perf_sim.json`, written by `cargo xtask calibrate`), so
//! it runs without PTO-ISA: every example kernel `wsp emit` writes, costed by the target
//! description's instruction table, is within 15% of Perf-Sim's cycles, and the median error
//! is at most 10%. Where Perf-Sim timed an instruction with a wrapped repeat count
//! (`kernel_model::wrapped`), its total is taken with the table's cost for that instruction.

mod common;

use std::collections::BTreeMap;

use common::{root, scratch, wsp};
use serde_json::Value;
use wsp_runtime::kernel_model::{Measured, reference, run_listing};
use wsp_runtime::target::TargetDesc;

/// `wsp emit`s `program` into `tree`.
fn emit(program: &std::path::Path, tree: &std::path::Path) {
    let out = wsp()
        .arg("emit")
        .arg(program)
        .arg("-o")
        .arg(tree)
        .output()
        .unwrap();
    assert!(out.status.success(), "wsp emit {}", program.display());
}

/// The clock's cycles for the kernel a mixed launch `name` (`KERNEL_mix`) runs, from `wsp
/// run`'s report of `program`.
fn clocked(program: &std::path::Path, name: &str) -> u64 {
    let kernel = name.strip_suffix("_mix").unwrap_or(name);
    let dir = scratch("kernel-model", &format!("clocked-{kernel}"));
    let stats = dir.join("stats.json");
    let out = wsp()
        .arg("run")
        .arg(program)
        .arg("--stats-json")
        .arg(&stats)
        .output()
        .unwrap();
    assert!(out.status.success(), "wsp run {}", program.display());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == kernel)
        .and_then(|k| k["cycles"].as_u64())
        .unwrap_or_else(|| panic!("{}: no kernel {kernel} in {v}", program.display()))
}

fn measured() -> Vec<Measured> {
    let text = std::fs::read_to_string(root().join("runtime/calibration/perf_sim.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(v["kernels"].clone()).unwrap()
}

#[test]
fn every_measured_kernel_is_within_15_percent_of_perf_sim() {
    let table = TargetDesc::default().instructions;
    let mut by_program: BTreeMap<String, Vec<Measured>> = BTreeMap::new();
    for m in measured() {
        // The probe grid is what the table is fitted to; the examples are what users run, and
        // the emitter's tests hold the forms and dtypes the examples do not.
        let run = m.program.starts_with("examples/") || m.program.starts_with("cli/tests/data/");
        if run && m.total_cycles.is_some() {
            by_program.entry(m.program.clone()).or_default().push(m);
        }
    }
    assert!(
        by_program.len() >= 20,
        "{} programs measured",
        by_program.len()
    );
    let mut errors = Vec::new();
    let mut rows = Vec::new();
    for (program, kernels) in &by_program {
        let dir = scratch("kernel-model", &program.replace(['/', '.'], "_")).join("tree");
        emit(&root().join(program), &dir);
        for m in kernels {
            if m.core == wsp_runtime::kernel_model::MIXED {
                // A mixed launch: the clock's cycles for the kernel it runs, as `wsp run`
                // reports them.
                let model = clocked(&root().join(program), &m.kernel) as f64;
                let perf = m.total_cycles.unwrap();
                let err = (model - perf as f64) / perf as f64;
                errors.push(err.abs());
                rows.push(format!(
                    "{program} {}: Perf-Sim {perf}, model {model} ({:+.1}%)",
                    m.kernel,
                    err * 100.0
                ));
                continue;
            }
            let src = std::fs::read_to_string(dir.join(format!("aicore/{}.cpp", m.kernel)))
                .unwrap_or_else(|e| panic!("{program}: {}: {e}", m.kernel));
            let listing = wsp_aicore::listing::listing(&src);
            let model = run_listing(&listing, &table).total as f64;
            // Perf-Sim's total, less what it times with a wrapped repeat count.
            let (perf, fixed) = reference(m, &listing, &table);
            let err = (model - perf as f64) / perf as f64;
            errors.push(err.abs());
            rows.push(format!(
                "{program} {}: Perf-Sim {} {fixed:?}, model {model} ({:+.1}%)",
                m.kernel,
                m.total_cycles.unwrap(),
                err * 100.0
            ));
        }
    }
    let report = rows.join("\n");
    assert!(
        errors.iter().all(|e| *e <= 0.15),
        "kernels over 15%:\n{report}"
    );
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    assert!(median <= 0.10, "median error {median}:\n{report}");
    eprintln!("{report}\nmedian absolute error {:.1}%", median * 100.0);
}

/// The pipe the model gives each instruction (`wsp_aicore::listing::Pipe::of`, from its name
/// and memories) is the one the emitter ordered it on: in a kernel that is not a GEMM, every
/// flag is raised right after an instruction of its producer (`set_flag(A, B)` follows an
/// instruction on A) and waited for right before one of its consumer (`wait_flag(A, B)` is
/// followed by an instruction on B), whether the flags chain the pipes one after another or
/// are written from dependencies.
#[test]
fn every_emitted_instruction_runs_on_the_pipe_its_flags_name() {
    use wsp_aicore::listing::Step;
    let dir = scratch("kernel-model", "pipes");
    let mut checked = 0;
    for (n, program) in common::examples()
        .into_iter()
        .chain(common::ported())
        .enumerate()
    {
        let tree = dir.join(n.to_string());
        emit(&program, &tree);
        for entry in std::fs::read_dir(tree.join("aicore")).unwrap() {
            let path = entry.unwrap().path();
            let src = std::fs::read_to_string(&path).unwrap();
            // A mixed launch interleaves two cores' code (each core's straight kernel is
            // checked as `wsp_aicore::mixed` writes it).
            if src.contains(wsp_aicore::mixed::HEADER) {
                continue;
            }
            let listing = wsp_aicore::listing::listing(&src);
            // A GEMM's pipes overlap by design (`aicore/src/pipelined.rs`), whether its K
            // steps are a loop or, for a one-tile matmul, written out.
            if !listing.loops.is_empty() || src.contains(" K steps: ") {
                continue;
            }
            let (mut last, mut waiting) = (None, None);
            for step in &listing.steps {
                match step {
                    Step::Signal { from, .. } => {
                        assert_eq!(last, Some(*from), "{}: {step:?}", path.display());
                    }
                    Step::Wait { to, .. } => waiting = Some(*to),
                    Step::Instr { pipe, instr, .. } => {
                        if let Some(to) = waiting.take() {
                            assert_eq!(*pipe, to, "{}: {}", path.display(), instr.name);
                        }
                        last = Some(*pipe);
                        checked += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(checked > 300, "{checked} instructions");
}

/// A loop kernel's loops, once their pipes settle, are costed as the shift of one iteration
/// times the iterations left: exactly what running every iteration gives.
#[test]
fn a_settled_loop_costs_what_running_every_iteration_costs() {
    use wsp_aicore::listing::{Listing, Step};
    let table = TargetDesc::default().instructions;
    let dir = scratch("kernel-model", "loops");
    let mut repeated = 0;
    for (n, program) in common::perf().into_iter().enumerate() {
        let tree = dir.join(n.to_string());
        emit(&program, &tree);
        for entry in std::fs::read_dir(tree.join("aicore")).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            // A mixed launch's cores are straight code (its loop unrolled).
            if text.contains("one mixed launch") {
                continue;
            }
            let looped = wsp_aicore::listing::listing(&text);
            assert!(!looped.loops.is_empty(), "{}", path.display());
            let mut steps: Vec<Step> = Vec::new();
            looped.run(&mut |s| steps.push(s.clone()));
            repeated += steps.len() - looped.steps.len();
            let unrolled = Listing {
                steps,
                loops: Vec::new(),
                facts: looped.facts,
                tiles: looped.tiles,
            };
            assert_eq!(
                run_listing(&looped, &table),
                run_listing(&unrolled, &table),
                "{}",
                path.display()
            );
        }
    }
    assert!(repeated > 5_000, "{repeated} steps repeated");
}
