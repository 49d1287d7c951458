//! The WSP language server (`wsp lsp`): the analyzer's answers in the editor, over stdio.
//!
//! Edits go into one salsa database synchronously, inside the notification handler and before
//! any await, so requests always see the latest text. Queries run on a clone of the database
//! (a snapshot) in `spawn_blocking`; the next edit cancels them, and a request whose answer was
//! cancelled gets ContentModified.
//!
//! Diagnostics are published by one task, `publish_stale`, for the documents marked stale: every
//! change marks the documents it affects, and a document stays marked until the diagnostics of
//! its current text are sent. An analysis cancelled by an edit to any document is run again.
//!
//! Every `.wsp` file under the workspace folders is analyzed, open or not; each folder's
//! nearest `wsp.toml` gives the targets its programs are checked against, and the editor's
//! setting (`initializationOptions.targets`, then `wsp.targets` in didChangeConfiguration) adds
//! to them.

mod convert;
mod features;
mod transport;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};
use wsp_analysis::{Database, File, Selection, Target, Workspace};

use crate::convert::Lines;
pub use crate::transport::Ending;

/// Serves one client on stdin and stdout until it exits.
pub async fn serve_stdio() -> Ending {
    serve(tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves one client over a pair of streams until it exits or its input ends. A malformed
/// frame is answered with an error and the session goes on (see the `transport` module).
pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite + Unpin) -> Ending {
    transport::serve(input, output, |server_input, server_output| async move {
        let (service, socket) = LspService::new(Backend::new);
        let publisher = service.inner().publisher();
        let server = Server::new(server_input, server_output, socket).serve(service);
        tokio::select! {
            () = server => {}
            () = publisher => {}
        }
    })
    .await
}

struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// Wakes `publish_stale` after documents were marked stale.
    wake: Arc<Notify>,
    /// Whether the client watches files for us when asked (dynamic registration).
    watches_files: std::sync::atomic::AtomicBool,
}

struct State {
    db: Database,
    /// The workspace folders, each with the settings of its `wsp.toml`.
    roots: Vec<Root>,
    /// For files outside every folder: no `wsp.toml`.
    loose: Workspace,
    /// The editor's `targets` setting, checked in every folder besides its `wsp.toml`'s.
    editor_targets: Vec<Target>,
    /// Every file analyzed, by path: the open documents and the workspace's files on disk.
    docs: HashMap<PathBuf, Doc>,
    /// The documents whose diagnostics the client has not received for their current text,
    /// with the URI to publish them under (an empty list when the document is gone).
    stale: HashMap<PathBuf, Uri>,
}

struct Root {
    path: PathBuf,
    workspace: Workspace,
    /// What its `wsp.toml` reports, read with its targets.
    selection: Selection,
}

struct Doc {
    file: File,
    /// How diagnostics are published for it.
    uri: Uri,
    /// The editor's version while it is open; `None` for a file read from disk.
    version: Option<i32>,
}

/// What a query needs, taken under the lock: a snapshot of the database and the document.
struct Snapshot {
    db: Database,
    file: File,
    uri: Uri,
    version: Option<i32>,
}

impl State {
    fn workspace_for(&self, path: &Path) -> Workspace {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.components().count())
            .map_or(self.loose, |r| r.workspace)
    }

    /// What is reported of `path`: its folder's `wsp.toml` selection; everything outside the
    /// folders.
    fn selection_for(&self, path: &Path) -> Selection {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.components().count())
            .map_or_else(Selection::default, |r| r.selection.clone())
    }

    fn in_roots(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(&r.path))
    }

    /// The client must be sent the diagnostics of `path` (none if it is no longer analyzed).
    fn mark_stale(&mut self, path: PathBuf, uri: Uri) {
        self.stale.insert(path, uri);
    }

    fn mark_all_stale(&mut self) {
        let State { docs, stale, .. } = self;
        stale.extend(docs.iter().map(|(p, d)| (p.clone(), d.uri.clone())));
    }

    /// Starts analyzing a file read from disk; false when its path has no `file:` URI.
    fn load(&mut self, path: PathBuf, text: String) -> bool {
        let Some(uri) = Uri::from_file_path(&path) else {
            return false;
        };
        let workspace = self.workspace_for(&path);
        let file = File::on_disk(&self.db, workspace, path.clone(), text);
        let doc = Doc {
            file,
            uri,
            version: None,
        };
        self.docs.insert(path, doc);
        true
    }
}

impl Backend {
    fn new(client: Client) -> Backend {
        let db = Database::default();
        let loose = Workspace::new(&db, Vec::new());
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                db,
                roots: Vec::new(),
                loose,
                editor_targets: Vec::new(),
                docs: HashMap::new(),
                stale: HashMap::new(),
            })),
            wake: Arc::new(Notify::new()),
            watches_files: Default::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A handler that panicked while holding the lock left the state as consistent as
        // each edit is atomic under it; serve on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        self.snapshot_at(&path_of(uri))
    }

    fn snapshot_at(&self, path: &Path) -> Option<Snapshot> {
        let state = self.state();
        let doc = state.docs.get(path)?;
        Some(Snapshot {
            db: state.db.clone(),
            file: doc.file,
            uri: doc.uri.clone(),
            version: doc.version,
        })
    }

    /// Runs `query` on a snapshot of the database off the async threads (see [`run_query`]).
    async fn query<T: Send + 'static>(
        &self,
        db: Database,
        query: impl FnOnce(&Database) -> T + Send + 'static,
    ) -> Result<T> {
        run_query(&self.client, db, query).await
    }

    /// A request about a document: `None` when the document is unknown.
    async fn on_doc<T: Send + 'static>(
        &self,
        uri: &Uri,
        query: impl FnOnce(&Database, File, &Uri) -> T + Send + 'static,
    ) -> Result<Option<T>> {
        let Some(snapshot) = self.snapshot(uri) else {
            return Ok(None);
        };
        let Snapshot { db, file, uri, .. } = snapshot;
        self.query(db, move |db| query(db, file, &uri))
            .await
            .map(Some)
    }

    /// The task that publishes diagnostics; it runs as long as the server.
    fn publisher(&self) -> impl Future<Output = ()> + Send + 'static {
        publish_stale(self.client.clone(), self.state.clone(), self.wake.clone())
    }

    /// Marks documents stale under the lock, then wakes the publisher.
    fn marking_stale<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let changed = change(&mut self.state());
        self.wake.notify_one();
        changed
    }

    /// The selection and targets of a folder's nearest `wsp.toml` (a bad one is shown and
    /// counts as none), the editor's targets added.
    async fn settings(&self, root: &Path) -> (Selection, Vec<Target>) {
        let (selection, mut targets) = match Selection::of_folder(root) {
            Ok(settings) => settings,
            Err(e) => {
                self.client
                    .show_message(MessageType::ERROR, format!("wsp: {e}"))
                    .await;
                Default::default()
            }
        };
        let editor = self.state().editor_targets.clone();
        for t in editor {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        (selection, targets)
    }

    /// Takes the editor's `targets` setting from `settings` (an object with `targets`); a
    /// value that is no list of target names is shown and leaves the setting as it was.
    /// Whether the setting changed.
    async fn set_editor_targets(&self, settings: &serde_json::Value) -> bool {
        let Some(value) = settings.get("targets") else {
            return false;
        };
        let targets = match editor_targets(value) {
            Ok(targets) => targets,
            Err(e) => {
                self.client
                    .show_message(MessageType::ERROR, format!("wsp: setting `targets`: {e}"))
                    .await;
                return false;
            }
        };
        let mut state = self.state();
        if state.editor_targets == targets {
            return false;
        }
        use salsa::Setter;
        let loose = state.loose;
        loose.set_extra_targets(&mut state.db).to(targets.clone());
        state.editor_targets = targets;
        true
    }

    /// Adds a workspace folder: its settings and every `.wsp` file under it.
    async fn add_root(&self, path: PathBuf) {
        let (selection, targets) = self.settings(&path).await;
        let files = wsp_analysis::wsp_files(&path).unwrap_or_default();
        let texts: Vec<(PathBuf, String)> = files
            .into_iter()
            .filter_map(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?)))
            .collect();
        let mut state = self.state();
        let workspace = Workspace::new(&state.db, targets);
        state.roots.push(Root {
            path,
            workspace,
            selection,
        });
        for (p, text) in texts {
            if !state.docs.contains_key(&p) {
                state.load(p, text);
            }
        }
    }

    /// Re-reads the settings of every folder (after a `wsp.toml` changed).
    async fn reload_settings(&self) {
        let roots: Vec<(PathBuf, Workspace)> = self
            .state()
            .roots
            .iter()
            .map(|r| (r.path.clone(), r.workspace))
            .collect();
        for (path, workspace) in roots {
            let (selection, targets) = self.settings(&path).await;
            use salsa::Setter;
            let mut state = self.state();
            if let Some(root) = state.roots.iter_mut().find(|r| r.path == path) {
                root.selection = selection;
            }
            if workspace.extra_targets(&state.db) != &targets {
                workspace.set_extra_targets(&mut state.db).to(targets);
            }
        }
    }

    /// A file on disk changed, appeared or went away: analyzed again, or dropped when it cannot
    /// be read, and marked stale. Open documents are the editor's, and files outside the
    /// folders are not analyzed.
    fn disk_changed(&self, path: &Path, uri: &Uri) {
        self.marking_stale(|state| {
            if state.docs.get(path).is_some_and(|d| d.version.is_some()) || !state.in_roots(path) {
                return;
            }
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    let State { db, docs, .. } = &mut *state;
                    match docs.get(path) {
                        Some(doc) => doc.file.edit(db, text),
                        None => {
                            if !state.load(path.to_path_buf(), text) {
                                return;
                            }
                        }
                    }
                    let uri = state.docs[path].uri.clone();
                    state.mark_stale(path.to_path_buf(), uri);
                }
                Err(_) => {
                    state.docs.remove(path);
                    state.mark_stale(path.to_path_buf(), uri.clone());
                }
            }
        });
    }
}

/// The target names of a `targets` setting: a list of `cpu_sim`/`ascend_npu`.
fn editor_targets(value: &serde_json::Value) -> std::result::Result<Vec<Target>, String> {
    let list = value
        .as_array()
        .ok_or_else(|| format!("expected a list of targets, got `{value}`"))?;
    let mut targets = Vec::new();
    for item in list {
        let target = item
            .as_str()
            .and_then(Target::from_name)
            .ok_or_else(|| format!("unknown target `{item}`; expected {}", Target::names()))?;
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    Ok(targets)
}

/// Runs `query` on a snapshot of the database off the async threads. A cancelled query (an edit
/// came) is ContentModified; a panic is reported to the client and answered as an internal
/// error, and the server serves on.
async fn run_query<T: Send + 'static>(
    client: &Client,
    db: Database,
    query: impl FnOnce(&Database) -> T + Send + 'static,
) -> Result<T> {
    let task = tokio::task::spawn_blocking(move || {
        // The snapshot is dropped whatever happens, so no broken state outlives an unwind, and
        // an edit waiting for it to let go goes on.
        let run = std::panic::AssertUnwindSafe(|| query(&db));
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
            client
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

/// Publishes the diagnostics of the stale documents, open ones first, for as long as the server
/// runs. An edit to any document cancels the analysis in flight (it bumps the database's
/// revision), so a cancelled document is marked stale again and analyzed on the next round.
/// Diagnostics are sent only while their document is not stale again, and only from this
/// task, so the last ones the client receives for a document are those of its current text.
async fn publish_stale(client: Client, state: Arc<Mutex<State>>, wake: Arc<Notify>) {
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let batch: Vec<(PathBuf, Uri)> = {
            let mut state = lock();
            let mut batch: Vec<_> = state.stale.drain().collect();
            batch.sort_by_key(|(path, _)| {
                let open = state.docs.get(path).is_some_and(|d| d.version.is_some());
                (!open, path.clone())
            });
            batch
        };
        if batch.is_empty() {
            // A mark made since the drain left a permit, so this returns at once.
            wake.notified().await;
            continue;
        }
        for (path, uri) in batch {
            // What `wsp check` would report: the folder's `wsp.toml` selection and severities.
            let (snapshot, selection) = {
                let state = lock();
                let snapshot = state.docs.get(&path).map(|doc| Snapshot {
                    db: state.db.clone(),
                    file: doc.file,
                    uri: doc.uri.clone(),
                    version: doc.version,
                });
                (snapshot, state.selection_for(&path))
            };
            let Some(Snapshot {
                db,
                file,
                uri: link,
                version,
            }) = snapshot
            else {
                if !lock().stale.contains_key(&path) {
                    client.publish_diagnostics(uri, Vec::new(), None).await;
                }
                continue;
            };
            let target = link.clone();
            let file_path = path.clone();
            let diagnostics = run_query(&client, db, move |db| {
                let lines = Lines::new(file.text(db));
                // `.npy` headers are read here, on each publish: a few microseconds a file.
                let all = wsp_analysis::diagnostics_with_data_files(db, file);
                let all = selection.apply(&file_path, all);
                convert::diagnostics(&all, &lines, &link)
            })
            .await;
            match diagnostics {
                Ok(diagnostics) => {
                    let current = {
                        let state = lock();
                        state.docs.contains_key(&path) && !state.stale.contains_key(&path)
                    };
                    if current {
                        client
                            .publish_diagnostics(target, diagnostics, version)
                            .await;
                    }
                }
                Err(e) if e.code == ErrorCode::ContentModified => {
                    lock().stale.entry(path).or_insert(uri);
                }
                // A panic, reported already: analyzing the same text again would panic again.
                Err(_) => {}
            }
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
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated)] // root_uri: clients without workspace folders still send it.
        let folders: Vec<PathBuf> = match (params.workspace_folders, params.root_uri) {
            (Some(folders), _) => folders.iter().map(|f| path_of(&f.uri)).collect(),
            (None, Some(root)) => vec![path_of(&root)],
            (None, None) => Vec::new(),
        };
        if let Some(options) = &params.initialization_options {
            self.set_editor_targets(options).await;
        }
        for folder in folders {
            self.add_root(folder).await;
        }
        let watches = params
            .capabilities
            .workspace
            .and_then(|w| w.did_change_watched_files)
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        self.watches_files
            .store(watches, std::sync::atomic::Ordering::Relaxed);
        Ok(InitializeResult {
            capabilities: features::capabilities(),
            server_info: Some(ServerInfo {
                name: "wsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        // Files of the workspace that no editor opens are analyzed too.
        self.marking_stale(State::mark_all_stale);
        if !self
            .watches_files
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let watchers = ["**/*.wsp", "**/wsp.toml", "**/*.npy"]
            .into_iter()
            .map(|glob| FileSystemWatcher {
                glob_pattern: GlobPattern::String(glob.into()),
                kind: None,
            })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = Registration {
            id: "wsp-files".into(),
            method: "workspace/didChangeWatchedFiles".into(),
            register_options: serde_json::to_value(options).ok(),
        };
        // Without watching, files change only through the editor; the server works on.
        let _ = self.client.register_capability(vec![registration]).await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let path = path_of(&doc.uri);
        self.marking_stale(|state| {
            state.mark_stale(path.clone(), doc.uri.clone());
            let State { db, docs, .. } = &mut *state;
            if let Some(known) = docs.get_mut(&path) {
                known.version = Some(doc.version);
                known.uri = doc.uri.clone();
                if known.file.text(&*db) != &doc.text {
                    known.file.edit(db, doc.text);
                }
            } else {
                let workspace = state.workspace_for(&path);
                let file = File::new(&state.db, workspace, path.clone(), doc.text);
                state.docs.insert(
                    path.clone(),
                    Doc {
                        file,
                        uri: doc.uri,
                        version: Some(doc.version),
                    },
                );
            }
        });
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let path = path_of(&uri);
        self.marking_stale(|state| {
            let State { db, docs, .. } = &mut *state;
            let Some(doc) = docs.get_mut(&path) else {
                return;
            };
            doc.version = Some(params.text_document.version);
            // Each edit cancels the snapshots in flight and waits for them to let go.
            for change in params.content_changes {
                match convert::change_range(doc.file.text(&*db), &change) {
                    Some(range) => doc.file.apply_edit(db, range, &change.text),
                    None => doc.file.edit(db, change.text),
                }
            }
            state.mark_stale(path, uri);
        });
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let path = path_of(&uri);
        // A workspace file goes back to what is on disk and stays analyzed; another is dropped
        // and its diagnostics cleared.
        let on_disk = self.marking_stale(|state| {
            if let Some(doc) = state.docs.get_mut(&path) {
                doc.version = None;
            }
            let keep = state.in_roots(&path) && path.is_file();
            if !keep {
                state.docs.remove(&path);
                state.mark_stale(path.clone(), uri.clone());
            }
            keep
        });
        if on_disk {
            self.disk_changed(&path, &uri);
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let mut settings = false;
        let mut data = false;
        for change in params.changes {
            let path = path_of(&change.uri);
            if path.file_name().is_some_and(|n| n == "wsp.toml") {
                settings = true;
            } else if path.extension().is_some_and(|e| e == "npy") {
                // A data file `load_npy` reads (WSP211): every file is checked again.
                data = true;
            } else {
                self.disk_changed(&path, &change.uri);
            }
        }
        if settings {
            self.reload_settings().await;
        }
        if settings || data {
            self.marking_stale(State::mark_all_stale);
        }
    }

    /// Settings under `wsp` (VS Code's `synchronize.configurationSection`), or at the top.
    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let settings = params.settings.get("wsp").unwrap_or(&params.settings);
        if self.set_editor_targets(settings).await {
            self.reload_settings().await;
            self.marking_stale(State::mark_all_stale);
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        for gone in params.event.removed {
            let root = path_of(&gone.uri);
            self.marking_stale(|state| {
                state.roots.retain(|r| r.path != root);
                let stale: Vec<PathBuf> = state
                    .docs
                    .iter()
                    .filter(|(p, d)| {
                        d.version.is_none() && p.starts_with(&root) && !state.in_roots(p)
                    })
                    .map(|(p, _)| p.clone())
                    .collect();
                for path in stale {
                    if let Some(doc) = state.docs.remove(&path) {
                        state.mark_stale(path, doc.uri);
                    }
                }
            });
        }
        for added in params.event.added {
            self.add_root(path_of(&added.uri)).await;
        }
        self.marking_stale(State::mark_all_stale);
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let hover = self
            .on_doc(&at.text_document.uri, move |db, file, _| {
                features::hover(db, file, at.position)
            })
            .await?;
        Ok(hover.flatten())
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        let found = self
            .on_doc(&at.text_document.uri, move |db, file, uri| {
                features::definition(db, file, uri, at.position)
            })
            .await?;
        Ok(found.flatten().map(GotoDefinitionResponse::Scalar))
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        let declaration = params.context.include_declaration;
        let found = self
            .on_doc(&at.text_document.uri, move |db, file, uri| {
                features::references(db, file, uri, at.position, declaration)
            })
            .await?;
        Ok(found.filter(|f| !f.is_empty()))
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let found = self
            .on_doc(&params.text_document.uri, move |db, file, _| {
                features::prepare_rename(db, file, params.position)
            })
            .await?;
        Ok(found.flatten())
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let new_name = params.new_name;
        let edit = self
            .on_doc(&at.text_document.uri, move |db, file, uri| {
                features::rename(db, file, uri, at.position, &new_name)
            })
            .await?;
        match edit {
            None => Ok(None),
            Some(Ok(edit)) => Ok(Some(edit)),
            Some(Err(why)) => Err(Error::invalid_params(why)),
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let found = self
            .on_doc(&params.text_document.uri, |db, file, _| {
                features::document_symbols(db, file)
            })
            .await?;
        Ok(found.map(DocumentSymbolResponse::Nested))
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let (db, files) = {
            let state = self.state();
            let files: Vec<(File, Uri)> = state
                .docs
                .values()
                .map(|d| (d.file, d.uri.clone()))
                .collect();
            (state.db.clone(), files)
        };
        let query = params.query;
        let found = self
            .query(db, move |db| {
                features::workspace_symbols(db, &files, &query)
            })
            .await?;
        Ok(Some(WorkspaceSymbolResponse::Nested(found)))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        let found = self
            .on_doc(&at.text_document.uri, move |db, file, _| {
                features::completion(db, file, at.position)
            })
            .await?;
        Ok(found.map(CompletionResponse::Array))
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let at = params.text_document_position_params;
        let found = self
            .on_doc(&at.text_document.uri, move |db, file, _| {
                features::signature_help(db, file, at.position)
            })
            .await?;
        Ok(found.flatten())
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let range = params.range;
        self.on_doc(&params.text_document.uri, move |db, file, _| {
            features::inlay_hints(db, file, range)
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let found = self
            .on_doc(&params.text_document.uri, |db, file, _| {
                features::semantic_tokens(db, file)
            })
            .await?;
        Ok(found.map(SemanticTokensResult::Tokens))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.on_doc(&params.text_document.uri, |db, file, _| {
            features::folding_ranges(db, file)
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let range = params.range;
        let only = params.context.only;
        let selection = params
            .text_document
            .uri
            .to_file_path()
            .map_or_else(Selection::default, |p| self.state().selection_for(&p));
        self.on_doc(&params.text_document.uri, move |db, file, uri| {
            features::code_actions(db, file, uri, range, only.as_deref(), &selection)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic inside a query is answered as an internal error, and the next query on the same
    /// server is answered as usual.
    #[tokio::test]
    async fn a_panicking_query_is_reported_and_the_server_serves_on() {
        let (service, _socket) = LspService::new(Backend::new);
        let backend = service.inner();
        let uri = Uri::from_file_path("/work/p.wsp").unwrap();
        backend
            .did_open(DidOpenTextDocumentParams {
                text_document: TextDocumentItem::new(
                    uri.clone(),
                    "wsp".into(),
                    1,
                    "X = 1\n".into(),
                ),
            })
            .await;
        let snapshot = backend.snapshot(&uri).unwrap();
        let failed = backend
            .query(snapshot.db, |_| -> u32 { panic!("boom") })
            .await
            .unwrap_err();
        assert_eq!(failed.code, ErrorCode::InternalError);
        assert!(failed.message.contains("boom"), "{failed:?}");
        let Snapshot { db, file, .. } = backend.snapshot(&uri).unwrap();
        let text = backend
            .query(db, move |db| file.text(db).clone())
            .await
            .unwrap();
        assert_eq!(text, "X = 1\n");
    }
}
