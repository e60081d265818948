"""The notebooks: stored executed and current with their jupytext sources, and runnable.

Each ``notebooks/<name>.py`` (jupytext percent format) is the source of truth of
``notebooks/<name>.ipynb``, which is stored executed with its outputs and figures
(``make notebooks`` rebuilds and re-executes them). The fast tests check the stored
``.ipynb`` against its source and its outputs; ``test_notebook_runs`` executes the
notebook built from the source end to end with ``BAYESJUDGE_FAST=1`` (small draws, few
splits), through the same code as ``tools/execute_notebooks``: a kernel running this
interpreter, so the notebooks see exactly the environment the tests run in.
"""

from __future__ import annotations

from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

import ipykernel  # noqa: F401  (dev extra: a missing kernel must fail, not skip)
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("*.py"))
STORED = sorted((ROOT / "notebooks").glob("*.ipynb"))
assert SOURCES, "notebooks/ holds no jupytext sources (*.py): nothing would be checked"
CELL_TIMEOUT = 600  # seconds per cell at BAYESJUDGE_FAST=1; NUTS compilation dominates
REGENERATE = "run `make notebooks` (tools/execute_notebooks) to rebuild and re-execute it"

_loader = SourceFileLoader("execute_notebooks", str(ROOT / "tools" / "execute_notebooks"))
execute_notebooks = module_from_spec(spec_from_loader(_loader.name, _loader))
_loader.exec_module(execute_notebooks)

ids = [p.stem for p in SOURCES]


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _outputs(nb, output_type=None):
    return [o for c in _code_cells(nb) for o in c.get("outputs", [])
            if output_type is None or o.get("output_type") == output_type]


def _pngs(cell):
    return [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]


def _stored(source: Path):
    path = source.with_suffix(".ipynb")
    assert path.exists(), f"{source.name} has no stored {path.name}: {REGENERATE}"
    return nbformat.read(path, as_version=4)


def test_every_stored_notebook_has_a_source():
    orphans = [p.name for p in STORED if not p.with_suffix(".py").exists()]
    assert not orphans, (f"stored notebooks without a jupytext source notebooks/<name>.py: "
                         f"{orphans}; pair them with `jupytext --set-formats ipynb,py:percent`")


@pytest.mark.parametrize("source", SOURCES, ids=ids)
def test_stored_notebook_matches_source(source):
    """The stored .ipynb has exactly the cells of its .py source (outputs aside)."""
    want = [(c.cell_type, c.source) for c in execute_notebooks.build(source).cells]
    have = [(c.cell_type, c.source) for c in _stored(source).cells]
    if have != want:
        first = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b),
                     min(len(have), len(want)))
        pytest.fail(
            f"notebooks/{source.stem}.ipynb is out of date with notebooks/{source.name} "
            f"({len(have)} vs {len(want)} cells; first difference at cell {first}): {REGENERATE}"
        )


@pytest.mark.parametrize("source", SOURCES, ids=ids)
def test_stored_notebook_is_executed(source):
    """Stored executed in one top-to-bottom run, every code cell with output, figures shown."""
    nb = _stored(source)
    cells = _code_cells(nb)
    counts = [c.get("execution_count") for c in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{source.stem}.ipynb is not stored executed top to bottom "
        f"(execution counts {counts}): {REGENERATE}")
    silent = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and not c.outputs]
    assert not silent, (f"{source.stem}.ipynb: code cells {silent} have no stored output "
                        f"(every cell of these notebooks prints, displays or plots): {REGENERATE}")
    unshown = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
               and "plt.show()" in c.source and not _pngs(c)]
    assert not unshown, (f"{source.stem}.ipynb: cells {unshown} make a figure but store no "
                         f"image/png output (is `%matplotlib inline` in the first cell?)")
    assert any(_pngs(c) for c in cells), f"{source.stem}.ipynb stores no figure (image/png)"


@pytest.mark.parametrize("source", SOURCES, ids=ids)
def test_stored_notebook_has_no_errors(source):
    errors = _outputs(_stored(source), "error")
    assert not errors, (f"{source.stem}.ipynb stores error output(s): "
                        f"{[e.get('ename') for e in errors]}")


@pytest.mark.parametrize("source", SOURCES, ids=ids)
def test_notebook_runs(source):
    """The notebook built from the .py source runs end to end (BAYESJUDGE_FAST=1)."""
    nb = execute_notebooks.execute(execute_notebooks.build(source), source.parent, fast=True,
                                   timeout=CELL_TIMEOUT)  # raises CellExecutionError
    assert not _outputs(nb, "error")
    assert all(c.get("execution_count") for c in _code_cells(nb))
    assert any(_pngs(c) for c in _code_cells(nb)), f"{source.name} made no figure"
