fn main() {
    let cases: Vec<String> = serde_json::from_str(&std::fs::read_to_string("/tmp/fst/cases.json").unwrap()).unwrap();
    for c in cases {
        let p = wsp_syntax::parse(&c);
        match p.errors().first() { None => println!("{c:?} ok"), Some(e) => println!("{c:?} {} {:?}", e.message, e.range) }
    }
}
