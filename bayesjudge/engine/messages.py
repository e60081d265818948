"""What the engine tells the user: its warning and error classes, and where warnings point."""

from __future__ import annotations

import warnings
from pathlib import Path

__all__ = ["ConvergenceWarning", "FitError", "warn_user"]


class ConvergenceWarning(UserWarning):
    """NUTS diagnostics (R-hat, ESS, divergences) say the posterior is unreliable."""


class FitError(RuntimeError):
    """The optimiser or sampler could not produce a usable fit."""


#: The package's folder (bayesjudge/, not this engine/ subfolder): warnings skip all of it.
_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first caller outside bayesjudge.

    A fixed ``stacklevel`` points inside the library when the call is nested
    (``fit`` -> engine -> check); skipping the package's files always lands
    on the user's line.
    """
    warnings.warn(message, category, skip_file_prefixes=(_PACKAGE_DIR,))
