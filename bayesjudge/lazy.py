"""Attributes of a package imported on first use (PEP 562).

``import bayesjudge`` and the ``bayesjudge`` command's argument checks do not import
PyMC, PyTensor, ArviZ or SciPy's statistics (~4 s together): a package lists its public
names with the module that defines each, and :func:`lazy_exports` gives it the module
``__getattr__`` / ``__dir__`` that import that module when the name is first read
(``bj.DavidsonBT``, ``from bayesjudge import DavidsonBT``), then keep the value in the
package's namespace so later reads cost nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Mapping


def lazy_exports(package: str, namespace: dict,
                 exports: Mapping[str, str]) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the names in ``exports``.

    Parameters
    ----------
    package : str
        The package's name (``__name__``).
    namespace : dict
        The package's ``globals()``: a name read once is stored there.
    exports : mapping of str to str
        Public name -> the module that defines it; a subpackage maps its own name to
        itself (``"metrics": "bayesjudge.metrics"``). Any other submodule is imported
        when read too (``bayesjudge.engine.laplace``), as it was when the package imported
        everything at once.
    """

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None and not name.startswith("__") \
                and importlib.util.find_spec(f"{package}.{name}") is not None:
            module = f"{package}.{name}"  # a submodule, as an eager package would have it
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        value = loaded if module == f"{package}.{name}" else getattr(loaded, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


def import_subpackages(package: str) -> None:
    """Import every subpackage of ``package`` (once; later calls are dictionary lookups).

    A registry filled by class definitions (the model classes, :mod:`bayesjudge.base`)
    is complete only when all of them are imported, which a lazy ``import bayesjudge``
    no longer does by itself.
    """
    parent = importlib.import_module(package)
    for info in pkgutil.iter_modules(parent.__path__):
        if info.ispkg:
            importlib.import_module(f"{package}.{info.name}")
