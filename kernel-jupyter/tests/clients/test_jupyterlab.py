"""JupyterLab in a real browser: a JupyterLab server on a free port of 127.0.0.1, serving a copy
of the tour notebook, and Debian's Chromium (headless, driven by Playwright) opening it and
running every cell from the Run menu. The rendered outputs are checked (the two timelines, the
stats tables, the heatmap of `Y`, no error or stderr output), the files the notebook saved are
checked against NumPy, and a screenshot of the first timeline is written to
`target/jupyter/tour.png`."""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from playwright.sync_api import sync_playwright

from kernel_client import ROOT
from tour_checks import check_saved_tensors

CHROMIUM = "/usr/bin/chromium"
SCREENSHOT = ROOT / "target/jupyter/tour.png"
# Milliseconds (Playwright's unit): loading JupyterLab, and running the whole tour.
LOAD_MS = 60_000
RUN_MS = 240_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_settings(folder):
    """User settings for the server: every cell attached to the page (so every output can be
    found in the DOM, not only those scrolled into view) and no news or update checks (no
    network, no notification over the notebook)."""
    settings = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for name, value in settings.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


def wait_for_server(url, server, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode} before serving")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise TimeoutError(f"JupyterLab did not answer {url} within {timeout} s")


def test_jupyterlab_runs_the_tour_in_chromium(tour_dir, tmp_path):
    port, token = free_port(), secrets.token_hex(16)
    settings = tmp_path / "lab-settings"
    write_settings(settings)
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            # CI and this project's machines run as root; JupyterLab refuses that unless told.
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={tour_dir.parent}",
            "--LabApp.news_url=",
        ],
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{base}/api/status?token={token}", server)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(LOAD_MS)
                run_tour(page, f"{base}/lab/tree/notebooks/tour.ipynb?token={token}")
            finally:
                browser.close()
    except Exception:
        log.flush()
        print((tmp_path / "jupyterlab.log").read_text()[-6000:])
        raise
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)
        log.close()
    check_saved_tensors(tour_dir)


def run_tour(page, url, kernel_display_name="WSP"):
    page.goto(url)
    notebook = page.locator(".jp-NotebookPanel")
    notebook.locator(".jp-CodeCell").first.wait_for()
    # The kernel the notebook names (shown by its display name) is started and idle.
    page.wait_for_function(
        """(name) => {
            const shown = document.querySelector('.jp-NotebookPanel .jp-KernelName');
            const state = document.querySelector(
                '.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
            return shown && shown.textContent.trim() === name
                && state && state.dataset.status === 'idle';
        }""",
        arg=kernel_display_name,
    )

    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()

    code_cells = notebook.locator(".jp-CodeCell")
    count = code_cells.count()
    # Every code cell has run when every prompt shows an execution count ([*] while queued or
    # running, [ ] before).
    page.wait_for_function(
        """(count) => {
            const prompts = [...document.querySelectorAll(
                '.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length === count && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        arg=count,
        timeout=RUN_MS,
    )
    page.wait_for_selector(
        ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=RUN_MS
    )

    outputs = notebook.locator(".jp-OutputArea-output")
    errors = notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert errors.count() == 0, errors.all_inner_texts()
    # Two timelines (the two attention runs), rendered as SVG.
    timelines = notebook.locator(".jp-OutputArea-output.jp-RenderedSVG")
    assert timelines.count() == 2, outputs.all_inner_texts()
    for i in range(2):
        svg = timelines.nth(i).locator("svg, img")
        assert svg.count() >= 1, timelines.nth(i).inner_html()[:500]
        box = svg.first.bounding_box()
        assert box and box["width"] > 50 and box["height"] > 20, box
    # A stats table after each of the three runs.
    tables = notebook.locator(".jp-OutputArea-output.jp-RenderedHTMLCommon table")
    assert tables.count() >= 3, outputs.all_inner_texts()
    assert "total cycles" in tables.first.inner_text(), tables.first.inner_text()

    # `Y` as the last expression: its HTML form shows the heatmap, decoded by the browser.
    heatmap = notebook.locator(".jp-OutputArea-executeResult img[alt^='heatmap of Y']")
    assert heatmap.count() == 1, outputs.all_inner_texts()
    assert heatmap.evaluate("img => img.complete && img.naturalWidth > 0")

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    timelines.first.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT))
