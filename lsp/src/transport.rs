//! The framing of LSP messages on the client's streams, owned here rather than left to
//! tower-lsp-server, whose reader ends the session at the first frame it cannot decode.
//!
//! Frames are read from the client with [`FrameDecoder`]; a malformed one (a header block
//! without a usable `Content-Length`, a body over [`MAX_BODY`], a body that is not a JSON-RPC
//! message) is answered here with a JSON-RPC error, and only valid messages are passed on to
//! the server, re-framed, through an in-memory pipe. The server's output comes back through a
//! second pipe and is merged, frame by frame, with those errors into the client's output.

use std::io;

use bytes::{Buf, Bytes, BytesMut};
use futures_util::StreamExt;
use memchr::memmem;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{Decoder, FramedRead};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};

/// The largest body accepted, checked before anything is allocated for it: well above the
/// largest document an editor opens.
pub const MAX_BODY: usize = 64 << 20;
/// The longest header block accepted (clients send one or two short headers).
const MAX_HEADER: usize = 8 << 10;
/// Where a header block starts, to resynchronise on after a malformed one.
const CONTENT_LENGTH: &[u8] = b"Content-Length";

/// One frame read from the client.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A body, exactly as long as its `Content-Length` said.
    Body(Bytes),
    /// Bytes that are no frame, and why; the decoder has skipped to the next header block.
    Malformed(String),
}

/// Splits a byte stream into LSP frames: header lines (`Content-Length` required, other
/// headers ignored) ended by an empty line, then the body. After a malformed header block it
/// skips to the next `Content-Length`, so the next well-formed frame is read as usual.
#[derive(Debug)]
pub struct FrameDecoder {
    /// The largest body accepted.
    max_body: usize,
    /// The length of the body being read, once its header block is read.
    body: Option<usize>,
    /// Skipping to the next header block.
    resync: bool,
}

impl FrameDecoder {
    /// A decoder of the client's frames, bodies up to [`MAX_BODY`].
    pub fn new() -> FrameDecoder {
        FrameDecoder::with_limit(MAX_BODY)
    }

    fn with_limit(max_body: usize) -> FrameDecoder {
        FrameDecoder {
            max_body,
            body: None,
            resync: false,
        }
    }

    /// Reports a bad header block and skips it: to the `Content-Length` it ends with when that
    /// is glued to garbage (the rest of a body shorter than its header said), else past the
    /// block and then on to the next `Content-Length` (over the body the block had, if any).
    /// `end` is where the block ends, when that was found.
    fn malformed(&mut self, src: &mut BytesMut, end: Option<usize>, why: String) -> Frame {
        let glued = end.and_then(|end| {
            let at = memmem::rfind(&src[..end], CONTENT_LENGTH)?;
            (at > 0 && src[at - 1] != b'\n').then_some(at)
        });
        match (glued, end) {
            (Some(at), _) => src.advance(at),
            (None, Some(end)) => {
                src.advance(end + 4);
                self.resync = true;
            }
            (None, None) => {
                src.advance(1.min(src.len()));
                self.resync = true;
            }
        }
        Frame::Malformed(why)
    }
}

impl Decoder for FrameDecoder {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Frame>> {
        loop {
            if let Some(len) = self.body {
                if src.len() < len {
                    // `len` is at most `max_body`, checked with the header.
                    src.reserve(len - src.len());
                    return Ok(None);
                }
                self.body = None;
                return Ok(Some(Frame::Body(src.split_to(len).freeze())));
            }
            if self.resync {
                match memmem::find(src, CONTENT_LENGTH) {
                    Some(at) => {
                        src.advance(at);
                        self.resync = false;
                    }
                    None => {
                        // Keep what could be the start of a `Content-Length` cut by a read.
                        let keep = src.len().min(CONTENT_LENGTH.len() - 1);
                        src.advance(src.len() - keep);
                        return Ok(None);
                    }
                }
            }
            // Line breaks between frames are tolerated.
            let blank = src
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            src.advance(blank);
            let Some(end) = memmem::find(src, b"\r\n\r\n") else {
                if src.len() > MAX_HEADER {
                    let why = format!("a header block longer than {MAX_HEADER} bytes");
                    return Ok(Some(self.malformed(src, None, why)));
                }
                return Ok(None);
            };
            match content_length(&src[..end]) {
                Ok(len) if len > self.max_body => {
                    let limit = self.max_body;
                    let why = format!("Content-Length {len} is over the limit of {limit} bytes");
                    return Ok(Some(self.malformed(src, Some(end), why)));
                }
                Ok(len) => {
                    src.advance(end + 4);
                    self.body = Some(len);
                }
                Err(why) => return Ok(Some(self.malformed(src, Some(end), why))),
            }
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Frame>> {
        if let Some(frame) = self.decode(src)? {
            return Ok(Some(frame));
        }
        let cut = !src.is_empty() && !self.resync;
        src.clear();
        self.body = None;
        self.resync = false;
        Ok(cut.then(|| Frame::Malformed("the input ended inside a message".into())))
    }
}

/// The body length a header block gives, or why it gives none.
fn content_length(block: &[u8]) -> Result<usize, String> {
    let block = std::str::from_utf8(block).map_err(|_| "a header that is not UTF-8".to_string())?;
    if block.len() > MAX_HEADER {
        return Err(format!("a header block longer than {MAX_HEADER} bytes"));
    }
    let mut length = None;
    for line in block.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("a header line without ':': {line:?}"));
        };
        if !name.eq_ignore_ascii_case("content-length") {
            continue; // Content-Type and any other header: the body is UTF-8 JSON regardless.
        }
        let value = value.trim();
        let parsed = value
            .parse::<usize>()
            .ok()
            .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("Content-Length is not a length: {value:?}"))?;
        if length.is_some_and(|l| l != parsed) {
            return Err("two different Content-Length headers".into());
        }
        length = Some(parsed);
    }
    length.ok_or_else(|| "a header block without Content-Length".into())
}

/// A message as tower-lsp-server reads one: whatever decodes as this is safe to pass on.
#[derive(Deserialize)]
#[serde(untagged)]
enum Message {
    Response(#[allow(dead_code)] Response),
    Request(Request),
}

/// What the client's input said about how the session should end.
#[derive(Debug, Default)]
struct Session {
    shutdown: bool,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The client sent `shutdown` before `exit` or the end of its input: exit status 0.
    ShutDown,
    /// `exit`, or the end of the input, came without a `shutdown`: exit status 1.
    Abandoned,
}

/// Serves one client: frames from `input` are checked here and the valid ones passed to
/// `server`, which reads one pipe and writes the other until `exit` or the end of its input.
pub async fn serve<S>(
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin,
    server: impl FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> S,
) -> Ending
where
    S: std::future::Future<Output = ()>,
{
    let (to_server, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, from_server) = tokio::io::duplex(1 << 16);
    // Bounded: a client sending garbage faster than it reads the answers waits for them.
    let (errors, errors_rx) = mpsc::channel(64);
    let (session, (), ()) = tokio::join!(
        read_input(input, to_server, errors),
        server(server_input, server_output),
        write_output(from_server, errors_rx, output),
    );
    if session.shutdown {
        Ending::ShutDown
    } else {
        Ending::Abandoned
    }
}

/// Reads the client's frames until `exit`, the end of the input, or the server is gone;
/// answers the malformed ones through `errors` and passes the others on.
async fn read_input(
    input: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    errors: mpsc::Sender<Bytes>,
) -> Session {
    let mut session = Session::default();
    let mut frames = FramedRead::new(input, FrameDecoder::new());
    while let Some(frame) = frames.next().await {
        let body = match frame {
            Ok(Frame::Body(body)) => body,
            Ok(Frame::Malformed(why)) => {
                let answer = error_response(Id::Null, ErrorCode::ParseError, &why);
                let _ = errors.send(answer).await;
                continue;
            }
            Err(_) => break, // The input cannot be read: as good as closed.
        };
        let exit = match serde_json::from_slice::<Message>(&body) {
            Ok(Message::Request(request)) => {
                if request.method() == "shutdown" && request.id().is_some() {
                    session.shutdown = true;
                }
                request.method() == "exit"
            }
            Ok(Message::Response(_)) => false,
            Err(e) => {
                let _ = errors.send(invalid(&body, &e)).await;
                continue;
            }
        };
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let passed = async {
            to_server.write_all(header.as_bytes()).await?;
            to_server.write_all(&body).await?;
            to_server.flush().await
        };
        // The server stops reading at `exit`; so does this, as stdin may stay open.
        if passed.await.is_err() || exit {
            break;
        }
    }
    session
}

/// The answer to a body that is not a message: a parse error (-32700) for bad JSON, an invalid
/// request (-32600) for JSON that is no JSON-RPC message, with its `id` when it has a usable one.
fn invalid(body: &[u8], e: &serde_json::Error) -> Bytes {
    if !e.is_data() {
        return error_response(Id::Null, ErrorCode::ParseError, &e.to_string());
    }
    let id = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| serde_json::from_value::<Id>(v.get("id")?.clone()).ok())
        .unwrap_or(Id::Null);
    error_response(
        id,
        ErrorCode::InvalidRequest,
        "not a JSON-RPC request, notification or response",
    )
}

fn error_response(id: Id, code: ErrorCode, why: &str) -> Bytes {
    let error = Error {
        message: format!("{}: {why}", code.description()).into(),
        code,
        data: None,
    };
    let body = serde_json::to_vec(&Response::from_error(id, error)).expect("a response serializes");
    Bytes::from(body)
}

/// Writes the server's frames and the transport's errors to the client, each whole.
async fn write_output(
    from_server: impl AsyncRead + Unpin,
    mut errors: mpsc::Receiver<Bytes>,
    mut output: impl AsyncWrite + Unpin,
) {
    // No limit: the server's answers are as large as they are.
    let mut frames = FramedRead::new(from_server, FrameDecoder::with_limit(usize::MAX));
    let mut server_done = false;
    let mut errors_done = false;
    // After a failed write the client is gone; both sources are still drained so that
    // neither side blocks on a full pipe.
    let mut broken = false;
    while !(server_done && errors_done) {
        // Errors first: an error queued before a later frame was passed on is then written
        // before that frame's answer, so answers keep the order of what they answer.
        let body = tokio::select! {
            biased;
            error = errors.recv(), if !errors_done => match error {
                Some(body) => body,
                None => {
                    errors_done = true;
                    continue;
                }
            },
            frame = frames.next(), if !server_done => match frame {
                Some(Ok(Frame::Body(body))) => body,
                // The server's own encoder wrote it; nothing else reaches this pipe.
                Some(Ok(Frame::Malformed(_))) => continue,
                Some(Err(_)) | None => {
                    server_done = true;
                    continue;
                }
            },
        };
        if broken {
            continue;
        }
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        let written = async {
            output.write_all(&frame).await?;
            output.flush().await
        };
        broken = written.await.is_err();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame `decode` finds in `input` fed in pieces of `chunk` bytes, then at the end.
    fn frames(input: &[u8], chunk: usize) -> Vec<Frame> {
        let mut decoder = FrameDecoder::new();
        let mut buffer = BytesMut::new();
        let mut found = Vec::new();
        for piece in input.chunks(chunk) {
            buffer.extend_from_slice(piece);
            while let Some(frame) = decoder.decode(&mut buffer).unwrap() {
                found.push(frame);
            }
        }
        while let Some(frame) = decoder.decode_eof(&mut buffer).unwrap() {
            found.push(frame);
        }
        found
    }

    fn body(s: &str) -> Frame {
        Frame::Body(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn framed(s: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{s}", s.len())
    }

    fn describe(frames: &[Frame]) -> Vec<String> {
        frames
            .iter()
            .map(|f| match f {
                Frame::Body(b) => format!("body {}", String::from_utf8_lossy(b)),
                Frame::Malformed(why) => format!("malformed: {why}"),
            })
            .collect()
    }

    #[test]
    fn frames_are_read_whatever_the_reads_cut() {
        let input = format!(
            "{}Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n[]\r\n{}",
            framed("{\"a\":1}"),
            framed("é")
        );
        for chunk in [1, 2, 3, 7, input.len()] {
            assert_eq!(
                frames(input.as_bytes(), chunk),
                [body("{\"a\":1}"), body("[]"), body("é")],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_malformed_header_is_reported_and_the_next_frame_read() {
        let next = framed("{}");
        let cases = [
            format!("Content-Length: abc\r\n\r\n{{\"x\":1}}{next}"),
            format!("Content-Length: -3\r\n\r\n{{}}{next}"),
            format!("Content-Type: x\r\n\r\n{{\"no length\":1}}{next}"),
            format!("garbage\r\n\r\n{next}"),
            format!("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{{}}{next}"),
            format!("Content-Length: 99999999999999999999999\r\n\r\n{next}"),
            format!("Content-Length: {}\r\n\r\n{{}}{next}", MAX_BODY + 1),
            format!("{}\r\n\r\n{next}", "x".repeat(MAX_HEADER + 1)),
            format!("{}{next}", "y".repeat(MAX_HEADER + 1)),
        ];
        for input in &cases {
            for chunk in [1, 5, input.len()] {
                let found = frames(input.as_bytes(), chunk);
                let described = describe(&found);
                assert!(
                    matches!(&found[..], [Frame::Malformed(_), Frame::Body(b)] if b == "{}"),
                    "{input:.80?} in pieces of {chunk}: {described:?}"
                );
            }
        }
    }

    #[test]
    fn a_length_too_short_costs_two_errors_and_no_later_frame() {
        // The body is cut short, and its rest is glued to the next header.
        let input = format!("Content-Length: 5\r\n\r\n{{\"abc\":1}}{}", framed("{}"));
        for chunk in [1, 3, input.len()] {
            expect_test::expect![[r#"
                [
                    "body {\"abc",
                    "malformed: a header block without Content-Length",
                    "body {}",
                ]
            "#]]
            .assert_debug_eq(&describe(&frames(input.as_bytes(), chunk)));
        }
    }

    #[test]
    fn the_reasons_name_what_is_wrong() {
        // Each bad block is skipped with what follows it up to the next `Content-Length`.
        let input = format!(
            "no colon\r\n\r\nContent-Length: abc\r\n\r\nContent-Length: {}\r\n\r\nContent-Length: 9\r\n\r\n{{",
            MAX_BODY + 1
        );
        expect_test::expect![[r#"
            [
                "malformed: a header line without ':': \"no colon\"",
                "malformed: Content-Length is not a length: \"abc\"",
                "malformed: Content-Length 67108865 is over the limit of 67108864 bytes",
                "malformed: the input ended inside a message",
            ]
        "#]]
        .assert_debug_eq(&describe(&frames(input.as_bytes(), 4)));
    }

    #[test]
    fn a_too_large_length_allocates_nothing() {
        let mut decoder = FrameDecoder::new();
        let mut buffer = BytesMut::from(&b"Content-Length: 18446744073709551615\r\n\r\n"[..]);
        let frame = decoder.decode(&mut buffer).unwrap();
        assert!(matches!(frame, Some(Frame::Malformed(_))), "{frame:?}");
        assert!(buffer.capacity() < 1 << 10, "{}", buffer.capacity());
    }
}
