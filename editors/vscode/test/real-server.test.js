// The extension against the real `wsp lsp` of this repository ($WSP_BIN, else target/debug/wsp):
// the server accepts the command line the client runs and completes initialize and shutdown.
// (A fake server cannot catch a flag the real one rejects, such as the `--stdio` that
// TransportKind.stdio would append.)
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const Module = require("node:module");
const fs = require("node:fs");
const path = require("node:path");
const { createVscode } = require("./vscode-stub");

const wsp = process.env.WSP_BIN || path.join(__dirname, "..", "..", "..", "target", "debug", "wsp");
const noBinary = !fs.existsSync(wsp) && `no wsp binary at ${wsp}: build it (cargo build -p wsp-cli --bin wsp) or set WSP_BIN`;

test("the real `wsp lsp` starts, initializes and shuts down", { skip: noBinary, timeout: 60000 }, async () => {
  const { vscode, record } = createVscode({ "wsp.server.path": wsp, "wsp.targets": ["ascend_npu"], "wsp.trace.server": "verbose" });
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return request === "vscode" ? "vscode" : resolve.call(this, request, ...rest);
  };
  const stub = new Module("vscode");
  stub.exports = vscode;
  stub.loaded = true;
  require.cache.vscode = stub;

  const extension = require("../out/extension.js");
  await extension.activate({ subscriptions: [] });
  assert.deepEqual(record.errorMessages, []);
  // With tracing on, the trace channel shows the initialize answer of the real server.
  const traceChannel = record.outputChannels.find((c) => c.name === "WSP Trace");
  assert.ok(traceChannel, "a WSP Trace channel while wsp.trace.server is verbose");
  assert.match(traceChannel.text, /Received response 'initialize/);
  // The server's capabilities became providers for `wsp` documents.
  const registered = (vscode.languages.__registered ?? []).map(([name, selector]) => [name, JSON.stringify(selector)]);
  for (const provider of ["registerHoverProvider", "registerCompletionItemProvider", "registerSignatureHelpProvider", "registerRenameProvider"]) {
    const found = registered.find(([name]) => name === provider);
    assert.ok(found, `${provider} in ${registered.map(([n]) => n).join(", ")}`);
    assert.match(found[1], /"language":"wsp"/);
  }
  await extension.deactivate();
  assert.deepEqual(record.errorMessages, []);
  const log = record.outputChannels.find((c) => c.name === "WSP").text;
  assert.doesNotMatch(log, /\[Error/, log);
});
