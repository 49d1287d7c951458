"""`wsp lsp` over stdio, driven by pytest-lsp as VS Code and as Neovim 0.7.

Each test starts the server on a copy of `examples/` in which `hello_add.wsp` declares its
output tile 32x16 instead of 32x32. pytest-lsp checks every answer against the client's
declared capabilities; `pytest.ini` makes a violation fail the test.
"""

import asyncio
import os
import pathlib
import shutil

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.protocol import default_converter

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"
BROKEN = "hello_add.wsp"
# The kernel's output parameter (on 0-based line 13), declared wrong in the copy.
GOOD_OUT = "c: Out[Tile[32, 32, F32]]"
BAD_OUT = "c: Out[Tile[32, 16, F32]]"
TIMEOUT = 30.0


def recording_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics with its version and
    accepting (and keeping) the server's capability registrations."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []
    client.registrations = []

    def register(client: LanguageClient, params: t.RegistrationParams):
        client.registrations.extend(params.registrations)

    def publish(client: LanguageClient, params: t.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[t.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    return client


async def published(
    client: LanguageClient, uri: str, version=None, after: int = 0
) -> t.PublishDiagnosticsParams:
    """The latest diagnostics published for `uri` (with `version`, when given) among the
    publications from index `after` on."""

    def found():
        for p in reversed(client.published[after:]):
            if p.uri == uri and (version is None or p.version == version):
                return p
        return None

    async def wait():
        while (p := found()) is None:
            await asyncio.sleep(0.01)
        return p

    return await asyncio.wait_for(wait(), TIMEOUT)


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copytree(EXAMPLES, tmp_path, dirs_exist_ok=True)
    path = tmp_path / BROKEN
    text = path.read_text()
    assert GOOD_OUT in text
    path.write_text(text.replace(GOOD_OUT, BAD_OUT))
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[os.environ["WSP_BIN"], "lsp"],
        client_factory=recording_client,
    ),
    params=["visual-studio-code", "neovim@v0.7.0"],
)
async def client(lsp_client: LanguageClient, request, workspace: pathlib.Path):
    folder = t.WorkspaceFolder(uri=workspace.as_uri(), name="examples")
    lsp_client.server = await lsp_client.initialize_session(
        t.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=folder.uri,
            workspace_folders=[folder],
        )
    )
    lsp_client.root = workspace
    yield
    await lsp_client.shutdown_session()


def uri_of(client: LanguageClient, name: str) -> str:
    return (client.root / name).as_uri()


async def open_doc(client: LanguageClient, name: str) -> tuple[str, str]:
    uri = uri_of(client, name)
    text = (client.root / name).read_text()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="wsp", version=1, text=text)
        )
    )
    return uri, text


def position_of(text: str, needle: str, delta: int = 0) -> t.Position:
    """The position of `needle`'s first character (plus `delta`) in `text`."""
    offset = text.index(needle) + delta
    line = text.count("\n", 0, offset)
    return t.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))


def doc_at(uri: str, text: str, needle: str, delta: int = 0) -> dict:
    return {
        "text_document": t.TextDocumentIdentifier(uri=uri),
        "position": position_of(text, needle, delta),
    }


async def test_files_not_open_are_checked_with_codes_links_and_related(client: LanguageClient):
    broken = await published(client, uri_of(client, BROKEN))
    assert broken.version is None
    diags = sorted(broken.diagnostics, key=lambda d: d.range.start.line)
    assert [(d.code, d.range.start.line, d.severity) for d in diags] == [
        ("WSP201", 16, t.DiagnosticSeverity.Error),
        ("WSP206", 22, t.DiagnosticSeverity.Error),
    ]
    assert "`c` is [32,16] F32" in diags[0].message
    for d in diags:
        assert d.source == "wsp"
        assert d.code_description.href.endswith(f"/docs/diagnostics/{d.code}.md")
        page = pathlib.Path(d.code_description.href.removeprefix("file://"))
        assert page.is_file(), page
    # WSP206 points back at the parameter's declaration.
    [related] = diags[1].related_information
    assert related.location.range.start.line == 13
    assert "declared `Out[Tile[32, 16, F32]]`" in related.message
    # The other examples are clean.
    clean = await published(client, uri_of(client, "tiled_matmul.wsp"))
    assert list(clean.diagnostics) == []


async def test_disk_changes_are_watched_when_the_client_can(client: LanguageClient):
    names = sorted(p.name for p in client.root.glob("*.wsp"))
    for name in names:
        await published(client, uri_of(client, name))
    # The registration, if any, follows the last of those; a round trip lets it arrive.
    await client.workspace_symbol_async(t.WorkspaceSymbolParams(query=""))
    dynamic = client.capabilities.workspace.did_change_watched_files
    if not (dynamic and dynamic.dynamic_registration):
        assert client.registrations == []
        return
    [registration] = client.registrations
    assert registration.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert globs == ["**/*.wsp", "**/wsp.toml", "**/*.npy"]

    # Another program on disk breaks a file the editor never opened.
    path = client.root / "tiled_matmul.wsp"
    path.write_text(path.read_text().replace("tile_n = Dense[4]", "tile_n = Dense[0]"))
    before = len(client.published)
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            changes=[t.FileEvent(uri=path.as_uri(), type=t.FileChangeType.Changed)]
        )
    )
    [diag] = (await published(client, path.as_uri(), after=before)).diagnostics
    assert (diag.code, diag.range.start.line) == ("WSP210", 15), diag


async def test_an_edit_fixes_the_error_and_the_version_follows(client: LanguageClient):
    uri, text = await open_doc(client, BROKEN)
    opened = await published(client, uri, version=1)
    assert {d.code for d in opened.diagnostics} == {"WSP201", "WSP206"}

    start = position_of(text, BAD_OUT, len("c: Out[Tile[32, "))
    end = t.Position(line=start.line, character=start.character + 2)
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                t.TextDocumentContentChangePartial(range=t.Range(start=start, end=end), text="32")
            ],
        )
    )
    fixed = await published(client, uri, version=2)
    assert list(fixed.diagnostics) == []

    # A quick fix is offered where the analyzer has one: `DType.F23` -> `DType.F32`.
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                t.TextDocumentContentChangePartial(
                    range=t.Range(
                        start=position_of(text, "DType.F32", len("DType.F")),
                        end=position_of(text, "DType.F32", len("DType.F32")),
                    ),
                    text="23",
                )
            ],
        )
    )
    typo = await published(client, uri, version=3)
    [diag] = typo.diagnostics
    actions = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=t.CodeActionContext(diagnostics=[diag]),
        )
    )
    # The analyzer's fix, preferred; then a suppression comment, never preferred.
    action, suppress = actions
    assert action.kind == t.CodeActionKind.QuickFix
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "F32"
    assert suppress.title == f"suppress {diag.code} on this line"
    assert not suppress.is_preferred
    [edit] = suppress.edit.changes[uri]
    assert edit.new_text == f"  # noqa: {diag.code}"


async def test_hover_definition_references_and_rename(client: LanguageClient):
    uri, text = await open_doc(client, BROKEN)
    await published(client, uri, version=1)

    hover = await client.text_document_hover_async(t.HoverParams(**doc_at(uri, text, "pto.add", 4)))
    assert hover.contents.kind == t.MarkupKind.Markdown
    assert hover.contents.value == (
        "```wsp\npto.add(a, b)\n```\n\nElementwise a + b, broadcasting as NumPy does."
        "\n\nHere: `Tile[32,32] F32`"
    )
    assert hover.range.start == position_of(text, "pto.add", len("pto."))

    hover = await client.text_document_hover_async(t.HoverParams(**doc_at(uri, text, "C = Tensor")))
    assert hover.contents.value.startswith("```wsp\nC: Tensor[4,32,32] F32\n```")

    call = "add_kernel[i]"
    definition = await client.text_document_definition_async(
        t.DefinitionParams(**doc_at(uri, text, call))
    )
    assert definition.uri == uri
    assert definition.range.start == position_of(text, "add_kernel(")

    refs = await client.text_document_references_async(
        t.ReferenceParams(
            **doc_at(uri, text, call),
            context=t.ReferenceContext(include_declaration=True),
        )
    )
    assert [r.range.start for r in refs] == [position_of(text, "add_kernel("), position_of(text, call)]

    edit = await client.text_document_rename_async(
        t.RenameParams(**doc_at(uri, text, call), new_name="vector_add")
    )
    assert sorted(e.range.start.line for e in edit.changes[uri]) == [13, 22]
    assert {e.new_text for e in edit.changes[uri]} == {"vector_add"}


async def test_completion_signature_help_and_hints(client: LanguageClient):
    uri, text = await open_doc(client, BROKEN)
    await published(client, uri, version=1)

    ops = await client.text_document_completion_async(
        t.CompletionParams(**doc_at(uri, text, "pto.add", len("pto.")))
    )
    items = ops.items if isinstance(ops, t.CompletionList) else ops
    labels = {i.label for i in items}
    assert {"add", "matmul", "load", "store", "exp"} <= labels

    help = await client.text_document_signature_help_async(
        t.SignatureHelpParams(**doc_at(uri, text, "b=B[i]"))
    )
    signature = help.signatures[help.active_signature or 0]
    assert signature.label == (
        "add_kernel[...](a: In[Tile[32, 32, F32]], b: In[Tile[32, 32, F32]], "
        "c: Out[Tile[32, 16, F32]])"
    )
    start, end = signature.parameters[help.active_parameter].label
    assert signature.label[start:end] == "b: In[Tile[32, 32, F32]]"

    hints = await client.text_document_inlay_hint_async(
        t.InlayHintParams(
            text_document=t.TextDocumentIdentifier(uri=uri),
            range=t.Range(start=t.Position(line=0, character=0), end=t.Position(line=40, character=0)),
        )
    )
    labels = [h.label for h in hints]
    assert any("[32,32] F32" in label for label in labels), labels


async def test_symbols_tokens_and_folding(client: LanguageClient):
    uri, text = await open_doc(client, "tiled_matmul.wsp")
    await published(client, uri, version=1)

    symbols = await client.text_document_document_symbol_async(
        t.DocumentSymbolParams(text_document=t.TextDocumentIdentifier(uri=uri))
    )
    assert [(s.name, s.kind) for s in symbols] == [
        ("F16", t.SymbolKind.Constant),
        ("F32", t.SymbolKind.Constant),
        ("T", t.SymbolKind.Constant),
        ("K", t.SymbolKind.Constant),
        ("tile_m", t.SymbolKind.Enum),
        ("tile_n", t.SymbolKind.Enum),
        ("A", t.SymbolKind.Variable),
        ("B", t.SymbolKind.Variable),
        ("C", t.SymbolKind.Variable),
        ("matmul_acc", t.SymbolKind.Function),
        ("tiled_matmul", t.SymbolKind.Function),
        ("program", t.SymbolKind.Variable),
    ]
    assert [c.name for c in symbols[9].children] == ["a", "b", "c"]

    everywhere = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="matmul"))
    assert sorted((s.name, pathlib.Path(s.location.uri).name) for s in everywhere) == [
        ("matmul_acc", "tiled_matmul.wsp"),
        ("matmul_kernel", "validated_matmul.wsp"),
        ("shard_matmul", "sharded_linear.wsp"),
        ("tiled_matmul", "tiled_matmul.wsp"),
        ("tiled_matmul", "validated_matmul.wsp"),
    ]

    tokens = await client.text_document_semantic_tokens_full_async(
        t.SemanticTokensParams(text_document=t.TextDocumentIdentifier(uri=uri))
    )
    legend = client.server.capabilities.semantic_tokens_provider.legend
    decoded = {}
    line = character = 0
    data = tokens.data
    for i in range(0, len(data), 5):
        line += data[i]
        character = data[i + 1] if data[i] else character + data[i + 1]
        modifiers = {m for b, m in enumerate(legend.token_modifiers) if data[i + 4] >> b & 1}
        decoded[(line, character)] = (legend.token_types[data[i + 3]], modifiers)

    def token(needle: str, delta: int = 0):
        p = position_of(text, needle, delta)
        return decoded[(p.line, p.character)]

    assert token("matmul_acc(") == ("function", {"declaration"})
    assert token("matmul_acc[") == ("function", set())
    assert token("a=A", 2) == ("variable", {"readonly"})
    assert token("pto.range") == ("namespace", {"defaultLibrary"})
    assert token("pto.matmul", 4) == ("function", {"defaultLibrary"})

    folds = await client.text_document_folding_range_async(
        t.FoldingRangeParams(text_document=t.TextDocumentIdentifier(uri=uri))
    )
    assert sorted((f.start_line, f.end_line) for f in folds) == [
        (0, 6),  # the docstring
        (23, 30),  # the kernel and its K loop
        (26, 29),
        (34, 36),  # the workload and its loop
        (35, 36),
        (39, 41),  # the bracketed chain
    ]
