//! `.npy` headers read at check time (WSP211): NumPy's own files, and bad ones that must be an
//! error, never a large allocation or a panic.

use std::path::Path;

use wsp_analysis::{NpyHeader, read_npy_header};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data/diagnostics")
        .join(name)
}

#[test]
fn numpys_files_are_read_by_their_header() {
    assert_eq!(
        read_npy_header(&fixture("WSP211_weights.npy")),
        Ok(NpyHeader {
            shape: vec![3, 4],
            descr: "<f8".into()
        })
    );
    assert_eq!(
        read_npy_header(&fixture("WSP211_names.npy")).map(|h| h.descr),
        Ok("<U1".into())
    );
}

#[test]
fn bad_headers_are_errors() {
    let dir = std::env::temp_dir().join(format!("wsp-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &[u8]); 5] = [
        ("short.npy", b"\x93NUM"),
        ("text.npy", b"just some text, not numpy at all"),
        // Version 2 claiming a 4 GiB header: refused before anything is allocated.
        ("huge.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'"),
        ("cut.npy", b"\x93NUMPY\x01\x00\x40\x00{'descr': '<f4'"),
        ("version.npy", b"\x93NUMPY\x09\x00\x10\x00{}              "),
    ];
    let mut shown = Vec::new();
    for (name, bytes) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        shown.push(format!("{name}: {}", read_npy_header(&path).unwrap_err()));
    }
    let missing = read_npy_header(&dir.join("missing.npy")).unwrap_err();
    assert!(
        missing.starts_with("does not exist: no file at"),
        "{missing}"
    );
    expect_test::expect![[r#"
        short.npy: is not a .npy file: it is too short
        text.npy: is not a .npy file: it does not start with NumPy's magic string
        huge.npy: is not a .npy file WSP reads: its header claims 4294967295 bytes
        cut.npy: is not a .npy file: its header is cut short
        version.npy: is a .npy file of version 9, which is not read"#]]
    .assert_eq(&shown.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
