"""`cargo xtask bench kernel`: the WSP kernel and ipykernel side by side, driven the same way by
jupyter_client (from target/jupyter-venv), in one run. Writes target/bench/kernel.json and
prints a table.

- start: from `KernelManager.start_kernel()` to the first kernel_info_reply (median of 5 starts);
- execute: the round trip (execute_request sent to the reply and the idle status both received)
  of a cell that re-runs an unchanged, already compiled program (`program.execute()` on
  examples/rmsnorm.wsp's program, re-sent as the same cell) against ipykernel's `1+1`;
  p50 and p99 over 200;
- type error: the round trip of a cell that fails its check (a tile shape mismatch, WSP201)
  against ipykernel's `1 + "a"` (TypeError); p50 over 50.

The binary is $WSP_BIN (xtask passes target/release/wsp), else target/debug/wsp.
"""

import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from queue import Empty

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "kernel-jupyter/tests/clients"))

from jupyter_client import KernelManager  # noqa: E402

from kernel_client import (  # noqa: E402
    START_TIMEOUT,
    collect,
    execute,
    install_isolated,
    send_execute,
)

STARTS = 5
ROUND_TRIPS = 200
ERROR_TRIPS = 50

# examples/rmsnorm.wsp without its run statements: the definitions and the compiled program.
RMSNORM = (ROOT / "examples/rmsnorm.wsp").read_text().split("program.execute()")[0]
TYPE_ERROR = '''
@kernel
def add_bias(x: In[Tile[16, 128, F32]], b: In[Tile[16, 64, F32]], y: Out[Tile[16, 128, F32]]):
    pto.store(y, pto.add(x, b))
'''

KERNELS = {
    # name: (kernelspec, set-up cell, timed cell, error cell, the error's name)
    "wsp": ("wsp", RMSNORM, "program.execute()", TYPE_ERROR, "WSP201"),
    "ipykernel": ("python3", "", "1+1", '1 + "a"', "TypeError"),
}


def quantile(sorted_ms, q):
    """As the Rust benches compute it: the value at rank ceil(q n)."""
    rank = min(max(math.ceil(q * len(sorted_ms)), 1), len(sorted_ms))
    return sorted_ms[rank - 1]


def start(kernel_name, cwd):
    """A started kernel, its client and the milliseconds to its first kernel_info_reply.

    One kernel_info_request is sent right after the launch (ZeroMQ holds it until the kernel
    binds its sockets), not wait_for_ready's polling, which rounds up to its poll interval."""
    km = KernelManager(kernel_name=kernel_name)
    t = time.perf_counter()
    km.start_kernel(cwd=str(cwd))
    kc = km.client()
    kc.start_channels()
    msg_id = kc.kernel_info()
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            stop(km, kc)
            raise SystemExit(f"{kernel_name}: no kernel_info_reply within {START_TIMEOUT} s")
        try:
            reply = kc.get_shell_msg(timeout=left)
        except Empty:
            continue
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    ms = (time.perf_counter() - t) * 1e3
    # Also waits for iopub to be connected before any cell is sent.
    kc.wait_for_ready(timeout=START_TIMEOUT)
    return km, kc, ms


def stop(km, kc):
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def round_trips(kc, code, n, cell_id, expect_status, expect_ename=None):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        run = collect(kc, send_execute(kc, code, cell_id))
        times.append((time.perf_counter() - t) * 1e3)
        if run.status != expect_status or (expect_ename and run.reply["ename"] != expect_ename):
            raise SystemExit(f"unexpected answer to {code!r}:\n{run.describe()}")
    return sorted(times)


def measure(label, spec, setup, cell, error_cell, ename, cwd):
    starts = []
    for _ in range(STARTS):
        km, kc, ms = start(spec, cwd)
        starts.append(ms)
        stop(km, kc)
    km, kc, _ = start(spec, cwd)
    try:
        if setup:
            run = execute(kc, setup, cell_id="setup")
            if run.status != "ok":
                raise SystemExit(f"{label}: the set-up cell failed:\n{run.describe()}")
        # Once untimed: the first run builds (or loads) the program's kernels.
        round_trips(kc, cell, 1, "timed", "ok")
        ok_ms = round_trips(kc, cell, ROUND_TRIPS, "timed", "ok")
        error_ms = round_trips(kc, error_cell, ERROR_TRIPS, "error", "error", ename)
    finally:
        stop(km, kc)
    return {
        "kernelspec": spec,
        "start_to_kernel_info_reply_ms": {"median": statistics.median(starts), "all": starts},
        "execute_round_trip_ms": {
            "cell": cell,
            "n": ROUND_TRIPS,
            "p50": quantile(ok_ms, 0.50),
            "p99": quantile(ok_ms, 0.99),
            "max": ok_ms[-1],
        },
        "type_error_round_trip_ms": {
            "cell": error_cell.strip(),
            "ename": ename,
            "n": ERROR_TRIPS,
            "p50": quantile(error_ms, 0.50),
        },
    }


def main():
    wsp = Path(os.environ.get("WSP_BIN") or ROOT / "target/debug/wsp").resolve()
    out = Path(os.environ.get("WSP_BENCH_OUT") or ROOT / "target/bench/kernel.json")
    if not wsp.is_file():
        raise SystemExit(f"no wsp binary at {wsp}: build it or set WSP_BIN")
    tmp = Path(tempfile.mkdtemp(prefix="wsp-kernel-bench-"))
    try:
        # Our kernelspec first; ipykernel's comes from this venv. Nothing of the user's setup.
        install_isolated(wsp, tmp)
        results = {
            label: measure(label, *spec, cwd=tmp) for label, spec in KERNELS.items()
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    report = {
        "wsp_binary": str(wsp),
        "versions": {p: version(p) for p in ("jupyter_client", "ipykernel", "pyzmq")},
        "kernels": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")

    rows = [
        ("start to kernel_info_reply, median", "start_to_kernel_info_reply_ms", "median"),
        ("execute round trip, p50", "execute_round_trip_ms", "p50"),
        ("execute round trip, p99", "execute_round_trip_ms", "p99"),
        ("type error round trip, p50", "type_error_round_trip_ms", "p50"),
    ]
    print(f"{'ms':<38}{'wsp':>10}{'ipykernel':>12}")
    for label, key, stat in rows:
        wsp_ms, ipy_ms = (results[k][key][stat] for k in ("wsp", "ipykernel"))
        print(f"{label:<38}{wsp_ms:>10.2f}{ipy_ms:>12.2f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
