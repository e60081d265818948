"""The tables' vocabulary: id columns, column roles, Arena's names, the graded levels.

Plain Python (no numpy, no pandas): the ``bayesjudge`` command's parser reads these names
to write its help and check its arguments before it imports anything heavier
(``tests/test_lazy_imports.py``). The modules that use them re-export them
(:mod:`~bayesjudge.data.messages`, :mod:`~bayesjudge.data.arena`,
:mod:`~bayesjudge.data.graded`).
"""

from __future__ import annotations

import decimal
import math
import numbers
import os
import re
import warnings

__all__ = ["ADDED_COLUMNS", "ARENA_COLUMNS", "ARENA_OUTCOMES", "COLUMN_ROLES", "DEFAULT_LEVELS",
           "ID_COLUMNS", "LINE_INDEX", "ONE_JUDGE", "check_levels", "label_key", "verdict_key"]

ID_COLUMNS = ("item", "system", "judge", "annotator", "context", "left", "right", "aspect",
              "battle")
"""Columns that hold identifiers: read them from files as strings, exactly as written."""
LINE_INDEX = "line"
"""Index name of a table read from a file (``bayesjudge`` on the command line): its labels
are the file's line numbers (the header is line 1), and error messages then name rows by
their file line (:func:`~bayesjudge.data.messages.show_rows`); any other index is named by
its labels ("row 3")."""
ONE_JUDGE = "(one judge)"
"""The judge id of every row of a comparisons table without a ``judge`` column."""
ARENA_COLUMNS = {"model_a": "left", "model_b": "right", "winner": "outcome"}
"""Chatbot Arena's columns and the comparisons columns they become."""
ARENA_OUTCOMES = {"model_a": "left", "model_b": "right", "tie": "tie", "tie (bothbad)": "tie"}
"""Chatbot Arena's ``winner`` values and the outcomes they become (both ties are ties)."""
COLUMN_ROLES = ("judge", "left", "right", "outcome", "prob", "context", "aspect", "n", "battle")
"""What a column can be mapped to (``columns={"their_name": role}``)."""
DEFAULT_LEVELS = ("B>>A", "B>A", "A=B", "A>B", "A>>B")
"""Arena-Hard's verdict labels with A = left, from the strongest preference for right."""


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([e][+-]?\d+)?\Z")
"""A finite decimal number as text (after :func:`label_key`: lower case, no spaces)."""


def label_key(value):
    """A label as the key of its vocabulary: text stripped and lower-cased.

    Labels (``left`` / ``right`` / ``tie``, ``A`` / ``B`` / ``tie``) are not ids:
    ``"Left"``, ``" TIE"`` and ``"tie"`` name the same label. Other values are
    returned as they are.
    """
    return value.strip().casefold() if isinstance(value, str) else value


def verdict_key(value):
    """A verdict label as its key: :func:`label_key`, and a number as its decimal text.

    Graded or coded verdicts are often numbers in a table (``1`` .. ``5``, ``0`` for a
    tie) while levels and outcome maps name them as text: ``1``, ``1.0``, ``"1"`` and
    ``"1.0"`` are one verdict, ``0.5`` is ``"0.5"`` (a file's verdict column is read as
    text, so its ``4.0`` meets ``levels=["1", ..., "5"]`` as the number 4.0 would).
    Booleans are not numbered labels and are returned as they are.
    """
    if isinstance(value, str):
        key = label_key(value)
        if not _NUMBER.match(key):
            return key
        # a number written as text (a file's column read as labels): "4.0" is 4, as the
        # same cell read as a number would be; integers exactly, whatever their size
        number = decimal.Decimal(key)
        return str(int(number)) if number == number.to_integral_value() else repr(float(key))
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return value
    return str(int(value)) if value.is_integer() else repr(value)


def check_levels(levels) -> tuple[str, ...]:
    """``levels`` as a tuple of labels (None: :data:`DEFAULT_LEVELS`), or a ValueError.

    At least two distinct labels (after :func:`label_key`),
    each a non-empty string.
    """
    if levels is None:
        return DEFAULT_LEVELS
    if isinstance(levels, str) or not hasattr(levels, "__iter__"):
        raise ValueError(f"levels must be a list of labels such as {list(DEFAULT_LEVELS)} "
                         f"(strongest preference for right first), got {levels!r}")
    out = tuple(levels)
    bad = [v for v in out if not isinstance(v, str) or not v.strip()]
    if bad:
        raise ValueError(f"levels must be non-empty strings; got {bad} in "
                         f"{list(out)}")
    keys = [verdict_key(v) for v in out]
    dup = sorted({v for v, k in zip(out, keys) if keys.count(k) > 1})
    if dup:
        raise ValueError(f"levels {dup} are the same label (letter case and "
                         f"surrounding spaces are ignored, 1 and 1.0 are one number); each "
                         f"level must be listed once: "
                         f"{list(out)}")
    if len(out) < 2:
        raise ValueError(f"levels needs at least 2 labels (strongest preference for right "
                         f"first), got {list(out)}")
    default = [label_key(v) for v in DEFAULT_LEVELS]
    if sorted(keys) == sorted(default) and keys != default:
        warnings.warn(
            f"levels {list(out)} holds Arena-Hard's labels in another order than "
            f"{list(DEFAULT_LEVELS)}: levels run from the strongest preference for the right "
            f"item to the strongest for the left, so {out[0]!r} is read as the strongest "
            f"preference for right. With A = the left item (Arena-Hard's convention) the "
            f"ranking comes out reversed; fix: drop levels (the default). Keep this order only "
            f"if A is the right item in your table.", UserWarning,
            skip_file_prefixes=(os.path.dirname(os.path.dirname(__file__)),))
    return out


#: ``df.attrs`` key: columns bayesjudge added to the user's table (an implicit ``judge``),
#: which a missing-column error leaves out of what the table "has".
ADDED_COLUMNS = "bayesjudge_added_columns"
