"""Names that look alike: a column named twice; ids differing by letter case within a
table, or by spaces and case across two tables.

:func:`check_repeated_columns` refuses a table that names a column twice (which of the
two to read is ambiguous). Ids are user data, compared exactly as written
(:mod:`bayesjudge.data.schema`): ``"GPT-4"`` and ``"gpt-4"`` are two items, and nothing
here merges, re-types or drops an id. The id checks only warn, naming a few examples
and the fix, where the exact comparison probably is not what the user meant:

* :func:`warn_case_ids` -- ids of one id column (``left`` and ``right`` together)
  that differ only by letter case (possibly with surrounding spaces as well; ids that
  differ only by spaces are :func:`~bayesjudge.data.schema.warn_spaced_ids`'s);
* :func:`warn_near_matches` -- ids of two tables read together (votes and their
  calibration labels, judge outputs and annotations, ...) that match only after
  stripping surrounding spaces and ignoring letter case.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from bayesjudge.data.messages import ID_COLUMNS, PACKAGE_DIR, DataValidationError, show_values

__all__ = ["check_equal_number_ids", "check_repeated_columns", "distinct_ids", "id_key",
           "near_matches", "warn_case_ids", "warn_near_matches"]

_SHOWN = 3  # sets / pairs shown in a warning


def check_repeated_columns(df: pd.DataFrame, name: str, columns: list[str]) -> None:
    """Raise a DataValidationError if ``df`` names a column twice.

    Two columns of one name make ``df[col]`` a table, which fails far from here. A
    repeated header read by ``pd.read_csv`` comes out as ``judge`` and ``judge.1``, the
    second silently ignored: that is refused too for the columns a table reads (the
    required ``columns`` and the id columns).
    """
    read = ({*columns} | set(ID_COLUMNS)) & set(df.columns)
    renamed = [c for c in df.columns if isinstance(c, str) and c.rpartition(".")[0] in read
               and c.rpartition(".")[2].isdigit()]
    twice = [*pd.unique(df.columns[df.columns.duplicated()]),
             *dict.fromkeys(c.rpartition(".")[0] for c in renamed)]
    if not twice:
        return
    how = (f"pd.read_csv renamed the repeats {show_values(renamed)}; pandas: "
           f"df.drop(columns={renamed!r}) keeps the first" if renamed else
           "pandas: df.loc[:, ~df.columns.duplicated()] keeps the first of each")
    raise DataValidationError(
        f"{name} has column(s) {show_values(twice)} more than once (columns "
        f"{list(df.columns)}), so which one to read is ambiguous. Fix: rename or drop the "
        f"duplicates ({how}).")


def id_key(value):
    """The loose form of an id used only to detect look-alikes: stripped, case-folded.

    Never used to match ids (they match exactly as written); non-text ids are returned
    as they are.
    """
    return value.strip().casefold() if isinstance(value, str) else value


def _text_ids(values) -> pd.Series:
    """The distinct text ids among ``values`` (first-appearance order)."""
    ids = pd.unique(np.asarray(values, dtype=object))
    return pd.Series([v for v in ids if isinstance(v, str)], dtype=object)


def _id_groups(df: pd.DataFrame) -> list[list[str]]:
    """The table's id columns as groups: ``left`` and ``right`` together, the others alone."""
    groups = [[c for c in ("left", "right") if c in df.columns]]
    groups += [[c] for c in ID_COLUMNS if c not in ("left", "right") and c in df.columns]
    return [g for g in groups if g]


#: ``pd.api.types.infer_dtype`` kinds of a column whose values cannot be equal numbers of
#: different kinds (1, 1.0, True): one kind of number, or text only.
_ONE_KIND = {"string", "integer", "floating", "boolean", "empty", "decimal"}


def distinct_ids(df: pd.DataFrame) -> dict[str, pd.Series]:
    """The distinct text ids of each id column, ``left`` and ``right`` together.

    Keys are the column names joined by ``/`` (``"left/right"``, ``"judge"``, ...);
    numeric columns are left out (numbers have no spaces or letter case). Computed once
    per table and shared by :func:`~bayesjudge.data.schema.warn_spaced_ids` and
    :func:`warn_case_ids`: ``pd.unique`` over a million-row column is their whole cost.
    """
    out = {}
    for cols in _id_groups(df):
        if all(pd.api.types.is_numeric_dtype(df[c]) for c in cols):
            continue
        out["/".join(cols)] = _text_ids(np.concatenate(
            [np.asarray(pd.unique(df[c]), dtype=object) for c in cols]))
    return out


def _kind(value) -> str:
    """bool, integer or float: the kinds of number Python counts equal (1 == 1.0 == True)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    return "integer" if isinstance(value, (int, np.integer)) else "float"


#: Types an id can have: text, or a number (kept as written: ``1`` and ``"1"`` differ).
_ID_TYPES = (str, int, float, np.integer, np.floating, np.bool_, bool)


def check_id_types(df: pd.DataFrame, name: str) -> None:
    """Raise if an id column holds values that are neither text nor numbers.

    Dates, ``Decimal``s and tuples (a ``groupby`` key) fitted, but a saved fit cannot hold
    them (netCDF: "cannot serialise date") and the rankings' tables failed on tuples (the
    audit of 2026-12-02): they are refused with the one-line conversion that keeps them.
    """
    for col in (c for c in ID_COLUMNS if c in df.columns):
        dtype = df[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            values = pd.Series(dtype.categories, dtype=object)
        elif dtype.kind in "mM":  # datetime64 / timedelta64
            values = df[col].head(1).astype(object)
        elif dtype.kind == "O":
            values = pd.Series(pd.unique(df[col]), dtype=object)
            if pd.api.types.infer_dtype(values, skipna=True) in {"string", "integer",
                                                                  "floating", "empty"}:
                continue
        else:
            continue
        bad = [v for v in values if v is not None and v == v
               and not isinstance(v, _ID_TYPES)]
        if bad:
            kinds = sorted({type(v).__name__ for v in bad})
            raise DataValidationError(
                f"{name}.{col} holds ids of type {', '.join(kinds)} (e.g. {bad[0]!r}); ids "
                f"must be text or numbers, so that fits can be saved and tables written. "
                f"Fix: df[{col!r}] = df[{col!r}].astype(str).")


def check_equal_number_ids(df: pd.DataFrame, name: str) -> None:
    """Raise if an id column mixes numbers that Python counts equal: 1, 1.0 and True.

    pandas hashes them as one value, so they would become one id (and ``1`` and ``1.0``
    are not written alike). Only object columns can mix them; text ids are never equal
    to numbers, so a column of text pays one ``pd.unique`` per column.
    """
    for cols in _id_groups(df):
        series = [df[c] for c in cols if df[c].dtype == object]
        if not series:
            continue
        values = pd.Series(np.concatenate([s.to_numpy() for s in series]), dtype=object)
        if pd.api.types.infer_dtype(values, skipna=True) in _ONE_KIND:
            continue  # (in C) all text, or numbers of one kind: nothing can clash
        types = values.map(type)
        seen: dict = {}  # value -> its distinct forms; equal numbers share a key
        for t in pd.unique(types):
            if t is str:
                continue
            forms = pd.unique(values[(types == t).to_numpy()])
            kind = _kind(forms[0])
            for value in forms:
                if value == value and all(_kind(f) != kind for f in seen.get(value, [])):
                    seen.setdefault(value, []).append(value)
        clash = [group for group in seen.values() if len(group) > 1]
        if clash:
            shown = "; ".join(" / ".join(repr(x) for x in s) for s in clash[:_SHOWN])
            raise DataValidationError(
                f"{name}.{'/'.join(cols)} has ids that Python counts equal but that are "
                f"written differently: {shown}; they would be merged into one id. Fix: "
                f"write each id one way, e.g. as text (df[{cols[0]!r}] = "
                f"df[{cols[0]!r}].astype(str), ...), or make them all the same type.")


def warn_case_ids(df: pd.DataFrame, name: str,
                  ids: dict[str, pd.Series] | None = None) -> None:
    """Warn when ids of a column differ only by letter case (``"GPT-4"`` vs ``"gpt-4"``).

    Checked per id column (:data:`~bayesjudge.data.schema.ID_COLUMNS`), ``left`` and
    ``right`` together (one set of items). Sets that differ only by leading/trailing
    spaces are left to :func:`~bayesjudge.data.schema.warn_spaced_ids`; a set that
    differs by case (with or without spaces as well) is reported here. The ids are
    not changed: they stay different ids. ``ids``: :func:`distinct_ids` of ``df``, if
    already computed.
    """
    for cols, values in (distinct_ids(df) if ids is None else ids).items():
        if values.empty:
            continue
        key = values.str.strip().str.casefold()
        clash = key.duplicated(keep=False).to_numpy()
        if not clash.any():
            continue
        stripped = values.str.strip()
        sets = [sorted(s, key=lambda v: (v != v.strip(), v))  # unspaced first: the fix
                for _, s in values[clash].groupby(key[clash], sort=False)
                if stripped[s.index].nunique() > 1]  # not only spaces: case differs
        if not sets:
            continue
        shown = "; ".join(show_values(s) for s in sets[:_SHOWN]) + (
            f" ... ({len(sets)} sets in all)" if len(sets) > _SHOWN else "")
        where = f"{name}.{cols}"
        also = "" if all(v == v.strip() for s in sets for v in s) else " (and spaces)"
        warnings.warn(
            f"{where} has ids that differ only by letter case{also}: {shown}. They are kept as "
            f"different ids (ids are compared exactly as written). If they name the same "
            f"thing, write them the same way in the data (e.g. replace {sets[0][1]!r} by "
            f"{sets[0][0]!r}); if letter case tells them apart, nothing needs fixing.",
            UserWarning, skip_file_prefixes=(PACKAGE_DIR,))


def near_matches(first, second) -> list[tuple]:
    """Pairs (id of ``first``, id of ``second``) that match only loosely (:func:`id_key`).

    An id with no exact twin in the other table is paired with the other table's ids
    of the same loose form (``" GPT-4"`` with ``"gpt-4"``). Ids matching exactly are
    never reported. Pairs in first-appearance order of ``first``.
    """
    a, b = _text_ids(first), _text_ids(second)
    if a.empty or b.empty:
        return []
    exact_a, exact_b = set(a), set(b)
    by_key: dict = {}
    for v in b:
        by_key.setdefault(id_key(v), []).append(v)
    pairs = []
    for v in a:
        for w in by_key.get(id_key(v), ()):
            if v != w and (v not in exact_b or w not in exact_a):
                pairs.append((v, w))
    return pairs


def warn_near_matches(first, first_name: str, second, second_name: str, *,
                      fix: str = "write each id the same way in both tables") -> None:
    """Warn when ids of two tables read together match only after stripping spaces or
    ignoring letter case (:func:`near_matches`), naming a few pairs and the fix.

    Parameters
    ----------
    first, second : array-like
        The id columns of the two tables (e.g. the judge outputs' ``item`` and the
        annotations' ``item``).
    first_name, second_name : str
        How to name them, e.g. ``"predictions.item"``.
    fix : str
        What to do about it (the default suits ids that should match).
    """
    pairs = near_matches(first, second)
    if not pairs:
        return
    shown = ", ".join(f"{v!r} ~ {w!r}" for v, w in pairs[:_SHOWN]) + (
        f" ... ({len(pairs)} pairs in all)" if len(pairs) > _SHOWN else "")
    warnings.warn(
        f"ids of {first_name} and {second_name} match only after removing surrounding "
        f"spaces or ignoring letter case: {shown} ({first_name} ~ {second_name}). Ids are "
        f"compared exactly as written, so these are not matched. Fix: {fix}.",
        UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
