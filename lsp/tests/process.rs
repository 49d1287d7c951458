//! `wsp lsp` as an editor runs it: the built `wsp` binary over its stdin and stdout. Its exit
//! status follows the LSP spec, and a malformed frame does not end the session.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The `wsp` binary, built (or found up to date) by cargo for this test.
fn wsp() -> &'static Path {
    static WSP: OnceLock<PathBuf> = OnceLock::new();
    WSP.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = Command::new(env!("CARGO"))
            .args([
                "build",
                "-p",
                "wsp-cli",
                "--bin",
                "wsp",
                "--message-format=json",
            ])
            .current_dir(root)
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build");
        assert!(out.status.success(), "cargo build -p wsp-cli failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "wsp")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the wsp executable")
    })
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&["lsp"])
    }

    fn start_with(args: &[&str]) -> Server {
        let mut child = Command::new(wsp())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start wsp lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
        };
        let init = server.request(
            1,
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        server
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn recv(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = Some(n.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends a request and reads up to its answer; what came before it is returned too.
    fn request_after(&mut self, id: i64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut before = Vec::new();
        loop {
            let m = self.recv();
            if m["id"] == id && m.get("method").is_none() {
                return (before, m);
            }
            before.push(m);
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request_after(id, method, params).1
    }

    fn exit(&mut self) {
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    }

    /// The exit status, with stdin still open: the server must not wait for it to close.
    fn status(mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("wsp lsp did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn exit_after_shutdown_is_status_0() {
    let mut server = Server::start();
    let shutdown = server.request(2, "shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
    server.exit();
    assert_eq!(server.status().code(), Some(0));
}

#[test]
fn the_stdio_flag_of_clients_that_name_the_transport_is_accepted() {
    let mut server = Server::start_with(&["lsp", "--stdio"]);
    server.request(2, "shutdown", Value::Null);
    server.exit();
    assert_eq!(server.status().code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let mut server = Server::start();
    server.exit();
    assert_eq!(server.status().code(), Some(1));
}

#[test]
fn malformed_frames_are_answered_and_the_next_request_served() {
    let mut server = Server::start();
    let bad_json = "{\"jsonrpc\":\"2.0\",\"id\":5,";
    server.send_raw(format!("Content-Length: {}\r\n\r\n{bad_json}", bad_json.len()).as_bytes());
    server.send_raw(b"Content-Length: 1e3\r\n\r\n{}");
    let (before, answer) = server.request_after(2, "workspace/symbol", json!({"query": "nothing"}));
    assert_eq!(answer["result"], json!([]), "{answer}");
    let errors: Vec<Value> = before
        .iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| json!([m["id"], m["error"]["code"]]))
        .collect();
    assert_eq!(errors, vec![json!([null, -32700]); 2], "{before:#?}");
    let shutdown = server.request(3, "shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
    server.exit();
    assert_eq!(server.status().code(), Some(0));
}

#[test]
fn sigterm_ends_the_server_with_status_0() {
    let mut server = Server::start();
    // Mid-session: a document open, a request answered.
    server.send(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": "file:///tmp/a.wsp", "languageId": "wsp", "version": 1,
                         "text": "from pto_wsp import *\nN = 4\n"}}}),
    );
    server.request(2, "workspace/symbol", json!({"query": ""}));
    let killed = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(server.status().code(), Some(0));
}
