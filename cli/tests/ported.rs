//! The original framework's examples (and three new programs), ported to WSP with the original's
//! own constructs (`examples/ported/`), each run and checked against its NumPy reference
//! (`tests/golden/ported/NAME.py`, the original's `golden.py` math on the dumped tensors).

use std::process::Command;

mod common;
use common::root;

#[test]
fn every_port_matches_its_numpy_reference() {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let mut ports: Vec<_> = std::fs::read_dir(root().join("examples/ported"))
        .expect("examples/ported")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wsp"))
        .collect();
    ports.sort();
    // The original's softmax, e2e_rmsnorm, bgemm, attention, flashinfer_decode,
    // validated_matmul, tensor_data, llama, deepseek_v3, deepseek_lightning_indexer and
    // csp_pipeline, and LayerNorm, chunked decode attention and top-2 MoE with a combine.
    assert!(ports.len() >= 14, "only {} ports", ports.len());
    let mut failures = Vec::new();
    for port in ports {
        let name = port.file_stem().unwrap().to_str().unwrap().to_string();
        let script = root()
            .join("tests/golden/ported")
            .join(format!("{name}.py"));
        assert!(
            script.is_file(),
            "{name} has no NumPy reference at {}",
            script.display()
        );
        let dir = common::scratch("ported", &name);
        let out = common::wsp()
            .arg("run")
            .arg(&port)
            .args(["--workers", "2", "--dump-tensors"])
            .arg(&dir)
            .output()
            .expect("run wsp");
        if !out.status.success() {
            eprintln!(
                "{name}: wsp run failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            failures.push(name);
            continue;
        }
        let check = Command::new(&python)
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run python");
        eprintln!(
            "{name}:\n{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        if !check.status.success() {
            failures.push(name);
        }
    }
    assert!(
        failures.is_empty(),
        "ports disagree with NumPy: {failures:?}"
    );
}
