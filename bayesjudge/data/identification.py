"""Whether the design identifies each judge's position bias (``position_bias=True``).

Used by the Bradley-Terry family (a bias per judge) and AnchoredBT (the reference's).

With a per-judge bias toward the left slot the log-odds of a comparison of skill cells
l and r by judge k is ``(s_l - s_r) / sigma_k + b_k`` (``sigma_k = 1`` without
discriminators). ``b_k`` is confounded with the skills when some change of the skills
shifts every comparison of judge k by the same amount and every other judge's by a
constant of its own (which that judge's bias absorbs). Then the likelihood is flat in
that direction: the bias and the skills' share of it come from the prior (or, under
flat priors, have no estimate). Two common designs do this: a baseline always shown on
the left against every other model (its skill and the bias are one number), and each
pair judged in one order along a chain without cycles. A pair judged in both orders, or
a cycle of pairs, identifies it.

The check is linear algebra on the distinct (left cell, right cell, judge) rows: the
rows ``e_l - e_r + e_(n + k)`` of the design matrix A (skill cells, then judges). Judge k's
bias is identified iff no vector of A's null space moves coordinate ``n + k``. The
discriminators scale judge k's rows by ``1 / sigma_k``, which leaves that condition
unchanged (a constant per judge stays a constant).
"""

from __future__ import annotations

import warnings

import numpy as np

from bayesjudge.data.messages import PACKAGE_DIR, DataValidationError, show_values

#: Largest number of skill cells + judges checked (a dense eigendecomposition of A'A).
MAX_COLUMNS = 2000


def unidentified_biases(left: np.ndarray, right: np.ndarray, judge: np.ndarray,
                        n_cells: int, n_judges: int) -> np.ndarray | None:
    """Codes of the judges whose position bias the design does not identify.

    Parameters
    ----------
    left, right : ndarray of int
        Skill cell of each comparison's left and right item.
    judge : ndarray of int
        Judge code of each comparison.
    n_cells, n_judges : int
        Numbers of skill cells and judges.

    Returns
    -------
    ndarray of int, or None
        The judges' codes (empty: all identified); None when the design is too large to
        check (more than :data:`MAX_COLUMNS` skill cells and judges).
    """
    p = n_cells + n_judges
    if p > MAX_COLUMNS:
        return None
    rows = np.unique(np.column_stack([left, right, judge]), axis=0)
    gram = np.zeros((p, p))
    cols = np.column_stack([rows[:, 0], rows[:, 1], n_cells + rows[:, 2]])
    signs = np.array([1.0, -1.0, 1.0])
    for a in range(3):  # A'A accumulated from the three non-zeros of each row
        for b in range(3):
            np.add.at(gram, (cols[:, a], cols[:, b]), signs[a] * signs[b])
    values, vectors = np.linalg.eigh(gram)
    null = vectors[:, values < 1e-9 * max(values[-1], 1.0)]
    moved = (null[n_cells:] ** 2).sum(axis=1)
    return np.flatnonzero(moved > 1e-8)


def check_position_biases(left: np.ndarray, right: np.ndarray, judge: np.ndarray,
                          n_cells: int, judges, flat: bool, who: str | None = None) -> np.ndarray:
    """Refuse (``flat``: the flat prior of ``position_bias``) or warn about the judges
    whose position bias the design does not identify (:func:`unidentified_biases`).

    ``who`` names the bias in the message when it is one judge's (AnchoredBT's
    reference); by default the message lists the judges' ids. Returns the codes of the
    judges warned about (empty when every bias is identified or the check is skipped).
    """
    bad = unidentified_biases(left, right, judge, n_cells, len(judges))
    if bad is None or not len(bad):
        return np.zeros(0, dtype=np.int64)
    if who is None:
        who = (f"comparisons.judge: the position bias of judge(s) "
               f"{show_values(list(np.asarray(judges, dtype=object)[bad]))}")
    why = ("is not identified by the design: some shift of the skills moves every one of "
           "their comparisons toward the left by the same amount (e.g. a baseline always on "
           "the left, or each pair judged in one order along a chain without cycles)")
    fix = ("Fix: judge some pairs in both orders (swap left and right), or fit without "
           "position_bias")
    if flat:
        raise DataValidationError(f"{who} {why}; under its flat prior (priors='flat') it has "
                                  f"no estimate. {fix}.")
    warnings.warn(f"{who} {why}: it and the skills' share of it come from the prior "
                  f"(its interval is the prior's, and the skills' intervals are widened by "
                  f"it). {fix}.", UserWarning,
                  skip_file_prefixes=(PACKAGE_DIR,))
    return bad


def position_bias_state(model, comps, left: np.ndarray, right: np.ndarray,
                        n_cells: int) -> dict:
    """Check a Bradley-Terry family fit's per-judge position biases (when it has them).

    Returns the entry of the fit's saved state that ``judges()`` reports as
    ``position_bias_identified`` (False for a judge whose bias the design leaves to the
    prior), or ``{}`` without ``position_bias``.
    """
    if not getattr(model, "position_bias", False):
        return {}
    bad = check_position_biases(left, right, comps.judge, n_cells, comps.judges,
                                model._is_flat("position_bias"))
    identified = np.ones(len(comps.judges), dtype=bool)
    identified[bad] = False
    return {"position_bias_identified": identified.tolist()}
