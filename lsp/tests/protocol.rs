//! The server in process, driven through the protocol over an in-memory stream: framed JSON-RPC
//! in, framed JSON-RPC out, as an editor would send and read it.

use serde_json::{Value, json};

mod common;
use common::Client;

const URI: &str = "file:///work/act.wsp";

/// WSP104's example: a deprecated spelling, then an unknown op.
const TEXT: &str = "from pto_wsp import *

@kernel
def act(x: In[Tile[16, 128, DType.F32]], y: Out[Tile[16, 128, DType.F32]]):
    pto.store(y, tl.relu(pto.ad(x, x)))
";

#[tokio::test]
async fn diagnostics_follow_incremental_edits_with_their_versions() {
    let mut c = Client::start().await;
    c.open(URI, TEXT).await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    let p = &published["params"];
    assert_eq!(p["uri"], URI);
    assert_eq!(p["version"], 1);
    let diags = p["diagnostics"].as_array().unwrap();
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["WSP104", "WSP102"], "{published}");
    let deprecated = &diags[0];
    assert_eq!(deprecated["tags"], json!([2]), "the deprecated tag");
    assert_eq!(deprecated["severity"], 2);
    assert_eq!(
        deprecated["range"],
        json!({"start": {"line": 4, "character": 17}, "end": {"line": 4, "character": 19}})
    );
    assert!(
        deprecated["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with("/docs/diagnostics/WSP104.md"),
        "{deprecated}"
    );
    let unknown = &diags[1];
    assert_eq!(unknown["severity"], 1);
    assert_eq!(
        unknown["range"]["start"],
        json!({"line": 4, "character": 29})
    );

    // Type the missing `d`, then replace `tl` with `pto`: two incremental changes.
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": URI, "version": 2},
            "contentChanges": [
                {"range": {"start": {"line": 4, "character": 31}, "end": {"line": 4, "character": 31}}, "text": "d"},
                {"range": {"start": {"line": 4, "character": 17}, "end": {"line": 4, "character": 19}}, "text": "pto"},
            ],
        }),
    )
    .await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    assert_eq!(published["params"]["version"], 2);
    assert_eq!(published["params"]["diagnostics"], json!([]), "{published}");

    // Hover on the edited line sees the new text.
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": URI}, "position": {"line": 4, "character": 30}}),
        )
        .await;
    let markdown = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(markdown.contains("add"), "{hover}");
}

/// A flood of errors reaches the editor as the first 100 and one information counting the rest.
#[tokio::test]
async fn a_flood_of_diagnostics_is_cut_at_one_hundred() {
    let mut c = Client::start().await;
    c.open(URI, &"$\n".repeat(250)).await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    let diags = published["params"]["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 101);
    assert!(diags[..100].iter().all(|d| d["code"] == "WSP001"));
    assert_eq!(
        diags[100],
        json!({
            "range": {"start": {"line": 100, "character": 0}, "end": {"line": 100, "character": 1}},
            "severity": 3,
            "source": "wsp",
            "message": "150 more diagnostics in this file are not shown (the first 100 are)",
        })
    );
}

#[tokio::test]
async fn closing_clears_diagnostics_and_unknown_documents_have_no_hover() {
    let mut c = Client::start().await;
    c.open(URI, TEXT).await;
    c.notification("textDocument/publishDiagnostics").await;
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    )
    .await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    assert_eq!(published["params"]["diagnostics"], json!([]));
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}),
        )
        .await;
    assert_eq!(hover["result"], Value::Null, "{hover}");
    let shutdown = c.request("shutdown", Value::Null).await;
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
}

/// A frame with a body that is not JSON, one with a Content-Length that is no number, and one
/// with none are each answered with a parse error (-32700, id null, as JSON-RPC says for a
/// message whose id cannot be read); the requests after them are served, and the session ends
/// at `exit` as usual.
#[tokio::test]
async fn malformed_frames_are_answered_and_the_session_goes_on() {
    let mut c = Client::start().await;
    let bad_json = r#"{"jsonrpc":"2.0","id":7,"method":"#;
    c.send_raw(format!("Content-Length: {}\r\n\r\n{bad_json}", bad_json.len()).as_bytes())
        .await;
    c.send_raw(b"Content-Type: application/json\r\n\r\n{}")
        .await;
    c.open(URI, TEXT).await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    assert_eq!(published["params"]["version"], 1, "{published}");
    // What follows a bad header block is skipped up to the next `Content-Length`.
    c.send_raw(b"Content-Length: twelve\r\n\r\n{\"jsonrpc\":\"2.0\"}")
        .await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": URI}, "position": {"line": 4, "character": 9}}),
        )
        .await;
    assert!(hover["result"]["contents"]["value"].is_string(), "{hover}");
    // The errors, read while waiting for the answers above, in the order of the frames.
    let errors: Vec<Value> = c
        .pending
        .drain(..)
        .filter(|m| m.get("error").is_some())
        .collect();
    let summary: Vec<Value> = errors
        .iter()
        .map(|e| json!([e["id"], e["error"]["code"]]))
        .collect();
    assert_eq!(summary, vec![json!([null, -32700]); 3], "{errors:#?}");
    let messages: Vec<&str> = errors
        .iter()
        .map(|e| e["error"]["message"].as_str().unwrap())
        .collect();
    expect_test::expect![[r#"
        [
            "Parse error: EOF while parsing a value at line 1 column 33",
            "Parse error: a header block without Content-Length",
            "Parse error: Content-Length is not a length: \"twelve\"",
        ]
    "#]]
    .assert_debug_eq(&messages);

    // Valid JSON that is no JSON-RPC message: an invalid request, with its id.
    c.send(json!({"id": 9, "params": []})).await;
    let invalid = c.response(9).await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");

    let shutdown = c.request("shutdown", Value::Null).await;
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
    c.notify("exit", Value::Null).await;
    c.finished().await;
}

/// More malformed frames than the answers queued at once: each is answered, in order, and the
/// request after them served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_malformed_frames_is_answered_in_full() {
    let mut c = Client::start().await;
    let frames = 500;
    let garbage = "Content-Length: 3\r\n\r\n{{{".repeat(frames);
    c.send_raw(garbage.as_bytes()).await;
    let answer = c
        .request("workspace/symbol", json!({"query": "nothing"}))
        .await;
    assert_eq!(answer["result"], json!([]), "{answer}");
    let errors = c
        .pending
        .iter()
        .filter(|m| m["error"]["code"] == -32700 && m["id"].is_null())
        .count();
    assert_eq!(errors, frames);
}
