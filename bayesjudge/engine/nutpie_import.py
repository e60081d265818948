"""``import nutpie`` without loading the whole of ArviZ.

nutpie's ``sample`` module does ``import arviz`` at import time, and ``arviz`` 1.x loads
``arviz_stats`` (SciPy's signal module) and ``arviz_plots`` (matplotlib): 1.3 - 1.9 s of a
fresh process's first NUTS fit (issue 10's target is < 3 s for the whole fit), while
nutpie calls only ``arviz.from_dict`` and ``arviz.dict_to_dataset`` -- both
``arviz_base``'s own functions re-exported (``arviz.from_dict is arviz_base.from_dict``).
So, when ArviZ is not loaded yet, nutpie is imported with a stand-in ``arviz`` module
that serves those two names from ``arviz_base`` and, for any other name, imports the
real package and answers from it. The stand-in leaves ``sys.modules`` as soon as nutpie
is imported: a later ``import arviz`` (the user's, or ours) gets the real package, and
nutpie's draws are the same (its calls reach the same functions).
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["import_nutpie"]

_FROM_BASE = ("from_dict", "dict_to_dataset")


class _ArvizStandIn(types.ModuleType):
    """``arviz`` for nutpie: ``arviz_base``'s converters, the real package for the rest."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _FROM_BASE:
            return getattr(importlib.import_module("arviz_base"), name)
        if sys.modules.get("arviz") is self:
            del sys.modules["arviz"]
        return getattr(importlib.import_module("arviz"), name)


def import_nutpie() -> types.ModuleType:
    """The ``nutpie`` module, imported (once) without ``arviz``'s plotting and stats."""
    loaded = sys.modules.get("nutpie")
    if loaded is not None:
        return loaded
    if "arviz" in sys.modules:
        return importlib.import_module("nutpie")
    stand_in = _ArvizStandIn("arviz")
    sys.modules["arviz"] = stand_in
    try:
        return importlib.import_module("nutpie")
    finally:
        if sys.modules.get("arviz") is stand_in:
            del sys.modules["arviz"]
