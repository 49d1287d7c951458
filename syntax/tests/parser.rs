//! Data-driven parser tests: every `test_data/parser/{ok,err}/*.wsp` beside its `.rast` snapshot
//! (tree and errors). `UPDATE_EXPECT=1 cargo test -p wsp-syntax` rewrites the snapshots.

mod common;

use expect_test::expect_file;

fn check_dir(dir: &str, expect_errors: bool) {
    let files = common::wsp_files(&common::dir("test_data/parser").join(dir));
    assert!(!files.is_empty(), "no fixtures in {dir}");
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable fixture");
        let parse = wsp_syntax::parse(&text);
        assert_eq!(
            parse.syntax_node().to_string(),
            text,
            "{} does not round-trip",
            path.display()
        );
        assert_eq!(
            !parse.errors().is_empty(),
            expect_errors,
            "{}: unexpected errors: {:?}",
            path.display(),
            parse.errors()
        );
        expect_file![path.with_extension("rast")].assert_eq(&parse.debug_dump(&text));
    }
}

#[test]
fn valid_files_parse_without_errors() {
    check_dir("ok", false);
}

#[test]
fn invalid_files_report_errors() {
    check_dir("err", true);
}

/// A large file is parsed in runs of top-level statements (`wsp_syntax::parse`); with errors
/// anywhere, the tree and errors must still be those of the whole parse. Each fixture, the
/// broken ones too, is put between 42 KB of valid statements on each side, so that the file is
/// cut around it; then all of them go in one file.
#[test]
fn parsing_in_runs_equals_parsing_whole_around_errors() {
    let root = common::dir("test_data/parser");
    let mut fixtures = common::wsp_files(&root.join("ok"));
    fixtures.extend(common::wsp_files(&root.join("err")));
    let valid = "x = 1\n".repeat(7000);
    let mut all = String::new();
    let (mut cut, mut cut_with_errors) = (0, 0);
    for path in &fixtures {
        let text = std::fs::read_to_string(path).expect("readable fixture");
        all.push_str(&text);
        all.push('\n');
        let file = format!("{valid}{text}\n{valid}");
        if let Some(chunked) = wsp_syntax::parse_in_chunks(&file) {
            let whole = wsp_syntax::parse_sequential(&file);
            assert!(
                chunked == whole,
                "{}: parsed in runs, it differs",
                path.display()
            );
            cut += 1;
            cut_with_errors += usize::from(!whole.errors().is_empty());
        }
    }
    let file = format!("{valid}{}{valid}", all.repeat(3));
    if let Some(chunked) = wsp_syntax::parse_in_chunks(&file) {
        assert!(
            chunked == wsp_syntax::parse_sequential(&file),
            "all fixtures in one file"
        );
    }
    assert!(
        cut > fixtures.len() * 3 / 4 && cut_with_errors > 20,
        "{cut} of {} files cut, {cut_with_errors} with errors",
        fixtures.len()
    );
}
