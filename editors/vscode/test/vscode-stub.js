// A stand-in for the `vscode` module, so the real extension and the real vscode-languageclient
// run under plain Node (`node --test`). It records what the tests assert on (output channels,
// commands, error messages) and throws on any API it does not provide, so a gap shows at once
// instead of passing silently.
"use strict";

class Disposable {
  constructor(fn) { this._fn = fn; }
  static from(...items) { return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { if (this._fn) { const fn = this._fn; this._fn = undefined; fn(); } }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const entry = (e) => listener.call(thisArg, e);
      this.listeners.add(entry);
      const d = new Disposable(() => this.listeners.delete(entry));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(e) { for (const l of [...this.listeners]) l(e); }
  dispose() { this.listeners.clear(); }
}

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
    this._emitter = emitter;
  }
  cancel() { this.token.isCancellationRequested = true; this._emitter.fire(); }
  dispose() {}
}

class Uri {
  constructor(scheme, fsPath) { this.scheme = scheme; this.fsPath = fsPath; this.path = fsPath; }
  static file(p) { return new Uri("file", p); }
  static parse(s) { return new Uri(s.split(":")[0], s.replace(/^file:\/\//, "")); }
  toString() { return `${this.scheme}://${this.fsPath}`; }
  with() { return this; }
}

// Classes the client extends or instantiates; their behaviour does not matter here.
const plainClass = (name) => ({ [name]: class { constructor(...args) { this.args = args; } } })[name];
const classes = Object.fromEntries(
  [
    "CompletionItem", "CodeAction", "SymbolInformation", "DocumentLink", "Diagnostic", "CodeLens",
    "InlayHint", "TypeHierarchyItem", "CallHierarchyItem", "Position", "Range", "Location", "Hover",
    "MarkdownString", "SnippetString", "TextEdit", "WorkspaceEdit", "SemanticTokens", "InlineValueText",
    "CompletionList", "SignatureHelp", "SignatureInformation", "ParameterInformation", "FoldingRange",
    "SelectionRange", "DocumentSymbol", "ColorInformation", "Color", "ColorPresentation",
    "DocumentHighlight", "InlayHintLabelPart", "LinkedEditingRanges", "SemanticTokensEdit", "SemanticTokensEdits",
    "InlineValueVariableLookup", "InlineValueEvaluatableExpression", "InlineCompletionItem", "DiagnosticRelatedInformation",
    "TabInputText", "TabInputTextDiff", "CallHierarchyIncomingCall", "CallHierarchyOutgoingCall",
    "InlineCompletionList", "RelativePattern", "NotebookCellData", "NotebookData", "NotebookRange",
  ].map((n) => [n, plainClass(n)]),
);

/** An enum whose members are only compared, never inspected: every member is its own name. */
const anyEnum = (name) => new Proxy({}, { get: (_, key) => (typeof key === "string" ? `${name}.${key}` : undefined) });

/** VS Code's `CodeActionKind`: hierarchical kinds, of which the client builds the server's own
 * (`source.fixAll.wsp`) with `append`. */
function codeActionKinds() {
  const kind = (value) => ({
    value,
    append: (part) => kind(value ? `${value}.${part}` : part),
    contains: (other) => value === "" || other.value === value || other.value.startsWith(`${value}.`),
    intersects(other) { return this.contains(other) || other.contains(this); },
  });
  const Empty = kind("");
  return {
    Empty,
    QuickFix: Empty.append("quickfix"),
    Refactor: Empty.append("refactor"),
    RefactorExtract: Empty.append("refactor.extract"),
    RefactorInline: Empty.append("refactor.inline"),
    RefactorRewrite: Empty.append("refactor.rewrite"),
    Source: Empty.append("source"),
    SourceOrganizeImports: Empty.append("source.organizeImports"),
    SourceFixAll: Empty.append("source.fixAll"),
  };
}

/** Fails loudly on a name the stub does not provide (`then` stays undefined: the stub is no promise). */
function strict(name, target) {
  return new Proxy(target, {
    get(t, key) {
      // Provider registrations (languages.registerHoverProvider, ...) only need a Disposable.
      if (typeof key === "string" && /^register[A-Z]/.test(key) && !(key in t)) {
        return (...args) => { (t.__registered ??= []).push([key, ...args]); return new Disposable(); };
      }
      if (key in t || typeof key === "symbol" || key === "then" || key === "toJSON" || key === "__esModule") return t[key];
      throw new Error(`vscode stub: ${name}.${String(key)} is not provided`);
    },
  });
}

/** Builds a fresh stub: settings come from `settings` (flat keys such as "wsp.server.path"). */
function createVscode(settings = {}) {
  const record = { outputChannels: [], errorMessages: [], executedCommands: [], commands: new Map() };
  const onDidChangeConfiguration = new EventEmitter();
  const anyEvent = () => new EventEmitter().event;

  function getConfiguration(section) {
    const prefix = section ? section + "." : "";
    const lookup = (key) => {
      const full = prefix + key;
      if (full in settings) return settings[full];
      // A section asks for the whole object: `{ targets: [...], server: { path } }`.
      const nested = {};
      let found = false;
      for (const [k, v] of Object.entries(settings)) {
        if (!k.startsWith(full + ".")) continue;
        found = true;
        const parts = k.slice(full.length + 1).split(".");
        let cur = nested;
        for (const p of parts.slice(0, -1)) cur = cur[p] ??= {};
        cur[parts[parts.length - 1]] = v;
      }
      return found ? nested : undefined;
    };
    return {
      get: (key, dflt) => { const v = lookup(key); return v === undefined ? dflt : v; },
      has: (key) => lookup(key) !== undefined,
      inspect: () => undefined,
      update: async () => {},
    };
  }

  /** Changes a setting as the Settings UI would, and fires onDidChangeConfiguration. */
  function changeSetting(key, value) {
    settings[key] = value;
    onDidChangeConfiguration.fire({ affectsConfiguration: (s) => key === s || key.startsWith(s + ".") });
  }

  const window = strict("window", {
    createOutputChannel(name) {
      const channel = {
        name, lines: [], shown: false,
        append(s) { this.lines.push(s); }, appendLine(s) { this.lines.push(s + "\n"); },
        replace(s) { this.lines = [s]; }, clear() { this.lines = []; },
        show() { this.shown = true; }, hide() {}, dispose() {},
        get text() { return this.lines.join(""); },
      };
      record.outputChannels.push(channel);
      return channel;
    },
    showErrorMessage(message, ...items) { record.errorMessages.push({ message, items }); return Promise.resolve(record.choice); },
    showWarningMessage: async () => undefined,
    showInformationMessage: async () => undefined,
    activeTextEditor: undefined,
    visibleTextEditors: [],
    onDidChangeActiveTextEditor: anyEvent(),
    onDidChangeVisibleTextEditors: anyEvent(),
    tabGroups: { all: [], onDidChangeTabs: anyEvent(), onDidChangeTabGroups: anyEvent() },
  });

  const workspace = strict("workspace", {
    getConfiguration,
    onDidChangeConfiguration: onDidChangeConfiguration.event,
    workspaceFolders: undefined,
    textDocuments: [],
    notebookDocuments: [],
    onDidOpenTextDocument: anyEvent(),
    onDidCloseTextDocument: anyEvent(),
    onDidChangeTextDocument: anyEvent(),
    onDidSaveTextDocument: anyEvent(),
    onWillSaveTextDocument: anyEvent(),
    onDidChangeWorkspaceFolders: anyEvent(),
    onDidOpenNotebookDocument: anyEvent(),
    onDidCloseNotebookDocument: anyEvent(),
    onDidChangeNotebookDocument: anyEvent(),
    onDidSaveNotebookDocument: anyEvent(),
    onDidCreateFiles: anyEvent(), onDidRenameFiles: anyEvent(), onDidDeleteFiles: anyEvent(),
    onWillCreateFiles: anyEvent(), onWillRenameFiles: anyEvent(), onWillDeleteFiles: anyEvent(),
    createFileSystemWatcher: () => ({ onDidCreate: anyEvent(), onDidChange: anyEvent(), onDidDelete: anyEvent(), dispose() {} }),
  });

  const commands = strict("commands", {
    registerCommand(id, fn) {
      if (record.commands.has(id)) throw new Error(`command ${id} registered twice`);
      record.commands.set(id, fn);
      return new Disposable(() => record.commands.delete(id));
    },
    executeCommand: async (id, ...args) => {
      record.executedCommands.push([id, ...args]);
      const fn = record.commands.get(id);
      return fn ? fn(...args) : undefined;
    },
  });

  const languages = strict("languages", {
    createDiagnosticCollection: (name) => ({ name, set() {}, delete() {}, clear() {}, dispose() {}, forEach() {}, get() {}, has: () => false }),
    match: () => 0,
    onDidChangeDiagnostics: anyEvent(),
  });

  const vscode = strict("vscode", {
    version: "1.82.0",
    env: strict("env", { appName: "Stub Code", language: "en", machineId: "stub", sessionId: "stub", uriScheme: "vscode", appRoot: "" }),
    window, workspace, commands, languages,
    extensions: { all: [], getExtension: () => undefined, onDidChange: anyEvent() },
    Disposable, EventEmitter, CancellationTokenSource, Uri,
    ...classes,
    CancellationError: class CancellationError extends Error {},
    ThemeIcon: class ThemeIcon { constructor(id) { this.id = id; } },
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
    CompletionItemKind: anyEnum("CompletionItemKind"), SymbolKind: anyEnum("SymbolKind"),
    CodeActionKind: codeActionKinds(), CompletionItemTag: anyEnum("CompletionItemTag"),
    DocumentHighlightKind: anyEnum("DocumentHighlightKind"), FoldingRangeKind: anyEnum("FoldingRangeKind"),
    SymbolTag: anyEnum("SymbolTag"), CompletionTriggerKind: { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 },
    SignatureHelpTriggerKind: { Invoke: 1, TriggerCharacter: 2, ContentChange: 3 },
    TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
    CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
    InlayHintKind: { Type: 1, Parameter: 2 },
    IndentAction: { None: 0, Indent: 1, IndentOutdent: 2, Outdent: 3 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
    NotebookCellKind: { Markup: 1, Code: 2 },
    EndOfLine: { LF: 1, CRLF: 2 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    LanguageStatusSeverity: { Information: 0, Warning: 1, Error: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  });
  return { vscode, record, changeSetting };
}

module.exports = { createVscode };
