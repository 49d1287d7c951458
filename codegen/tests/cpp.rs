//! Snapshots of the C++ codegen emits for the CPU simulator: every kernel of every program in
//! `examples/*.wsp`, one file each in `tests/snapshots/<example>__<kernel>.cpp`.
//!
//! A snapshot holds the kernel's own part of the translation unit (its `#include`s, if a
//! `cpp_src` body has any, and its function), not the shared prelude, so that a prelude change
//! does not touch every snapshot. Regenerate with
//! `UPDATE_EXPECT=1 cargo test -p wsp-codegen --test cpp`, which also removes the snapshots of
//! kernels that are gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wsp_analysis::{Database, File, Workspace};
use wsp_codegen::cpp;

/// The examples, sorted by name.
fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no examples in {}", dir.display());
    found
}

/// What codegen emits for one kernel, without the prelude. `wsp_name` stands in for the path
/// the `#line` directives of `cpp_src` bodies name, so that no snapshot holds a machine's path.
fn kernel_cpp(kernel: &wsp_ir::Kernel, wsp_name: &str) -> String {
    let unit = cpp::source(std::iter::once(kernel), wsp_name);
    let (includes, function) = unit
        .split_once(cpp::PRELUDE)
        .expect("the translation unit holds the prelude");
    format!("{includes}{}", function.trim_start_matches('\n'))
}

/// Every kernel of the example's programs, by name, with its C++.
fn example_kernels(path: &Path, stem: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::on_disk(&db, workspace, path.to_path_buf(), text);
    let lowered = wsp_analysis::lower_file(&db, file)
        .as_ref()
        .unwrap_or_else(|| panic!("{} has errors (`wsp check` says which)", path.display()));
    let wsp_name = format!("examples/{stem}.wsp");
    let mut kernels = BTreeMap::new();
    for program in &lowered.programs {
        for k in &program.kernels {
            let cpp = kernel_cpp(k, &wsp_name);
            // Programs of one file may share a kernel; one name must mean one function.
            if let Some(other) = kernels.insert(k.name.clone(), cpp.clone()) {
                assert_eq!(
                    other, cpp,
                    "{stem}: two kernels named `{}` emit different C++",
                    k.name
                );
            }
        }
    }
    kernels
}

#[test]
fn every_example_kernel_emits_the_cpp_its_snapshot_shows() {
    let mut expected = Vec::new();
    for path in examples() {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let kernels = example_kernels(&path, &stem);
        assert!(!kernels.is_empty(), "{stem} has no kernels");
        for (name, cpp) in kernels {
            let snapshot = format!("{stem}__{name}.cpp");
            expect_test::expect_file![format!("snapshots/{snapshot}")].assert_eq(&cpp);
            expected.push(snapshot);
        }
    }
    // A snapshot no kernel produces any more would otherwise linger unnoticed.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".cpp") && !expected.contains(&name) {
            if update {
                std::fs::remove_file(&path).unwrap();
            } else {
                stale.push(name);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "snapshots of no kernel: {stale:?}; `UPDATE_EXPECT=1 cargo test -p wsp-codegen --test cpp` removes them"
    );
}
