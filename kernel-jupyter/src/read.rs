//! Reading a request from a socket. A message whose signature does not check is refused, as
//! jupyter-zmq-client refuses it. A signed one whose content jupyter-protocol cannot parse
//! (a `history_request` search without `unique` or `n`, which jupyter_client sends when they
//! are not given) is read here rather than dropped: a request with the spec's optional fields
//! left out gets their defaults (IPython's), and any other is answered with an error reply,
//! so that a front end never waits for an answer that will not come.

use jupyter_protocol::{Header, JupyterMessage, JupyterMessageContent, UnknownMessage};
use jupyter_zmq_client::{Connection, RawMessage, RuntimeError};
use serde_json::{Value, json};
use zeromq::SocketRecv;

/// A request read from a socket.
pub(crate) enum Read {
    Request(JupyterMessage),
    /// Signed, but its content is not one of its type: answered with an error.
    Unreadable {
        request: JupyterMessage,
        reason: String,
    },
}

/// The next message on `conn`; `Err` for one that is not signed with the key, or that has no
/// header to answer to.
pub(crate) async fn read<S: SocketRecv>(conn: &mut Connection<S>) -> Result<Read, RuntimeError> {
    let raw = RawMessage::from_multipart(conn.socket.recv().await?, &conn.mac)?;
    if raw.jparts.len() < 4 {
        return Err(RuntimeError::InsufficientMessageParts(raw.jparts.len()));
    }
    let header: Header = serde_json::from_slice(&raw.jparts[0])?;
    let metadata = serde_json::from_slice(&raw.jparts[2]).unwrap_or(json!({}));
    let message = |content| JupyterMessage {
        zmq_identities: raw.zmq_identities.clone(),
        header: header.clone(),
        // Per the spec an empty parent header is `{}`, which is no header.
        parent_header: serde_json::from_slice(&raw.jparts[1]).ok(),
        metadata,
        content,
        buffers: raw.jparts[4..].to_vec(),
        channel: None,
    };
    let content: Value = match serde_json::from_slice(&raw.jparts[3]) {
        Ok(v) => v,
        Err(e) => {
            let request = message(unknown(&header, Value::Null));
            let reason = format!("the content of `{}` is not JSON: {e}", header.msg_type);
            return Ok(Read::Unreadable { request, reason });
        }
    };
    let filled = with_defaults(&header.msg_type, content.clone());
    Ok(
        match JupyterMessageContent::from_type_and_content(&header.msg_type, filled) {
            Ok(c) => Read::Request(message(c)),
            Err(e) => Read::Unreadable {
                request: message(unknown(&header, content)),
                reason: format!("`{}` cannot be read: {e}", header.msg_type),
            },
        },
    )
}

fn unknown(header: &Header, content: Value) -> JupyterMessageContent {
    JupyterMessageContent::UnknownMessage(UnknownMessage {
        msg_type: header.msg_type.clone(),
        content,
    })
}

/// A request's content with the fields the spec lets a client leave out given IPython's
/// defaults, where jupyter-protocol requires them.
fn with_defaults(msg_type: &str, mut content: Value) -> Value {
    let Some(fields) = content.as_object_mut() else {
        return content;
    };
    let kind = fields
        .get("hist_access_type")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut default = |name: &str, value: Value| {
        if fields.get(name).is_none_or(Value::is_null) {
            fields.insert(name.to_string(), value);
        }
    };
    if msg_type == "history_request" {
        default("output", json!(false));
        default("raw", json!(true));
        match kind.as_deref() {
            Some("search") => {
                default("unique", json!(false));
                // 0: every match.
                default("n", json!(0));
            }
            Some("range") => {
                default("start", json!(0));
                default("stop", json!(0));
            }
            _ => {}
        }
    }
    content
}

/// The error reply to a request that could not be read: its type's reply (`x_request` →
/// `x_reply`) with `status: error` and the reason, as every reply may carry.
pub(crate) fn error_reply(request: &JupyterMessage, reason: &str) -> JupyterMessage {
    let msg_type = match request.header.msg_type.strip_suffix("_request") {
        Some(kind) => format!("{kind}_reply"),
        None => "error".to_string(),
    };
    UnknownMessage {
        msg_type,
        content: json!({
            "status": "error",
            "ename": "BadRequest",
            "evalue": reason,
            "traceback": [],
        }),
    }
    .as_child_of(request)
}

/// Why a message was dropped, for the kernel's log: a signature that does not check says so
/// (the crate's own text is the HMAC library's `Unspecified`).
pub(crate) fn why_dropped(e: &RuntimeError) -> String {
    match e {
        RuntimeError::VerifyError(_) => {
            "its signature does not check (not signed with this kernel's key)".to_string()
        }
        e => e.to_string(),
    }
}
