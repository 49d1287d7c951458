//! Compiles the generated parser and the external scanner.
fn main() {
    let src = std::path::Path::new("src");
    cc::Build::new()
        .std("c11")
        .include(src)
        .file(src.join("parser.c"))
        .file(src.join("scanner.c"))
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-but-set-variable")
        .flag_if_supported("-Wno-trigraphs")
        .compile("tree-sitter-wsp");
    for file in ["src/parser.c", "src/scanner.c"] {
        println!("cargo:rerun-if-changed={file}");
    }
}
