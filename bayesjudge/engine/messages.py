"""What the engine tells the user: its warning and error classes, and where warnings point."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

__all__ = ["NOT_CONVERGED_ADVICE", "ConvergenceWarning", "FitError", "progress_log", "warn_user"]

#: The sampler's stages ("sampling 4 chains ...", "sampled in 3.2 s") are logged here at
#: INFO; the command line shows them on stderr, a library user by configuring logging.
progress_log = logging.getLogger("bayesjudge.progress")
#: The MAP ConvergenceWarning's advice (the command line replaces it with its own options).
NOT_CONVERGED_ADVICE = (" Try more data, method='nuts', or, if you set priors, the default "
                        "ones (priors=None).")


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
