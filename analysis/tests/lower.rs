//! Lowering: every example's programs as IR text (snapshots), and the IR survives a JSON round
//! trip unchanged; a file with errors is not lowered.

use std::fmt::Write;
use std::path::Path;

use expect_test::expect_file;
use wsp_analysis::{Action, Database, File, Shown, Workspace, lower_file};

fn lower(name: &str, text: &str) -> Option<wsp_analysis::LoweredFile> {
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, name.into(), text.to_string());
    lower_file(&db, file).clone()
}

#[test]
fn examples_lower_to_ir() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 9);
    for path in paths {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("example");
        let lowered = lower(&name, &text).unwrap_or_else(|| panic!("{name} has errors"));
        assert!(!lowered.programs.is_empty(), "{name} compiles no program");
        let mut out = String::new();
        for p in &lowered.programs {
            let json = serde_json::to_string(p).expect("serialize");
            let back: wsp_ir::Program = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(&back, p, "{name}: the JSON round trip changed the IR");
            let _ = write!(out, "{p}");
        }
        for (_, action) in &lowered.actions {
            let _ = match action {
                Action::Execute { program, bindings } => {
                    let binds: Vec<String> =
                        bindings.iter().map(|(n, v)| format!("{n}={v}")).collect();
                    writeln!(out, "execute {program}({})", binds.join(", "))
                }
                Action::SaveNpy { tensor, path } => writeln!(out, "save_npy {tensor} {path:?}"),
                Action::Explore(e) => {
                    let _ = writeln!(
                        out,
                        "explore #{} {:?} of {}: metric {}, trials {}, bindings {:?}",
                        e.id,
                        e.label,
                        e.program,
                        e.metric.name(),
                        e.trials,
                        e.bindings
                    );
                    for (i, c) in std::iter::once(&e.baseline).chain(&e.configs).enumerate() {
                        let d: Vec<String> = c.directives.iter().map(|d| d.to_string()).collect();
                        let which = if i == 0 {
                            "baseline".to_string()
                        } else {
                            format!("{}", i - 1)
                        };
                        let _ = writeln!(out, "  {which}: {} => {}", c.label(), d.join("; "));
                    }
                    Ok(())
                }
                other => writeln!(out, "{other:?}"),
            };
        }
        let snapshot = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("test_data/lower")
            .join(name.replace(".wsp", ".ir"));
        expect_file![snapshot].assert_eq(&out);
    }
}

#[test]
fn a_file_with_errors_is_not_lowered() {
    let text = "from pto_wsp import *\n\n@kernel\ndef k(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):\n    pto.store(y, pto.add(x, undefined))\n";
    assert_eq!(lower("bad.wsp", text), None);
}

#[test]
fn axis_data_keep_their_roles() {
    // `indptr` read from a tensor at run time, `indices` written in the program.
    let text = r#"from pto_wsp import *

F32 = DType.F32
Ptr = Tensor((5,), DType.I32, init=load_npy("indptr.npy"))
routing = Sparse(4, indptr=Ptr, indices=[1, 3, 0, 2, 5, 7, 2, 6])
X = Tensor((8, 16, 16), DType.F32, init=ones())
Y = Tensor((4, 8, 16, 16), DType.F32)
batch = Dense[4]


@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))


@workload
def route(batch, routing):
    for b in P(batch):
        for e in P.sel(routing[b]):
            copy[b, e](x=X[e], y=Y[b, e])


program = route(batch, routing).compile(target="cpu_sim")
"#;
    let lowered = lower("roles.wsp", text).expect("no errors");
    let axes: Vec<String> = lowered.programs[0]
        .axes
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        axes,
        [
            "axis routing Sparse 4 indptr tensor Ptr indices [1, 3, 0, 2, 5, 7, 2, 6]",
            "axis batch Dense 4"
        ]
    );
}

#[test]
fn top_level_actions_are_lowered_in_file_order() {
    let text = r#"from pto_wsp import *

F32 = DType.F32
seq = DenseDyn(8)
X = Tensor((64, 16, 16), F32, init=ones())
Y = Tensor((64, 16, 16), F32)


@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))


@workload
def run(seq):
    for i in P(seq):
        copy[i](x=X[i], y=Y[i])


program = run(seq).compile(target="cpu_sim")
program.execute(seq=16)
save_npy(Y, "out/y.npy")
program.execute()
print(program.stats, program.stats.total_cycles, Y, "n =", 3, 1e-6, 2.0, (1,), None)
Y
"#;
    let lowered = lower("actions.wsp", text).expect("no errors");
    let actions: Vec<Action> = lowered.actions.iter().map(|(_, a)| a.clone()).collect();
    let texts: Vec<&str> = lowered
        .actions
        .iter()
        .map(|(r, _)| &text[std::ops::Range::<usize>::from(*r)])
        .collect();
    assert_eq!(
        texts,
        [
            "program.execute(seq=16)",
            "save_npy(Y, \"out/y.npy\")",
            "program.execute()",
            "print(program.stats, program.stats.total_cycles, Y, \"n =\", 3, 1e-6, 2.0, (1,), None)",
            "Y"
        ]
    );
    let text = |t: &str| Shown::Text(t.into());
    assert_eq!(
        actions,
        [
            Action::Execute {
                program: "program".into(),
                bindings: vec![("seq".into(), 16)]
            },
            Action::SaveNpy {
                tensor: "Y".into(),
                path: "out/y.npy".into()
            },
            Action::Execute {
                program: "program".into(),
                bindings: vec![]
            },
            Action::Print(vec![
                Shown::Stats {
                    program: "program".into()
                },
                Shown::StatsField {
                    program: "program".into(),
                    field: "total_cycles".into()
                },
                Shown::Tensor("Y".into()),
                text("n ="),
                text("3"),
                text("1e-06"),
                text("2.0"),
                text("(1,)"),
                text("None"),
            ]),
            Action::Show(Shown::Tensor("Y".into())),
        ]
    );
}
