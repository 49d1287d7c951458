// Client tests: the real extension (out/extension.js) and the real vscode-languageclient run
// under Node against a stubbed `vscode` module and a fake `wsp` executable. They check the
// contract with the server: `<wsp.server.path> lsp` over stdio, the targets in
// initializationOptions and in didChangeConfiguration, restarts, and the missing-binary message.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const Module = require("node:module");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { createVscode } = require("./vscode-stub");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "wsp-vscode-test-"));
const logFile = path.join(tmp, "log.jsonl");
process.env.FAKE_WSP_LOG = logFile;

/** An executable named `wsp` in its own folder that runs test/fake-server.js. */
function makeFakeWsp(folder) {
  const dir = path.join(tmp, folder);
  fs.mkdirSync(dir);
  const file = path.join(dir, "wsp");
  const server = path.join(__dirname, "fake-server.js");
  fs.writeFileSync(file, `#!${process.execPath}\nrequire(${JSON.stringify(server)});\n`, { mode: 0o755 });
  return file;
}
const wspA = makeFakeWsp("a");
const wspB = makeFakeWsp("b");

const settings = { "wsp.server.path": wspA, "wsp.targets": ["ascend_npu"], "wsp.trace.server": "off" };
const { vscode, record, changeSetting } = createVscode(settings);

// `require("vscode")` from the extension and from vscode-languageclient gets the stub.
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? "vscode" : resolve.call(this, request, ...rest);
};
const stubModule = new Module("vscode");
stubModule.exports = vscode;
stubModule.loaded = true;
require.cache.vscode = stubModule;

const extension = require("../out/extension.js");
const context = { subscriptions: [] };

function readLog() {
  if (!fs.existsSync(logFile)) return [];
  return fs.readFileSync(logFile, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
const starts = () => readLog().filter((e) => e.event === "start");
const messages = (pid, method) => readLog().filter((e) => e.pid === pid && e.event === "message" && e.method === method);
const exited = (pid) => readLog().some((e) => e.pid === pid && e.event === "exit");

async function waitFor(what, predicate, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; log:\n${fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "(none)"}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test.after(async () => {
  await extension.deactivate();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test("activate runs `<wsp.server.path> lsp` and sends the targets as initializationOptions", async () => {
  await extension.activate(context);
  const [first] = await waitFor("the server to start", () => starts().length === 1 && starts());
  assert.deepEqual(first.argv, [wspA, "lsp"]);
  const [init] = await waitFor("initialize", () => messages(first.pid, "initialize").length === 1 && messages(first.pid, "initialize"));
  assert.deepEqual(init.params.initializationOptions, { targets: ["ascend_npu"] });
  await waitFor("initialized", () => messages(first.pid, "initialized").length === 1);
  assert.ok(record.outputChannels.some((c) => c.name === "WSP"), "an output channel named WSP");
  assert.ok(!record.outputChannels.some((c) => c.name === "WSP Trace"), "no trace channel while tracing is off");
  assert.ok(record.commands.has("wsp.restartServer") && record.commands.has("wsp.showOutput"));
  assert.equal(record.errorMessages.length, 0, JSON.stringify(record.errorMessages));
});

test("a changed wsp.targets reaches the running server as didChangeConfiguration { wsp: { targets } }", async () => {
  const [first] = starts();
  changeSetting("wsp.targets", ["cpu_sim", "ascend_npu"]);
  await waitFor("didChangeConfiguration with the new targets", () =>
    messages(first.pid, "workspace/didChangeConfiguration").some(
      (m) => JSON.stringify(m.params.settings.wsp?.targets) === JSON.stringify(["cpu_sim", "ascend_npu"]),
    ),
  );
  assert.equal(starts().length, 1, "a target change keeps the server running");
});

test("WSP: Restart Language Server stops the server and starts a second process", async () => {
  const [first] = starts();
  await record.commands.get("wsp.restartServer")();
  const second = await waitFor("a second server", () => starts()[1]);
  assert.notEqual(second.pid, first.pid);
  assert.deepEqual(second.argv, [wspA, "lsp"]);
  assert.equal(messages(first.pid, "shutdown").length, 1, "the first server was shut down");
  await waitFor("the first server to exit", () => exited(first.pid));
  const [init] = await waitFor("initialize", () => messages(second.pid, "initialize")[0] && messages(second.pid, "initialize"));
  assert.deepEqual(init.params.initializationOptions, { targets: ["cpu_sim", "ascend_npu"] });
});

test("changing wsp.server.path restarts the server with the new executable", async () => {
  const before = starts().length;
  changeSetting("wsp.server.path", wspB);
  const next = await waitFor("a server from the new path", () => starts()[before]);
  assert.deepEqual(next.argv, [wspB, "lsp"]);
  await waitFor("initialize", () => messages(next.pid, "initialize").length === 1);
  await waitFor("the previous server to exit", () => exited(starts()[before - 1].pid));
});

test("a missing server is reported with a button that opens the wsp.server.path setting", async () => {
  const before = starts().length;
  const running = starts()[before - 1];
  const missing = path.join(tmp, "nowhere", "wsp");
  record.choice = "Open Settings";
  changeSetting("wsp.server.path", missing);
  const [error] = await waitFor("an error message", () => record.errorMessages.length === 1 && record.errorMessages);
  assert.match(error.message, /not found/);
  assert.match(error.message, /wsp\.server\.path/);
  assert.ok(error.message.includes(missing), error.message);
  assert.deepEqual(error.items, ["Open Settings", "Show Output"]);
  await waitFor("the settings to open", () =>
    record.executedCommands.some(([id, arg]) => id === "workbench.action.openSettings" && arg === "wsp.server.path"),
  );
  await waitFor("the previous server to exit", () => exited(running.pid));
  assert.equal(starts().length, before, "nothing else was started");
  const output = record.outputChannels.find((c) => c.name === "WSP");
  assert.match(output.text, /Could not start/);
  record.choice = undefined;
});

test("deactivate shuts the server down", async () => {
  const before = starts().length;
  changeSetting("wsp.server.path", wspA);
  const last = await waitFor("a server", () => starts()[before]);
  await waitFor("initialized", () => messages(last.pid, "initialized").length === 1);
  await extension.deactivate();
  assert.equal(messages(last.pid, "shutdown").length, 1);
  await waitFor("the server to exit", () => exited(last.pid));
});
