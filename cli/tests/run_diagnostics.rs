//! The codes only a run finds (WSP601, WSP602): each has a program under
//! `cli/tests/data/run_diagnostics/` and a page in `docs/diagnostics/` whose example is that
//! program and the exact output of `wsp run --workers 1` on it (`UPDATE_EXPECT=1` rewrites the
//! example section), as the checker's codes have with their fixtures.

mod common;
use common::root;

const DATA: &str = "cli/tests/data/run_diagnostics";

#[test]
fn each_run_time_code_has_a_page_showing_its_program_and_output() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    for code in ["WSP601", "WSP602"] {
        let relative = format!("{DATA}/{code}.wsp");
        let out = common::wsp()
            .args(["run", "--workers", "1", &relative])
            .current_dir(root())
            .output()
            .expect("wsp runs");
        assert_eq!(out.status.code(), Some(1), "{code}");
        let stderr = String::from_utf8(out.stderr).expect("utf-8");
        assert!(stderr.starts_with(&format!("error[{code}]")), "{stderr}");
        let program = std::fs::read_to_string(root().join(&relative)).expect("program");
        let example = format!(
            "## Example\n\n`{relative}`:\n\n```python\n{}\n```\n\n`wsp run --workers 1` prints:\n\n```text\n{}\n```\n\n",
            program.trim_end(),
            stderr.trim_end()
        );
        let page_path = root().join(format!("docs/diagnostics/{code}.md"));
        let page = std::fs::read_to_string(&page_path).expect("page");
        let (Some(start), Some(end)) = (page.find("## Example\n"), page.find("## Fix\n")) else {
            panic!("{code}.md needs `## Example` and `## Fix` sections");
        };
        if page[start..end] != example {
            assert!(
                update,
                "docs/diagnostics/{code}.md's example is not `wsp run`'s output; UPDATE_EXPECT=1 rewrites it:\n{example}"
            );
            let new = format!("{}{example}{}", &page[..start], &page[end..]);
            std::fs::write(&page_path, new).expect("write");
        }
    }
}
