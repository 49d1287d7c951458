#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let text = std::fs::read_to_string("target/bench/syntax_input.wsp").unwrap();
    count(&text);
    assert!(wsp_syntax::parse(&text) == wsp_syntax::parse_sequential(&text));
    let n: usize = std::env::args().nth(1).map_or(300, |s| s.parse().unwrap());
    let mut times = vec![];
    let mut drops = vec![];
    for _ in 0..n {
        let t = std::time::Instant::now();
        let p = std::hint::black_box(wsp_syntax::parse(std::hint::black_box(&text)));
        times.push(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        drop(p);
        drops.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    drops.sort_by(f64::total_cmp);
    let dt = times[n / 2];
    println!(
        "{:.3} ms/parse, {:.1} MB/s, drop {:.3} ms",
        dt * 1e3,
        text.len() as f64 / 1e6 / dt,
        drops[n / 2] * 1e3
    );
}
#[allow(dead_code)]
fn count(text: &str) {
    let p = wsp_syntax::parse(text);
    let root = p.syntax_node();
    let mut toks = std::collections::HashSet::new();
    let mut nodes = std::collections::HashSet::new();
    let mut total = 0;
    for e in root.descendants_with_tokens() {
        total += 1;
        match e {
            rowan::NodeOrToken::Node(n) => {
                nodes.insert(&*n.green() as *const rowan::GreenNodeData as usize);
            }
            rowan::NodeOrToken::Token(t) => {
                toks.insert(t.green() as *const rowan::GreenTokenData as usize);
            }
        }
    }
    println!(
        "elements {total}, unique tokens {}, unique nodes {}",
        toks.len(),
        nodes.len()
    );
}
