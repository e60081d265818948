"""Battles judged by a reference and by other judges: validation and the collapse to cells.

A *battle* is one judged instance (the same two responses to the same prompt); every
other judge gives it at most one verdict in {left, tie, right}, the reference any number
of votes (none, one -- an Arena voter -- or several: a crowd). The likelihood of
:class:`~bayesjudge.models.anchored.model.AnchoredBT` depends on a battle only through
its ordered pair (left, right), the reference's vote counts (n_left, n_tie, n_right)
and the other judges' verdict pattern (a verdict or missing, per judge), so battles
sharing all of these are one *cell* with a count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesjudge.data import (
    COMPARISON_OUTCOMES,
    DataValidationError,
    check_no_missing,
    require_frame,
    show_rows,
    show_values,
)
from bayesjudge.data.arena import comparisons_table
from bayesjudge.data.comparisons import wide_table_hint
from bayesjudge.data.counts import COUNT, warn_unused_columns
from bayesjudge.models.anchored.likelihood import TINY, distinct_pairs

COLUMNS = ("battle", "judge", "left", "right", "outcome")
#: Code of "no verdict" (the reference did not judge the battle, or judge k did not).
MISSING = 3


@dataclass
class Battles:
    """Battles as integer codes (ids kept, as written, in first-appearance order).

    Attributes
    ----------
    items, judges : numpy.ndarray of object
        Item ids; ids of the non-reference judges (the reference is ``reference``).
    battles : numpy.ndarray of object
        Battle ids, in first-appearance order.
    left, right : numpy.ndarray of int
        Item codes per battle.
    ref_counts : numpy.ndarray of int, shape (battles, 3)
        The reference's votes per battle: how many said left, tie, right.
    verdicts : numpy.ndarray of int, shape (battles, judges)
        Each other judge's verdict (3: the judge did not judge the battle).
    """

    items: np.ndarray
    judges: np.ndarray
    reference: object
    battles: np.ndarray
    left: np.ndarray
    right: np.ndarray
    ref_counts: np.ndarray
    verdicts: np.ndarray

    def cells(self) -> "Cells":
        """Collapse the battles to (left, right, reference votes, verdict pattern) cells."""
        key = np.column_stack([self.left, self.right, self.ref_counts, self.verdicts])
        uniq, inverse, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        return Cells(left=uniq[:, 0], right=uniq[:, 1], ref_counts=uniq[:, 2:5],
                     verdicts=uniq[:, 5:], count=count.astype(float),
                     battle_cell=inverse.reshape(-1))


@dataclass
class Cells:
    """Sufficient statistics: distinct (left, right, reference votes, verdicts) rows and
    their counts."""

    left: np.ndarray
    right: np.ndarray
    ref_counts: np.ndarray
    verdicts: np.ndarray
    count: np.ndarray
    battle_cell: np.ndarray

    @property
    def ref_share(self) -> np.ndarray:
        """(cells, 3): the share of the cell's reference votes on each outcome (0 if none)."""
        total = self.ref_counts.sum(axis=1, keepdims=True)
        return self.ref_counts / np.maximum(total, 1)

    @property
    def ref_known(self) -> np.ndarray:
        """(cells,) bool: the reference voted on the cell's battles."""
        return self.ref_counts.sum(axis=1) > 0

    def graph_data(self, n_judges: int) -> dict[str, np.ndarray]:
        """Values of the ``pm.Data`` containers.

        ``ref_counts`` are the reference's votes (one-hot for a single vote, zeros for
        none), ``ref_log_share`` the log of their shares (the judges' channel mixes
        over them; :func:`~bayesjudge.models.anchored.likelihood.cell_loglik_pt`),
        ``verdict_onehot`` one-hot per judge (judge-major, 3 columns each; zeros when
        the judge gave no verdict), so the judges' log-confusion terms are one matrix
        product. For the judges' own shifts: ``pair_left``/``pair_right`` (the distinct
        ordered pairs), ``cell_pair`` (each cell's pair), ``verdict_seen`` (cells x
        judges: 1 where the judge gave a verdict) and ``verdict_shift`` (SHIFT of that
        verdict: 1/2, 0, -1/2; 0 where none).
        """
        n = len(self.count)
        verdict_onehot = np.zeros((n, 3 * n_judges))
        for k in range(n_judges):
            v = self.verdicts[:, k]
            seen = v < MISSING
            verdict_onehot[np.flatnonzero(seen), 3 * k + v[seen]] = 1.0
        # the distinct ordered pairs: a judge's shifted confusion rows are normalised once
        # per pair (there are far fewer pairs than cells), then gathered per cell
        pair_left, pair_right, cell_pair = distinct_pairs(self.left, self.right)
        seen = (self.verdicts < MISSING).astype(float)
        sign = np.where(self.verdicts == 0, 1.0, np.where(self.verdicts == 2, -1.0, 0.0))
        return {"cell_left": self.left.astype(np.int64), "cell_right": self.right.astype(np.int64),
                "ref_counts": self.ref_counts.astype(float),
                "ref_log_share": np.log(np.maximum(self.ref_share, TINY)),
                "ref_known": self.ref_known.astype(float),
                "verdict_onehot": verdict_onehot, "cell_count": self.count,
                "pair_left": pair_left.astype(np.int64),
                "pair_right": pair_right.astype(np.int64),
                "cell_pair": cell_pair.astype(np.int64),
                "verdict_seen": seen.reshape(n, n_judges),
                "verdict_shift": 0.5 * sign.reshape(n, n_judges)}


def outcome_codes(values: pd.Series, name: str) -> np.ndarray:
    """0 / 1 / 2 for left / tie / right; raises naming the bad values."""
    # labels, not ids: letter case and surrounding spaces do not matter (as in the BT family)
    # normalised per distinct value (a lambda per row costs 0.13 s on 100,000 rows)
    code, uniq = pd.factorize(values.astype(object), use_na_sentinel=False)
    labels = [v.strip().lower() if isinstance(v, str) else v for v in uniq]
    codes = pd.Index(COMPARISON_OUTCOMES).get_indexer(labels)[code]
    if (codes < 0).any():
        bad = values[codes < 0]
        raise DataValidationError(
            f"{name}.outcome must be one of {list(COMPARISON_OUTCOMES)}; got "
            f"{show_values(pd.unique(bad))} at {show_rows(bad.index)}. Fix: map your labels "
            f"(e.g. model_a -> left, model_b -> right, tie (bothbad) -> tie).")
    return codes


def validate_battles(df: pd.DataFrame, reference, name: str = "comparisons") -> Battles:
    """Check a long battle table and encode it.

    Raises
    ------
    DataValidationError
        A missing column or value, an outcome outside {left, tie, right}, an unknown
        reference judge, a battle whose left/right differ between its rows, a battle
        comparing an item with itself, or a judge other than the reference with two
        verdicts on one battle (the reference may vote several times: a crowd).
    """
    # polars / pyarrow, Arena column names, no judge column: the long table
    df = comparisons_table(df)
    hint = "" if "outcome" in df.columns else wide_table_hint(df)
    if hint:
        raise DataValidationError(f"{name} has no outcome column.{hint}")
    df = require_frame(df, name, COLUMNS)
    if COUNT in df.columns:
        raise DataValidationError(
            f"{name} has a count column {COUNT!r}, but a battle is one judged instance: each "
            f"judge gives it one verdict, so a row cannot stand for several. Fix: give "
            f"repeated judgments their own battle ids (one row each), or drop the {COUNT} column.")
    warn_unused_columns(df, "battles", name)
    check_no_missing(df, name, COLUMNS)
    judge_ids = pd.unique(df["judge"].astype(object))
    if not any(_same_id(j, reference) for j in judge_ids):
        key = str(reference).strip().casefold()
        alike = [j for j in judge_ids if str(j).strip().casefold() == key]
        near = f" ({alike[0]!r} differs only in letter case, spaces or type)" if alike else ""
        raise DataValidationError(
            f"reference={reference!r} is not a judge of {name}; its judges are "
            f"{show_values(judge_ids, k=20)}{near} (ids are compared exactly, e.g. 1 != '1'). "
            f"Fix: pass one of them as reference=.")
    codes = outcome_codes(df["outcome"], name)
    battle, battles = pd.factorize(df["battle"].astype(object), sort=False)
    battles = np.asarray(battles, dtype=object)
    # compare the distinct ids, not the rows (a Python loop over 100,000 rows costs 0.5 s)
    jcode, jids = pd.factorize(df["judge"].astype(object), sort=False)
    ref_code = [c for c, j in enumerate(jids) if _same_id(j, reference)][0]
    is_ref = jcode == ref_code
    bj = pd.DataFrame({"b": battle, "j": jcode})
    dup = bj.duplicated().to_numpy() & ~is_ref  # the reference may vote several times (a crowd)
    if dup.any():
        other = bj[~is_ref]
        counts = other[other.duplicated(keep=False)].groupby(["b", "j"], sort=False).size()
        pairs = [f"{battles[b]!r}/{jids[j]!r} ({c} verdicts)" for (b, j), c in counts.items()]
        repeats = show_rows(df.index[dup])
        raise DataValidationError(
            f"{name}: a judge other than the reference gave more than one verdict on a "
            f"battle (battle/judge {show_values(pairs, fmt=str)}; repeats at {repeats}). A "
            f"battle is one judged instance: the reference ({reference!r}) may vote on it "
            f"several times (a crowd), every other judge once. Fix: give repeated "
            f"judgments their own battle ids, or drop the repeats.")
    item, items = pd.factorize(pd.concat([df["left"], df["right"]], ignore_index=True)
                               .astype(object), sort=False)
    n = len(df)
    left_row, right_row = item[:n], item[n:]
    if (left_row == right_row).any():
        bad = df.index[left_row == right_row]
        raise DataValidationError(
            f"{name}: left equals right at {show_rows(bad)} (an item against itself). "
            f"Fix: drop those rows.")
    n_b = len(battles)
    left = np.full(n_b, -1)
    right = np.full(n_b, -1)
    left[battle], right[battle] = left_row, right_row  # any row's; checked next
    bad = (left[battle] != left_row) | (right[battle] != right_row)
    if bad.any():
        raise DataValidationError(
            f"{name}: battle(s) {show_values(pd.unique(battles[battle[bad]]))} have different "
            f"left/right items in different judges' rows (at {show_rows(df.index[bad])}). A "
            f"battle's two responses are in one order for every judge. Fix: swap the "
            f"verdict (left <-> right) of the rows written in the other order.")
    _check_connected(left, right, items, name)
    others = [j for c, j in enumerate(jids) if c != ref_code]
    remap = np.array([-1 if c == ref_code else c - (c > ref_code) for c in range(len(jids))])
    judge_code = remap[jcode]
    ref_counts = np.zeros((n_b, 3), dtype=np.int64)
    np.add.at(ref_counts, (battle[is_ref], codes[is_ref]), 1)
    verdicts = np.full((n_b, len(others)), MISSING)
    verdicts[battle[~is_ref], judge_code[~is_ref]] = codes[~is_ref]
    return Battles(items=np.asarray(items, dtype=object), judges=np.asarray(others, dtype=object),
                   reference=reference, battles=battles, left=left, right=right,
                   ref_counts=ref_counts,
                   verdicts=verdicts)


def _check_connected(left: np.ndarray, right: np.ndarray, items, name: str) -> None:
    """Raise if the items split into sets no battle links (by any judge): their skills
    would be placed on one scale by the prior alone (as DavidsonBT refuses them)."""
    k = len(items)
    graph = coo_matrix((np.ones(len(left)), (left, right)), shape=(k, k))
    n_comp, comp = connected_components(graph, directed=False)
    if n_comp == 1:
        return
    sets = pd.Series(np.asarray(items, dtype=object)).groupby(comp, sort=False)
    described = "; ".join(f"group {i + 1}: {show_values(list(s))}"
                          for i, (_, s) in enumerate(sets))
    raise DataValidationError(
        f"{name}: the items split into {n_comp} groups that no battle links, directly or "
        f"through other items ({described}), so their skills cannot be put on one scale. "
        f"Fix: add battles linking the groups, or fit each group separately.")


def _same_id(a, b) -> bool:
    """Ids are equal only when their types agree too (1 != '1', 1 != 1.0 as written)."""
    return type(a) is type(b) and a == b
