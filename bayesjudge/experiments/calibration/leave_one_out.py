"""Leave-one-rater-out comparison of each human rater with the calibrated judge.

The per-rater comparison of Table 5 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019: each rater in turn is scored
against the majority of the other raters, on the evaluation items of the same
calibration splits on which the Davidson aggregator is calibrated and scored.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from bayesjudge.baselines import majority_vote
from bayesjudge.data import (
    DataValidationError,
    Labels,
    VoteCounts,
    align_calibration,
    check_integer_values,
    check_no_missing,
    require_frame,
    validate_votes,
)
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.experiments.calibration.fits import OnFailure, run_splits, warn_failures
from bayesjudge.experiments.runner import Executor, Seed, check_positive_int

__all__ = ["leave_one_rater_out"]


def leave_one_rater_out(
    votes: pd.DataFrame | VoteCounts,
    ratings: pd.DataFrame,
    calibration_fraction: float = 0.05,
    n_splits: int = 100,
    random_seed: Seed = 0,
    model_kwargs: Mapping[str, Any] | None = None,
    progressbar: bool = True,
    *,
    min_other_raters: int = 1,
    on_failure: OnFailure = "resample",
    max_resamples: int = 10,
    executor: Executor = None,
) -> pd.DataFrame:
    """Per-rater leave-one-out comparison of a human and the calibrated judge (Table 5).

    For each rater R_i: the gold label of every item R_i rated is the majority of
    the *other* raters' labels on it (tie rule below); on those items, the
    calibration-split protocol calibrates the Davidson aggregator on the gold
    labels of each split's calibration items and scores it, R_i and majority
    vote of the judge's votes on the same evaluation items. Pairwise accuracies
    are averaged over the splits.

    Tie rule of the gold label: the most frequent label among the other raters;
    when two or three labels share the top count (e.g. one +1 and one -1, or one
    +1 and one 0) the gold label is 0 (tie), as in
    :func:`~bayesjudge.baselines.majority_vote` with ``tie_break="tie"``.

    Parameters
    ----------
    votes : DataFrame or VoteCounts
        The LLM judge's votes (see :func:`split_protocol`).
    ratings : DataFrame
        Human ratings, one row per (item, rater): ``item``, ``rater`` (or
        ``annotator``), ``label`` in {-1, 0, +1}.
    calibration_fraction, n_splits, random_seed, model_kwargs, progressbar
        As in :func:`split_protocol` (splits are drawn per rater).
    min_other_raters : int, default 1
        An item enters R_i's comparison only if at least this many other raters
        rated it.
    on_failure, max_resamples, executor
        As in :func:`split_protocol`.

    Returns
    -------
    DataFrame
        One row per rater (index ``rater``): ``n_items`` (items R_i rated with a
        gold label and votes), ``n_evaluation`` (evaluation items per split),
        ``human_pa`` (R_i vs gold), ``davidson_pa`` (the calibrated aggregator),
        ``majority_vote_pa`` (uncalibrated majority of the judge's votes), each
        averaged over the same evaluation items of every split,
        ``davidson_pa_se`` (SE of that mean over splits), ``win`` (davidson_pa >
        human_pa) and ``n_failed_fits``. ``attrs`` hold ``wins`` (e.g. ``"5/8"``)
        and ``tie_rule``.
    """
    votes, ratings = as_pandas(votes), as_pandas(ratings)
    min_other_raters = check_positive_int(min_other_raters, "min_other_raters")
    table = _validate_ratings(ratings)
    counts_all = validate_votes(votes)
    rated = pd.Index(pd.unique(table["item"]))
    n_no_votes = int((~rated.isin(counts_all.items)).sum())
    if n_no_votes:
        warnings.warn(
            f"leave_one_rater_out: {n_no_votes} rated item(s) have no judge votes and are "
            "left out of every rater's comparison.",
            UserWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
        table = table[table["item"].isin(counts_all.items)]
    raters = np.sort(pd.unique(table["rater"]))
    seeds = np.random.SeedSequence(
        random_seed if not isinstance(random_seed, np.random.Generator)
        else int(random_seed.integers(2**63))
    ).spawn(len(raters))
    rows = []
    for r, rater in enumerate(raters):
        loo = _gold_for(table, rater, min_other_raters)
        if len(loo) == 0:
            raise DataValidationError(
                f"rater {rater!r} shares no voted item with {min_other_raters} other rater(s); "
                "drop that rater or lower min_other_raters."
            )
        items = pd.Index(loo["item"].to_numpy(), name="item")
        gold = Labels(items, loo["label"].to_numpy(np.int64))
        counts = VoteCounts(gold.items, align_calibration(counts_all, gold))
        c = counts.counts
        fixed = {
            "human": loo["rater_label"].to_numpy(np.int64),
            "majority_vote": majority_vote(c[:, 0], c[:, 1], c[:, 2], tie_break="tie"),
        }
        run = run_splits(
            counts, gold, fixed, True, calibration_fraction, n_splits,
            np.random.default_rng(seeds[r]), dict(model_kwargs or {}), progressbar,
            on_failure, max_resamples, executor, desc=f"rater {rater}",
        )
        warn_failures(run.failures, on_failure, n_splits, who=f"rater {rater!r}: ")
        pa = {
            m: (run.pred[m] == run.y).mean(axis=1)
            for m in ("davidson", "human", "majority_vote")
        }
        n_scored = len(pa["davidson"])
        rows.append(
            {
                "rater": rater,
                "n_items": len(gold),
                "n_evaluation": run.evaluation.shape[1],
                "human_pa": pa["human"].mean(),
                "davidson_pa": pa["davidson"].mean(),
                "majority_vote_pa": pa["majority_vote"].mean(),
                "davidson_pa_se": (
                    pa["davidson"].std(ddof=1) / np.sqrt(n_scored) if n_scored > 1 else np.nan
                ),
                "win": bool(pa["davidson"].mean() > pa["human"].mean()),
                "n_failed_fits": len(run.failures),
            }
        )
    out = pd.DataFrame(rows).set_index("rater")
    out.attrs = {
        "wins": f"{int(out['win'].sum())}/{len(out)}",
        "tie_rule": (
            "gold = most frequent label among the other raters; shared top count -> 0 (tie)"
        ),
        "n_items_without_votes": n_no_votes,
    }
    return out


def _validate_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    if (
        isinstance(ratings, pd.DataFrame)
        and "rater" not in ratings.columns
        and "annotator" in ratings.columns
    ):
        ratings = ratings.rename(columns={"annotator": "rater"})
    require_frame(ratings, "ratings", ["item", "rater", "label"])
    check_no_missing(ratings, "ratings", ["item", "rater", "label"])
    label = check_integer_values(ratings, "ratings", "label", (-1, 0, 1))
    dup = ratings.duplicated(["item", "rater"])
    if dup.any():
        raise DataValidationError(
            f"ratings has {int(dup.sum())} duplicated (item, rater) row(s), e.g. "
            f"{ratings.loc[dup, ['item', 'rater']].head(3).to_dict('records')}; keep one "
            "label per rater and item."
        )
    if ratings["rater"].nunique() < 2:
        raise DataValidationError(
            "ratings has a single rater; leave-one-rater-out needs at least two raters."
        )
    return pd.DataFrame({"item": ratings["item"].to_numpy(), "rater": ratings["rater"].to_numpy(),
                         "label": label})


def _loo_gold(ratings: pd.DataFrame, rater, min_other_raters: int = 1) -> pd.DataFrame:
    """Gold labels for leaving ``rater`` out.

    Columns ``item``, ``label`` (the other raters' majority) and ``rater_label``.
    """
    return _gold_for(_validate_ratings(ratings), rater, min_other_raters)


def _gold_for(table: pd.DataFrame, rater, min_other_raters: int) -> pd.DataFrame:
    codes, items = pd.factorize(table["item"], sort=False)
    label = table["label"].to_numpy(np.int64)
    mine = (table["rater"] == rater).to_numpy()
    others = np.zeros((len(items), 3), dtype=np.int64)  # (c+, c0, c-) of the other raters
    np.add.at(others, (codes[~mine], 1 - label[~mine]), 1)
    pos, own = codes[mine], label[mine]
    keep = others[pos].sum(axis=1) >= min_other_raters
    pos, own = pos[keep], own[keep]
    c = others[pos]
    gold = majority_vote(c[:, 0], c[:, 1], c[:, 2], tie_break="tie")
    return pd.DataFrame({"item": items[pos], "label": gold, "rater_label": own})
