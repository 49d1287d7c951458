"""Driving the `wsp` kernel with jupyter_client: start it, run a cell (with the `cellId` JupyterLab
sends, when given), collect what the cell published and read the stats table it displays.
Every wait is bounded."""

import contextlib
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

from jupyter_client import KernelManager

ROOT = Path(__file__).resolve().parents[3]
# Seconds a cell may take: the first run of a program builds its kernels (C++, -O3) cold.
TIMEOUT = 120.0
# Seconds a kernel may take to answer kernel_info after it starts.
START_TIMEOUT = 60.0


def install_isolated(wsp: Path, tmp: Path) -> Path:
    """Installs the `wsp` kernelspec with `wsp jupyter install --prefix TMP/prefix` and points
    this process's Jupyter folders (kernelspecs, config, data, runtime, IPython's) and the
    kernel cache into `tmp`, so nothing of the user's setup is read or changed. Returns the
    kernelspec's kernel.json."""
    prefix = tmp / "prefix"
    subprocess.run(
        [str(wsp), "jupyter", "install", "--prefix", str(prefix)], check=True, timeout=60
    )
    os.environ.update(
        {
            "JUPYTER_PATH": str(prefix / "share/jupyter"),
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTER_DATA_DIR": str(tmp / "data"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "IPYTHONDIR": str(tmp / "ipython"),
            "WSP_CACHE_DIR": str(tmp / "kernel-cache"),
        }
    )
    return prefix / "share/jupyter/kernels/wsp/kernel.json"


@dataclass
class Execution:
    """One cell's execute_reply content and its iopub messages between busy and idle (other than
    `status` and `execute_input`), each as {"msg_type", "content"}."""

    reply: dict
    outputs: list

    @property
    def status(self) -> str:
        return self.reply["status"]

    def of(self, msg_type):
        return [o["content"] for o in self.outputs if o["msg_type"] == msg_type]

    def stream(self, name) -> str:
        return "".join(c["text"] for c in self.of("stream") if c["name"] == name)

    @property
    def errors(self):
        return self.of("error")

    @property
    def displays(self):
        return self.of("display_data")

    @property
    def results(self):
        return self.of("execute_result")

    def describe(self) -> str:
        """For assertion messages: the reply and every output, shortened."""
        parts = [f"reply: {_short(self.reply)}"]
        parts += [f"{o['msg_type']}: {_short(o['content'])}" for o in self.outputs]
        return "\n".join(parts)


def _short(value, limit=600):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def send_execute(kc, code, cell_id=None) -> str:
    """Sends an execute_request as JupyterLab does (its `cellId` in the metadata); the msg_id."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    metadata = {"cellId": cell_id} if cell_id is not None else {}
    msg = kc.session.msg("execute_request", content, metadata=metadata)
    kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def collect(kc, msg_id, timeout=TIMEOUT) -> Execution:
    """The outputs of the request `msg_id` until the kernel is idle again, then its reply."""
    deadline = time.monotonic() + timeout
    outputs = []
    while True:
        msg = _next(kc.get_iopub_msg, deadline, f"the cell's idle status ({msg_id})")
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["header"]["msg_type"]
        if kind == "status":
            if msg["content"]["execution_state"] == "idle":
                break
            continue
        if kind != "execute_input":
            outputs.append({"msg_type": kind, "content": msg["content"]})
    while True:
        reply = _next(kc.get_shell_msg, deadline, f"the execute_reply ({msg_id})")
        if reply["parent_header"].get("msg_id") == msg_id:
            return Execution(reply["content"], outputs)


def execute(kc, code, cell_id=None, timeout=TIMEOUT) -> Execution:
    return collect(kc, send_execute(kc, code, cell_id), timeout)


def _next(get, deadline, what):
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"no {what} in time")
    try:
        return get(timeout=left)
    except Empty:
        raise TimeoutError(f"no {what} in time") from None


@contextlib.contextmanager
def running_kernel(cwd, kernel_spec_manager=None):
    """A `wsp` kernel (found through JUPYTER_PATH, or by `kernel_spec_manager`) started in
    `cwd`, with a started client; shut down (killed if it does not stop) at the end."""
    if kernel_spec_manager is None:
        km = KernelManager(kernel_name="wsp")
    else:
        km = KernelManager(kernel_name="wsp", kernel_spec_manager=kernel_spec_manager)
    km.start_kernel(cwd=str(cwd))
    kc = km.client()
    try:
        kc.start_channels()
        kc.wait_for_ready(timeout=START_TIMEOUT)
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def stats_rows(text: str) -> list:
    """The rows of the stats table the kernel displays after a run (its text/plain form: a
    header, a rule, one row per execution; columns apart by two spaces or more, cells with
    at most single spaces inside), each as {header: cell}."""
    lines = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]
    assert len(lines) >= 3 and all(set(r) <= {"-"} for r in lines[1]), f"not a table: {text!r}"
    headers = lines[0]
    for row in lines[2:]:
        assert len(row) == len(headers), f"row {row} against headers {headers}"
    return [dict(zip(headers, row)) for row in lines[2:]]


def ok(execution: Execution) -> Execution:
    """`execution`, after checking it succeeded with no error output."""
    assert execution.status == "ok" and not execution.errors, execution.describe()
    return execution
