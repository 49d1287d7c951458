"""nbclient runs `examples/notebooks/tour.ipynb` top to bottom with the kernel its metadata names
(`wsp`), in a copy of the notebook's folder; then its outputs and the files it saved are
checked. The executed notebook is kept as `target/jupyter/tour.nbclient.ipynb`."""

import base64
import re
import struct

import nbformat
import numpy as np
from nbclient import NotebookClient

from kernel_client import ROOT, stats_rows
from tour_checks import check_saved_tensors, total_cycles

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+(?:e[-+]?\d+)?")


def cell(nb, cell_id):
    found = [c for c in nb.cells if c.get("id") == cell_id]
    assert len(found) == 1, f"no single cell {cell_id!r} in the tour"
    return found[0]


def outputs(c, output_type):
    return [o for o in c.outputs if o.output_type == output_type]


def displayed(c, mime):
    """The `mime` data of the cell's display_data outputs."""
    return [o.data[mime] for o in outputs(c, "display_data") if mime in o.data]


def stats(c) -> str:
    """The stats table the kernel displayed after the cell's run, as text: the text/plain of
    the display with an HTML form (the timeline's display has an SVG form instead)."""
    tables = [
        o.data["text/plain"] for o in outputs(c, "display_data") if "text/html" in o.data
    ]
    assert len(tables) == 1, f"cell {c.id}: one stats table expected, got {c.outputs}"
    return tables[0]


def test_nbclient_runs_the_tour(tour_dir):
    path = tour_dir / "tour.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.kernelspec.name == "wsp"
    client = NotebookClient(
        nb, timeout=300, startup_timeout=60, resources={"metadata": {"path": str(tour_dir)}}
    )
    try:
        client.execute()
    finally:
        out = ROOT / "target/jupyter/tour.nbclient.ipynb"
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out)

    assert nb.metadata.language_info.name == "wsp"
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        assert not outputs(c, "error"), f"cell {c.id}: {outputs(c, 'error')}"
        stderr = [o.text for o in outputs(c, "stream") if o.name == "stderr"]
        assert not stderr, f"cell {c.id} wrote to stderr: {stderr}"

    # The rmsnorm run: the printed stats and the stats table, no timeline (tracing is off).
    run = cell(nb, "rmsnorm-program")
    stdout = "".join(o.text for o in outputs(run, "stream") if o.name == "stdout")
    assert "'task_count': 32" in stdout, stdout
    assert len(displayed(run, "text/html")) == 1, run.outputs
    rows = stats_rows(stats(run))
    assert [(r["program"], r["tasks"]) for r in rows] == [("program", "32")], rows
    assert total_cycles(stats(run)) > 0
    assert not displayed(run, "image/svg+xml"), "tracing is off until `%trace on`"

    # `Y` as the last expression: a preview of its values, HTML and a PNG heatmap.
    shown = cell(nb, "rmsnorm-show")
    results = outputs(shown, "execute_result")
    assert len(results) == 1, shown.outputs
    data = results[0].data
    assert {"text/plain", "text/html", "image/png"} <= set(data), set(data)
    # The preview may begin with a header (name, shape, dtype); Y[0, 0, 0, 0] is among its
    # first numbers.
    y0 = float(np.load(tour_dir / "rmsnorm_y.npy")[0, 0, 0, 0])
    numbers = [float(n) for n in NUMBER.findall(data["text/plain"])[:16]]
    assert any(abs(n - y0) <= 1e-3 * max(1.0, abs(y0)) for n in numbers), (
        f"the preview should show Y[0, 0, 0, 0] = {y0}: {data['text/plain']!r}"
    )
    png = base64.b64decode(data["image/png"])
    assert png.startswith(PNG_SIGNATURE), png[:16]
    width, height = struct.unpack(">II", png[16:24])
    assert width > 0 and height > 0

    # Both attention runs (tracing on): a timeline each, and the schedules differ in time.
    affinity, steal = cell(nb, "attention-affinity"), cell(nb, "attention-steal")
    timelines = [displayed(c, "image/svg+xml") for c in (affinity, steal)]
    for c, svgs in zip((affinity, steal), timelines):
        assert len(svgs) == 1 and "<svg" in svgs[0], f"cell {c.id}: {c.outputs}"
    assert timelines[0] != timelines[1]
    assert total_cycles(stats(affinity)) != total_cycles(stats(steal))

    check_saved_tensors(tour_dir)
