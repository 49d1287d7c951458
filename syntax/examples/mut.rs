//! Dev aid for the CPython conformance work: reads mutated source cases from
//! `/tmp/mut/cases.json` (path, mutation number, text, CPython's syntax error or null), parses
//! each with our parser and prints those where only one side reports an error.

fn main() {
    let cases: Vec<(String, u32, String, Option<String>)> =
        serde_json::from_str(&std::fs::read_to_string("/tmp/mut/cases.json").unwrap()).unwrap();
    let mut bad = 0;
    for (path, k, text, py) in &cases {
        let p = wsp_syntax::parse(text);
        let ours = p.errors().first();
        if py.is_none() != ours.is_none() {
            bad += 1;
            let at = ours.map(|e| {
                let (l, c) =
                    wsp_syntax::line_col(&wsp_syntax::LineIndex::new(text), e.range.start());
                format!("{l}:{c} {}", e.message)
            });
            println!("{path}#{k}: py={py:?} ours={at:?}");
        }
    }
    println!("{bad} of {} differ", cases.len());
}
