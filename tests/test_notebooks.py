"""Execute every notebook in notebooks/ end to end (small draws and few splits).

The kernel is this interpreter (a throw-away kernelspec pointing at
``sys.executable``), so the notebooks see exactly the environment the tests run
in. ``BAYESJUDGE_FAST=1`` tells the notebooks to shrink their splits and draws.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import ipykernel  # noqa: F401  (dev extra: a missing kernel must fail, not skip)
import nbclient
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
assert NOTEBOOKS, "notebooks/ holds no notebooks: nothing would be executed"
CELL_TIMEOUT = 600  # seconds per cell; NUTS compilation dominates


@pytest.fixture(scope="module")
def kernel_manager_factory(tmp_path_factory):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    kernels = tmp_path_factory.mktemp("kernels")
    spec_dir = kernels / "bayesjudge-tests"
    spec_dir.mkdir()
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bayesjudge tests",
        "language": "python",
    }))

    def make():
        ksm = KernelSpecManager(kernel_dirs=[str(kernels)])
        return KernelManager(kernel_name="bayesjudge-tests", kernel_spec_manager=ksm)

    return make


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_manager_factory, monkeypatch):
    monkeypatch.setenv("BAYESJUDGE_FAST", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        km=kernel_manager_factory(),
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
