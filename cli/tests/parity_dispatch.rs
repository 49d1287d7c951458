//! `num_aicpus=` on the keyed dispatch policies, as the original writes
//! `DispatchPolicy.affinity(lambda t: t.get("b"), num_aicpus=4)`: keys spread over the first
//! `num_aicpus` AICPUs only (0, the default, is every AICPU of the target).

use serde_json::Value;

mod common;

/// The AICPU each `tiny[b, i]` task was dispatched to, from the trace, under `dispatch`.
fn aicpus(name: &str, dispatch: &str) -> Vec<(i64, i64)> {
    let dir = common::scratch("parity_dispatch", name);
    let file = dir.join("p.wsp");
    std::fs::write(
        &file,
        format!(
            r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((8, 3, 1, 16), F32, init=ones())
Y = Tensor((8, 3, 1, 16), F32)

@kernel
def tiny(x: In[Tile[1, 16, F32]], y: Out[Tile[1, 16, F32]]):
    pto.store(y, pto.add(x, x))

@workload
def w():
    for b, i in P(Dense[8], Dense[3]):
        tiny[b, i](x=X[b, i], y=Y[b, i])

program = w().dispatch({dispatch}).compile(target="cpu_sim")
program.execute()
"#
        ),
    )
    .unwrap();
    let trace = dir.join("trace.json");
    let out = common::wsp()
        .arg("run")
        .arg(&file)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let mut v = Vec::new();
    for e in doc["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" && e["pid"] == 1 {
            let name = e["name"].as_str().unwrap();
            let b: i64 = name["tiny[".len()..]
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            v.push((b, e["tid"].as_i64().unwrap()));
        }
    }
    assert_eq!(v.len(), 24, "{doc}");
    v
}

fn used(v: &[(i64, i64)]) -> Vec<i64> {
    let mut a: Vec<i64> = v.iter().map(|x| x.1).collect();
    a.sort();
    a.dedup();
    a
}

#[test]
fn num_aicpus_limits_a_keyed_policy_to_the_first_aicpus() {
    // The default 910B description has 6 AICPUs: without the count, keys 0..8 use all six.
    let all = aicpus("all", "DispatchPolicy.affinity(lambda t: t.b)");
    assert_eq!(used(&all), [0, 1, 2, 3, 4, 5]);
    let four = aicpus(
        "four",
        "DispatchPolicy.affinity(lambda t: t.b, num_aicpus=4)",
    );
    for (b, aicpu) in &four {
        assert_eq!(*aicpu, b % 4);
    }
    let by = aicpus(
        "by",
        "DispatchPolicy.dispatch_by(lambda t: t.b, num_aicpus=2)",
    );
    assert_eq!(used(&by), [0, 1]);
    let hash = aicpus("hash", "DispatchPolicy.hash(lambda t: t.b, num_aicpus=3)");
    assert!(used(&hash).iter().all(|a| *a < 3), "{hash:?}");
    // A key keeps its AICPU under a hash too.
    for (b, a) in &hash {
        assert!(hash.iter().filter(|x| x.0 == *b).all(|x| x.1 == *a));
    }
}

#[test]
fn a_tuple_key_is_one_key_hashed_or_row_major_over_its_fields() {
    // `tiny[b, i]` over Dense[8] x Dense[3]: row-major, (b, i) is key b * 3 + i.
    let rows = aicpus(
        "rows",
        "DispatchPolicy.affinity(lambda t: (t.b, t.i), num_aicpus=5)",
    );
    assert_eq!(used(&rows), [0, 1, 2, 3, 4], "{rows:?}");
    let by = aicpus(
        "rows-by",
        "DispatchPolicy.dispatch_by(lambda t: (t.get(\"b\"), t.get(\"i\")))",
    );
    // The same key as written out by hand.
    let by_hand = aicpus(
        "rows-hand",
        "DispatchPolicy.dispatch_by(lambda t: t.b * 3 + t.i)",
    );
    assert_eq!(by, by_hand);
    let hashed = aicpus(
        "hashed",
        "DispatchPolicy.hash(lambda t: (t.b, t.i), num_aicpus=4)",
    );
    assert!(used(&hashed).iter().all(|a| *a < 4), "{hashed:?}");
    let by_hand = aicpus(
        "hashed-hand",
        "DispatchPolicy.hash(lambda t: t.b * 1000003 + t.i, num_aicpus=4)",
    );
    assert_eq!(hashed, by_hand);
}
