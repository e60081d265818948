"""The package's architecture, checked by reading its source (no imports executed).

Dependencies flow one way (CONTRIBUTING.md, "Layers"): a module imports only from
its own or a lower layer -- function-local imports included -- and never a private
(``_underscore``) name of another module. Docstrings cite the papers, not files of
a folder the package does not ship.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayesjudge"

#: Layer of each top-level part of the package (lower may not import higher).
LAYERS = {
    "constants": 0, "priors": 0, "data": 0, "inference": 0, "structures": 0,
    "persistence": 0, "hessian": 0, "laplace_check": 0, "laplace_grid": 0, "optim": 0,
    "diagnostics": 0, "laplace_inla": 0,
    "samplers": 0, "engine_cache": 0, "interrupts": 0,
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
