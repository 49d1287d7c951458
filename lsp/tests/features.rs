//! Every feature through the protocol, in process: what an editor receives for a program.

mod common;

use common::Client;
use serde_json::{Value, json};

const URI: &str = "file:///work/nav.wsp";

const PROGRAM: &str = r#"from pto_wsp import *

ROWS = 16
batch = Dense[4]
X = Tensor((4, ROWS, 128), DType.F32, init=ones())
Y = Tensor((4, ROWS, 128), DType.F32)


@kernel
def scale(x: In[Tile[ROWS, 128, DType.F32]], y: Out[Tile[ROWS, 128, DType.F32]]):
    t = pto.mul(x, x)
    pto.store(y, t)


@workload
def run(b_axis: Dense):
    for b in P(b_axis):
        scale[b](x=X[b], y=Y[b])


program = run(b_axis=batch).compile(target="cpu_sim")
program.execute()
"#;

async fn opened() -> Client {
    let mut c = Client::start().await;
    c.open(URI, PROGRAM).await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    assert_eq!(published["params"]["diagnostics"], json!([]), "{published}");
    c
}

/// The string `key` of each object in a JSON list.
fn texts(list: &Value, key: &str) -> Vec<String> {
    let items = list.as_array().expect("a list");
    items
        .iter()
        .map(|i| i[key].as_str().unwrap().to_string())
        .collect()
}

/// `line:character` of a range's start.
fn start(range: &Value) -> String {
    format!("{}:{}", range["start"]["line"], range["start"]["character"])
}

#[tokio::test]
async fn navigation_definition_references_and_rename() {
    let mut c = opened().await;
    // `x` used in the body (line 10) goes to the parameter (line 9).
    let def = c.at("textDocument/definition", URI, 10, 16).await;
    assert_eq!(def["result"]["uri"], URI);
    assert_eq!(start(&def["result"]["range"]), "9:10", "{def}");

    let refs = c
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": URI}, "position": {"line": 4, "character": 0},
                   "context": {"includeDeclaration": false}}),
        )
        .await;
    let places: Vec<String> = refs["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| start(&l["range"]))
        .collect();
    assert_eq!(places, ["17:19"], "the tensor `X` is used once: {refs}");

    let prepared = c.at("textDocument/prepareRename", URI, 9, 10).await;
    assert_eq!(prepared["result"]["placeholder"], "x", "{prepared}");
    let renamed = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": {"line": 9, "character": 10}, "newName": "src"}),
        )
        .await;
    let edits = renamed["result"]["changes"][URI].as_array().unwrap();
    let places: Vec<String> = edits.iter().map(|e| start(&e["range"])).collect();
    // The parameter, its two uses in the body and the task's keyword.
    assert_eq!(places, ["9:10", "10:16", "10:19", "17:17"], "{renamed}");
    assert!(edits.iter().all(|e| e["newText"] == "src"));

    let refused = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": {"line": 9, "character": 10}, "newName": "Y"}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already defined")
    );
}

#[tokio::test]
async fn completion_signature_help_and_hints() {
    let mut c = opened().await;
    // Inside `P(b_axis)`, after `P.`: the loop kinds.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 16, "character": 14}, "end": {"line": 16, "character": 14}}, "text": ".seq"}
        ]}),
    )
    .await;
    c.notification("textDocument/publishDiagnostics").await;
    let members = c.at("textDocument/completion", URI, 16, 16).await;
    let labels = texts(&members["result"], "label");
    assert_eq!(
        labels,
        ["seq", "sel", "when", "otherwise", "pipe"],
        "{members}"
    );

    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 30, "character": 0}}}),
        )
        .await;
    let labels: Vec<String> = hints["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{} {}",
                start(&json!({"start": h["position"]})),
                h["label"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            "10:5 : Tile[16,128] F32",
            "15:22 4 tasks",
            "16:26 Sequential"
        ],
        "{hints}"
    );

    // In a task call that does not give `x` yet: the kernel's parameter as a keyword.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [
            {"range": {"start": {"line": 17, "character": 17}, "end": {"line": 17, "character": 25}}, "text": ""}
        ]}),
    )
    .await;
    c.notification("textDocument/publishDiagnostics").await;
    let keywords = c.at("textDocument/completion", URI, 17, 17).await;
    let first = &keywords["result"][0];
    assert_eq!(first["label"], "x=", "{keywords}");
    assert_eq!(first["detail"], "In[Tile[16, 128, F32]]");
    assert_eq!(keywords["result"][1]["label"], "b", "`y` is given already");

    let help = c.at("textDocument/signatureHelp", URI, 10, 19).await;
    let sig = &help["result"]["signatures"][0];
    assert_eq!(sig["label"], "pto.mul(a, b)", "{help}");
    assert_eq!(help["result"]["activeParameter"], 1);
    assert_eq!(sig["parameters"][1]["label"], json!([11, 12]));
}

#[tokio::test]
async fn structure_tokens_symbols_and_folding() {
    let mut c = opened().await;
    let init = c.request("shutdown", Value::Null).await;
    assert_eq!(init["result"], Value::Null);
    let mut c = opened().await;

    let tokens = c
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": URI}}),
        )
        .await;
    let data: Vec<u64> = tokens["result"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // Decode: absolute line, character, length, type and modifiers of each token.
    let (mut line, mut ch) = (0, 0);
    let mut decoded = Vec::new();
    for t in data.chunks(5) {
        line += t[0];
        ch = if t[0] == 0 { ch + t[1] } else { t[1] };
        decoded.push((line, ch, t[2], t[3], t[4]));
    }
    // `def scale(x: ...`: `scale` is a function (7) declared here (bit 0); `x` a parameter (10).
    assert!(decoded.contains(&(9, 4, 5, 7, 1)), "{decoded:?}");
    assert!(decoded.contains(&(9, 10, 1, 10, 1)), "{decoded:?}");
    // `pto.mul`: a library namespace (5) and a library function.
    assert!(decoded.contains(&(10, 8, 3, 5, 4)), "{decoded:?}");
    assert!(decoded.contains(&(10, 12, 3, 7, 4)), "{decoded:?}");

    let symbols = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": URI}}),
        )
        .await;
    let names = texts(&symbols["result"], "name");
    assert_eq!(
        names,
        ["ROWS", "batch", "X", "Y", "scale", "run", "program"]
    );
    assert_eq!(symbols["result"][4]["children"][1]["name"], "y");

    let workspace = c.request("workspace/symbol", json!({"query": "sc"})).await;
    assert_eq!(workspace["result"][0]["name"], "scale", "{workspace}");

    let folds = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": URI}}),
        )
        .await;
    let spans: Vec<(u64, u64)> = folds["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().unwrap(),
                f["endLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(spans, [(9, 11), (15, 17), (16, 17)], "{folds}");
}

#[tokio::test]
async fn quick_fixes_apply_the_analyzers_fix() {
    let mut c = Client::start().await;
    let text = PROGRAM.replace("pto.mul(x, x)", "pto.mull(x, x)");
    c.open(URI, &text).await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    let diag = &published["params"]["diagnostics"][0];
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": URI}, "range": diag["range"], "context": {"diagnostics": [diag]}}),
        )
        .await;
    let action = &actions["result"][0];
    assert_eq!(action["kind"], "quickfix", "{actions}");
    assert_eq!(action["diagnostics"][0]["code"], diag["code"]);
    let edit = &action["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "mul", "{actions}");
    assert_eq!(edit["range"], diag["range"]);
    // Then "suppress WSP102 on this line", never preferred; applied, the diagnostic is gone and
    // none takes its place.
    let suppress = &actions["result"][1];
    assert_eq!(
        suppress["title"], "suppress WSP102 on this line",
        "{actions}"
    );
    assert_eq!(suppress["isPreferred"], false);
    let edit = &suppress["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "  # noqa: WSP102", "{actions}");
    let line = diag["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert_eq!(
        edit["range"]["start"]["character"].as_u64().unwrap() as usize,
        text.lines().nth(line).unwrap().len()
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
            {"range": edit["range"], "text": edit["newText"]}
        ]}),
    )
    .await;
    let published = c.notification("textDocument/publishDiagnostics").await;
    assert_eq!(published["params"]["diagnostics"], json!([]), "{published}");

    // "Fix all" (asked for on save) takes the safe fixes only: `tl.` twice, not the guess.
    let text = PROGRAM.replace("pto.mul(x, x)", "tl.mul(tl.exp(x), pto.mull(x, x))");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": text}]}),
    )
    .await;
    c.notification("textDocument/publishDiagnostics").await;
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    let all = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": URI}, "range": whole, "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    let [action] = all["result"].as_array().unwrap().as_slice() else {
        panic!("{all}");
    };
    assert_eq!(action["kind"], "source.fixAll.wsp");
    assert_eq!(action["title"], "fix all: apply 2 safe fixes");
    let edits = texts(&action["edit"]["changes"][URI], "newText");
    assert_eq!(edits, ["pto", "pto"]);
    let quick = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": URI}, "range": whole, "context": {"diagnostics": [], "only": ["quickfix"]}}),
        )
        .await;
    assert!(
        quick["result"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["kind"] == "quickfix"),
        "{quick}"
    );
}

const RATE_LIMITED: &str = r#"from pto_wsp import *

F32 = DType.F32
batch = Dense[4]
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)

@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, x)

@workload
def run(batch):
    for b in P(batch):
        copy[b](x=X[b], y=Y[b])

program = run(batch).timing(TimingPolicy.rate_limit(10)).compile(target="cpu_sim")
"#;

/// Diagnostics published for each file until every file in `expect` was heard from:
/// (file name, codes).
async fn published(c: &mut Client, files: usize) -> Vec<(String, Vec<String>, Value)> {
    let mut out: Vec<(String, Vec<String>, Value)> = Vec::new();
    while out.len() < files {
        let p = c.notification("textDocument/publishDiagnostics").await;
        let uri = p["params"]["uri"].as_str().unwrap().to_string();
        let name = uri.rsplit('/').next().unwrap().to_string();
        let codes = texts(&p["params"]["diagnostics"], "code");
        out.retain(|(n, ..)| *n != name);
        out.push((name, codes, p["params"]["version"].clone()));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn workspace_folders_settings_and_files_not_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("wsp.toml"),
        "[check]\ntargets = [\"ascend_npu\"]\n",
    )
    .unwrap();
    std::fs::write(root.join("limited.wsp"), RATE_LIMITED).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/clean.wsp"), PROGRAM).unwrap();
    let root_uri = format!("file://{}", root.display());
    let mut c = Client::start_with(json!({
        "processId": null,
        "capabilities": {},
        "workspaceFolders": [{"uri": root_uri, "name": "w"}],
    }))
    .await;
    // Neither file is open: both are analyzed, the rate limit against wsp.toml's ascend_npu.
    assert_eq!(
        published(&mut c, 2).await,
        [
            ("clean.wsp".to_string(), vec![], Value::Null),
            (
                "limited.wsp".to_string(),
                vec!["WSP502".to_string()],
                Value::Null
            ),
        ]
    );
    let symbols = c.request("workspace/symbol", json!({"query": ""})).await;
    let names = texts(&symbols["result"], "name");
    assert!(
        names.iter().any(|n| n == "copy") && names.iter().any(|n| n == "scale"),
        "{symbols}"
    );

    // wsp.toml drops ascend_npu: the watched-file change re-checks every file.
    std::fs::write(root.join("wsp.toml"), "[check]\ntargets = []\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("{root_uri}/wsp.toml"), "type": 2}]}),
    )
    .await;
    let again = published(&mut c, 2).await;
    assert!(
        again.iter().all(|(_, codes, _)| codes.is_empty()),
        "{again:?}"
    );

    // Opened, edited and closed: the editor's text while open, the disk's after.
    let uri = format!("{root_uri}/sub/clean.wsp");
    c.open(&uri, &PROGRAM.replace("pto.mul", "pto.mull")).await;
    let open = published(&mut c, 1).await;
    assert_eq!(open[0].1, ["WSP102"]);
    assert_eq!(open[0].2, 1, "published with the editor's version");
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    let closed = published(&mut c, 1).await;
    assert_eq!(closed[0].1, Vec::<String>::new());
    assert_eq!(closed[0].2, Value::Null);

    // wsp.toml ignores WSP102 and makes warnings errors: the editor shows what `wsp check`
    // reports.
    std::fs::write(
        root.join("wsp.toml"),
        "[check]\nignore = [\"WSP102\"]\nwarnings-as-errors = true\n",
    )
    .unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("{root_uri}/wsp.toml"), "type": 2}]}),
    )
    .await;
    published(&mut c, 2).await;
    c.open(&uri, &PROGRAM.replace("pto.mul", "pto.mull")).await;
    assert_eq!(published(&mut c, 1).await[0].1, Vec::<String>::new());
    // Nor does it offer a fix or a suppression of the ignored code.
    let line = PROGRAM.lines().position(|l| l.contains("pto.mul")).unwrap();
    let everywhere =
        json!({"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": everywhere, "context": {"diagnostics": []}}),
        )
        .await;
    assert_eq!(actions["result"], json!([]), "{actions}");
    let with_warning = PROGRAM.replace("pto.mul(x, x)", "tl.mul(x, x)");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": with_warning}]}),
    )
    .await;
    let p = c.notification("textDocument/publishDiagnostics").await;
    let d = &p["params"]["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), d["severity"].as_u64()),
        (Some("WSP104"), Some(1)),
        "{p}"
    );
}

#[tokio::test]
async fn editor_targets_setting_adds_to_every_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("limited.wsp"), RATE_LIMITED).unwrap();
    let root_uri = format!("file://{}", root.display());
    // No wsp.toml: the editor's setting alone checks the folder for ascend_npu.
    let mut c = Client::start_with(json!({
        "processId": null,
        "capabilities": {},
        "workspaceFolders": [{"uri": root_uri, "name": "w"}],
        "initializationOptions": {"targets": ["ascend_npu"]},
    }))
    .await;
    assert_eq!(published(&mut c, 1).await[0].1, ["WSP502"]);

    // A file outside every folder is checked for the editor's targets too.
    let outside = tempfile::tempdir().unwrap();
    let loose = format!("file://{}/loose.wsp", outside.path().display());
    c.open(&loose, RATE_LIMITED).await;
    let opened = published(&mut c, 1).await;
    assert_eq!(
        (opened[0].0.as_str(), &opened[0].1[..]),
        ("loose.wsp", &["WSP502".to_string()][..])
    );

    // A bad value is shown and changes nothing.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"wsp": {"targets": ["ascend"]}}}),
    )
    .await;
    let shown = c.notification("window/showMessage").await;
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("unknown target `\"ascend\"`") && message.contains("`ascend_npu`"),
        "{message}"
    );

    // VS Code's settings section `wsp`: dropping the target re-checks every file.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"wsp": {"targets": []}}}),
    )
    .await;
    let again = published(&mut c, 2).await;
    assert!(
        again.iter().all(|(_, codes, _)| codes.is_empty()),
        "{again:?}"
    );
}

/// A `.npy` file as NumPy's `np.save` writes it: version 1, a padded header dict, then data.
fn npy(shape: &[u64], data: &[f32]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    data.iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    out
}

#[tokio::test]
async fn a_changed_npy_file_is_checked_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("loads.wsp"),
        "from pto_wsp import *\nW = Tensor((2, 3), DType.F32, init=load_npy(\"w.npy\"))\n",
    )
    .unwrap();
    std::fs::write(root.join("w.npy"), npy(&[3, 2], &[0.0; 6])).unwrap();
    let root_uri = format!("file://{}", root.display());
    let mut c = Client::start_with(json!({
        "processId": null,
        "capabilities": {},
        "workspaceFolders": [{"uri": root_uri, "name": "w"}],
    }))
    .await;
    // The file has another shape than the tensor.
    assert_eq!(published(&mut c, 1).await[0].1, ["WSP211"]);
    // Saved again with the tensor's shape: the watched change checks every file again.
    std::fs::write(root.join("w.npy"), npy(&[2, 3], &[0.0; 6])).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("{root_uri}/w.npy"), "type": 2}]}),
    )
    .await;
    assert_eq!(published(&mut c, 1).await[0].1, Vec::<String>::new());
}
