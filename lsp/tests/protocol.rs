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
