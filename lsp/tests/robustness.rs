//! No sequence of edits and requests crashes the server: random edits (ranges anywhere, past
//! the end, inside characters) interleaved with every kind of request, some sent before the
//! edit that makes them stale. And memory stays flat over 10,000 edits.

mod common;

use common::Client;
use proptest::prelude::*;
use serde_json::{Value, json};

const URI: &str = "file:///work/random.wsp";

const FRAGMENTS: &[&str] = &[
    "",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    ".",
    "=",
    "\n",
    "\n    ",
    "0",
    "16",
    "P",
    "P.seq",
    "pto.",
    "add",
    "store",
    "In",
    "Out",
    "Tile",
    "F32",
    "Dense[4]",
    "Tensor(",
    "batch",
    "b",
    "x",
    "@kernel\n",
    "@workload\n",
    "def ",
    "for ",
    " in ",
    "with ",
    "é",
    "😀",
    "\"",
    "#",
    "program",
    ".compile(",
];

const METHODS: &[&str] = &[
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/completion",
    "textDocument/signatureHelp",
    "textDocument/inlayHint",
    "textDocument/semanticTokens/full",
    "textDocument/foldingRange",
    "textDocument/documentSymbol",
    "textDocument/codeAction",
];

#[derive(Debug, Clone)]
enum Op {
    Change {
        at: (u32, u32),
        to: (u32, u32),
        fragment: usize,
    },
    Request {
        method: usize,
        at: (u32, u32),
    },
    /// A request, then an edit before its answer is read.
    Overtaken {
        method: usize,
        at: (u32, u32),
        fragment: usize,
    },
}

fn position() -> impl Strategy<Value = (u32, u32)> {
    (0u32..40, 0u32..60)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (position(), position(), 0..FRAGMENTS.len()).prop_map(|(at, to, fragment)| Op::Change {
            at,
            to,
            fragment
        }),
        (0..METHODS.len(), position()).prop_map(|(method, at)| Op::Request { method, at }),
        (0..METHODS.len(), position(), 0..FRAGMENTS.len()).prop_map(|(method, at, fragment)| {
            Op::Overtaken {
                method,
                at,
                fragment,
            }
        }),
    ]
}

fn pos(p: (u32, u32)) -> Value {
    json!({"line": p.0, "character": p.1})
}

fn params(method: &str, at: (u32, u32)) -> Value {
    let doc = json!({"uri": URI});
    let range = json!({"start": pos(at), "end": pos((at.0 + 3, 0))});
    match method {
        "textDocument/references" => {
            json!({"textDocument": doc, "position": pos(at), "context": {"includeDeclaration": true}})
        }
        "textDocument/rename" => {
            json!({"textDocument": doc, "position": pos(at), "newName": "renamed"})
        }
        "textDocument/inlayHint" => json!({"textDocument": doc, "range": range}),
        "textDocument/codeAction" => {
            json!({"textDocument": doc, "range": range, "context": {"diagnostics": []}})
        }
        "textDocument/semanticTokens/full"
        | "textDocument/foldingRange"
        | "textDocument/documentSymbol" => json!({"textDocument": doc}),
        _ => json!({"textDocument": doc, "position": pos(at)}),
    }
}

/// An answer is a result, or an error that is not the server's fault.
fn check_answer(method: &str, answer: &Value) {
    if let Some(code) = answer["error"]["code"].as_i64() {
        // ContentModified for a stale request; InvalidParams for a refused rename.
        assert!(
            code == -32801 || (code == -32602 && method == "textDocument/rename"),
            "{method}: {answer}"
        );
    } else {
        assert!(answer.get("result").is_some(), "{method}: {answer}");
    }
}

async fn change(c: &mut Client, version: &mut i32, at: (u32, u32), to: (u32, u32), text: &str) {
    *version += 1;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": *version},
               "contentChanges": [{"range": {"start": pos(at), "end": pos(to)}, "text": text}]}),
    )
    .await;
}

fn example() -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/varlen_attention.wsp");
    std::fs::read_to_string(path).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_and_requests_never_crash_the_server(ops in prop::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            let mut c = Client::start().await;
            c.open(URI, &example()).await;
            let mut version = 1;
            for op in &ops {
                match *op {
                    Op::Change { at, to, fragment } => {
                        change(&mut c, &mut version, at, to, FRAGMENTS[fragment]).await;
                    }
                    Op::Request { method, at } => {
                        let answer = c.request(METHODS[method], params(METHODS[method], at)).await;
                        check_answer(METHODS[method], &answer);
                    }
                    Op::Overtaken { method, at, fragment } => {
                        let id = c.send_request(METHODS[method], params(METHODS[method], at)).await;
                        change(&mut c, &mut version, at, at, FRAGMENTS[fragment]).await;
                        let answer = c.response(id).await;
                        check_answer(METHODS[method], &answer);
                    }
                }
            }
            // The server still answers, and its last diagnostics carry the last version.
            let answer = c.request("textDocument/hover", params("textDocument/hover", (0, 0))).await;
            check_answer("textDocument/hover", &answer);
            loop {
                let p = c.notification("textDocument/publishDiagnostics").await;
                if p["params"]["version"] == version {
                    break;
                }
            }
        });
    }
}

/// Resident memory in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_flat_over_ten_thousand_edits() {
    let mut c = Client::start().await;
    let text = example();
    c.open(URI, &text).await;
    c.notification("textDocument/publishDiagnostics").await;
    // Each edit retypes one digit of a constant, so every edit re-checks the programs.
    let line = text
        .lines()
        .position(|l| l.starts_with("KV_SHORT"))
        .expect("a constant") as u32;
    let col = text
        .lines()
        .nth(line as usize)
        .unwrap()
        .find(char::is_numeric)
        .unwrap() as u32;
    let mut version = 1;
    let mut after_warmup = 0;
    for i in 0..10_000 {
        let digit = ["1", "2"][i % 2];
        change(&mut c, &mut version, (line, col), (line, col + 1), digit).await;
        let p = c.notification("textDocument/publishDiagnostics").await;
        assert_eq!(p["params"]["version"], version);
        if i == 999 {
            after_warmup = rss();
        }
    }
    let grown = rss().saturating_sub(after_warmup);
    eprintln!(
        "rss after 1,000 edits {} MiB, grown {} KiB over the next 9,000",
        after_warmup >> 20,
        grown >> 10
    );
    assert!(
        grown < 8 << 20,
        "memory grew by {} KiB over 9,000 edits",
        grown >> 10
    );
}
