//! The `cc` crate needs the target triple, which only a build script is told.
fn main() {
    println!(
        "cargo:rustc-env=WSP_TARGET_TRIPLE={}",
        std::env::var("TARGET").expect("cargo sets TARGET")
    );
}
