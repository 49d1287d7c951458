// The WSP extension: starts `wsp lsp` (the language server that gives diagnostics, hover,
// completion, ...) for `.wsp` files and keeps it running as the settings change.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let trace: vscode.OutputChannel | undefined;

/** The settings the server depends on, read fresh each time the server starts. */
function settings() {
  const config = vscode.workspace.getConfiguration("wsp");
  return {
    // A leading `~/` is the home folder, as in a shell.
    path: (config.get<string>("server.path", "wsp") || "wsp").replace(/^~(?=[/\\])/, os.homedir()),
    targets: config.get<string[]>("targets", []),
    trace: config.get<string>("trace.server", "off"),
  };
}

function createClient(): LanguageClient {
  const { path: command, targets, trace: traceLevel } = settings();
  // stdio without `transport`, so the command is exactly `<path> lsp`: `TransportKind.stdio`
  // would append `--stdio`, which `wsp` binaries before the editor packages reject.
  const serverOptions: ServerOptions = { command, args: ["lsp"] };
  // The trace channel exists only while tracing is on, so an idle user sees one "WSP" channel.
  if (traceLevel !== "off" && !trace) {
    trace = vscode.window.createOutputChannel("WSP Trace");
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "wsp" },
      { scheme: "untitled", language: "wsp" },
    ],
    initializationOptions: { targets },
    // Changes under `wsp.*` reach the server as workspace/didChangeConfiguration
    // with settings `{ wsp: { ... } }`. The server registers its own file watchers.
    synchronize: { configurationSection: "wsp" },
    outputChannel: output,
    traceOutputChannel: trace,
  };
  // A client being replaced sends no more settings: the change that replaces it (a new
  // `wsp.server.path`) would otherwise go to a connection that is closing, and fail.
  clientOptions.middleware = {
    workspace: {
      didChangeConfiguration: (sections, next) => (client === self ? next(sections) : Promise.resolve()),
    },
  };
  // The id "wsp" makes the client read `wsp.trace.server` itself.
  const self = new LanguageClient("wsp", "WSP Language Server", serverOptions, clientOptions);
  return self;
}

/**
 * Where `command` would be run from: itself when it names a file, else the first match on PATH.
 * Checked before starting so a missing binary gets one clear message, not the client's generic one.
 */
export function findExecutable(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const isFile = (p: string) => {
    try {
      if (!fs.statSync(p).isFile()) return false;
      if (process.platform !== "win32") fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const extensions = process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
  if (command.includes("/") || command.includes(path.sep)) {
    return extensions.map((e) => command + e).find(isFile);
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const found = extensions.map((e) => path.join(dir, command + e)).find(isFile);
    if (found) return found;
  }
  return undefined;
}

async function start(): Promise<void> {
  const { path: command } = settings();
  if (!findExecutable(command)) {
    reportStartFailure(new Error(`${command}: not found`));
    return;
  }
  const next = createClient();
  client = next;
  try {
    await next.start();
  } catch (err) {
    // Keep no half-started client around: a later restart starts from scratch.
    if (client === next) client = undefined;
    await next.dispose().catch(() => undefined);
    reportStartFailure(err);
  }
}

async function stopClient(c: LanguageClient | undefined): Promise<void> {
  // A client whose server never came up cannot be stopped, only dropped.
  if (c) await c.stop().catch(() => undefined);
}

// Starts and stops run one after another: stopping a client that is still starting fails
// and would leave its server running.
let queue: Promise<void> = Promise.resolve();
function enqueue(step: () => Promise<void>): Promise<void> {
  queue = queue.then(step).catch((err) => output.appendLine(`WSP: ${String(err)}`));
  return queue;
}

/** Detaches the client at once (so it sends nothing more) and queues stopping its server. */
function stop(): Promise<void> {
  const old = client;
  client = undefined;
  return enqueue(async () => {
    await stopClient(old);
    // A client started by an earlier queued restart since then.
    const current = client;
    client = undefined;
    await stopClient(current);
  });
}

function restart(): Promise<void> {
  void stop();
  return enqueue(start);
}

function reportStartFailure(err: unknown): void {
  const { path: command } = settings();
  const message = err instanceof Error ? err.message : String(err);
  output.appendLine(`Could not start "${command} lsp": ${message}`);
  const notFound = /ENOENT|not found/i.test(message);
  const text = notFound
    ? `WSP: the language server "${command}" was not found. Set "wsp.server.path" to the wsp executable (VS Code does not always see your shell's PATH).`
    : `WSP: the language server "${command} lsp" failed to start: ${message}`;
  void vscode.window.showErrorMessage(text, "Open Settings", "Show Output").then((choice) => {
    if (choice === "Open Settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "wsp.server.path");
    } else if (choice === "Show Output") {
      output.show(true);
    }
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("WSP");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("wsp.restartServer", restart),
    vscode.commands.registerCommand("wsp.showOutput", () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      // A new executable needs a new process; targets travel as didChangeConfiguration.
      // The trace channel is made when a client is made, so turning tracing on restarts too.
      if (
        event.affectsConfiguration("wsp.server.path") ||
        (event.affectsConfiguration("wsp.trace.server") && settings().trace !== "off" && !trace)
      ) {
        void restart();
      }
    }),
    { dispose: () => trace?.dispose() },
  );
  await enqueue(start);
}

export function deactivate(): Promise<void> {
  return stop();
}
