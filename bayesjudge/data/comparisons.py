"""Validation and sufficient statistics of the pairwise comparisons table, and eq. 3.

The Bradley-Terry family of Qian, Sun, Gales & Knill (2026), "Who can we trust?
LLM-as-a-jury for Comparative Assessment", arXiv:2602.16610 (sections 3-4) reads a
long table ``judge, left, right`` with either ``prob`` = P(left beats right) in
[0, 1] (soft) or ``outcome`` in {left, right, tie} (hard; labels in any letter case,
surrounding spaces ignored), and optional ``context``
(an article or prompt: items are compared, and have skills, only within it) and
``aspect`` (a separate ranking per aspect). :func:`validate_comparisons` checks the
table once and collapses it to one *cell* per distinct (context, aspect, left, right,
judge), a :class:`Comparisons` that the models accept in place of the table, so a
million rows cost no more than their distinct cells. The paper's debiasing step,
eq. 3, is :func:`bayesjudge.data.symmetrization.symmetrize`.

Ids are compared exactly as given and keep first-appearance order. With a
``context`` column an item id names one skill *per context* (the same id in two
contexts is two different items, never merged), so ids repeating across contexts
are normal. Without it every row belongs to one context and an id is one item
everywhere: there is nothing to collide, and a table whose contexts are encoded in
the ids (``"article7/sysA"``) simply ranks all of them together -- pass the
``context`` column to compare items only within their context.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesjudge.data.arena import COLUMN_ROLES, ONE_JUDGE, comparisons_table
from bayesjudge.data.counts import apply_counts, warn_unused_columns
from bayesjudge.data.messages import PACKAGE_DIR, DataValidationError, show_rows, show_values
from bayesjudge.data.schema import require_frame
from bayesjudge.data.vocabulary import label_key

__all__ = ["COMPARISON_OUTCOMES", "Comparisons", "validate_comparisons"]

COMPARISON_OUTCOMES = ("left", "tie", "right")
"""Outcome labels of the hard table, in the column order of ``Comparisons.outcomes``."""
_NAME = "comparisons"


@dataclass(frozen=True)
class Comparisons:
    """A validated comparisons table collapsed to cells (sufficient statistics).

    Build with :func:`validate_comparisons`; every model of the Bradley-Terry
    family accepts it in place of the DataFrame and skips re-validation.

    Attributes
    ----------
    kind : {"soft", "hard"}
        Whether the table held ``prob`` or ``outcome``.
    items, judges : pandas.Index
        Ids in first-appearance order (items: reading ``left`` then ``right`` row by row).
    contexts, aspects : pandas.Index or None
        Ids of the optional columns (None when the table has no such column).
    context, aspect, left, right, judge : ndarray of int64, shape (n_cells,)
        Codes of each cell (``context``/``aspect`` are 0 without the column).
    n : ndarray of float64
        Rows (weight) of each cell; a row with a count ``n = k`` is ``k`` rows.
    prob_sum : ndarray of float64
        Summed P(left wins) of the cell's rows; hard rows count 1 (left),
        0.5 (tie), 0 (right).
    outcomes : ndarray of float64, shape (n_cells, 3)
        Rows with left / tie / right outcome; soft rows count as p > 0.5,
        p = 0.5, p < 0.5.
    n_rows : int
        Rows of the table it was built from (the sum of its ``n`` column, if any).
    """

    kind: Literal["soft", "hard"]
    items: pd.Index
    judges: pd.Index
    contexts: pd.Index | None
    aspects: pd.Index | None
    context: np.ndarray
    aspect: np.ndarray
    left: np.ndarray
    right: np.ndarray
    judge: np.ndarray
    n: np.ndarray
    prob_sum: np.ndarray
    outcomes: np.ndarray
    n_rows: int

    def __len__(self) -> int:
        return len(self.n)

    @property
    def n_contexts(self) -> int:
        return 1 if self.contexts is None else len(self.contexts)

    @property
    def n_aspects(self) -> int:
        return 1 if self.aspects is None else len(self.aspects)

    @property
    def group(self) -> np.ndarray:
        """Ranking group of each cell: ``aspect * n_contexts + context``."""
        return self.aspect * self.n_contexts + self.context

    def to_frame(self) -> pd.DataFrame:
        """The cells as a table (``n`` rows each; ``prob`` is the cell mean)."""
        out = {}
        if self.contexts is not None:
            out["context"] = self.contexts.to_numpy()[self.context]
        if self.aspects is not None:
            out["aspect"] = self.aspects.to_numpy()[self.aspect]
        out.update(judge=self.judges.to_numpy()[self.judge], left=self.items.to_numpy()[self.left],
                   right=self.items.to_numpy()[self.right], n=self.n,
                   prob=self.prob_sum / self.n)
        for j, label in enumerate(COMPARISON_OUTCOMES):
            out[f"n_{label}"] = self.outcomes[:, j]
        return pd.DataFrame(out)


def _codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64), pd.Index(uniques, dtype=object)


def _item_codes(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Codes of ``left``/``right`` in one index, ordered by first appearance in reading order."""
    cl, ul = _codes(df["left"])
    cr, ur = _codes(df["right"])
    merged, union = _codes(pd.Series(np.concatenate([ul.to_numpy(), ur.to_numpy()]), dtype=object))
    n = len(df)
    first = np.full(len(union), 2 * n + 2, dtype=np.int64)
    # first row of each code (assignment in reverse: the earliest row is written last)
    fl = np.empty(len(ul), dtype=np.int64)
    fl[cl[::-1]] = np.arange(n)[::-1]
    fr = np.empty(len(ur), dtype=np.int64)
    fr[cr[::-1]] = np.arange(n)[::-1]
    np.minimum.at(first, merged[: len(ul)], 2 * fl)
    np.minimum.at(first, merged[len(ul):], 2 * fr + 1)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[merged[: len(ul)]][cl], rank[merged[len(ul):]][cr], union[order]


def _own_columns(df: pd.DataFrame) -> list:
    """The table's columns as the user gave them (not the one-judge column added for them)."""
    added = "judge" in df.columns and (df["judge"] == ONE_JUDGE).all()
    return [c for c in df.columns if not (added and c == "judge")]


def wide_verdict_columns(df: pd.DataFrame) -> list:
    """The columns whose every value is left / right / tie: one judge's verdicts each."""
    verdicts = []
    for col in _own_columns(df):
        if col in COLUMN_ROLES:
            continue
        values = pd.unique(df[col].dropna())
        if len(values) and all(isinstance(v, str) and label_key(v) in COMPARISON_OUTCOMES
                               for v in values):
            verdicts.append(col)
    return verdicts


def wide_table_hint(df: pd.DataFrame) -> str:
    """A fix for a wide table: columns whose every value is left / right / tie (one per judge)."""
    verdicts = wide_verdict_columns(df)
    if not verdicts:
        return ""
    return (f" Columns {show_values(verdicts, 8)} hold left / right / tie verdicts: a wide table "
            f"with one column per judge. Fix: make it long, one row per verdict, with "
            f"bayesjudge.data.comparisons_table(df, judge_columns={verdicts!r}) (on the "
            f"command line --judge-columns {','.join(map(str, verdicts))}).")


def _probabilities(df: pd.DataFrame) -> tuple[np.ndarray, Literal["soft", "hard"]]:
    has_prob, has_outcome = "prob" in df.columns, "outcome" in df.columns
    if has_prob and has_outcome:
        raise DataValidationError(
            f"{_NAME} has both a prob column (soft) and an outcome column (hard); give one. "
            f"Fix: drop outcome to fit the probabilities, or drop prob to fit the outcomes.")
    if not (has_prob or has_outcome):
        raise DataValidationError(
            f"{_NAME} has neither a prob column (P(left beats right) in [0, 1]) nor an outcome "
            f"column (left / right / tie); it has {_own_columns(df)}. Add one of them."
            f"{wide_table_hint(df)}")
    if has_prob:
        p = pd.to_numeric(df["prob"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~((p >= 0) & (p <= 1))  # NaN fails too
        if bad.any():
            raise DataValidationError(
                f"{_NAME}.prob must be a probability in [0, 1] (no NaN); found "
                f"{show_values(pd.unique(df['prob'][bad]))} at {show_rows(df.index[bad])}. "
                f"Fix: drop or repair those rows (a logit or a percentage must be converted).")
        return p, "soft"
    missing = df["outcome"].isna().to_numpy()
    if missing.any():
        raise DataValidationError(
            f"{_NAME}.outcome is missing (empty, NaN/None) at {show_rows(df.index[missing])}; "
            f"Fix: give every row left, right or tie, or drop those rows.")
    codes, labels = _codes(df["outcome"])
    value = {"left": 1.0, "tie": 0.5, "right": 0.0}
    # labels, not ids: any letter case, surrounding spaces ignored
    p = np.array([value.get(label_key(lab), np.nan) for lab in labels])[codes]
    bad = np.isnan(p)
    if bad.any():
        raise DataValidationError(
            f"{_NAME}.outcome must be one of {list(COMPARISON_OUTCOMES)} (any letter case); "
            f"found {show_values(pd.unique(df['outcome'][bad]))} at "
            f"{show_rows(df.index[bad])}. "
            f"Fix: map your labels, e.g. {{'A': 'left', 'B': 'right', 'draw': 'tie'}}.")
    return p, "hard"


def validate_comparisons(comparisons: pd.DataFrame | Comparisons) -> Comparisons:
    """Validate a comparisons table and collapse it to cells.

    Parameters
    ----------
    comparisons : pandas.DataFrame or Comparisons
        Columns ``judge``, ``left``, ``right`` and ``prob`` (soft) or ``outcome``
        (hard); optional ``context``, ``aspect`` and a count ``n`` (a row with
        ``n = k`` is ``k`` identical rows; rows with ``n = 0`` are dropped). Other
        columns are ignored with an :class:`~bayesjudge.data.counts.UnusedColumnWarning`.
        Without ``judge``, every row is one judge (``"(one judge)"``); a Chatbot
        Arena export (``model_a``, ``model_b``, ``winner``) is read as it is; other
        names and labels: :func:`bayesjudge.data.arena.comparisons_table`. A polars
        or pyarrow table is read as pandas.

    Returns
    -------
    Comparisons
        One cell per distinct (context, aspect, left, right, judge), cells in
        first-appearance order.

    Raises
    ------
    DataValidationError
        Missing ids; both or neither of ``prob`` / ``outcome``; a probability
        outside [0, 1] or NaN; an unknown outcome; a self-comparison (which also
        catches an item compared only with itself and a context with one item);
        items of a context (and aspect) that split into disconnected groups.

    Warns
    -----
    BattleContextWarning
        A ``context`` that holds battle or question ids (at least 50 groups, 90% of
        them one pair of items).
    """
    if isinstance(comparisons, Comparisons):
        return comparisons
    return collapse_rows(comparisons)[0]


def collapse_rows(comparisons: pd.DataFrame) -> tuple[Comparisons, np.ndarray, pd.DataFrame]:
    """Validated cells (:func:`validate_comparisons`), the cell index of every row, and
    the rows used (the long table: Arena columns mapped, no ``n = 0`` rows)."""
    return collapse_rows_with_values(comparisons)[:3]


def collapse_rows_with_values(comparisons: pd.DataFrame) -> tuple[
        Comparisons, np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
    """:func:`collapse_rows` and, per row used, its probability of a left win (an outcome's
    1 / 0.5 / 0) and its count (1 without a column ``n``)."""
    # Arena exports, no judge column, polars/pyarrow: read as the long table (data/arena.py)
    df = require_frame(comparisons_table(comparisons), _NAME, ["judge", "left", "right"])
    warn_unused_columns(df, _NAME)
    df, weight = apply_counts(df, _NAME)
    w = np.ones(len(df)) if weight is None else weight.astype(float)
    optional = [c for c in ("context", "aspect") if c in df.columns]
    for col in ["judge", "left", "right", *optional]:
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise DataValidationError(
                f"{_NAME}.{col} has {missing.sum()} missing id(s) (NaN/None) at "
                f"{show_rows(df.index[missing])}; drop or fill those rows before fitting.")
    p, kind = _probabilities(df)
    left, right, items = _item_codes(df)
    judge, judges = _codes(df["judge"])
    context, contexts = _codes(df["context"]) if "context" in optional else (
        np.zeros(len(df), np.int64), None)
    aspect, aspects = _codes(df["aspect"]) if "aspect" in optional else (
        np.zeros(len(df), np.int64), None)
    same = left == right
    if same.any():
        where = f" in context(s) {show_values(pd.unique(df['context'][same]))}" if contexts \
            is not None else ""
        raise DataValidationError(
            f"{_NAME} compares an item with itself at {show_rows(df.index[same])} "
            f"(left == right: {show_values(pd.unique(df['left'][same]))}{where}). A "
            f"self-comparison says nothing about skills, and an item (or a context) seen only "
            f"in such rows has nothing to be ranked against. Fix: drop those rows.")
    n_ctx = 1 if contexts is None else len(contexts)
    n_asp = 1 if aspects is None else len(aspects)
    sizes = [n_asp, n_ctx, len(items), len(items), len(judges)]
    if np.prod(np.asarray(sizes, dtype=float)) >= 2.0**62:
        raise DataValidationError(f"{_NAME} has too many distinct ids to index ({sizes}).")
    key = (((aspect * n_ctx + context) * len(items) + left) * len(items) + right) \
        * len(judges) + judge
    cell, first = pd.factorize(key, sort=False)
    m = len(first)
    rest, j = np.divmod(first, len(judges))
    rest, r = np.divmod(rest, len(items))
    rest, lft = np.divmod(rest, len(items))
    a, c = np.divmod(rest, n_ctx)
    outcomes = np.bincount(cell * 3 + outcome_code(p), weights=w, minlength=3 * m).reshape(m, 3)
    comps = Comparisons(
        kind=kind, items=items, judges=judges, contexts=contexts, aspects=aspects,
        context=c, aspect=a, left=lft, right=r, judge=j,
        n=np.bincount(cell, weights=w, minlength=m),
        prob_sum=np.bincount(cell, weights=p * w, minlength=m),
        outcomes=outcomes.astype(float), n_rows=int(w.sum()))
    check_connected(comps)
    check_contexts_rank_several(comps)
    return comps, cell, df, p, w


def check_connected(comps: Comparisons) -> None:
    """Raise if the items of a ranking group (context x aspect) split into disconnected sets.

    Skills of two sets of items that were never compared, directly or through
    other items, are not comparable: the model would rank them by the prior alone.
    """
    g = comps.group
    n_items = len(comps.items)
    nodes, labels = pd.factorize(np.concatenate([g * n_items + comps.left,
                                                 g * n_items + comps.right]))
    k = len(labels)
    half = len(comps)
    graph = coo_matrix((np.ones(half), (nodes[:half], nodes[half:])), shape=(k, k))
    n_comp, comp = connected_components(graph, directed=False)
    node_group = labels // n_items
    if n_comp == len(np.unique(node_group)):
        return
    per_group = pd.Series(comp).groupby(node_group).nunique()
    bad = per_group.index[per_group.to_numpy() > 1][0]
    members = labels[node_group == bad] % n_items
    sets = pd.Series(comps.items.to_numpy()[members]).groupby(comp[node_group == bad],
                                                             sort=False)
    described = "; ".join(f"group {i + 1}: {show_values(list(s))}"
                          for i, (_, s) in enumerate(sets))
    where = []
    if comps.contexts is not None:
        where.append(f"context {comps.contexts[bad % comps.n_contexts]!r}")
    if comps.aspects is not None:
        where.append(f"aspect {comps.aspects[bad // comps.n_contexts]!r}")
    where_text = " in " + ", ".join(where) if where else ""
    raise DataValidationError(
        f"{_NAME}: the items{where_text} split into {per_group.loc[bad]} groups never compared "
        f"with each other ({described}), so their skills cannot be put on one scale. Fix: add "
        f"comparisons linking the groups, or fit each group separately (a context column).")


#: A ``context`` column with at least this many ranking groups, nearly all of them one
#: pair of items, holds battle or question ids rather than contexts.
PAIR_CONTEXTS = 50


class BattleContextWarning(UserWarning):
    """The ``context`` column looks like battle or question ids (one pair of items each).

    ``finding`` is what was found, without the advice (the command line gives its own).
    """

    finding = ""


def check_contexts_rank_several(comps: Comparisons) -> None:
    """Warn (:class:`BattleContextWarning`) if ``context`` looks like a battle or question id.

    With at least :data:`PAIR_CONTEXTS` ranking groups (context x aspect) of which 90% or
    more hold a single pair of items, every group is a two-item ranking with no skill
    shared between groups: an Arena export's ``question_id`` taken for a context (26,910
    of them in arena_ppr, where ``bayesjudge rank`` ran four minutes and failed), or a
    deliberate latent difference per battle (``pandalm_jury(context="item")``), whose
    MAP the Laplace approximation does not reach (flagged or failing: fit it by NUTS).
    ``bayesjudge rank`` refuses it (a ranking command).
    """
    if comps.contexts is None:
        return
    n_items = len(comps.items)
    g = comps.group
    nodes = np.unique(np.concatenate([g * n_items + comps.left, g * n_items + comps.right]))
    size = np.bincount(nodes // n_items)
    groups = np.flatnonzero(size)
    pairs = size[groups] == 2
    if len(groups) < PAIR_CONTEXTS or pairs.mean() < 0.9:
        return
    first = int(np.flatnonzero(comps.group == groups[pairs][0])[0])
    example = (f"context {comps.contexts[comps.context[first]]!r}: "
               f"{comps.items[comps.left[first]]!r} vs {comps.items[comps.right[first]]!r}")
    finding = (
        f"{_NAME}.context: {pairs.sum():,} of its {len(groups):,} ranking groups hold a single "
        f"pair of items ({example}), so each is a ranking of two items with no skill shared "
        f"between them: the column looks like a battle or question id, not a context (a "
        f"group within which several items are ranked, such as an article every system "
        f"summarised).")
    warning = BattleContextWarning(
        f"{finding} One latent difference per battle is beyond the Laplace approximation "
        f"(fit it with method='nuts'). Fix: to rank the items over all rows, drop the column "
        f"(or rename it).")
    warning.finding = finding
    warnings.warn(warning, skip_file_prefixes=(PACKAGE_DIR,))


def all_tie_judges(comps: Comparisons) -> pd.Index:
    """Judges whose every comparison is a tie (or a soft probability of exactly 0.5)."""
    n = np.bincount(comps.judge, weights=comps.n, minlength=len(comps.judges))
    ties = np.bincount(comps.judge, weights=comps.outcomes[:, 1], minlength=len(comps.judges))
    return comps.judges[ties >= n]


def separated_items(comps: Comparisons, won: np.ndarray | None = None) -> pd.DataFrame:
    """(context, aspect, item) that won every comparison or lost every one.

    Under flat priors such an item's skill has no finite maximum-likelihood value.
    ``won``: the left item's wins per row as the model scores them (default the
    probabilities' sum; a hard or tie model's outcome counts, a tie half a win), so
    that ``p = 0.7`` in every comparison is separated for ``kind="hard"``, not soft.
    """
    won = comps.prob_sum if won is None else np.asarray(won, dtype=float)
    lost = comps.n - won
    g = comps.group
    size = comps.n_contexts * comps.n_aspects * len(comps.items)
    node_l = g * len(comps.items) + comps.left
    node_r = g * len(comps.items) + comps.right
    wins = np.bincount(node_l, weights=won, minlength=size) + np.bincount(
        node_r, weights=lost, minlength=size)
    losses = np.bincount(node_l, weights=lost, minlength=size) + np.bincount(
        node_r, weights=won, minlength=size)
    seen = (wins + losses) > 0
    bad = np.flatnonzero(seen & ((wins <= 0) | (losses <= 0)))
    gg, item = np.divmod(bad, len(comps.items))
    out = pd.DataFrame({"item": comps.items.to_numpy()[item],
                        "won_all": losses[bad] <= 0})
    if comps.contexts is not None:
        out.insert(0, "context", comps.contexts.to_numpy()[gg % comps.n_contexts])
    if comps.aspects is not None:
        out.insert(0, "aspect", comps.aspects.to_numpy()[gg // comps.n_contexts])
    return out


def outcome_code(p: np.ndarray) -> np.ndarray:
    """0 (left wins), 1 (tie) or 2 (right wins) for probabilities p of a left win."""
    return np.where(p > 0.5, 0, np.where(p < 0.5, 2, 1))
