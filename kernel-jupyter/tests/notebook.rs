//! Cells as one program: what each cell sees, redefinition, errors that keep the state, and
//! cells a change breaks. (Runs need the `wsp` executable for their child process; the
//! real-client tests under `tests/clients/` run them.)

use std::sync::atomic::AtomicUsize;

use expect_test::expect;
use wsp_kernel_jupyter::{Notebook, Outcome, Output};

fn notebook() -> Notebook {
    Notebook::new(std::env::temp_dir()).expect("a notebook")
}

fn exec(nb: &mut Notebook, code: &str, id: &str) -> Outcome {
    nb.execute(code, Some(id), &AtomicUsize::new(0))
}

/// The cell's value as text, or its error as `ename: evalue`.
fn value(o: &Outcome) -> String {
    if let Some(e) = &o.error {
        return format!("{}: {}", e.ename, e.evalue);
    }
    o.result
        .as_ref()
        .and_then(|b| b.0.iter().find(|(m, _)| *m == "text/plain"))
        .map_or_else(String::new, |(_, t)| t.clone())
}

fn stderr(o: &Outcome) -> String {
    let text: String = o
        .outputs
        .iter()
        .filter_map(|out| match out {
            Output::Stderr(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    strip_ansi(&text)
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn a_cell_sees_earlier_cells_and_a_rerun_redefines_in_place() {
    let mut nb = notebook();
    assert_eq!(value(&exec(&mut nb, "N = 4", "a")), "");
    assert_eq!(value(&exec(&mut nb, "N * 2", "b")), "8");
    // Cell a again, with another value: cell b, after it, sees the new one.
    assert_eq!(value(&exec(&mut nb, "N = 5", "a")), "");
    assert_eq!(value(&exec(&mut nb, "N * 2", "b")), "10");
    assert_eq!(value(&exec(&mut nb, "'text'", "c")), "'text'");
    assert_eq!(nb.execution_count(), 5);
}

#[test]
fn an_error_names_its_code_shows_the_cell_and_keeps_the_program() {
    let mut nb = notebook();
    exec(&mut nb, "N = 4", "a");
    let o = exec(&mut nb, "M = N + undefined", "b");
    let e = o.error.as_ref().expect("an error");
    assert_eq!(e.ename, "WSP101");
    expect![[r#"
        error[WSP101]: unknown name `undefined`
          ┌─ In[2]:1:9
          │
        1 │ M = N + undefined
          │         ^^^^^^^^^

    "#]]
    .assert_eq(&strip_ansi(&e.traceback.join("\n")));
    // The traceback is coloured, as ipykernel's are.
    assert!(e.traceback[0].contains("\x1b["));
    // Nothing of the cell was taken in, and everything before it stays.
    assert_eq!(value(&exec(&mut nb, "N", "c")), "4");
    assert_eq!(value(&exec(&mut nb, "M", "d")), "WSP101: unknown name `M`");
}

#[test]
fn a_name_bound_in_another_cell_is_bound_once() {
    let mut nb = notebook();
    exec(&mut nb, "N = 4", "a");
    let o = exec(&mut nb, "N = 8", "b");
    assert_eq!(
        value(&o),
        "WSP103: `N` is already defined; a module-level name is bound once"
    );
    let shown = strip_ansi(&o.error.unwrap().traceback.join("\n"));
    assert!(
        shown.contains("In[1]"),
        "the first definition's cell: {shown}"
    );
}

#[test]
fn a_change_that_breaks_a_later_cell_takes_it_out_until_it_runs_again() {
    let mut nb = notebook();
    exec(&mut nb, "K = 4", "a");
    exec(&mut nb, "L = K + 1", "b");
    let o = exec(&mut nb, "Z = 1", "a");
    assert!(o.error.is_none(), "{}", value(&o));
    expect![[r#"
        error[WSP101]: unknown name `K`
          ┌─ In[2]:1:5
          │
        1 │ L = K + 1
          │     ^

        note: In[2] no longer checks after this change and is taken out of the program; run it again once it is fixed
    "#]]
    .assert_eq(&stderr(&o));
    assert_eq!(value(&exec(&mut nb, "L", "c")), "WSP101: unknown name `L`");
    assert_eq!(value(&exec(&mut nb, "Z + 1", "d")), "2");
}

#[test]
fn cells_without_ids_are_new_cells_each_time() {
    let mut nb = notebook();
    let stop = AtomicUsize::new(0);
    nb.execute("A = 1", None, &stop);
    let o = nb.execute("A = 1", None, &stop);
    assert_eq!(o.error.expect("rebinding").ename, "WSP103");
}

#[test]
fn magics_set_how_cells_run_and_refuse_bad_values() {
    let mut nb = notebook();
    assert_eq!(
        value(&exec(&mut nb, "%bind seq", "a")),
        "UsageError: `%bind seq`: expected name=value"
    );
    assert_eq!(
        value(&exec(&mut nb, "%workers 0", "b")),
        "UsageError: `%workers 0`: expected a number from 1 to 1024"
    );
    assert_eq!(
        value(&exec(
            &mut nb,
            "%kernel_cycles no/such/kernel_cycles.json",
            "k"
        )),
        format!(
            "UsageError: `%kernel_cycles no/such/kernel_cycles.json`: cannot read {}: No such file or directory (os error 2)",
            std::env::temp_dir()
                .join("no/such/kernel_cycles.json")
                .display()
        )
    );
    let bad = std::env::temp_dir().join(format!("wsp-kc-{}.json", std::process::id()));
    std::fs::write(&bad, r#"{"kernels": {"k": {"core": "AIV"}}}"#).unwrap();
    let name = bad.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        value(&exec(&mut nb, &format!("%kernel_cycles {name}"), "l")),
        format!(
            "UsageError: `%kernel_cycles {name}`: {name}: kernel `k` has neither total_cycles nor not_simulated"
        )
    );
    std::fs::remove_file(&bad).unwrap();
    // A magic line is blanked in its cell, so the code after it keeps its line numbers.
    let o = exec(&mut nb, "%trace on\nN = undefined", "c");
    assert!(strip_ansi(&o.error.unwrap().traceback[0]).contains("In[5]:2:5"));
}

#[test]
fn print_of_values_known_when_checked_needs_no_run() {
    let mut nb = notebook();
    let o = exec(&mut nb, "N = 4\nprint(\"n is\", N, 1e-6, (1,))", "a");
    assert!(o.error.is_none(), "{}", value(&o));
    let stdout: Vec<&str> = o
        .outputs
        .iter()
        .filter_map(|out| match out {
            Output::Stdout(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(stdout, ["n is 4 1e-06 (1,)\n"]);
}

#[test]
fn a_flood_of_errors_in_a_cell_is_cut_and_counted() {
    let mut nb = notebook();
    let code: String = (0..150).map(|i| format!("A{i} = undefined{i}\n")).collect();
    let e = exec(&mut nb, &code, "a").error.expect("errors");
    let shown = strip_ansi(&e.traceback.join("\n"));
    assert_eq!(shown.matches("error[WSP101]").count(), 100);
    assert!(
        shown.contains("50 more diagnostics in this cell are not shown"),
        "{shown}"
    );
}

#[test]
fn a_name_of_a_taken_out_cell_says_where_it_went() {
    let mut nb = notebook();
    exec(&mut nb, "K = 4", "a");
    exec(&mut nb, "L = K + 1", "b");
    exec(&mut nb, "Z = 1", "a");
    let e = exec(&mut nb, "M = L", "c").error.expect("L is gone");
    assert_eq!(
        strip_ansi(e.traceback.last().unwrap()),
        "note: `L` is defined by In[2], which a change to an earlier cell took out of the program; fix and run it again"
    );
    // Run again (fixed), the cell is back and the note is gone with it.
    exec(&mut nb, "K = 4", "a");
    exec(&mut nb, "L = K + 1", "b");
    assert_eq!(value(&exec(&mut nb, "L", "d")), "5");
}

#[test]
fn a_place_named_in_a_message_is_given_in_its_cell() {
    let mut nb = notebook();
    exec(&mut nb, "A = 1\nB = 2\nC = 3", "a");
    let e = exec(&mut nb, "D = 4\nE = (1,\n", "b")
        .error
        .expect("a syntax error");
    let shown = strip_ansi(&e.traceback.join("\n"));
    assert!(shown.contains("to close the `(` at In[2]:2:5"), "{shown}");
}

#[test]
fn a_binding_that_takes_a_view_out_of_bounds_is_an_error_before_any_build() {
    let mut nb = notebook();
    let program = r#"F32 = DType.F32
seqs = DenseDyn(8)
X = Tensor((8, 4, 8), F32, init=ones())

@kernel
def twice(x: InOut[Tile[4, 8, F32]]):
    pto.store(x, pto.add(x, x))

@workload
def w(seqs):
    for i in P(seqs):
        twice[i](x=X[i])

program = w(seqs).compile(target="cpu_sim")"#;
    let o = exec(&mut nb, program, "a");
    assert!(o.error.is_none(), "{}", value(&o));
    let o = exec(&mut nb, "%bind seqs=9\nprogram.execute()", "b");
    let e = o.error.expect("an error");
    assert_eq!(e.ename, "WSP208");
    expect![[r#"
        error[WSP208]: with `%bind seqs=9`, `X[i]` reaches 8, out of range for dimension 0 of `X`, which has extent 8
           ┌─ In[1]:12:20
           │
        12 │         twice[i](x=X[i])
           │                    ^^^^
           │
           ┌─ In[2]:2:1
           │
         2 │ program.execute()
           │ ----------------- in this execution

    "#]]
    .assert_eq(&strip_ansi(&e.traceback[0]));
}

/// The notebook reads its folder's `wsp.toml` and the cells' `# noqa` comments, as `wsp check`
/// does: an ignored warning is not shown, an unused suppression is, and an error always is.
#[test]
fn the_folders_configuration_and_noqa_comments_choose_the_warnings_shown() {
    let dir = std::env::temp_dir().join(format!("wsp-notebook-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("wsp.toml"), "[check]\nignore = [\"WSP104\"]\n").unwrap();
    let mut nb = Notebook::new(dir.clone()).expect("a notebook");
    let kernel = "@kernel\ndef act(x: In[Tile[16, 16, DType.F32]], y: Out[Tile[16, 16, DType.F32]]):\n    pto.store(y, tl.relu(x))";
    let o = exec(&mut nb, kernel, "a");
    assert!(o.error.is_none(), "{}", value(&o));
    assert_eq!(stderr(&o), "", "WSP104 is ignored");
    let o = exec(&mut nb, "N = 4  # noqa: WSP101", "b");
    assert!(stderr(&o).contains("warning[WSP003]"), "{}", stderr(&o));
    let o = exec(&mut nb, "M = undefined  # noqa: WSP102", "c");
    assert_eq!(o.error.as_ref().map(|e| e.ename.as_str()), Some("WSP101"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that loops over tiles of its tensors is checked in a cell as `wsp check` checks it:
/// a slice past its tensor for one iteration is the same located WSP208.
#[test]
fn a_kernel_loop_is_checked_in_a_cell_as_in_a_file() {
    let mut nb = notebook();
    exec(
        &mut nb,
        "F32 = DType.F32\nA = Tensor((256, 64), F32, init=ones())\nC = Tensor((256, 64), F32)",
        "a",
    );
    let o = exec(
        &mut nb,
        r#"@kernel
def k(a: In[Tile[256, 64, F32]], c: Out[Tile[256, 64, F32]]):
    for m in range(2):
        pto.store(c[m * 128:(m + 1) * 128, :], pto.load(a[m * 128 + 64:m * 128 + 192, :]))"#,
        "b",
    );
    let e = o.error.as_ref().expect("an error");
    assert_eq!(e.ename, "WSP208");
    expect![[r#"
        error[WSP208]: `m * 128 + 64:m * 128 + 192` reaches rows 192:320 of `a`, which has 256 rows; to load a partial tile, name what fills the rest: `pto.load(a[m * 128 + 64:m * 128 + 192, :], pad=0.0)`
          ┌─ In[2]:4:59
          │
        4 │         pto.store(c[m * 128:(m + 1) * 128, :], pto.load(a[m * 128 + 64:m * 128 + 192, :]))
          │                                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^

    "#]]
    .assert_eq(&strip_ansi(&e.traceback.join("\n")));
}
