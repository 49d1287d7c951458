//! `cargo xtask bench syntax`: parse throughput on a generated 10,000-line WSP file, beside
//! CPython's `ast.parse` on the same file in the same run. Writes target/bench/syntax.json.
//! It allocates with mimalloc, as `wsp` does (`cli/src/main.rs`).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const LINES: usize = 10_000;

/// Realistic WSP: kernels, workloads, schedules; every name made unique by `{i}`.
fn generate() -> String {
    let block = r#"
F32_{i} = DType.F32
batch_{i} = Dense[4]
X_{i} = Tensor((4, 8, 16, 128), F32_{i}, init=randn(seed={i}))
Y_{i} = Tensor((4, 8, 16, 128), F32_{i})


@kernel
def rmsnorm_{i}(x: In[Tile[16, 128, F32]], out: Out[Tile[16, 128, F32]],
                eps: Scalar[F32] = 1e-6):
    sq = pto.mul(x, x)
    inv = pto.rsqrt(pto.add(pto.rowmean(sq), eps))   # [16, 1]
    pto.store(out, pto.rowmul(x, inv))


@workload
def norm_{i}(batch, tiles):
    for b, t in P(batch, tiles):
        with P.when(SeqLens[b] <= 2048 and t % 2 == 0):
            rmsnorm_{i}[b, t](x=X_{i}[b, t], out=Y_{i}[b, 2 * t + 1])


program_{i} = (norm_{i}(batch_{i}, tiles)
    .dispatch(DispatchPolicy.affinity(lambda t: t.b))
    .task_graph(window=TaskWindow(8192, "tasks", WindowMode.STALL))
    .compile(target="cpu_sim"))
"#;
    let mut text = String::from("from pto_wsp import *\n");
    let mut i = 0;
    while text.lines().count() < LINES {
        text.push_str(&block.replace("{i}", &i.to_string()));
        i += 1;
    }
    text
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Runs `f` repeatedly for about `budget`, at least 10 times; the median time of one run.
fn measure(budget: Duration, mut f: impl FnMut()) -> Duration {
    f();
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < 10 || start.elapsed() < budget {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    median(times)
}

fn target_dir() -> PathBuf {
    // target/release/deps/syntax-HASH → target
    let exe = std::env::current_exe().expect("own path");
    exe.ancestors()
        .nth(3)
        .expect("inside target/")
        .to_path_buf()
}

fn python_ast_parse(path: &std::path::Path) -> Option<Duration> {
    const SCRIPT: &str = r#"
import ast, sys, time
text = open(sys.argv[1], encoding="utf-8").read()
ast.parse(text)
times = []
start = time.perf_counter()
while len(times) < 10 or time.perf_counter() - start < 3.0:
    t = time.perf_counter(); ast.parse(text); times.append(time.perf_counter() - t)
times.sort()
print(times[len(times) // 2])
"#;
    let out = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("python3 failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(Duration::from_secs_f64(secs))
}

fn main() {
    let text = generate();
    let lines = text.lines().count();
    let bytes = text.len();
    let parse = wsp_syntax::parse(&text);
    assert!(
        parse.errors().is_empty(),
        "the generated file must parse cleanly: {:?}",
        &parse.errors()[..1]
    );

    let mb = bytes as f64 / 1e6;
    let parse_time = measure(Duration::from_secs(3), || {
        std::hint::black_box(wsp_syntax::parse(std::hint::black_box(&text)));
    });
    let lex_time = measure(Duration::from_secs(1), || {
        std::hint::black_box(wsp_syntax::lex(std::hint::black_box(&text)));
    });

    let out_dir = target_dir().join("bench");
    std::fs::create_dir_all(&out_dir).expect("target/bench");
    let input = out_dir.join("syntax_input.wsp");
    std::fs::write(&input, &text).expect("write the input");
    let python = python_ast_parse(&input);

    let parse_mb_s = mb / parse_time.as_secs_f64();
    let python_mb_s = python.map(|t| mb / t.as_secs_f64());
    let report = serde_json::json!({
        "lines": lines,
        "bytes": bytes,
        "wsp_parse_ms_median": parse_time.as_secs_f64() * 1e3,
        "wsp_parse_mb_per_s": parse_mb_s,
        "wsp_lex_mb_per_s": mb / lex_time.as_secs_f64(),
        "python_ast_parse_ms_median": python.map(|t| t.as_secs_f64() * 1e3),
        "python_ast_parse_mb_per_s": python_mb_s,
        "ratio_wsp_over_python": python_mb_s.map(|p| parse_mb_s / p),
        "goal_mb_per_s": 50.0,
        "goal_met": parse_mb_s >= 50.0,
    });
    let path = out_dir.join("syntax.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).expect("json"))
        .expect("write syntax.json");
    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    println!("wrote {}", path.display());
}
