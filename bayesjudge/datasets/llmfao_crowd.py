"""LLMFAO: crowd pairwise votes and GPT-4 / GPT-3.5 judge verdicts on 59-70 LLMs.

Dmitry Ustalov's LLMFAO (github.com/dustalov/llmfao, data CC BY 4.0; prompts and
outputs from the llmonitor.com Crowdsourced LLM Benchmark): pairs (prompt, output of
model ``left`` = System A, output of ``right`` = System B) judged by 4-5 crowd workers
(8,931 votes on 2,139 pairs of 13 prompts and 59 models) and by ``gpt-4`` and
``gpt-3.5-turbo-instruct`` (both on all 3,236 pairs of 19 prompts and 70 models).
Labels ``A`` = left better, ``B`` = right better, ``tie``. No prompt or output text.

The module is not named ``llmfao`` so that the function
:func:`~bayesjudge.datasets.llmfao` does not shadow it in :mod:`bayesjudge.datasets`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.data.counts import mark_info_columns
from bayesjudge.datasets.csv_files import check_values, find_csv, read_csv_strings

__all__ = [
    "LLMFAO_JUDGES",
    "llmfao",
    "llmfao_annotations",
    "llmfao_items",
    "llmfao_judge_labels",
    "llmfao_votes",
]

#: The two LLM judges, as named in the files (gpt3-comparisons.csv upstream is
#: gpt-3.5-turbo-instruct).
LLMFAO_JUDGES = ("gpt-4", "gpt-3.5-turbo-instruct")
_LABELS = ("A", "B", "tie")
_VOTE = {"A": 1, "tie": 0, "B": -1}
_FIX = "Pass the file of ../shared/data/llmfao (or its folder)."


def _read(name: str, path: str | Path | None, columns: tuple[str, ...]) -> pd.DataFrame:
    res = find_csv(f"llmfao_{name}.gz", name, path, "llmfao")
    return read_csv_strings(res, columns, f"llmfao {name}")


def llmfao(
    path: str | Path | None = None,
    *,
    crowd: Literal["pooled", "workers"] = "pooled",
    context: Literal["prompt", "none"] = "prompt",
) -> pd.DataFrame:
    """LLMFAO's comparisons table: every crowd vote and every LLM-judge verdict.

    The upstream ``battles.csv``: 15,403 rows = 8,931 crowd votes (``judge = "crowd"``,
    ``annotator`` = the worker, ``worker58``) + 3,236 verdicts of each LLM judge
    (:data:`LLMFAO_JUDGES`, ``annotator`` empty), ``left`` = System A. Every column is
    text exactly as written (``item`` ``"0"``, ... stays a string).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``battles.csv`` (plain or ``.gz``) or its folder; default: the
        copy shipped in ``bayesjudge/data``.
    crowd : {"pooled", "workers"}
        ``"pooled"`` (as written): the crowd is one judge ``crowd``. ``"workers"``:
        each worker is a judge of their own (``judge`` = ``annotator``), for models
        with one reliability per judge (``BTSigma``, ``DavidsonBT(discriminators=True)``).
    context : {"prompt", "none"}
        ``"prompt"`` (as written): ``context`` = the prompt slug, so skills are per
        prompt. ``"none"``: the column is named ``prompt_slug`` instead, and models
        rank the systems over all prompts.

    Returns
    -------
    pandas.DataFrame
        ``item``, ``left``, ``right``, ``outcome`` (left / right / tie), ``judge``,
        ``annotator``, ``context`` (or ``prompt_slug``), in file order: crowd votes,
        then gpt-4's verdicts, then gpt-3.5-turbo-instruct's. Select the columns a
        model uses to fit it without the others.

    Examples
    --------
    >>> from bayesjudge.datasets import llmfao
    >>> table = llmfao()
    >>> len(table), table["judge"].value_counts().to_dict()["crowd"]
    (15403, 8931)
    """
    if crowd not in ("pooled", "workers"):
        raise ValueError(f"crowd={crowd!r}; choose 'pooled' or 'workers'.")
    if context not in ("prompt", "none"):
        raise ValueError(f"context={context!r}; choose 'prompt' or 'none'.")
    cols = ("item", "left", "right", "outcome", "judge", "annotator", "context")
    df = _read("battles.csv", path, cols)
    check_values(df, "outcome", ("left", "right", "tie"), "llmfao battles.csv", _FIX)
    if crowd == "workers":
        is_crowd = df["judge"].to_numpy() == "crowd"
        df["judge"] = np.where(is_crowd, df["annotator"].to_numpy(), df["judge"].to_numpy())
    if context == "none":
        df = df.rename(columns={"context": "prompt_slug"})
    # the reader's columns (no unused-column warning when the table is fitted as it is)
    return mark_info_columns(df, ("item", "annotator", "prompt_slug"))


def llmfao_annotations(path: str | Path | None = None) -> pd.DataFrame:
    """The crowd's votes as an annotations table (``PreferenceDistribution``'s input).

    8,931 votes (upstream ``human_labels.csv``) on 2,139 pairs by 124 workers, 1-5
    votes per pair; ``label`` ``A`` = left better (38.9% tie, 32.6% A, 28.5% B).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``human_labels.csv`` or its folder; default: the shipped copy.

    Returns
    -------
    pandas.DataFrame
        ``item``, ``annotator``, ``label`` in {A, B, tie}, as strings, in file order.
    """
    df = _read("human_labels.csv", path, ("item", "annotator", "label"))
    check_values(df, "label", _LABELS, "llmfao human_labels.csv", _FIX)
    return df


def llmfao_judge_labels(path: str | Path | None = None) -> pd.DataFrame:
    """The two LLM judges' hard verdicts: 6,472 rows (both judges on all 3,236 pairs).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``judge_labels.csv`` or its folder; default: the shipped copy.

    Returns
    -------
    pandas.DataFrame
        ``item``, ``judge`` (:data:`LLMFAO_JUDGES`), ``label`` in {A, B, tie}, as
        strings, in file order (gpt-4 first).
    """
    df = _read("judge_labels.csv", path, ("item", "judge", "label"))
    check_values(df, "label", _LABELS, "llmfao judge_labels.csv", _FIX)
    return df


def llmfao_items(path: str | Path | None = None) -> pd.DataFrame:
    """The 3,236 pairs: ``item``, ``prompt_slug``, ``prompt_type``, ``left``, ``right``
    (strings as written) and ``in_crowd_subset`` (bool: the 2,139 pairs the crowd voted on).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``items.csv`` or its folder; default: the shipped copy.
    """
    cols = ("item", "prompt_slug", "prompt_type", "left", "right", "in_crowd_subset")
    df = _read("items.csv", path, cols)
    check_values(df, "in_crowd_subset", ("0", "1"), "llmfao items.csv", _FIX)
    df["in_crowd_subset"] = df["in_crowd_subset"].to_numpy() == "1"
    return df


def llmfao_votes(
    path: str | Path | None = None,
    *,
    judge: Literal["crowd", "gpt-4", "gpt-3.5-turbo-instruct"] = "crowd",
) -> pd.DataFrame:
    """One judge's LLMFAO labels as a votes table (``DavidsonAggregator``'s input).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``human_labels.csv`` (``judge="crowd"``) or ``judge_labels.csv``
        (an LLM judge), or their folder; default: the shipped copies.
    judge : {"crowd", "gpt-4", "gpt-3.5-turbo-instruct"}
        The crowd's 8,931 votes (several per pair) or an LLM judge's 3,236 verdicts.

    Returns
    -------
    pandas.DataFrame
        ``item`` (string as written), ``judge``, ``vote`` in {-1, 0, +1} (+1 = A, the
        left output, better; 0 = tie), one row per label in file order.
    """
    if judge == "crowd":
        labels = llmfao_annotations(path)
    elif judge in LLMFAO_JUDGES:
        labels = llmfao_judge_labels(path)
        labels = labels[labels["judge"].to_numpy() == judge]
    else:
        raise ValueError(f"judge={judge!r}; choose 'crowd' or one of {list(LLMFAO_JUDGES)}.")
    return pd.DataFrame(
        {
            "item": labels["item"].to_numpy(),
            "judge": judge,
            "vote": labels["label"].map(_VOTE).to_numpy(np.int64),
        }
    )
