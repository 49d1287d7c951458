"""Shared set-up of the Jupyter client tests: the `wsp` kernelspec, installed by the binary
itself (`wsp jupyter install --prefix`) into a temporary folder that `JUPYTER_PATH` points at,
and every other Jupyter folder (config, data, runtime) and the kernel cache in that folder too,
so the tests neither read nor change the user's setup.

The binary is `$WSP_BIN`, else `target/debug/wsp` of this workspace.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from kernel_client import ROOT, install_isolated

_SESSION = {}


def wsp_bin() -> Path:
    path = Path(os.environ.get("WSP_BIN") or ROOT / "target/debug/wsp")
    if not path.is_file():
        raise pytest.UsageError(
            f"no wsp binary at {path}: build it (`cargo build -p wsp-cli`) or set WSP_BIN"
        )
    return path.resolve()


def pytest_configure(config):
    tmp = Path(tempfile.mkdtemp(prefix="wsp-jupyter-tests-"))
    _SESSION["tmp"] = tmp
    spec = install_isolated(wsp_bin(), tmp)
    if not spec.is_file():
        raise pytest.UsageError(f"`wsp jupyter install --prefix` wrote no {spec}")
    _SESSION["kernelspec"] = json.loads(spec.read_text())
    # JupyterLab's settings and workspaces would otherwise go under the user's folders.
    os.environ.update(
        {
            "JUPYTERLAB_SETTINGS_DIR": str(tmp / "lab/settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab/workspaces"),
        }
    )


def pytest_unconfigure(config):
    tmp = _SESSION.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def kernelspec():
    """The kernel.json `wsp jupyter install` wrote."""
    return _SESSION["kernelspec"]


@pytest.fixture
def tour_dir(tmp_path):
    """A copy of the tour notebook in `notebooks/` with the example data beside it in `data/`,
    as in `examples/`, so the notebook's `../data/seq_lens.npy` resolves and its `save_npy`
    files land in the copy."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(ROOT / "examples/notebooks/tour.ipynb", notebooks / "tour.ipynb")
    shutil.copytree(ROOT / "examples/data", tmp_path / "data")
    return notebooks
