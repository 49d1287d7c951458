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
