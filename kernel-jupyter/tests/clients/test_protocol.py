"""The kernel under jupyter_client directly: interrupts, a crashing `cpp_src` kernel, messages
signed with the wrong key, restarts, cells with errors, re-executed cells and magics. Each test
starts its own kernel in a temporary folder."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

import numpy as np
import pytest
from jupyter_client import BlockingKernelClient, KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from conftest import wsp_bin
from kernel_client import collect, execute, ok, running_kernel, send_execute, stats_rows


def bump_program(tensor, tiles, size, suffix=""):
    """The definitions of a program that adds 1 to every element of `tensor`, `tiles` tiles of
    `size` x `size` starting as 0, 1, 2, ..., compiled as `bump{suffix}` and run once."""
    return f'''
items{suffix} = Dense[{tiles}]
{tensor} = Tensor(({tiles}, {size}, {size}), F32, init=arange())


@kernel
def bump{suffix}_tile(t: InOut[Tile[{size}, {size}, F32]]):
    pto.store(t, pto.add(t, pto.constant(1.0, F32)))


@workload
def bump{suffix}_all(items{suffix}):
    for i in P(items{suffix}):
        bump{suffix}_tile[i](t={tensor}[i])


bump{suffix} = bump{suffix}_all(items{suffix}).compile(target="cpu_sim")
bump{suffix}.execute()
'''


# A small program: T starts as 0, 1, 2, ... and each run of `bump` adds 1 to every element.
BUMP = "\nfrom pto_wsp import *\n\nF32 = DType.F32" + bump_program("T", 4, 8)

ARANGE = np.arange(4 * 8 * 8, dtype=np.float32).reshape(4, 8, 8)

# A tile shape mismatch: WSP201.
BAD_KERNEL = '''
@kernel
def add_bias(x: In[Tile[16, 128, F32]], b: In[Tile[16, 64, F32]], y: Out[Tile[16, 128, F32]]):
    pto.store(y, pto.add(x, b))
'''
GOOD_KERNEL = BAD_KERNEL.replace("Tile[16, 64, F32]", "Tile[16, 1, F32]")


def saved(kc, folder, tensor):
    """The values of `tensor` now, through a `save_npy` cell."""
    ok(execute(kc, f'save_npy({tensor}, "{tensor}.npy")'))
    return np.load(folder / f"{tensor}.npy")


# A `cpp_src` kernel that spins on ones and returns at once on zeros.
SPIN = '''
from pto_wsp import *

F32 = DType.F32
items = Dense[4]
Idle = Tensor((4, 8, 8), F32, init=zeros())
Busy = Tensor((4, 8, 8), F32, init=ones())
Sink = Tensor((4, 8, 8), F32)


@kernel(cpp_src="""
    if (x[0] > 0.5f) {
        for (volatile long i = 0; i < (1L << 50); ++i) {}
    }
    y[0] = x[0];
""")
def spin(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


@workload
def spin_idle(items):
    for i in P(items):
        spin[i](x=Idle[i], y=Sink[i])


@workload
def spin_busy(items):
    for i in P(items):
        spin[i](x=Busy[i], y=Sink[i])


quick = spin_idle(items).compile(target="cpu_sim")
slow = spin_busy(items).compile(target="cpu_sim")
quick.execute()
'''


@pytest.mark.parametrize("how", ["interrupt_request", "SIGINT"])
def test_interrupt_stops_a_running_cell_and_keeps_the_program(tmp_path, how):
    """The stop button (an interrupt_request on control) and SIGINT (which jupyter_client
    sends to the kernel's process group) both end the running cell; the kernel lives on."""
    with running_kernel(tmp_path) as (km, kc):
        # Builds the kernel and runs it on zeros (no spinning), so the next cell only runs.
        ok(execute(kc, SPIN))
        msg_id = send_execute(kc, "slow.execute()")
        time.sleep(2.0)
        try:
            early = kc.get_shell_msg(timeout=0)
        except Empty:
            early = None
        assert early is None, f"the spinning cell replied before the interrupt: {early}"
        start = time.monotonic()
        if how == "SIGINT":
            km.signal_kernel(signal.SIGINT)
        else:
            km.interrupt_kernel()
        run = collect(kc, msg_id, timeout=10)
        elapsed = time.monotonic() - start
        assert run.status == "error", run.describe()
        assert len(run.errors) == 1, run.describe()
        assert elapsed < 1.5, f"the cell ended {elapsed:.2f} s after the interrupt"
        after = ok(execute(kc, 'quick.execute()\nprint("still here")'))
        assert "still here" in after.stream("stdout"), after.describe()


# A `cpp_src` kernel that writes through a null pointer: its run process dies (WSP602).
CRASH = '''
@kernel(cpp_src="""
    if (x[0] >= 0.0f) {
        volatile float* p = nullptr;
        *p = 1.0f;
    }
""")
def crash_tile(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


Sink = Tensor((4, 8, 8), F32)


@workload
def crash_all(items):
    for i in P(items):
        crash_tile[i](x=T[i], y=Sink[i])


crasher = crash_all(items).compile(target="cpu_sim")
print("before the crash")
crasher.execute()
'''


def test_a_crashing_cpp_kernel_is_wsp602_and_spares_the_program(tmp_path):
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP))
        run = execute(kc, CRASH)
        assert run.status == "error", run.describe()
        assert run.reply["ename"] == "WSP602", run.describe()
        assert "crash_tile" in run.reply["evalue"], run.describe()
        assert [e["ename"] for e in run.errors] == ["WSP602"], run.describe()
        # What the cell printed before the crash is not lost.
        assert run.stream("stdout") == "before the crash\n", run.describe()
        # Rendered as a check diagnostic: at the task call, in its cell.
        traceback = plain(run.errors[0]["traceback"])
        assert "In[2]" in traceback and "crash_tile[i](x=T[i], y=Sink[i])" in traceback, traceback
        assert "the task was made by this call" in traceback, traceback
        # Definitions and T's value (bumped once) survive; the next run sees them.
        ok(execute(kc, "bump.execute()"))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 2)


def test_an_upgrade_of_the_binary_breaks_no_open_notebook(tmp_path):
    """The kernel runs from a copy of `wsp`; after the first cell another file is renamed over
    the copy, as `cargo install` or a rebuild does. The cells after it need new run processes
    (a crash ends one; `%workers` starts another), and still run: children start from the
    running image, not from the path."""
    copy = tmp_path / "bin" / "wsp"
    copy.parent.mkdir()
    shutil.copy2(wsp_bin(), copy)
    prefix = tmp_path / "prefix"
    subprocess.run([str(copy), "jupyter", "install", "--prefix", str(prefix)], check=True, timeout=60)
    specs = KernelSpecManager(kernel_dirs=[str(prefix / "share/jupyter/kernels")])
    assert specs.get_kernel_spec("wsp").argv[0] == str(copy)
    with running_kernel(tmp_path, specs) as (_, kc):
        ok(execute(kc, BUMP))
        upgrade = copy.with_name("wsp.new")
        upgrade.write_text("#!/bin/sh\necho 'not the running wsp' >&2\nexit 3\n")
        upgrade.chmod(0o755)
        os.replace(upgrade, copy)
        run = execute(kc, CRASH)
        assert run.reply["ename"] == "WSP602", run.describe()
        ok(execute(kc, "bump.execute()"))
        ok(execute(kc, "%workers 1\nbump.execute()"))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 3)


def test_values_carry_between_runs_kept_in_memory_or_past_its_cap(tmp_path):
    """Each run starts from the values the last one left: T (1 KB) from the run process's
    memory, Big (68 MB, past the 64 MiB kept there) from its file. Cells that change nothing
    and cells that redefine a tensor see the right values too."""
    big = bump_program("Big", 1040, 128, suffix="_big")
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP, cell_id="small"))
        ok(execute(kc, big, cell_id="big"))
        for _ in range(3):
            ok(execute(kc, "bump.execute()\nbump_big.execute()", cell_id="again"))
        ok(execute(kc, "1 + 1", cell_id="other"))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 4)
        # Four runs of + 1 in f32 (past 2^24, adding 4 at once rounds differently).
        want = np.arange(1040 * 128 * 128, dtype=np.float32).reshape(1040, 128, 128)
        for _ in range(4):
            want += np.float32(1)
        np.testing.assert_array_equal(saved(kc, tmp_path, "Big"), want)
        # The small program's cell again: T is declared anew, from arange.
        ok(execute(kc, BUMP, cell_id="small"))
        ok(execute(kc, "bump.execute()", cell_id="again"))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 2)
        np.testing.assert_array_equal(saved(kc, tmp_path, "Big"), want)


def group_members(group):
    """The live processes of process group `group` (zombies have ended)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        # `pid (comm) state ppid pgrp ...`; comm may hold spaces.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_kernel_and_its_run_process(tmp_path, sig):
    """A job scheduler's SIGTERM or a closed terminal's SIGHUP, while a cell spins in the run
    process: the kernel stops it, ends and reaps the run process, and exits 0, leaving no
    process of its group behind."""
    km = KernelManager(kernel_name="wsp")
    km.start_kernel(cwd=str(tmp_path))
    kc = km.client()
    try:
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        ok(execute(kc, SPIN))
        send_execute(kc, "slow.execute()")
        time.sleep(1.0)
        kernel = km.provisioner.process
        group = os.getpgid(kernel.pid)
        assert len(group_members(group)) >= 2, "no run process beside the kernel"
        os.kill(kernel.pid, sig)
        assert kernel.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while group_members(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group_members(group) == [], "processes left behind"
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def plain(traceback):
    """A traceback's lines as one text, without colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(traceback))


def test_a_view_out_of_bounds_at_run_time_is_wsp602_at_the_task_call(tmp_path):
    """Lengths read from a tensor take a whole-ragged loop past `Marks`: found as the task is
    made, before any kernel runs, and shown at the task call as a check diagnostic."""
    marks = '''
I32 = DType.I32
Lens = Tensor((2,), I32, init=full(3))
tokens = Ragged(2, lengths=Lens)
Marks = Tensor((4, 8, 8), F32)


@workload
def mark_all():
    for t in P.seq(tokens):
        bump_tile[t](t=Marks[t])


marker = mark_all().compile(target="cpu_sim")
marker.execute()
'''
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP))
        run = execute(kc, marks)
        assert run.reply["ename"] == "WSP602", run.describe()
        assert "task bump_tile[4]" in run.reply["evalue"], run.describe()
        traceback = plain(run.errors[0]["traceback"])
        for part in ["In[2]:11:", "bump_tile[t](t=Marks[t])", "kernel did not run"]:
            assert part in traceback, traceback
        assert "faulted" not in traceback, traceback


def test_what_a_cpp_kernel_prints_reaches_the_cell(tmp_path):
    """The run process is kept between cells and its standard output carries its reports: a
    kernel's own printf must reach the cell as output, not be taken for a report."""
    chatty = '''
@kernel(cpp_src="""
    std::printf("tile at %g%c", (double)x[0], 10);
    std::fflush(stdout);
    for (int i = 0; i < 64; ++i) y[i] = x[i];
""", cpp_includes=["cstdio"])
def chatty_tile(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


Copy = Tensor((4, 8, 8), F32)


@workload
def chatty_all(items):
    for i in P(items):
        chatty_tile[i](x=T[i], y=Copy[i])


chatty = chatty_all(items).compile(target="cpu_sim")
'''
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP))
        ok(execute(kc, chatty))
        for _ in range(2):
            run = ok(execute(kc, "chatty.execute()"))
            lines = sorted(run.stream("stdout").splitlines())
            assert lines == ["tile at 1", "tile at 129", "tile at 193", "tile at 65"], run.describe()
        np.testing.assert_array_equal(saved(kc, tmp_path, "Copy"), ARANGE + 1)


def test_a_message_signed_with_another_key_gets_no_reply(tmp_path):
    with running_kernel(tmp_path) as (km, kc):
        intruder = BlockingKernelClient()
        intruder.load_connection_info(km.get_connection_info())
        intruder.session.key = b"not-the-kernel-key"
        # The shell channel only: iopub messages carry the real key, which this client lacks.
        intruder.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            forged = intruder.execute('from pto_wsp import *\nprint("forged")')
            info = intruder.kernel_info()
            try:
                answer = intruder.get_shell_msg(timeout=1.0)
            except Empty:
                answer = None
            except ValueError as e:
                # A reply signed with the kernel's key fails this client's signature check.
                answer = f"a reply this client cannot verify ({e})"
            assert answer is None, f"the kernel answered a forged message: {answer}"
        finally:
            intruder.stop_channels()
        # Nothing ran for the forged requests: the kernel published nothing for them (not even
        # a busy status)...
        while True:
            try:
                msg = kc.get_iopub_msg(timeout=0.2)
            except Empty:
                break
            assert msg["parent_header"].get("msg_id") not in (forged, info), msg
        # ...and it still answers the right key.
        run = ok(execute(kc, 'from pto_wsp import *\nprint("signed")'))
        assert run.stream("stdout") == "signed\n", run.describe()


def test_a_signed_request_that_cannot_be_read_gets_an_error_reply(tmp_path):
    """A request whose content is not one of its type (a tail without `n`), and one of a type
    the kernel does not serve: each gets an error reply of its type, and the kernel goes on."""
    with running_kernel(tmp_path) as (_, kc):
        for msg_type, content, reply_type in [
            ("history_request", {"hist_access_type": "tail", "output": False, "raw": True},
             "history_reply"),
            ("history_request", {"hist_access_type": "range", "start": "not a number"},
             "history_reply"),
            ("debug_request", {"command": "initialize"}, "debug_reply"),
        ]:
            msg = kc.session.msg(msg_type, content)
            kc.shell_channel.send(msg)
            reply = kc.get_shell_msg(timeout=10)
            assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"], reply
            assert reply["msg_type"] == reply_type, reply
            assert reply["content"]["status"] == "error", reply
            assert msg_type in reply["content"]["evalue"], reply
        # A search with only a pattern: IPython's defaults (every match, not unique).
        ok(execute(kc, 'print("A")'))
        ok(execute(kc, 'print("A")'))
        kc.history(hist_access_type="search", pattern='print("A*')
        reply = kc.get_shell_msg(timeout=10)
        assert reply["content"]["status"] == "ok", reply
        assert len(reply["content"]["history"]) == 2, reply
        ok(execute(kc, "B = 2"))


def test_a_request_on_the_control_channel_is_answered(tmp_path):
    """Control requests the kernel does not serve get their error reply there too."""
    with running_kernel(tmp_path) as (_, kc):
        for msg_type in ["debug_request", "foo_request"]:
            msg = kc.session.msg(msg_type, {})
            kc.control_channel.send(msg)
            reply = kc.get_control_msg(timeout=10)
            assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"], reply
            assert reply["msg_type"] == msg_type.replace("_request", "_reply"), reply
            assert reply["content"]["status"] == "error", reply
        ok(execute(kc, 'print("still here")'))


def test_restart_gives_a_fresh_program(tmp_path):
    with running_kernel(tmp_path) as (km, kc):
        ok(execute(kc, BUMP))
        km.restart_kernel()
        kc.wait_for_ready(timeout=60)
        # The old program is gone: T is an unknown name now...
        gone = execute(kc, 'save_npy(T, "T.npy")')
        assert gone.status == "error" and gone.reply["ename"] == "WSP101", gone.describe()
        # ...and the same definitions run again from scratch: T starts anew.
        ok(execute(kc, BUMP))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 1)


def test_a_type_error_is_reported_and_leaves_the_program_as_it_was(tmp_path):
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP))
        bad = execute(kc, BAD_KERNEL)
        assert bad.status == "error", bad.describe()
        assert bad.reply["ename"] == "WSP201", bad.describe()
        assert "[16,64]" in bad.reply["evalue"], bad.describe()
        assert len(bad.outputs) == 1 and bad.errors, bad.describe()
        traceback = "\n".join(bad.errors[0]["traceback"])
        assert "WSP201" in traceback and "pto.add(x, b)" in traceback, traceback
        # The failed cell defined nothing: the corrected kernel takes the same name.
        ok(execute(kc, GOOD_KERNEL))
        ok(execute(kc, "bump.execute()"))
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), ARANGE + 2)


def test_a_re_executed_cell_replaces_its_text(tmp_path):
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, "from pto_wsp import *\nN = 4", cell_id="constants"))
        # Same cell again, changed: it replaces its earlier text, so N is not defined twice.
        ok(execute(kc, "from pto_wsp import *\nN = 8", cell_id="constants"))
        run = ok(execute(kc, "print(N)", cell_id="show"))
        assert run.stream("stdout") == "8\n", run.describe()
        # Another cell defining N again is a duplicate definition.
        dup = execute(kc, "N = 16", cell_id="other")
        assert dup.status == "error" and dup.reply["ename"] == "WSP103", dup.describe()
        # The same cell again with an error: reported, and the cell keeps its last good text.
        bad = execute(kc, "from pto_wsp import *\nN = undefined_name", cell_id="constants")
        assert bad.status == "error" and bad.reply["ename"] == "WSP101", bad.describe()
        run = ok(execute(kc, "print(N)", cell_id="show"))
        assert run.stream("stdout") == "8\n", run.describe()


def test_magics_set_how_later_runs_go(tmp_path):
    dynamic = '''
from pto_wsp import *

F32 = DType.F32
rows = DenseDyn(4)
T = Tensor((16, 8, 8), F32, init=arange())


@kernel
def bump_tile(t: InOut[Tile[8, 8, F32]]):
    pto.store(t, pto.add(t, pto.constant(1.0, F32)))


@workload
def bump_rows(rows):
    for i in P(rows):
        bump_tile[i](t=T[i])


bump = bump_rows(rows).compile(target="cpu_sim")
'''

    def tasks(run):
        tables = [d["data"]["text/plain"] for d in run.displays if "text/html" in d["data"]]
        assert len(tables) == 1, run.describe()
        return [row["tasks"] for row in stats_rows(tables[0])]

    def timelines(run):
        return [d for d in run.displays if "image/svg+xml" in d["data"]]

    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, dynamic))
        assert tasks(ok(execute(kc, "bump.execute()"))) == ["4"]
        ok(execute(kc, "%bind rows=8"))
        assert tasks(ok(execute(kc, "bump.execute()"))) == ["8"]
        bad = execute(kc, "%workers 0")
        assert bad.status == "error" and len(bad.errors) == 1, bad.describe()
        ok(execute(kc, "%workers 1"))
        ok(execute(kc, "%trace on"))
        traced = ok(execute(kc, "bump.execute()"))
        assert len(timelines(traced)) == 1 and tasks(traced) == ["8"], traced.describe()
        # With its timeline, the run's scheduler overhead by simpler's model.
        overhead = [
            d["data"]["text/plain"]
            for d in traced.displays
            if "scheduler overhead" in d["data"].get("text/plain", "")
        ]
        assert len(overhead) == 1 and "bump: scheduler overhead (simpler's model) AIC" in overhead[0], (
            traced.describe()
        )
        ok(execute(kc, "%trace off"))
        modelled = ok(execute(kc, "bump.execute()"))
        assert not timelines(modelled)
        # Measured cycles replace the model's: 8 tasks at once, each 50,000 cycles longer.
        (tmp_path / "kernel_cycles.json").write_text(
            '{"kernels": {"bump_tile": {"core": "AIV", "total_cycles": 50000}}}'
        )
        ok(execute(kc, "%kernel_cycles kernel_cycles.json"))
        measured = ok(execute(kc, "bump.execute()"))
        ok(execute(kc, "%kernel_cycles model"))

        def cycles(run):
            tables = [d["data"]["text/plain"] for d in run.displays if "text/html" in d["data"]]
            return int(stats_rows(tables[0])[0]["total cycles"].replace(",", ""))

        assert cycles(measured) > cycles(modelled) + 45000, (cycles(measured), cycles(modelled))
        assert cycles(ok(execute(kc, "bump.execute()"))) == cycles(modelled)
        # Rows 0-3 ran 6 times, rows 4-7 five times (from the binding on), rows 8-15 never.
        expected = np.arange(16 * 8 * 8, dtype=np.float32).reshape(16, 8, 8)
        expected[:4] += 6
        expected[4:8] += 5
        np.testing.assert_array_equal(saved(kc, tmp_path, "T"), expected)


def test_requests_queued_behind_a_failed_cell_are_aborted(tmp_path):
    """As ipykernel does with stop_on_error: "Run All" stops at the first failing cell."""
    with running_kernel(tmp_path) as (_, kc):
        failing = send_execute(kc, "N = undefined_name")
        queued = send_execute(kc, "M = 1")
        assert collect(kc, failing).status == "error"
        aborted = collect(kc, queued)
        assert aborted.status == "aborted", aborted.describe()
        # A request sent after the failure has been answered runs as usual.
        ok(execute(kc, "M = 1"))


@pytest.mark.parametrize("busy", [False, True])
def test_a_kernel_whose_parent_died_exits(tmp_path, busy):
    """As ipykernel's parent poller: a client that dies without shutting its kernel down must
    not leave it (and its run process) running, idle or in the middle of a spinning cell."""
    spin = (
        f"kc.execute_interactive({SPIN!r}, timeout=120)\n"
        "kc.execute('slow.execute()')\nimport time\ntime.sleep(1.0)\n"
        if busy
        else ""
    )
    starter = f"""
import os, sys
from jupyter_client import KernelManager
km = KernelManager(kernel_name="wsp")
km.start_kernel(cwd={str(tmp_path)!r})
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=60)
{spin}print("\\nPID", km.provisioner.pid, flush=True)
os._exit(0)
"""
    out = subprocess.run(
        [sys.executable, "-c", starter], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split("PID")[-1])
    group = os.getpgid(pid)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not group_members(group):
            return
        time.sleep(0.1)
    for p in group_members(group):
        os.kill(p, signal.SIGKILL)
    raise AssertionError(f"the kernel (pid {pid}) or its run process outlived its parent by 10 s")


def test_program_trace_carries_between_cells_and_shows_its_summary(tmp_path):
    """The tutorial's `program.trace` in a notebook: runs of earlier cells are in it, a cell's
    last expression `program.trace` is its summary table, and `clear_trace()` empties it."""
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP.replace("bump.execute()\n", "bump.enable_tracing(TraceLevel.FULL)\n")))
        ok(execute(kc, "bump.execute()"))
        ok(execute(kc, "bump.execute()"))
        shown = ok(execute(kc, "bump.trace"))
        (result,) = shown.results
        text, html = result["data"]["text/plain"], result["data"]["text/html"]
        assert text.startswith("Execution Trace Summary:\n  Total events: 16\n  Tasks executed: 8\n"), text
        assert "bump_tile: 8 runs" in text, text
        assert '<table class="wsp-trace">' in html and "<td>bump_tile</td>" in html, html
        printed = ok(execute(kc, 'print(len(bump.trace.get_kernel_events("bump_tile")), bump.trace.summary()["trace_level"])'))
        assert printed.stream("stdout") == "8 FULL\n", printed.describe()
        ok(execute(kc, 'import json\nwith open("events.json", "w") as f:\n    json.dump(bump.trace.get_task_events(), f)'))
        events = json.loads((tmp_path / "events.json").read_text())
        assert len(events) == 8 and events[0]["args"] == ["t: T[0:1, 0:8, 0:8]"], events[0]
        ok(execute(kc, "bump.clear_trace()"))
        empty = ok(execute(kc, 'bump.trace.summary()["task_count"]'))
        assert empty.results[0]["data"]["text/plain"] == "0", empty.describe()


def test_stats_and_traces_of_earlier_cells_stay_true(tmp_path):
    """A program's stats are its last execution's in every later cell, printed or formatted;
    and the Chrome trace of runs from different cells draws them one after another, with no
    two slices of a track overlapping."""
    with running_kernel(tmp_path) as (_, kc):
        ok(execute(kc, BUMP.replace("bump.execute()\n", "bump.enable_tracing(TraceLevel.TIMING)\n")))
        ran = ok(execute(kc, "bump.execute()\nprint(bump.stats.total_cycles)"))
        cycles = ran.stream("stdout").strip()
        assert int(cycles) > 0, ran.describe()
        later = ok(execute(kc, 'print(bump.stats.total_cycles)\nprint(f"{bump.stats.total_cycles} cycles")'))
        assert later.stream("stdout") == f"{cycles}\n{cycles} cycles\n", later.describe()
        ok(execute(kc, "bump.execute()"))
        ok(execute(kc, 'import json\nwith open("trace.json", "w") as f:\n    json.dump(bump.trace.to_chrome_trace(), f)'))
        doc = json.loads((tmp_path / "trace.json").read_text())
        slices = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        assert len([e for e in slices if e["cat"] == "kernel"]) == 8, slices
        tracks = {}
        for e in slices:
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        for track, spans in tracks.items():
            spans.sort()
            for (_, end), (start, _) in zip(spans, spans[1:]):
                assert start >= end - 1e-9, (track, spans)
        # The trace's total time spans both runs, one after the other.
        total = ok(execute(kc, "print(bump.trace.total_time_ms())"))
        kernels = [e for e in slices if e["cat"] == "kernel"]
        span_us = max(e["ts"] + e["dur"] for e in kernels) - min(e["ts"] for e in kernels)
        assert float(total.stream("stdout")) * 1e3 >= span_us * 0.99, (total.describe(), span_us)


MOE = (Path(__file__).resolve().parents[3] / "cli/tests/tune/moe.wsp").read_text()


def test_an_exploration_shows_its_progress_live_and_its_summary_as_a_table_and_chart(tmp_path):
    """`best_config, summary = AutoScheduler(w).explore(space)` in a cell: its progress is one
    display, updated in place as configurations are scored; a later cell's `summary` is the
    ranking as a table beside an SVG chart with the best marked; `best_config` and a program
    compiled `with_config(best_config)` carry over to later cells."""
    with running_kernel(tmp_path) as (_, kc):
        ran = ok(execute(kc, MOE))
        shown = [o for o in ran.outputs if o["msg_type"] in ("display_data", "update_display_data")]
        assert shown, ran.describe()
        assert shown[0]["msg_type"] == "display_data", ran.describe()
        display_id = shown[0]["content"]["transient"]["display_id"]
        assert display_id.startswith("wsp-explore-"), display_id
        assert all(o["content"]["transient"]["display_id"] == display_id for o in shown)
        last = shown[-1]["content"]["data"]
        assert "scheduler.explore(space): 80/80 configurations scored" in last["text/plain"], last
        assert "<progress" in last["text/html"], last
        summary = ok(execute(kc, "summary"))
        (result,) = summary.results
        text, html = result["data"]["text/plain"], result["data"]["text/html"]
        assert text.startswith("Scheduling Exploration Summary\n"), text
        assert "Configurations tested: 80" in text, text
        assert '<table class="wsp-explore-ranking">' in html and "<svg" in html, html
        assert html.count(">best</text>") == 1, html
        best = ok(execute(kc, "best_config"))
        assert best.results[0]["data"]["text/plain"].startswith("ScheduleConfig(streams=8,"), best.describe()
        cycles = ok(execute(kc, "program = moe(batch, routing).with_config(best_config).compile()\nprogram.execute()\nprint(program.stats.total_cycles, summary.best_cycles)"))
        a, b = cycles.stream("stdout").split()
        assert a == b, cycles.describe()
