//! Diagnostics reach the editor for every document's latest version, however edits to several
//! documents interleave: an edit to one document cancels the analysis of another in flight,
//! and that analysis must run again rather than be dropped.

#[path = "../benches/common/attention.rs"]
mod attention;
mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::Client;
use serde_json::{Value, json};

/// Edits to each document, alternating between the two.
const ROUNDS: usize = 31;
/// The pause after each edit: long enough that most analyses start, short enough that the
/// next edit often lands while one runs.
const GAP: Duration = Duration::from_millis(50);
/// Kernels in each document: enough that a whole re-check outlasts the gap in a debug build.
const BLOCKS: usize = 150;

fn program() -> String {
    let mut text = attention::HEADER.to_string();
    for i in 0..BLOCKS {
        text.push_str(&attention::block(i));
    }
    text
}

/// The `line`/`character` of the `)` closing the middle kernel's `pto.exp(shifted`: deleting
/// it is a syntax error, which re-parses and re-checks the whole document.
fn paren(text: &str) -> Value {
    let sites: Vec<usize> = text
        .match_indices("pto.exp(shifted")
        .map(|(at, m)| at + m.len())
        .collect();
    let at = sites[sites.len() / 2];
    let line = text[..at].matches('\n').count();
    let character = at - text[..at].rfind('\n').map_or(0, |n| n + 1);
    json!({"line": line, "character": character})
}

/// What identifies a diagnostic apart from the document it is in.
fn summary(diagnostics: &Value) -> Vec<Value> {
    diagnostics
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json!([d["code"], d["range"], d["message"]]))
        .collect()
}

/// Reads publications until `until` holds for the latest one of each document.
async fn read_until(
    c: &mut Client,
    latest: &mut HashMap<String, Value>,
    until: impl Fn(&HashMap<String, Value>) -> bool,
) {
    while !until(latest) {
        let p = c.notification("textDocument/publishDiagnostics").await;
        let uri = p["params"]["uri"].as_str().unwrap().to_string();
        latest.insert(uri, p["params"].clone());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternating_edits_of_two_documents_publish_each_ones_last_version() {
    const A: &str = "file:///work/a.wsp";
    const B: &str = "file:///work/b.wsp";
    let clean = program();
    let at = paren(&clean);
    let range = json!({"start": at, "end": {"line": at["line"], "character": at["character"].as_u64().unwrap() + 1}});
    let mut broken = clean.clone();
    let offset = clean
        .match_indices("pto.exp(shifted")
        .nth(BLOCKS / 2)
        .unwrap()
        .0
        + "pto.exp(shifted".len();
    broken.remove(offset);

    let mut c = Client::start().await;
    // A opens clean and B broken; each edit toggles the same `)`, so after an odd number of
    // edits A is broken and B clean.
    c.open(A, &clean).await;
    c.open(B, &broken).await;
    let mut latest = HashMap::new();
    read_until(&mut c, &mut latest, |l| l.len() == 2).await;
    assert_eq!(latest[A]["diagnostics"], json!([]), "{}", latest[A]);
    let broken_diagnostics = summary(&latest[B]["diagnostics"]);
    assert!(!broken_diagnostics.is_empty(), "{}", latest[B]);

    let mut version = 1;
    for round in 0..ROUNDS {
        version += 1;
        for (uri, starts_clean) in [(A, true), (B, false)] {
            let removes = (round % 2 == 0) == starts_clean;
            let change = if removes {
                json!({"range": range, "text": ""})
            } else {
                json!({"range": {"start": at, "end": at}, "text": ")"})
            };
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
            )
            .await;
            tokio::time::sleep(GAP).await;
        }
    }
    assert_eq!(ROUNDS % 2, 1, "A ends broken and B clean");

    // A document whose last version is never published times out here.
    let last = version;
    tokio::time::timeout(
        Duration::from_secs(20),
        read_until(&mut c, &mut latest, |l| {
            l[A]["version"] == last && l[B]["version"] == last
        }),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the last version ({last}) was not published for both: a.wsp at {}, b.wsp at {}",
            latest[A]["version"], latest[B]["version"]
        )
    });
    assert_eq!(summary(&latest[A]["diagnostics"]), broken_diagnostics);
    assert_eq!(latest[B]["diagnostics"], json!([]), "{}", latest[B]);
}
