//! Prints the tree and errors of a file: `cargo run -p wsp-syntax --example dump -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: dump FILE");
    let text = std::fs::read_to_string(&path).expect("readable file");
    print!("{}", wsp_syntax::parse(&text).debug_dump(&text));
}
