fn main() {
    let text = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    for _ in 0..200 { std::hint::black_box(wsp_syntax::parse(&text)); }
}
