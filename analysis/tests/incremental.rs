//! Incrementality: an edit inside one kernel body re-runs only the queries that depend on that
//! body, shown by salsa's execution events.

use wsp_analysis::{Database, File, TextRange, TextSize, Workspace};

const PROGRAM: &str = r#"from pto_wsp import *

F32 = DType.F32
batch = Dense[4]
A = Tensor((4, 16, 16), F32, init=ones())
B = Tensor((4, 16, 16), F32)
C = Tensor((4, 16, 16), F32)

@kernel
def relu_tile(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.relu(x))

@kernel
def exp_tile(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.exp(x))

@workload
def relu_all(batch):
    for b in P(batch):
        relu_tile[b](x=A[b], y=B[b])

@workload
def exp_all(batch):
    for b in P(batch):
        exp_tile[b](x=A[b], y=C[b])

first = relu_all(batch).compile(target="cpu_sim")
second = exp_all(batch).compile(target="cpu_sim")
"#;

#[test]
fn editing_a_kernel_body_reruns_only_that_kernel() {
    let mut db = Database::with_execution_log();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(
        &db,
        workspace,
        "incremental.wsp".into(),
        PROGRAM.to_string(),
    );
    assert!(wsp_analysis::file_diagnostics(&db, file).is_empty());
    let cold = db.take_executed();
    assert!(cold.len() > 20, "{cold:#?}");

    // One token inside `exp_tile`'s body.
    let at = PROGRAM.find("pto.exp(x)").unwrap() + "pto.".len();
    let exp = TextRange::at(TextSize::new(at as u32), TextSize::new(3));
    file.apply_edit(&mut db, exp, "log");
    assert_eq!(file.text(&db), &PROGRAM.replace("pto.exp(x)", "pto.log(x)"));
    assert!(wsp_analysis::file_diagnostics(&db, file).is_empty());
    let executed = db.take_executed();
    let names: Vec<&str> = executed
        .iter()
        .map(|e| e.split('(').next().unwrap_or(""))
        .collect();
    // The file-level queries re-run (they read the tree) ...
    assert!(names.contains(&"module_items"));
    // ... the edited kernel's body is checked again ...
    let body: Vec<&String> = executed
        .iter()
        .filter(|e| e.starts_with("instance_body("))
        .collect();
    assert_eq!(body.len(), 1, "{executed:#?}");
    // ... its signature is read again and found equal (so its callers do not re-run) ...
    let signature: Vec<&String> = executed
        .iter()
        .filter(|e| e.starts_with("kernel_signature("))
        .collect();
    assert_eq!(signature.len(), 1, "{executed:#?}");
    assert!(!names.contains(&"bound_signature"), "{executed:#?}");
    // ... and nothing else: no other kernel, no workload, no value, no name resolution, no
    // dependency analysis.
    for query in [
        "file_dependencies",
        "workload_generic",
        "workload_instance",
        "item_value",
        "module_scope",
        "program_checks",
    ] {
        assert!(!names.contains(&query), "{query} re-ran: {executed:#?}");
    }
}
