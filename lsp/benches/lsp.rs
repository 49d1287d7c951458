//! `cargo xtask bench lsp`: the latency an editor sees, from sending `didChange` to receiving
//! the `publishDiagnostics` of that version, for 200 one-token edits to a 10,000-line file,
//! measured against the release `wsp lsp` process over stdio. Beside it, in the same run, a
//! cold `wsp check` of the same file. Apart from those, 100 edits that delete a `)` and type it
//! again, in turn, and the time from `didOpen` to its diagnostics on a fresh server (the
//! median of five servers). Writes target/bench/lsp.json.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/attention.rs"]
mod attention;

const LINES: usize = 10_000;
const EDITS: usize = 200;
/// Edits that make and then fix a syntax error, measured apart.
const BREAKING_EDITS: usize = 100;
const GOAL_P99_MS: f64 = 20.0;

fn program() -> String {
    let mut text = attention::HEADER.to_string();
    let mut i = 0;
    while text.lines().count() < LINES {
        text.push_str(&attention::block(i));
        i += 1;
    }
    text
}

/// `target/`, from this bench binary's own path (target/release/deps/lsp-…).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    exe.ancestors()
        .nth(3)
        .expect("inside target/")
        .to_path_buf()
}

/// A framed JSON-RPC connection to a `wsp lsp` process.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Server {
    fn start(wsp: &Path) -> Server {
        let mut child = Command::new(wsp)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", wsp.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Server {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = Some(n.parse::<usize>().expect("a length"));
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.stdout.read_exact(&mut body).expect("read");
        serde_json::from_slice(&body).expect("JSON")
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == id {
                return m;
            }
        }
    }

    /// Reads until the diagnostics of `version` arrive; returns how many there were.
    fn diagnostics_of(&mut self, version: i32) -> usize {
        loop {
            let m = self.recv();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                return m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    /// The server's peak resident set size in MiB (Linux).
    fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }

    fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

/// The value at quantile `q` of sorted samples (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

/// `line:character` (UTF-16; the text is ASCII) of a byte offset.
fn position(text: &str, offset: usize) -> Value {
    let line = text[..offset].matches('\n').count();
    let character = offset - text[..offset].rfind('\n').map_or(0, |n| n + 1);
    json!({"line": line, "character": character})
}

fn main() {
    let wsp = target_dir().join("release/wsp");
    assert!(
        wsp.exists(),
        "{} is missing: run `cargo xtask bench lsp`, which builds it",
        wsp.display()
    );
    let text = program();
    let lines = text.lines().count();
    let dir = target_dir().join("bench/lsp_10k");
    std::fs::create_dir_all(&dir).expect("bench folder");
    let path = dir.join("attention.wsp");
    std::fs::write(&path, &text).expect("write the program");
    let uri = format!("file://{}", path.display());

    // Where the edits go: each `pto.exp(shifted)`, visited in a scattered order.
    let sites: Vec<usize> = text
        .match_indices("pto.exp(shifted)")
        .map(|(at, _)| at + "pto.".len())
        .collect();
    let mut flipped = vec![false; sites.len()];

    // didOpen on a fresh server, five times (the median, as for `wsp check` below); the edits
    // go to the last server.
    let mut opens = Vec::new();
    let mut server = loop {
        let mut server = Server::start(&wsp);
        let init = server.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.notify("initialized", json!({}));
        let t = Instant::now();
        server.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "wsp", "version": 1, "text": text}}),
        );
        assert_eq!(server.diagnostics_of(1), 0, "the program must check clean");
        opens.push(t.elapsed());
        if opens.len() == 5 {
            break server;
        }
        server.stop();
    };
    opens.sort();
    let open = opens[opens.len() / 2];

    let mut latencies = Vec::with_capacity(EDITS);
    for edit in 0..EDITS {
        let version = edit as i32 + 2;
        let site = (edit * 37) % sites.len();
        let new = if flipped[site] { "exp" } else { "log" };
        flipped[site] = !flipped[site];
        let at = sites[site];
        let change = json!({
            "range": {"start": position(&text, at), "end": position(&text, at + 3)},
            "text": new,
        });
        let t = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        let found = server.diagnostics_of(version);
        latencies.push(t.elapsed());
        assert_eq!(found, 0, "edit {edit} left the program with diagnostics");
    }
    // Typing through a syntax error: a `)` deleted (an error) and typed again (fixed), in turn.
    let mut text = text.clone();
    let mut broken = Vec::with_capacity(BREAKING_EDITS);
    for edit in 0..BREAKING_EDITS {
        let version = (EDITS + edit) as i32 + 2;
        let at = sites[(edit / 2 * 37) % sites.len()] + "exp(shifted".len();
        let (range, new) = if edit % 2 == 0 {
            (
                json!({"start": position(&text, at), "end": position(&text, at + 1)}),
                "",
            )
        } else {
            (
                json!({"start": position(&text, at), "end": position(&text, at)}),
                ")",
            )
        };
        let t = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range, "text": new}]}),
        );
        let found = server.diagnostics_of(version);
        broken.push(t.elapsed());
        if new.is_empty() {
            text.replace_range(at..at + 1, "");
        } else {
            text.insert_str(at, new);
        }
        assert_eq!(
            found == 0,
            edit % 2 == 1,
            "edit {edit}: {found} diagnostics"
        );
    }
    broken.sort();
    let server_rss = server.peak_rss_mib();
    server.stop();
    let mean_ms = latencies.iter().sum::<Duration>().as_secs_f64() * 1e3 / EDITS as f64;
    latencies.sort();

    // The same file, checked cold by a fresh `wsp check` process each time.
    let mut checks = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let status = Command::new(&wsp)
            .arg("check")
            .arg(&path)
            .stdout(Stdio::null())
            .status()
            .expect("run wsp check");
        checks.push(t.elapsed());
        assert!(status.success(), "wsp check failed on the benchmark file");
    }
    checks.sort();

    let p99 = quantile(&latencies, 0.99);
    let report = json!({
        "file_lines": lines,
        "edits": EDITS,
        "did_change_to_publish_diagnostics_ms": {
            "p50": quantile(&latencies, 0.50),
            "p99": p99,
            "max": quantile(&latencies, 1.0),
            "mean": mean_ms,
        },
        "syntax_error_edits": BREAKING_EDITS,
        "syntax_error_edit_to_publish_diagnostics_ms": {
            "p50": quantile(&broken, 0.50),
            "p99": quantile(&broken, 0.99),
        },
        "did_open_to_publish_diagnostics_ms": open.as_secs_f64() * 1e3,
        "wsp_check_cold_ms_median": quantile(&checks, 0.5),
        "wsp_check_cold_over_edit_p50": quantile(&checks, 0.5) / quantile(&latencies, 0.5),
        "server_peak_rss_mib": server_rss,
        "goals": {"p99_at_most_20_ms": p99 <= GOAL_P99_MS},
    });
    let out = target_dir().join("bench/lsp.json");
    let pretty = serde_json::to_string_pretty(&report).expect("json");
    std::fs::write(&out, &pretty).expect("write lsp.json");
    println!("{pretty}");
    println!("wrote {}", out.display());
}
