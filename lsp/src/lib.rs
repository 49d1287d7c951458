//! The WSP language server (`wsp lsp`): the analyzer's answers in the editor, over stdio.
//!
//! Edits go into one salsa database synchronously, inside the notification handler and before
//! any await, so requests always see the latest text. Queries run on a clone of the database
//! (a snapshot) in `spawn_blocking`; the next edit cancels them, and a request whose answer was
//! cancelled gets ContentModified.

mod convert;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};
use wsp_analysis::{Database, File, Workspace};

use crate::convert::Lines;

/// Serves one client on stdin and stdout until it exits.
pub async fn serve_stdio() {
    serve(tokio::io::stdin(), tokio::io::stdout()).await;
}

/// Serves one client over a pair of streams until it exits.
pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite) {
    let (service, socket) = LspService::new(Backend::new);
    Server::new(input, output, socket).serve(service).await;
}

struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
}

struct State {
    db: Database,
    workspace: Workspace,
    docs: HashMap<Uri, Doc>,
}

/// An open document.
struct Doc {
    file: File,
    version: i32,
}

/// What a query needs, taken under the lock: a snapshot of the database and the document.
struct Snapshot {
    db: Database,
    file: File,
    version: i32,
}

impl Backend {
    fn new(client: Client) -> Backend {
        let db = Database::default();
        let workspace = Workspace::new(&db, Vec::new());
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                db,
                workspace,
                docs: HashMap::new(),
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A handler that panicked while holding the lock left the state as consistent as
        // each edit is atomic under it; serve on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        let state = self.state();
        let doc = state.docs.get(uri)?;
        Some(Snapshot {
            db: state.db.clone(),
            file: doc.file,
            version: doc.version,
        })
    }

    /// Runs `query` on a snapshot off the async threads. A cancelled query (an edit came)
    /// is ContentModified; a panic is reported to the client and answered as an internal
    /// error, and the server serves on.
    async fn query<T: Send + 'static>(
        &self,
        snapshot: Snapshot,
        query: impl FnOnce(&Database, File) -> T + Send + 'static,
    ) -> Result<T> {
        let task = tokio::task::spawn_blocking(move || {
            // The snapshot is dropped whatever happens, so no broken state outlives an unwind.
            let run = std::panic::AssertUnwindSafe(|| query(&snapshot.db, snapshot.file));
            salsa::Cancelled::catch(run)
        });
        match task.await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_cancelled)) => Err(Error::new(ErrorCode::ContentModified)),
            Err(e) => {
                let what = match e.try_into_panic() {
                    Ok(payload) => panic_message(payload.as_ref()),
                    Err(e) => e.to_string(),
                };
                self.client
                    .log_message(
                        MessageType::ERROR,
                        format!("wsp lsp: a query panicked: {what}"),
                    )
                    .await;
                Err(Error {
                    message: format!("internal error: {what}").into(),
                    ..Error::internal_error()
                })
            }
        }
    }

    /// Computes and publishes the diagnostics of `uri`, unless a newer edit made them stale.
    async fn publish(&self, uri: Uri) {
        let Some(snapshot) = self.snapshot(&uri) else {
            return;
        };
        let version = snapshot.version;
        let link = uri.clone();
        let diagnostics = self
            .query(snapshot, move |db, file| {
                let text = file.text(db);
                let lines = Lines::new(text);
                wsp_analysis::file_diagnostics(db, file)
                    .iter()
                    .map(|d| convert::diagnostic(d, &lines, &link))
                    .collect::<Vec<_>>()
            })
            .await;
        let Ok(diagnostics) = diagnostics else {
            return; // Cancelled by an edit, whose own publish follows.
        };
        let current = self.state().docs.get(&uri).map(|d| d.version);
        if current == Some(version) {
            self.client
                .publish_diagnostics(uri, diagnostics, Some(version))
                .await;
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// The path a document's analysis calls it by.
fn path_of(uri: &Uri) -> PathBuf {
    uri.to_file_path()
        .map(|p| p.into_owned())
        .unwrap_or_else(|| PathBuf::from(uri.as_str()))
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::UTF16),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        ..Default::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "wsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        {
            let mut state = self.state();
            let State { db, workspace, .. } = &mut *state;
            let file = File::new(&*db, *workspace, path_of(&doc.uri), doc.text);
            state.docs.insert(
                doc.uri.clone(),
                Doc {
                    file,
                    version: doc.version,
                },
            );
        }
        self.publish(doc.uri).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut state = self.state();
            let State { db, docs, .. } = &mut *state;
            let Some(doc) = docs.get_mut(&uri) else {
                return;
            };
            let mut text = doc.file.text(&*db).clone();
            for change in params.content_changes {
                convert::apply(&mut text, change);
            }
            doc.version = params.text_document.version;
            // Cancels the snapshots in flight and waits for them to let go.
            doc.file.edit(db, text);
        }
        self.publish(uri).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state().docs.remove(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let Some(snapshot) = self.snapshot(&at.text_document.uri) else {
            return Ok(None);
        };
        self.query(snapshot, move |db, file| {
            let lines = Lines::new(file.text(db));
            let offset = lines.offset(at.position);
            wsp_analysis::hover(db, file, offset).map(|h| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: h.markdown,
                }),
                range: Some(lines.range(h.range)),
            })
        })
        .await
    }
}
