"""Comparison tables as users' tools write them: Chatbot Arena exports, other names and labels.

:func:`comparisons_table` turns a table with its own column names and outcome labels
into the long comparisons table (``judge``, ``left``, ``right``, ``outcome`` | ``prob``;
:func:`bayesjudge.data.comparisons.validate_comparisons`), the one documented way to map
them (``bayesjudge rank --columns ... --outcomes ...`` on the command line). Every
comparisons reader calls it, so without a mapping:

* a Chatbot Arena export (``model_a``, ``model_b``, ``winner`` with ``model_a`` /
  ``model_b`` / ``tie`` / ``tie (bothbad)``, as lmsys publishes its battles) is read as
  it is: ``model_a`` -> ``left``, ``model_b`` -> ``right``, ``winner`` -> ``outcome``,
  both ties -> ``tie``; :func:`comparisons_table` (or :func:`from_arena`) keeps Arena's
  own value in ``winner_raw``;
* a table without a ``judge`` column is one judge, :data:`ONE_JUDGE`
  (``judges()`` and ``bayesjudge rank`` then show that id).

A wide table, one verdict column per judge (arena_ppr's ``battles_wide.csv``, the PPR
authors' layout), becomes long with ``judge_columns=[...]`` (``bayesjudge rank
--judge-columns``): one row per verdict, the column's name as the judge's id.

Other columns (``question_id``, ``tstamp``, ...) are kept and ignored. A question id
is not a ``context``: a context makes items comparable only within it, and with one
battle per question nothing would be comparable; map it (``columns={"question_id":
"context"}``) only when each question holds many comparisons of the same items.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from bayesjudge.data.counts import INFO_COLUMNS, mark_info_columns
from bayesjudge.data.frames import as_pandas
from bayesjudge.data.messages import PACKAGE_DIR, DataValidationError, show_rows, show_values
from bayesjudge.data.schema import check_index_roles
from bayesjudge.data.vocabulary import (
    ADDED_COLUMNS,
    ARENA_COLUMNS,
    ARENA_OUTCOMES,
    COLUMN_ROLES,
    ONE_JUDGE,
    label_key,
    verdict_key,
)

__all__ = ["ARENA_COLUMNS", "ARENA_OUTCOMES", "COLUMN_ROLES", "ONE_JUDGE",
           "comparisons_table", "from_arena"]

_OUTCOMES = ("left", "right", "tie")


def comparisons_table(df, columns: Mapping[str, str] | None = None,
                      outcomes: Mapping[str, str] | None = None,
                      judge_columns: Sequence | None = None,
                      judge_values: str = "outcome") -> pd.DataFrame:
    """A comparisons table with its own column names and labels as the long table.

    Parameters
    ----------
    df : pandas.DataFrame, polars.DataFrame, pyarrow.Table, ...
        One row per comparison, any columns.
    columns : mapping, optional
        ``{"their_name": role}``, role one of :data:`COLUMN_ROLES`, e.g.
        ``{"model_x": "left", "model_y": "right", "verdict": "outcome"}``. Default:
        Chatbot Arena's :data:`ARENA_COLUMNS`, each where the table has it and not
        its role (a table already in the long form is left as it is).
    outcomes : mapping, optional
        ``{"their_label": "left" | "right" | "tie"}``, e.g. ``{"A": "left", "B":
        "right", "both": "tie"}``; labels match in any letter case, surrounding spaces
        ignored, and ``left`` / ``right`` / ``tie`` stay valid. Default: Arena's
        :data:`ARENA_OUTCOMES` when the outcome comes from Arena's ``winner`` column.
    judge_columns : sequence of column names, optional
        A wide table: these columns hold one judge's verdict each (the column's name is
        the judge's id, as written). Each row becomes one row per judge with a verdict,
        in the table's row order and the columns' order; an empty cell (the judge did
        not judge that row) gives no row, and a row with no verdict at all is named in
        a warning. The other columns are repeated, and so is the row's index label, so
        errors still name the table's own rows (file lines from the command line).
        ``columns`` and ``outcomes`` apply to the long table.
    judge_values : {"outcome", "prob"}
        What ``judge_columns`` hold: verdict labels (default) or P(left beats right).

    Returns
    -------
    pandas.DataFrame
        The input (same index, other columns kept) with the columns renamed to their
        roles; when labels were mapped, the outcome column holds ``left`` / ``right``
        / ``tie`` and the labels as given are kept in ``<source column>_raw``
        (``winner_raw`` for an Arena export: which tie it was). Without a ``judge``
        column, every row gets the judge :data:`ONE_JUDGE`. A table needing none of
        this is returned as it is (the same object).

    Raises
    ------
    DataValidationError
        A mapped column the table lacks, an unknown role or outcome, two columns
        mapped to one role, a role the table already has, a label outside the map;
        ``judge_columns`` the table lacks or names twice, or beside a ``judge`` column
        or a column of ``judge_values``' name.

    Examples
    --------
    >>> arena = pd.DataFrame({"model_a": ["gpt-4", "claude-v1"],
    ...                       "model_b": ["claude-v1", "vicuna-13b"],
    ...                       "winner": ["model_a", "tie (bothbad)"]})
    >>> comparisons_table(arena)[["judge", "left", "right", "outcome", "winner_raw"]]
             judge       left       right outcome     winner_raw
    0  (one judge)      gpt-4   claude-v1    left        model_a
    1  (one judge)  claude-v1  vicuna-13b     tie  tie (bothbad)
    >>> theirs = pd.DataFrame({"x": ["a", "b"], "y": ["b", "c"], "v": ["A", "C"]})
    >>> comparisons_table(theirs, columns={"x": "left", "y": "right", "v": "outcome"},
    ...                   outcomes={"A": "left", "B": "right", "C": "tie"})["outcome"].tolist()
    ['left', 'tie']
    >>> wide = pd.DataFrame({"battle": ["b1", "b2"], "left": ["a", "b"], "right": ["b", "c"],
    ...                      "human": ["left", None], "gpt-4": ["tie", "right"]})
    >>> comparisons_table(wide, judge_columns=["human", "gpt-4"])
       judge battle left right outcome
    0  human     b1    a     b    left
    0  gpt-4     b1    a     b     tie
    1  gpt-4     b2    b     c   right
    """
    frame = as_pandas(df)
    if not isinstance(frame, pd.DataFrame):
        return frame  # validated cells, or not a table: the validator says what it needs
    check_index_roles(frame, "comparisons", (columns or {}).keys())
    if judge_columns is not None:
        frame = _long_from_wide(frame, judge_columns, judge_values, columns)
    explicit = columns is not None
    rename = _check_columns(frame, columns) if explicit else {
        src: role for src, role in ARENA_COLUMNS.items()
        if src in frame.columns and role not in frame.columns
        and not (role == "outcome" and "prob" in frame.columns)}
    source = next((src for src, role in rename.items() if role == "outcome"), "outcome")
    if outcomes is None and rename.get("winner") == "outcome" and (
            not explicit or _arena_labels(frame["winner"])):
        outcomes = ARENA_OUTCOMES
    labels = _check_outcomes(outcomes) if outcomes is not None else None
    if not rename and labels is None and "judge" in frame.columns:
        return frame
    out = frame.rename(columns=rename)
    if labels is not None:
        if "outcome" not in out.columns:
            raise DataValidationError(
                f"comparisons: outcome labels were mapped ({show_values(list(labels))}) but "
                f"the table has no outcome column (it has {list(frame.columns)}). Fix: map the "
                f"column holding the verdicts to outcome (columns={{'verdict': 'outcome'}}).")
        raw = out["outcome"]
        mapped = _relabel(out, raw, labels)
        at = out.columns.get_loc("outcome") + 1
        if f"{source}_raw" in out.columns:
            raise DataValidationError(
                f"comparisons already has a column {source + '_raw'!r}, where the outcome "
                f"labels as given are kept. Fix: rename or drop it.")
        out = out.assign(outcome=mapped)
        out.insert(at, f"{source}_raw", raw)
        # kept for the reader (which tie it was), not a column the models use: no warning
        mark_info_columns(out, (*out.attrs.get(INFO_COLUMNS, ()), f"{source}_raw"))
    if "judge" not in out.columns:
        out.insert(0, "judge", ONE_JUDGE)
        out.attrs[ADDED_COLUMNS] = ("judge",)
    return out


def _long_from_wide(frame: pd.DataFrame, judge_columns, value: str,
                    columns: Mapping[str, str] | None) -> pd.DataFrame:
    """One row per (row, judge) verdict of a table with one verdict column per judge."""
    if value not in ("outcome", "prob"):
        raise DataValidationError(
            f"judge_values must be 'outcome' (verdict labels) or 'prob' (P(left beats "
            f"right)), got {value!r}.")
    if isinstance(judge_columns, (str, bytes)) or not isinstance(judge_columns, Sequence):
        raise DataValidationError(
            f"judge_columns must be a list of column names, got {judge_columns!r}. Fix: e.g. "
            f"judge_columns=[{judge_columns!r}].")
    cols = list(judge_columns)
    have = list(frame.columns)
    missing = [c for c in cols if c not in have]
    twice = sorted({str(c) for c in cols if cols.count(c) > 1})
    if not cols or missing or twice:
        what = ("is empty" if not cols else f"names {show_values(twice)} twice" if twice
                else f"names column(s) {show_values(missing)} the table lacks")
        raise DataValidationError(
            f"judge_columns {what}; the table has {have}. Fix: list each judge's verdict "
            f"column once.")
    mapped = {c: r for c, r in (columns or {}).items()}
    clash = [c for c in cols if c in mapped]
    taken = [r for r in ("judge", value) if r in have or r in mapped.values()]
    if clash or taken:
        raise DataValidationError(
            "comparisons: " + (f"columns maps judge column(s) {show_values(clash)}, which "
                               f"judge_columns makes the judges' ids. " if clash else "")
            + (f"the table already has (or columns maps to) {show_values(taken)}, which the "
               f"long table's judge ids and verdicts would fill. " if taken else "")
            + "Fix: rename or drop those columns, or leave them out of the mapping.")
    values = frame[cols].to_numpy(dtype=object)
    present = ~pd.isna(values)
    empty = ~present.any(axis=1)
    if empty.any():
        warnings.warn(
            f"comparisons: {int(empty.sum())} row(s) have no verdict in any of the judge "
            f"columns {show_values(cols)} (at {show_rows(frame.index[empty])}) and give no "
            f"comparison; they are left out.", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
    rows, which = np.nonzero(present)  # row-major: each row's judges in the columns' order
    out = frame.drop(columns=cols).take(rows)
    out.insert(0, "judge", pd.array(np.asarray(cols, dtype=object)[which], dtype=object))
    out[value] = values[rows, which]
    out.attrs = dict(frame.attrs)
    return out


def _arena_labels(column: pd.Series) -> bool:
    """Whether every value of a ``winner`` column is one of Arena's (``model_a``, ``tie``, ...)."""
    keys = {label_key(k) for k in ARENA_OUTCOMES}
    values = [label_key(v) for v in pd.unique(column) if isinstance(v, str)]
    return bool(values) and all(v in keys for v in values)


def from_arena(df) -> pd.DataFrame:
    """A Chatbot Arena export (``model_a``, ``model_b``, ``winner``) as the long table.

    :func:`comparisons_table` with Arena's columns and labels required: ``winner`` in
    ``model_a`` / ``model_b`` / ``tie`` / ``tie (bothbad)`` becomes ``outcome``
    (both ties ``tie``); ``winner_raw`` keeps Arena's value; no ``judge`` column gives
    one judge, :data:`ONE_JUDGE`. Models and ``bayesjudge rank`` read such a file
    directly; call this to see the mapped table or to keep ``winner_raw``.
    """
    return comparisons_table(df, columns=ARENA_COLUMNS, outcomes=ARENA_OUTCOMES)


def _check_columns(frame: pd.DataFrame, columns: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(columns, Mapping):
        raise DataValidationError(
            f"columns must be a mapping {{'their_name': role}}, got {type(columns).__name__}.")
    have = list(frame.columns)
    missing = [c for c in columns if c not in have]
    if missing:
        raise DataValidationError(
            f"comparisons has no column(s) {show_values(missing)} to map; it has {have}. "
            f"Fix: name columns of the table in columns={{'their_name': role}}.")
    bad = {c: r for c, r in columns.items() if r not in COLUMN_ROLES}
    if bad:
        raise DataValidationError(
            f"columns maps to unknown role(s) {bad}; a column can become one of "
            f"{list(COLUMN_ROLES)}.")
    roles = list(columns.values())
    twice = sorted({r for r in roles if roles.count(r) > 1})
    if twice:
        raise DataValidationError(
            f"columns maps several columns to {twice}: "
            f"{ {c: r for c, r in columns.items() if r in twice} }. Fix: map one column to each.")
    taken = [r for src, r in columns.items() if r in have and r != src and r not in columns]
    if taken:
        raise DataValidationError(
            f"comparisons already has column(s) {taken}, which columns would map other columns "
            f"to. Fix: drop or rename those columns, or map them too.")
    return {src: role for src, role in columns.items() if src != role}


def _check_outcomes(outcomes: Mapping[str, str]) -> dict:
    if not isinstance(outcomes, Mapping):
        raise DataValidationError(
            f"outcomes must be a mapping {{'their_label': 'left' | 'right' | 'tie'}}, got "
            f"{type(outcomes).__name__}.")
    bad = {k: v for k, v in outcomes.items() if label_key(v) not in _OUTCOMES}
    if bad:
        raise DataValidationError(
            f"outcomes maps labels to {bad}; an outcome is one of {list(_OUTCOMES)}.")
    mapped: dict = {}
    for k, v in outcomes.items():  # labels are matched by their key (case, spaces, 1 / 1.0)
        mapped.setdefault(verdict_key(k), {})[k] = label_key(v)
    clash = {key: to for key, to in mapped.items() if len(set(to.values())) > 1}
    if clash:
        shown = "; ".join(", ".join(f"{k!r} -> {v!r}" for k, v in to.items())
                          for to in clash.values())
        raise DataValidationError(
            f"outcomes maps one verdict label to several outcomes ({shown}): labels are "
            f"matched ignoring letter case and surrounding spaces. Fix: map each label once.")
    labels = {o: o for o in _OUTCOMES}
    labels.update({key: next(iter(to.values())) for key, to in mapped.items()})
    return labels


def _relabel(frame: pd.DataFrame, raw: pd.Series, labels: dict) -> pd.Series:
    codes, uniques = pd.factorize(raw, sort=False)  # each distinct label looked up once
    known = [labels.get(verdict_key(u)) for u in uniques]
    unknown = [u for u, k in zip(uniques, known) if k is None]
    if unknown:
        where = frame.index[pd.Series(raw).isin(unknown).to_numpy()]
        raise DataValidationError(
            f"comparisons.outcome has label(s) {show_values(unknown)} at {show_rows(where)} "
            f"outside the outcome map {labels}. Fix: add them to outcomes= (--outcomes) or "
            f"drop those rows.")
    # code -1 (a missing verdict) picks the trailing None: it stays missing for the
    # validator to name
    return pd.Series(np.asarray([*known, None], dtype=object)[codes], index=raw.index,
                     dtype=object)
