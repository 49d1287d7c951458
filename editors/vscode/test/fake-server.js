// A fake `wsp` for the client tests: it records its argv and every LSP message it receives
// (one JSON line each, to $FAKE_WSP_LOG) and answers `initialize` and `shutdown` minimally,
// so the real LanguageClient's start() and stop() resolve against it.
"use strict";
const fs = require("fs");

const log = process.env.FAKE_WSP_LOG;
const write = (entry) => fs.appendFileSync(log, JSON.stringify({ pid: process.pid, ...entry }) + "\n");
write({ event: "start", argv: process.argv.slice(1) });

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8");
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString())[1]);
    if (buffer.length < headerEnd + 4 + length) return;
    const message = JSON.parse(buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8"));
    buffer = buffer.subarray(headerEnd + 4 + length);
    write({ event: "message", method: message.method, params: message.params });
    if (message.method === "initialize") {
      send({ id: message.id, result: { capabilities: { textDocumentSync: 2 }, serverInfo: { name: "fake-wsp" } } });
    } else if (message.method === "shutdown") {
      send({ id: message.id, result: null });
    } else if (message.method === "exit") {
      write({ event: "exit" });
      process.exit(0);
    } else if (message.id !== undefined && message.method) {
      send({ id: message.id, result: null });
    }
  }
});
process.stdin.on("end", () => process.exit(1));
