"""``import bayesjudge`` and the command's argument checks import no PyMC, numpy or pandas
(bayesjudge.lazy, bayesjudge.data.vocabulary).

Each check runs in a fresh interpreter: this test process has imported everything.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import bayesjudge as bj
import bayesjudge.data as data
import bayesjudge.engine as engine
from bayesjudge.base import BayesianModel, registered_models

PACKAGE = Path(bj.__file__).parent
#: what a light import must not load (seconds of imports, compilation caches); numpy and
#: pandas alone take ~0.6 s, which the command's help and argument errors do without too
HEAVY = ("pymc", "pytensor", "arviz", "nutpie", "numba", "xarray", "scipy", "pandas", "numpy")


def _fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON value as its last line."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=PACKAGE.parent)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


LOADED = f"[m for m in {HEAVY!r} if m in sys.modules]"  # an expression of the child


def test_import_bayesjudge_is_light():
    assert _fresh(f"import json, sys\nimport bayesjudge\nprint(json.dumps({LOADED}))") == []


@pytest.mark.parametrize("argv", [
    ["--help"], ["--version"], ["rank", "--help"], ["report", "--help"],
    ["calibrate", "--help"], ["metrics", "--help"], ["aggregate", "--help"], ["demo", "--help"],
    ["rank", "in.csv", "--out", "out.csv", "--level", "2"],  # an argument error
    ["rank", "in.csv", "--out", "/no/such/folder/out.csv"],  # an output path error
    ["rank", "in.csv", "--out", "o.csv", "--model", "ordinal", "--levels", "a"],
    ["calibrate", "p.csv", "--labels", "l.csv", "--out", "o.csv", "--cores", "0"],
    ["metrics", "p.csv", "--labels", "l.csv", "--boot", "5"],
    ["report", "j.csv", "--calibration", "c.csv", "--level", "95"],
    ["aggregate", "v.csv", "--calibration", "l.csv", "--out", "o.csv", "--alpha", "0"],
    ["demo", "--splits", "1"],
], ids=lambda a: " ".join(a))
def test_the_command_checks_its_arguments_without_pymc(argv):
    code = ("import contextlib, io, json, sys\nfrom bayesjudge.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.redirect_stderr(io.StringIO()) as err:\n"
            f"    status = main({argv!r})\n"
            f"print(json.dumps([status, err.getvalue(), {LOADED}]))")
    status, err, loaded = _fresh(code)
    assert status in (0, 2), err
    assert loaded == [], f"{argv}: {loaded} imported before the arguments were checked"
    if status == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err


def test_a_nuts_fit_and_its_summary_load_no_plotting():
    """nutpie imports ``arviz``, whose plots load matplotlib (~1 s of a first fit): a fit
    imports nutpie beside a stand-in (bayesjudge.engine.nutpie_import) and the summaries
    use arviz_stats; a later ``import arviz`` is the real package, and the draws are
    those of a fit in a process that imported arviz first."""
    fit = ("m = bayesjudge.MisclassificationModel(random_seed=1).fit_counts("
           "300, 500, 40, 50, 35, 50, method='nuts', chains=2, draws=100, tune=100)\n"
           "m.summarize()\n")
    first = _fresh("import json, sys, warnings\nwarnings.simplefilter('ignore')\n"
                   f"import bayesjudge\n{fit}"
                   "plots = [k for k in ('matplotlib', 'arviz_plots', 'arviz')\n"
                   "         if k in sys.modules]\n"
                   "import arviz\n"
                   "print(json.dumps([plots, hasattr(arviz, 'plot_forest'), "
                   "m.idata_.posterior['accuracy'].values.ravel().tolist()]))")
    plots, real, draws = first
    assert plots == [] and real
    arviz_first = _fresh("import json, warnings\nwarnings.simplefilter('ignore')\n"
                         f"import arviz, bayesjudge\n{fit}"
                         "print(json.dumps(m.idata_.posterior['accuracy'].values.ravel().tolist()))")
    assert arviz_first == draws


def test_the_registry_is_complete_after_a_plain_import():
    # bj.load / BayesianModel.load read the class from it: no model may be missing
    # just because nothing imported its family yet.
    names = _fresh("import json\nfrom bayesjudge.base import registered_models\n"
                   "print(json.dumps(sorted(registered_models())))")
    models = sorted(n for n in bj.__all__ if isinstance(getattr(bj, n), type)
                    and issubclass(getattr(bj, n), BayesianModel)
                    and getattr(bj, n) is not BayesianModel)
    assert set(models) <= set(names)
    assert names == sorted(n for n in registered_models() if n in names)


def _type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module of the imports under ``if TYPE_CHECKING:`` in ``path``."""
    tree = ast.parse(path.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If)
                 and getattr(n.test, "id", None) == "TYPE_CHECKING")
    out = {}
    for node in block.body:
        for alias in node.names:
            name = alias.asname or alias.name
            out[name] = (f"{node.module}.{name}" if node.module == "bayesjudge"
                         and alias.name in ("metrics", "rewards") else node.module)
    return out


@pytest.mark.parametrize("package", [bj, engine, data],
                         ids=["bayesjudge", "bayesjudge.engine", "bayesjudge.data"])
def test_lazy_names_are_the_public_names_and_resolve(package):
    exports = package._EXPORTS
    init = Path(package.__file__)
    assert _type_checking_imports(init) == exports  # what type checkers see is what loads
    names = {n for n, m in exports.items() if not m.endswith(f".{n}")}  # not subpackages
    assert names <= set(package.__all__) <= names | {"CI_PROB", "__version__"}
    assert set(package.__all__) <= set(dir(package))
    for name, module in exports.items():
        value = getattr(package, name)
        defining = sys.modules[module]
        assert value is (defining if module.endswith(f".{name}") else getattr(defining, name))


def test_unknown_names_and_submodules():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        bj.no_such_name  # noqa: B018
    assert bj.datasets is sys.modules["bayesjudge.datasets"]  # a submodule, as eagerly
    assert engine.laplace is sys.modules["bayesjudge.engine.laplace"]
