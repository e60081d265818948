"""Repeated, order-swapped LLM-judge votes of "Judging the Judges" (position_bias_rep).

Shi, Ma, Liang, Diao, Ma & Vosoughi (2024), "Judging the Judges: A Systematic Study of
Position Bias in LLM-as-a-Judge", arXiv:2406.07791 (repository
Slimshilin/Position-Bias-Analyzer, MIT): nine LLM judges compare a model's answer with
a reference answer (MTBench: 4 models vs vicuna-13b-v1.3 on 24 questions, a 3-option
prompt with ties; DevBench: 4 models vs human-written designs on 18 prompts, 2
options, no ties), each pair in both orders and three independent repetitions: 6
votes per judge per pair, 9,072 in all. Labels only.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError
from bayesjudge.data.counts import mark_info_columns
from bayesjudge.data.messages import PACKAGE_DIR, show_values
from bayesjudge.datasets.csv_files import check_values, find_csv, read_csv_strings

__all__ = ["POSITION_BIAS_BENCHMARKS", "position_bias_rep", "position_bias_rep_winrates"]

#: The two benchmarks of the repetition study and their reference answers.
POSITION_BIAS_BENCHMARKS = {"MTBench": "vicuna-13b-v1.3", "DevBench": "human"}

_VOTES = ("benchmark", "question", "task", "model", "reference", "judge", "n_options",
          "repetition", "order", "left", "right", "raw", "outcome", "verdict")
_RATES = ("judge", "metric", "model", "reference")
_FIX = "Pass the file of ../shared/data/position_bias_rep (or its folder)."


def position_bias_rep(
    path: str | Path | None = None,
    *,
    benchmark: Literal["MTBench", "DevBench"] | None = None,
    context: Literal["question", "none"] = "question",
    unparsed: Literal["warn", "drop", "keep"] = "warn",
) -> pd.DataFrame:
    """The repeated, order-swapped votes (upstream ``votes.csv``) as a comparisons table.

    9,072 votes = 9 judges x 3 repetitions x 2 orders x (MTBench 96 | DevBench 72
    pairs); ``left`` / ``right`` are the answers shown first / second, ``outcome`` the
    judge's verdict on them. Each pair was judged in both orders, so a judge's
    position bias is identified (``DavidsonBT(position_bias=True)``); MTBench's
    3-option prompt allows ties (0.2-22% by judge), DevBench's does not. 30 verdicts
    could not be parsed upstream (28 MTBench, 2 DevBench; 22 of them gpt-3.5-turbo-0125's).

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``votes.csv`` (plain or ``.gz``) or its folder; default: the copy
        shipped in ``bayesjudge/data``.
    benchmark : {"MTBench", "DevBench"}, optional
        Keep one benchmark (its models meet only through their common reference, so
        the two benchmarks are two separate rankings); default both.
    context : {"question", "none"}
        ``"question"``: ``context`` = the question, so skills are per question (5
        systems each, 6 votes per judge and pair). ``"none"``: no ``context``
        column; models rank the systems over all questions.
    unparsed : {"warn", "drop", "keep"}
        Unparsed verdicts (empty ``outcome``): dropped with a ``UserWarning`` saying
        how many (default), dropped silently, or kept with a missing ``outcome`` and
        ``verdict`` (then drop them before fitting: models refuse missing outcomes).

    Returns
    -------
    pandas.DataFrame
        ``judge``, ``left``, ``right``, ``outcome`` (left / right / tie), [``context``],
        then the file's ``benchmark``, ``question``, ``task``, ``model``,
        ``reference``, ``n_options`` and ``repetition`` (int), ``order``
        (model_first / reference_first), ``raw`` (the judge's A / B / C), ``verdict``
        (Int64: +1 model beats the reference, -1 loses, 0 tie), in file order. Ids are
        strings as written. Select the columns a model uses to fit it without the
        others.

    Examples
    --------
    >>> from bayesjudge.datasets import position_bias_rep
    >>> votes = position_bias_rep(unparsed="keep")
    >>> len(votes), int(votes["outcome"].isna().sum())
    (9072, 30)
    """
    if benchmark is not None and benchmark not in POSITION_BIAS_BENCHMARKS:
        raise ValueError(
            f"benchmark={benchmark!r}; choose one of {list(POSITION_BIAS_BENCHMARKS)} or None."
        )
    if context not in ("question", "none"):
        raise ValueError(f"context={context!r}; choose 'question' or 'none'.")
    if unparsed not in ("warn", "drop", "keep"):
        raise ValueError(f"unparsed={unparsed!r}; choose 'warn', 'drop' or 'keep'.")
    res = find_csv("position_bias_rep_votes.csv.gz", "votes.csv", path, "position_bias_rep")
    df = read_csv_strings(res, _VOTES, "position_bias_rep votes.csv")
    table = f"position_bias_rep ({res.name})"
    check_values(df, "outcome", ("left", "right", "tie", ""), table, _FIX)
    check_values(df, "verdict", ("1", "-1", "0", ""), table, _FIX)
    missing = df["outcome"].to_numpy() == ""
    clash = missing != (df["verdict"].to_numpy() == "")
    if clash.any():
        raise DataValidationError(
            f"{table}: 'outcome' and 'verdict' must be empty together (an unparsed "
            f"verdict); they differ on file lines {show_values(np.flatnonzero(clash) + 2)}. "
            f"{_FIX}"
        )
    for col in ("n_options", "repetition"):
        bad = ~df[col].str.fullmatch(r"[0-9]+").to_numpy()
        if bad.any():
            raise DataValidationError(
                f"{table}: column {col!r} must be a whole number; got "
                f"{show_values(pd.unique(df[col].to_numpy()[bad]))}. {_FIX}"
            )
    if benchmark is not None:
        keep = df["benchmark"].to_numpy() == benchmark
        df, missing = df[keep], missing[keep]
    if missing.any() and unparsed != "keep":
        if unparsed == "warn":
            per_judge = df.loc[missing, "judge"].value_counts(sort=False)
            warnings.warn(
                f"position_bias_rep: dropped {int(missing.sum())} unparsed verdict(s) of "
                f"{len(df)} ({', '.join(f'{j}: {n}' for j, n in per_judge.items())}); "
                "unparsed='keep' keeps them with a missing outcome, 'drop' drops them "
                "silently.",
                UserWarning,
                skip_file_prefixes=(PACKAGE_DIR,),
            )
        df, missing = df[~missing], missing[~missing]
    out = pd.DataFrame(
        {
            "judge": df["judge"].to_numpy(),
            "left": df["left"].to_numpy(),
            "right": df["right"].to_numpy(),
            "outcome": pd.Series(df["outcome"].to_numpy(), dtype=str).mask(missing),
        }
    )
    if context == "question":
        out["context"] = df["question"].to_numpy()
    for col in ("benchmark", "question", "task", "model", "reference"):
        out[col] = df[col].to_numpy()
    out["n_options"] = df["n_options"].to_numpy().astype(np.int64)
    out["repetition"] = df["repetition"].to_numpy().astype(np.int64)
    out["order"] = df["order"].to_numpy()
    out["raw"] = df["raw"].to_numpy()
    out["verdict"] = pd.array(
        [pd.NA if v == "" else int(v) for v in df["verdict"].to_numpy()], dtype="Int64"
    )
    # the reader's columns (no unused-column warning when the table is fitted as it is)
    return mark_info_columns(out, ("benchmark", "question", "task", "model", "reference",
                                   "n_options", "repetition", "order", "raw", "verdict"))


def position_bias_rep_winrates(path: str | Path | None = None) -> pd.DataFrame:
    """Each judge's MT-Bench win rates of 30 models against vicuna-13b-v1.3 (80 questions).

    The upstream aggregate (``mtbench_full_winrates.csv``, rates only, no counts): 540
    rows = 9 judges x 2 metrics (``win+halfdraw``: a tie counts half a win;
    ``win+bothgood``: a tie judged both-good counts as a win) x 30 models.

    Parameters
    ----------
    path : str or Path, optional
        The upstream file or its folder; default: the shipped copy.

    Returns
    -------
    pandas.DataFrame
        ``judge``, ``metric``, ``model``, ``reference`` (strings as written), then
        ``Overall-lang`` and the eight category rates (float) as in the file.
    """
    res = find_csv("position_bias_rep_mtbench_full_winrates.csv.gz", "mtbench_full_winrates.csv",
                   path, "position_bias_rep")
    df = read_csv_strings(res, _RATES, "position_bias_rep mtbench_full_winrates.csv")
    for col in df.columns.drop(list(_RATES)):
        rate = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        bad = ~((rate >= 0) & (rate <= 1))
        if bad.any():
            raise DataValidationError(
                f"position_bias_rep ({res.name}): column {col!r} must hold rates in [0, 1]; "
                f"got {show_values(pd.unique(df[col].to_numpy()[bad]))}. {_FIX}"
            )
        df[col] = rate
    return df
