"""The package's architecture, checked by reading its source (no imports executed).

Dependencies flow one way (CONTRIBUTING.md, "Layers"): a module imports only from
its own or a lower layer -- function-local imports included -- and never a private
(``_underscore``) name of another module; no modules import each other round a loop,
within a layer either. The folders are the architecture: the engine in ``engine/``,
one subpackage per model family in ``models/``, PyMC only in the engine, the models
and the contract (``base``). Docstrings cite the papers, not files of a folder the
package does not ship.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayesjudge"

#: Layer of each top-level part of the package (lower may not import higher).
LAYERS = {
    "constants": 0, "priors": 0, "data": 0, "engine": 0, "structures": 0, "persistence": 0,
    "rank_sets": 0,  # numpy and pandas only: the models and the baselines use it
    "lazy": 0,  # importlib only: the packages' attributes imported on first use
    "base": 1, "comparison": 1,
    "estimators": 2, "metrics": 2, "baselines": 2, "rewards": 2,
    "models": 3,
    "datasets": 4,
    "experiments": 5,
    "plots": 6, "demo": 6,
    "cli": 7, "__init__": 7,  # the public API; the CLI may use it
    "__main__": 8,
}

MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def _part(module: str) -> str:
    """Top-level part of ``bayesjudge.x.y`` -> ``x`` (``__init__`` for the package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path):
    """(line, imported module, imported names) of every import in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative import
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            yield node.lineno, module, [a.name for a in node.names]


def test_every_part_has_a_layer():
    parts = {_part(_module_name(p)) for p in MODULES}
    assert parts <= set(LAYERS), f"add {sorted(parts - set(LAYERS))} to LAYERS"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_dependencies_flow_one_way(path):
    me = _module_name(path)
    my_layer = LAYERS[_part(me)]
    wrong = []
    for line, module, names in _imports(path):
        if module != "bayesjudge" and not module.startswith("bayesjudge."):
            continue
        if module == "bayesjudge":  # `from bayesjudge import X`: X's own layer
            targets = [f"bayesjudge.{n}" if n in LAYERS else "bayesjudge" for n in names]
        else:
            targets = [module]
        for target in targets:
            layer = LAYERS[_part(target)] if target != "bayesjudge" else LAYERS["__init__"]
            if layer > my_layer:
                wrong.append(f"line {line}: imports {target} (layer {layer} > {my_layer})")
        if module.startswith("bayesjudge.") and module != me:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                wrong.append(f"line {line}: imports private {private} from {module}")
    assert not wrong, f"{me}: " + "; ".join(wrong)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_sources_cite_papers_not_unshipped_files(path):
    text = path.read_text()
    assert not re.search(r"\b\w+\.txt\b", text), (
        f"{path.name} cites a .txt file the package does not ship; cite the paper "
        f"(authors, year, title, arXiv id)"
    )
    assert "DESIGN.md" not in text, f"{path.name} points at DESIGN.md; use CONTRIBUTING.md"


def test_modules_stay_small():
    big = {str(p.relative_to(PACKAGE)): n for p in MODULES
           if (n := len(p.read_text().splitlines())) > 450}
    assert not big, f"split these modules along their seams: {big}"


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (module-level and function-level).

    ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, to ``pkg``
    otherwise; the parent packages Python initialises on the way are not edges.
    """
    modules = {_module_name(p) for p in MODULES}
    graph = {}
    for path in MODULES:
        me = _module_name(path)
        edges = set()
        for _, module, names in _imports(path):
            if module not in modules:
                continue
            subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
            edges.update(subs if subs and len(subs) == len(names) else [module, *subs])
        graph[me] = edges - {me}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_loops():
    assert not _cycles(_graph()), "modules that import each other round a loop"


def test_the_loop_finder_finds_loops():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


ENGINE_MODULES = {"compiled", "density", "diagnostics", "disk_cache", "hessian", "interrupts",
                  "laplace", "laplace_check", "laplace_grid", "grid_mixture", "laplace_inla",
                  "offsets", "messages", "numba_nogil", "nutpie_import", "nuts_settings", "optim",
                  "batch_diagnostics", "samplers"}


def test_the_engine_is_one_package():
    engine = {p.stem for p in (PACKAGE / "engine").glob("*.py")} - {"__init__"}
    assert engine == ENGINE_MODULES
    stray = {p.stem for p in PACKAGE.glob("*.py")} & (ENGINE_MODULES | {
        "inference", "engine_cache"})
    assert not stray, f"engine modules outside bayesjudge/engine/: {sorted(stray)}"


def test_the_engine_does_not_call_back_into_itself_from_its_routes():
    # The NUTS, MAP and Laplace routes receive compiled functions (engine.density.Density),
    # never the Engine: only engine/__init__ imports engine.compiled.
    importers = {m for m, edges in _graph().items() if "bayesjudge.engine.compiled" in edges}
    assert importers == {"bayesjudge.engine"}, sorted(importers)


def test_models_hold_only_family_subpackages():
    models = PACKAGE / "models"
    files = {p.name for p in models.glob("*.py")}
    assert files == {"__init__.py"}, f"modules directly in models/: {sorted(files)}"
    families = {p.name for p in models.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert families == {"davidson", "bradley_terry", "misclassification", "preference",
                        "anchored"}
    for family in families:
        assert (models / family / "__init__.py").exists(), family


def test_families_do_not_import_each_other():
    wrong = []
    for me, edges in _graph().items():
        if me.startswith("bayesjudge.models."):
            mine = me.split(".")[2]
            wrong += [f"{me} -> {t}" for t in edges
                      if t.startswith("bayesjudge.models.") and t.split(".")[2] != mine]
    assert not wrong, wrong


def test_pymc_only_in_the_engine_the_models_and_the_contract():
    allowed = ("bayesjudge.engine", "bayesjudge.models", "bayesjudge.base", "bayesjudge.priors")
    wrong = []
    for path in MODULES:
        me = _module_name(path)
        for line, module, _ in _imports(path):
            top = module.split(".")[0]
            if top in ("pymc", "pytensor", "nutpie") and not me.startswith(allowed):
                wrong.append(f"{me} line {line}: {module}")
    assert not wrong, wrong


def test_warnings_point_at_the_callers_line():
    """Every ``warnings.warn`` of the library skips the package's own frames
    (``skip_file_prefixes``, or ``engine.messages.warn_user``), so a warning names the
    line of the user's code that called it however deep the check sits. A fixed
    ``stacklevel`` went wrong as calls were nested: until 2026-11-29 the BT family's
    position-bias warning pointed past the caller (``sys:1``), and warnings raised under
    the study harnesses or ``TemperatureScaling.fit`` named library lines. The command
    line's own re-emission (``cli/calibrate.py``) is the one exception."""
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn"
                    and getattr(node.func.value, "id", None) == "warnings"
                    and "skip_file_prefixes" not in {k.arg for k in node.keywords}
                    and rel != "cli/calibrate.py"):
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"warnings.warn without skip_file_prefixes (use warn_user): {bad}"
