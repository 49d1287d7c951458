//! The Jupyter messaging protocol (5.3) over ZeroMQ: heartbeat, shell, control, stdin and
//! IOPub (XPUB, with `iopub_welcome`). Every message's HMAC-SHA256 signature is checked by the
//! connection as it is read: a message with a bad signature is logged and dropped, never
//! handled.
//!
//! Shell requests are handled one at a time; a cell runs on a blocking thread so that the
//! control channel (interrupt, shutdown) is served while it runs.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jupyter_protocol::{
    CodeMirrorMode, CommInfoReply, CompleteReply, ConnectionInfo, DisplayData, ErrorOutput,
    ExecuteInput, ExecuteReply, ExecuteRequest, ExecuteResult, ExecutionCount, HistoryReply,
    InspectReply, InterruptReply, IoPubWelcome, JupyterMessage, JupyterMessageContent,
    KernelInfoReply, LanguageInfo, Media, ReplyError, ReplyStatus, ShutdownReply, ShutdownRequest,
    Status, StreamContent, Transient,
};
use jupyter_zmq_client::{
    SubscriptionEvent, create_kernel_control_connection, create_kernel_heartbeat_connection,
    create_kernel_iopub_xpub_connection, create_kernel_shell_connection,
    create_kernel_stdin_connection,
};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use tokio::sync::mpsc;

use crate::history::History;
use crate::ide;
use crate::notebook::{Notebook, Output};
use crate::read::{self, Read};
use crate::render::MimeBundle;

/// How long reading waits for one more request already queued behind a failed cell.
const QUEUED: std::time::Duration = std::time::Duration::from_millis(2);

/// Serves the kernel described by a connection file until a shutdown request.
pub fn serve(connection_file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(connection_file)
        .map_err(|e| format!("cannot read {}: {e}", connection_file.display()))?;
    let info: ConnectionInfo = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a connection file: {e}", connection_file.display()))?;
    if !info.key.is_empty() && info.signature_scheme != "hmac-sha256" {
        return Err(format!(
            "{}: signature scheme `{}` is not supported (hmac-sha256 is)",
            connection_file.display(),
            info.signature_scheme
        ));
    }
    let base_dir = std::env::current_dir().map_err(|e| format!("no working folder: {e}"))?;
    let notebook =
        Notebook::new(base_dir).map_err(|e| format!("cannot make the kernel's folder: {e}"))?;
    // 0, or the signal that stops the running cell (its run process gets the same).
    let stop = Arc::new(AtomicUsize::new(0));
    // SIGINT interrupts the running cell, as in ipykernel; it never ends the kernel (Jupyter
    // sends it to the process group, and before a shutdown).
    signal_hook::flag::register_usize(SIGINT, stop.clone(), SIGINT as usize)
        .map_err(|e| format!("cannot catch SIGINT: {e}"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the kernel's runtime: {e}"))?;
    let result = rt.block_on(run(info, notebook, stop));
    rt.shutdown_background();
    result
}

async fn run(
    info: ConnectionInfo,
    notebook: Notebook,
    stop: Arc<AtomicUsize>,
) -> Result<(), String> {
    let session = uuid::Uuid::new_v4().to_string();
    let bind = |what: &str, e: jupyter_zmq_client::RuntimeError| {
        format!("cannot bind the {what} socket on {}: {e}", info.ip)
    };
    let mut heartbeat = create_kernel_heartbeat_connection(&info)
        .await
        .map_err(|e| bind("heartbeat", e))?;
    let (mut shell_out, mut shell_in) = create_kernel_shell_connection(&info, &session)
        .await
        .map_err(|e| bind("shell", e))?
        .split();
    let mut control = create_kernel_control_connection(&info, &session)
        .await
        .map_err(|e| bind("control", e))?;
    let _stdin = create_kernel_stdin_connection(&info, &session)
        .await
        .map_err(|e| bind("stdin", e))?;
    let mut iopub = create_kernel_iopub_xpub_connection(&info, &session)
        .await
        .map_err(|e| bind("iopub", e))?;

    tokio::spawn(async move { while heartbeat.single_heartbeat().await.is_ok() {} });

    // IOPub has one owner: it sends what the other tasks queue and welcomes subscribers.
    let (iopub_tx, mut iopub_rx) = mpsc::unbounded_channel::<JupyterMessage>();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                msg = iopub_rx.recv() => match msg {
                    Some(m) => {
                        if let Err(e) = iopub.send(m).await {
                            eprintln!("wsp kernel: iopub: {e}");
                        }
                    }
                    None => break,
                },
                sub = iopub.recv_subscription() => {
                    if let Ok(SubscriptionEvent::Subscribe(topic)) = sub {
                        let _ = iopub.send(IoPubWelcome::new(topic).into()).await;
                    }
                }
            }
        }
    });
    let _ = iopub_tx.send(Status::starting().into());

    let (shutdown_tx, mut shutdown_rx) = mpsc::unbounded_channel::<()>();
    {
        let stop = stop.clone();
        let shutdown_tx = shutdown_tx.clone();
        let iopub_tx = iopub_tx.clone();
        tokio::spawn(async move {
            loop {
                let msg = match read::read(&mut control).await {
                    Ok(Read::Request(m)) => m,
                    Ok(Read::Unreadable { request, reason }) => {
                        let _ = iopub_tx.send(Status::busy().as_child_of(&request));
                        let _ = control.send(read::error_reply(&request, &reason)).await;
                        let _ = iopub_tx.send(Status::idle().as_child_of(&request));
                        continue;
                    }
                    Err(e) => {
                        // A bad signature, or a message that is not one: never handled.
                        eprintln!(
                            "wsp kernel: dropped a control message: {}",
                            read::why_dropped(&e)
                        );
                        continue;
                    }
                };
                let _ = iopub_tx.send(Status::busy().as_child_of(&msg));
                match &msg.content {
                    JupyterMessageContent::InterruptRequest(_) => {
                        stop.store(SIGINT as usize, Ordering::SeqCst);
                        let _ = control.send(InterruptReply::new().as_child_of(&msg)).await;
                    }
                    JupyterMessageContent::ShutdownRequest(req) => {
                        stop.store(SIGINT as usize, Ordering::SeqCst);
                        let _ = control.send(shutdown_reply(req, &msg)).await;
                        let _ = iopub_tx.send(Status::idle().as_child_of(&msg));
                        let _ = shutdown_tx.send(());
                        return;
                    }
                    JupyterMessageContent::KernelInfoRequest(_) => {
                        let _ = control.send(kernel_info().as_child_of(&msg)).await;
                    }
                    // Every request is answered, on this channel too.
                    other if other.message_type().ends_with("_request") => {
                        let reason = format!(
                            "the wsp kernel does not serve `{}` on the control channel",
                            other.message_type()
                        );
                        let _ = control.send(read::error_reply(&msg, &reason)).await;
                    }
                    _ => {}
                }
                let _ = iopub_tx.send(Status::idle().as_child_of(&msg));
            }
        });
    }

    // SIGTERM and SIGHUP (a job scheduler, a closed terminal) end the kernel as a shutdown
    // request does: the running cell stops, the run process is ended and reaped, exit 0.
    for (kind, signal) in [
        (tokio::signal::unix::SignalKind::terminate(), SIGTERM),
        (tokio::signal::unix::SignalKind::hangup(), SIGHUP),
    ] {
        let mut listener = tokio::signal::unix::signal(kind)
            .map_err(|e| format!("cannot catch signal {signal}: {e}"))?;
        let stop = stop.clone();
        let shutdown_tx = shutdown_tx.clone();
        tokio::spawn(async move {
            if listener.recv().await.is_some() {
                stop.store(signal as usize, Ordering::SeqCst);
                let _ = shutdown_tx.send(());
            }
        });
    }

    // As ipykernel's parent poller: a kernel whose parent (the client or server that started
    // it) has died would otherwise live on, holding the parent's pipes and its run process.
    let parent = rustix::process::getppid();
    {
        let stop = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                if rustix::process::getppid() != parent {
                    eprintln!("wsp kernel: the process that started this kernel is gone; exiting");
                    // A running cell stops too, so that the shutdown is not left waiting on it.
                    stop.store(SIGINT as usize, Ordering::SeqCst);
                    let _ = shutdown_tx.send(());
                    return;
                }
            }
        });
    }

    let notebook = Arc::new(Mutex::new(notebook));
    let history = Arc::new(Mutex::new(History::default()));
    // Requests read while a failed cell's reply was held back (see `queued_behind`).
    let mut pending: std::collections::VecDeque<Read> = Default::default();
    loop {
        let msg = match pending.pop_front() {
            Some(m) => Ok(m),
            None => tokio::select! {
                msg = read::read(&mut shell_in) => msg,
                _ = shutdown_rx.recv() => break,
            },
        };
        let msg = match msg {
            Ok(Read::Request(m)) => m,
            Ok(Read::Unreadable { request, reason }) => {
                let _ = iopub_tx.send(Status::busy().as_child_of(&request));
                if let Err(e) = shell_out.send(read::error_reply(&request, &reason)).await {
                    eprintln!("wsp kernel: shell: {e}");
                }
                let _ = iopub_tx.send(Status::idle().as_child_of(&request));
                continue;
            }
            Err(e) => {
                eprintln!(
                    "wsp kernel: dropped a shell message: {}",
                    read::why_dropped(&e)
                );
                continue;
            }
        };
        let _ = iopub_tx.send(Status::busy().as_child_of(&msg));
        let reply: Option<JupyterMessage> = match &msg.content {
            JupyterMessageContent::KernelInfoRequest(_) => Some(kernel_info().as_child_of(&msg)),
            JupyterMessageContent::ExecuteRequest(req) => {
                let notebook = notebook.clone();
                let stop = stop.clone();
                let cell_iopub = iopub_tx.clone();
                let history = history.clone();
                let parent = msg.clone();
                let request = req.clone();
                let stop_on_error = req.stop_on_error && !req.silent;
                let reply = tokio::task::spawn_blocking(move || {
                    execute(&notebook, &request, &parent, &stop, &cell_iopub, &history)
                })
                .await
                .unwrap_or_else(|e| {
                    ExecuteReply {
                        status: ReplyStatus::Error,
                        execution_count: ExecutionCount::new(0),
                        payload: Vec::new(),
                        user_expressions: None,
                        error: Some(Box::new(ReplyError {
                            ename: "InternalError".into(),
                            evalue: e.to_string(),
                            traceback: Vec::new(),
                        })),
                    }
                    .as_child_of(&msg)
                });
                let failed = matches!(
                    &reply.content,
                    JupyterMessageContent::ExecuteReply(r) if r.status == ReplyStatus::Error
                );
                if stop_on_error && failed {
                    let queued = queued_behind(&mut shell_in).await;
                    let _ = shell_out.send(reply).await;
                    let _ = iopub_tx.send(Status::idle().as_child_of(&msg));
                    // As ipykernel does: the cells queued behind a failed one ("Run All") are
                    // answered "aborted"; other requests are handled as usual.
                    for read in queued {
                        let m = match read {
                            Read::Request(m)
                                if matches!(
                                    m.content,
                                    JupyterMessageContent::ExecuteRequest(_)
                                ) =>
                            {
                                m
                            }
                            other => {
                                pending.push_back(other);
                                continue;
                            }
                        };
                        let _ = iopub_tx.send(Status::busy().as_child_of(&m));
                        let aborted = ExecuteReply {
                            status: ReplyStatus::Aborted,
                            execution_count: ExecutionCount::new(0),
                            payload: Vec::new(),
                            user_expressions: None,
                            error: None,
                        };
                        let _ = shell_out.send(aborted.as_child_of(&m)).await;
                        let _ = iopub_tx.send(Status::idle().as_child_of(&m));
                    }
                    continue;
                }
                Some(reply)
            }
            JupyterMessageContent::CompleteRequest(req) => {
                let mut nb = notebook.lock().unwrap_or_else(|p| p.into_inner());
                let cell_id = msg.metadata.get("cellId").and_then(|v| v.as_str());
                let (matches, start, end) =
                    ide::complete(&mut nb, &req.code, req.cursor_pos, cell_id);
                drop(nb);
                Some(
                    CompleteReply {
                        matches,
                        cursor_start: start,
                        cursor_end: end,
                        metadata: Default::default(),
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .as_child_of(&msg),
                )
            }
            JupyterMessageContent::InspectRequest(req) => {
                let mut nb = notebook.lock().unwrap_or_else(|p| p.into_inner());
                let cell_id = msg.metadata.get("cellId").and_then(|v| v.as_str());
                let found = ide::inspect(&mut nb, &req.code, req.cursor_pos, cell_id);
                drop(nb);
                Some(
                    InspectReply {
                        found: found.is_some(),
                        data: found.map_or_else(Media::default, |markdown| {
                            // A console shows text/plain: the markdown without its code fences.
                            let plain: Vec<&str> =
                                markdown.lines().filter(|l| !l.starts_with("```")).collect();
                            media(&MimeBundle(vec![
                                ("text/plain", plain.join("\n")),
                                ("text/markdown", markdown),
                            ]))
                        }),
                        metadata: Default::default(),
                        status: ReplyStatus::Ok,
                        error: None,
                    }
                    .as_child_of(&msg),
                )
            }
            JupyterMessageContent::IsCompleteRequest(req) => {
                Some(ide::is_complete(&req.code).as_child_of(&msg))
            }
            JupyterMessageContent::HistoryRequest(req) => {
                let entries = history
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .answer(req);
                Some(HistoryReply::new(entries).as_child_of(&msg))
            }
            JupyterMessageContent::CommInfoRequest(_) => Some(
                CommInfoReply {
                    status: ReplyStatus::Ok,
                    comms: Default::default(),
                    error: None,
                }
                .as_child_of(&msg),
            ),
            JupyterMessageContent::ShutdownRequest(req) => {
                let _ = shell_out.send(shutdown_reply(req, &msg)).await;
                let _ = iopub_tx.send(Status::idle().as_child_of(&msg));
                break;
            }
            // A request of a type this kernel does not serve is answered, never left waiting.
            other if other.message_type().ends_with("_request") => Some(read::error_reply(
                &msg,
                &format!("the wsp kernel does not serve `{}`", other.message_type()),
            )),
            _ => None,
        };
        if let Some(reply) = reply
            && let Err(e) = shell_out.send(reply).await
        {
            eprintln!("wsp kernel: shell: {e}");
        }
        let _ = iopub_tx.send(Status::idle().as_child_of(&msg));
    }
    // Let IOPub send what is queued (the last idle status) before the process ends.
    drop(iopub_tx);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    Ok(())
}

/// The requests that reached the shell socket before a failed cell's reply is sent: none of
/// them can be the client's answer to it.
async fn queued_behind(shell_in: &mut jupyter_zmq_client::RouterRecvConnection) -> Vec<Read> {
    let mut queued = Vec::new();
    while let Ok(read) = tokio::time::timeout(QUEUED, read::read(shell_in)).await {
        match read {
            Ok(m) => queued.push(m),
            Err(e) => eprintln!(
                "wsp kernel: dropped a shell message: {}",
                read::why_dropped(&e)
            ),
        }
    }
    queued
}

/// Runs the cell of an execute_request, sending its outputs on IOPub as they come; returns
/// the execute_reply.
fn execute(
    notebook: &Mutex<Notebook>,
    req: &ExecuteRequest,
    parent: &JupyterMessage,
    stop: &AtomicUsize,
    iopub: &mpsc::UnboundedSender<JupyterMessage>,
    history: &Mutex<History>,
) -> JupyterMessage {
    let (code, silent) = (req.code.as_str(), req.silent);
    let cell_id = parent.metadata.get("cellId").and_then(|v| v.as_str());
    let mut nb = notebook.lock().unwrap_or_else(|p| p.into_inner());
    // An interrupt while idle is for no cell.
    stop.store(0, Ordering::SeqCst);
    let count = ExecutionCount::new(nb.execution_count() as usize + 1);
    if !silent {
        let _ = iopub.send(
            ExecuteInput {
                code: code.to_string(),
                execution_count: count,
            }
            .as_child_of(parent),
        );
    }
    if !silent {
        nb.on_progress = Some(live_progress(iopub.clone(), parent.clone(), count.0));
    }
    let outcome = nb.execute(code, cell_id, stop);
    nb.on_progress = None;
    let count = ExecutionCount::new(nb.execution_count() as usize);
    drop(nb);
    let send = |content: JupyterMessageContent| {
        if !silent {
            let _ = iopub.send(JupyterMessage::new(content, Some(parent)));
        }
    };
    for output in outcome.outputs {
        match output {
            Output::Stdout(text) => send(StreamContent::stdout(&text).into()),
            Output::Stderr(text) => send(StreamContent::stderr(&text).into()),
            Output::Display(bundle) => send(
                DisplayData {
                    data: media(&bundle),
                    metadata: Default::default(),
                    transient: Some(Transient::default()),
                }
                .into(),
            ),
        }
    }
    if req.store_history && !silent {
        let shown = outcome
            .result
            .as_ref()
            .and_then(|b| b.0.iter().find(|(mime, _)| *mime == "text/plain"))
            .map_or("", |(_, text)| text.as_str());
        history
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(count.0, code, shown);
    }
    if let Some(bundle) = outcome.result {
        send(
            ExecuteResult {
                execution_count: count,
                data: media(&bundle),
                metadata: Default::default(),
                // `null` is refused by clients that validate messages (jupyter_kernel_test).
                transient: Some(Transient::default()),
            }
            .into(),
        );
    }
    let (status, error) = match outcome.error {
        Some(e) => {
            send(
                ErrorOutput {
                    ename: e.ename.clone(),
                    evalue: e.evalue.clone(),
                    traceback: e.traceback.clone(),
                }
                .into(),
            );
            (
                ReplyStatus::Error,
                Some(Box::new(ReplyError {
                    ename: e.ename,
                    evalue: e.evalue,
                    traceback: e.traceback,
                })),
            )
        }
        None => (ReplyStatus::Ok, None),
    };
    ExecuteReply {
        status,
        execution_count: count,
        payload: Vec::new(),
        user_expressions: Some(Default::default()),
        error,
    }
    .as_child_of(parent)
}

/// A cell's explorations as they score configurations: one display, a table of each
/// exploration's count so far, sent when the first report comes and updated in place after.
fn live_progress(
    iopub: mpsc::UnboundedSender<JupyterMessage>,
    parent: JupyterMessage,
    count: usize,
) -> Box<dyn FnMut(wsp_runtime::process::Progress) + Send> {
    let id = format!("wsp-explore-{}-{count}", std::process::id());
    let mut rows: Vec<(String, u64, u64)> = Vec::new();
    Box::new(move |p| {
        let first = rows.is_empty();
        match rows.iter_mut().find(|r| r.0 == p.label) {
            Some(r) => (r.1, r.2) = (p.done, p.total),
            None => rows.push((p.label, p.done, p.total)),
        }
        let bundle = crate::render::exploring(&rows);
        let content: JupyterMessageContent = if first {
            DisplayData {
                data: media(&bundle),
                metadata: Default::default(),
                transient: Some(Transient {
                    display_id: Some(id.clone()),
                }),
            }
            .into()
        } else {
            jupyter_protocol::UpdateDisplayData::new(media(&bundle), &id).into()
        };
        let _ = iopub.send(JupyterMessage::new(content, Some(&parent)));
    })
}

/// The reply to a shutdown request (on control, or on shell from older clients), after which
/// the kernel exits: a restart is the client's, which starts a new process.
fn shutdown_reply(req: &ShutdownRequest, msg: &JupyterMessage) -> JupyterMessage {
    ShutdownReply {
        restart: req.restart,
        status: ReplyStatus::Ok,
        error: None,
    }
    .as_child_of(msg)
}

/// A MIME bundle as the protocol's `data`.
fn media(bundle: &MimeBundle) -> Media {
    let map: serde_json::Map<String, serde_json::Value> = bundle
        .0
        .iter()
        .map(|(mime, value)| (mime.to_string(), serde_json::Value::String(value.clone())))
        .collect();
    serde_json::from_value(serde_json::Value::Object(map)).unwrap_or_default()
}

fn kernel_info() -> KernelInfoReply {
    KernelInfoReply {
        status: ReplyStatus::Ok,
        protocol_version: "5.3".into(),
        implementation: "wsp".into(),
        implementation_version: env!("CARGO_PKG_VERSION").into(),
        language_info: LanguageInfo {
            name: "wsp".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            mimetype: Some("text/x-wsp".into()),
            file_extension: Some(".wsp".into()),
            // WSP is Python's syntax: Python's highlighting in notebooks and exports.
            pygments_lexer: Some("python".into()),
            codemirror_mode: Some(CodeMirrorMode::Simple("python".into())),
            nbconvert_exporter: None,
        },
        banner: format!(
            "WSP {}: PTO-WSP workloads checked as you type and run on the CPU simulator",
            env!("CARGO_PKG_VERSION")
        ),
        help_links: Vec::new(),
        debugger: false,
        error: None,
    }
}
