//! A client for in-process protocol tests: framed JSON-RPC over an in-memory stream, as an
//! editor sends and reads it.
#![allow(dead_code)] // Each test file uses some of it.

use std::collections::VecDeque;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

pub struct Client {
    read: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    write: tokio::io::WriteHalf<DuplexStream>,
    next_id: i64,
    /// Notifications read while waiting for something else.
    pub pending: VecDeque<Value>,
    server: tokio::task::JoinHandle<()>,
}

impl Client {
    pub async fn start() -> Client {
        Client::start_with(json!({"processId": null, "rootUri": null, "capabilities": {}})).await
    }

    /// Starts a server and initializes it with `params`.
    pub async fn start_with(params: Value) -> Client {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let server = tokio::spawn(async move {
            wsp_lsp::serve(server_read, server_write).await;
        });
        let (read, write) = tokio::io::split(client);
        let mut c = Client {
            read: BufReader::new(read),
            write,
            next_id: 0,
            pending: VecDeque::new(),
            server,
        };
        let init = c.request("initialize", params).await;
        assert_eq!(
            init["result"]["capabilities"]["textDocumentSync"]["change"], 2,
            "incremental sync: {init}"
        );
        c.notify("initialized", json!({})).await;
        c
    }

    pub async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.send_raw(frame.as_bytes()).await;
    }

    /// Bytes as they are, framed or not.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
    }

    /// Waits for the server to end, its input left open.
    pub async fn finished(self) {
        self.server.await.unwrap();
    }

    pub async fn recv(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            self.read.read_line(&mut line).await.unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = Some(n.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.read.read_exact(&mut body).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.response(id).await
    }

    /// Sends a request without waiting for its answer; `response` reads it later.
    pub async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    pub async fn response(&mut self, id: i64) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["id"] == id) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let m = self.recv().await;
            if m["id"] == id {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// The next notification of `method`.
    pub async fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["method"] == method) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let m = self.recv().await;
            if m["method"] == method {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    pub async fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "wsp", "version": 1, "text": text}}),
        )
        .await;
    }

    /// `method` on a position of a document.
    pub async fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
        .await
    }
}
