"""NUTS settings: what ``draws``, ``tune``, ``chains``, ``cores`` and ``sampler`` may be.

Checked before anything is compiled or sampled (:func:`check_nuts_settings`,
:func:`check_sampler`, :func:`check_cores`), by the library and by the CLI, so a slip
of the keyboard costs nothing and a posterior too small to diagnose is never returned.
"""

from __future__ import annotations

import os
from numbers import Integral  # int and numpy's integers (no numpy import: the CLI's checks)
from typing import Any, Literal, get_args

__all__ = ["MAX_CHAINS", "MAX_ITERATIONS", "MAX_TOTAL_DRAWS", "MIN_CHAINS", "MIN_DRAWS",
           "MIN_TUNE", "SAMPLERS", "Sampler", "available_cores", "check_cores",
           "check_nuts_settings", "check_sampler"]

# Smallest NUTS settings whose output can still be diagnosed (check_nuts_settings).
# chains >= 2: ArviZ's rank-normalised split R-hat compares chains; with one chain it
#   is NaN ("at least 2 posterior chains are needed"), so check_convergence could not
#   flag a chain stuck in one mode and would stay silent.
# draws >= 20: R-hat and bulk ESS are NaN below 4 draws per chain (the split halves
#   need 2 draws each), and with fewer than ~10 draws per split half the ranks and
#   autocorrelations they are built from are noise. 20 is a floor, not a target:
#   below ESS_MIN / chains draws check_convergence still warns about the ESS.
# tune >= 50: nutpie (nuts-rs) spends the first 30% of tuning in an early window and
#   the last 15% adapting only the step size by dual averaging (t0 = 10, so its first
#   ~10 updates are damped); with fewer than ~50 steps those windows hold a handful of
#   iterations, step size and mass matrix stay essentially unadapted, and the draws
#   are warm-up transients. tune = 0 panics inside nuts-rs.
MIN_DRAWS = 20
MIN_TUNE = 50
MIN_CHAINS = 2
# Upper limits catch a slip of the keyboard before any work: nuts-rs allocates its
# trace up front (draws = 10**12 aborted the process with "memory allocation of
# 32000000000000 bytes failed"), and 4 chains x 10**6 draws of 100 values is already
# 3.2 GB of posterior.
MAX_ITERATIONS = 1_000_000
MAX_CHAINS = 128
MAX_TOTAL_DRAWS = 4_000_000

Sampler = Literal["auto", "nutpie", "pymc", "numpyro", "blackjax"]
SAMPLERS: tuple[str, ...] = get_args(Sampler)


def check_nuts_settings(draws, tune, chains) -> None:
    """Raise ValueError unless NUTS with these settings can be diagnosed.

    Parameters
    ----------
    draws, tune, chains : int
        Draws kept per chain, tuning (warm-up) steps per chain and number of
        chains; each must be an integer of at least ``MIN_DRAWS`` (20),
        ``MIN_TUNE`` (50) and ``MIN_CHAINS`` (2) respectively, at most
        ``MAX_ITERATIONS`` (draws, tune) or ``MAX_CHAINS``, with at most
        ``MAX_TOTAL_DRAWS`` chains x draws. Why these minima
        is explained where they are defined: fewer chains or draws leave R-hat and
        ESS undefined (NaN, so no ConvergenceWarning could fire), fewer tuning
        steps leave the sampler unadapted.

    Raises
    ------
    ValueError
        Naming the setting, the value given and the minimum.
    """
    for name, value, minimum, fix in (
        ("draws", draws, MIN_DRAWS, "1000 (the default) for reported intervals"),
        ("tune", tune, MIN_TUNE, "1000 (the default)"),
        ("chains", chains, MIN_CHAINS, "4 (the default)"),
    ):
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise ValueError(
                f"{name} must be an integer >= {minimum}, got {value!r} "
                f"({type(value).__name__}). Fix: e.g. {name}={fix.split()[0]}."
            )
        if value < minimum:
            raise ValueError(
                f"{name}={value} is too small to diagnose NUTS: the minimum is {minimum} "
                f"(R-hat needs >= {MIN_CHAINS} chains, R-hat/ESS >= {MIN_DRAWS} draws per "
                f"chain, step-size and mass-matrix adaptation >= {MIN_TUNE} tuning steps). "
                f"Fix: e.g. {name}={fix}."
            )
        maximum = MAX_CHAINS if name == "chains" else MAX_ITERATIONS
        if value > maximum:
            raise ValueError(f"{name}={value} is more than NUTS is allowed here (at most "
                             f"{maximum:,}). Fix: e.g. {name}={fix.split()[0]}.")
    if chains * draws > MAX_TOTAL_DRAWS:
        raise ValueError(
            f"chains={chains} x draws={draws} = {chains * draws:,} posterior draws is more "
            f"than the {MAX_TOTAL_DRAWS:,} kept in memory at most. Fix: e.g. chains=4 and "
            f"draws=1000 (the defaults); a few thousand draws in all are plenty for intervals."
        )


def check_sampler(sampler: Any) -> str:
    """``sampler`` if known; ValueError naming the choices otherwise."""
    if sampler not in SAMPLERS:
        raise ValueError(
            f"sampler must be one of {list(SAMPLERS)}, got {sampler!r}. 'auto' picks nutpie's "
            f"fastest route; 'numpyro' / 'blackjax' need the gpu extra "
            f"(pip install 'bayesjudge[gpu]')."
        )
    return sampler


def available_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def check_cores(cores: Any) -> int | None:
    """``cores`` if it is None or an integer in [1, MAX_CHAINS]; ValueError otherwise.

    None: one core per chain, up to :func:`available_cores`. A number above the
    machine's CPU count is allowed (the chains' threads then share the CPUs: no
    speed-up, no harm); above ``chains`` it is capped at ``chains`` (one thread per
    chain).
    """
    if cores is None:
        return None
    if isinstance(cores, bool) or not isinstance(cores, Integral) or not (
            1 <= cores <= MAX_CHAINS):
        raise ValueError(
            f"cores must be a positive integer (at most {MAX_CHAINS}) or None (one per "
            f"chain, up to this machine's {available_cores()} CPUs), got {cores!r}. Fix: "
            f"e.g. cores={min(4, available_cores())}."
        )
    return int(cores)
