"""Chatbot Arena battles judged by their human voter and by three LLM judges (arena_ppr).

The data of Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez (2024), "Prediction-Powered
Ranking of Large Language Models", NeurIPS 2024, arXiv:2402.17826 (repository
Networks-Learning/prediction-powered-ranking, MIT): 26,919 battles of
lmsys/chatbot_arena_conversations among 20 models, each with its Arena user's vote
(``human``) and the verdicts of gpt-4-0125-preview, claude-3-opus-20240229 and
gpt-3.5-turbo on the same two responses. One verdict per (battle, judge); no prompt
or response text.

The module is not named ``arena_ppr`` so that the function
:func:`~bayesjudge.datasets.arena_ppr` does not shadow it in
:mod:`bayesjudge.datasets`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError
from bayesjudge.data.counts import mark_info_columns
from bayesjudge.data.messages import show_values
from bayesjudge.datasets.csv_files import check_values, find_csv, read_csv_strings
from bayesjudge.datasets.files import require_columns

__all__ = ["ARENA_PPR_FILE", "ARENA_PPR_JUDGES", "ARENA_WINNERS", "arena_ppr", "arena_ppr_export"]

#: The four judges of every battle, in the files' order.
ARENA_PPR_JUDGES = ("human", "gpt-4-0125-preview", "claude-3-opus-20240229", "gpt-3.5-turbo")
#: Chatbot Arena's ``winner`` values -> outcome of the comparisons table (model_a = left).
ARENA_WINNERS = {"model_a": "left", "model_b": "right", "tie": "tie", "tie (bothbad)": "tie"}
#: The shipped copy: one row per battle, Arena's own winner value of each judge.
ARENA_PPR_FILE = "arena_ppr_battles.csv.gz"

_LONG = ("item", "left", "right", "outcome", "judge", "context", "winner_raw")  # battles.csv
_SHIPPED = ("item", "question_id", "model_a", "model_b", *ARENA_PPR_JUDGES)
_COLUMNS = ["battle", "question_id", "judge", "left", "right", "outcome", "winner_raw"]
_FIX = "Pass the battles.csv of ../shared/data/arena_ppr (or its folder)."


def arena_ppr(path: str | Path | None = None, *, wide: bool = False) -> pd.DataFrame:
    """Chatbot Arena battles judged by the Arena user and by three LLM judges.

    26,919 battles (26,910 distinct question ids: 9 prompts were battled twice) among
    20 models, each judged by its Arena user (``human``) and, on the same two
    responses, by ``gpt-4-0125-preview``, ``claude-3-opus-20240229`` and
    ``gpt-3.5-turbo`` (:data:`ARENA_PPR_JUDGES`): 107,676 verdicts. ``model_a`` of the
    battle is ``left``. Arena's two ties (``tie``: both good, ``tie (bothbad)``) are
    both ``outcome = "tie"``; ``winner_raw`` keeps which one it was (human rows: 2,880
    and 5,132; the LLM judges answer ``tie`` only).

    Every column is text exactly as written (the battle index ``"0"``, ``"1"``, ...
    stays a string), so ids are never re-typed. The table is a comparisons table
    (``judge``, ``left``, ``right``, ``outcome``) without ``context``, so models rank
    the 20 models over all prompts; ``battle`` pairs each LLM verdict with the human
    one of the same battle (the anchored models' ``battle`` column). Select the
    columns a model uses (``table[["judge", "left", "right", "outcome"]]``) to fit it
    without the others.

    Parameters
    ----------
    path : str or Path, optional
        The upstream ``battles.csv`` (plain or ``.gz``) or its folder; default: the
        copy shipped in ``bayesjudge/data`` (:data:`ARENA_PPR_FILE`, the same
        battles one row each).
    wide : bool, default False
        One row per battle instead: ``battle``, ``question_id``, ``left``,
        ``right`` and one outcome column per judge (the layout of the upstream
        ``battles_wide.csv``); a (battle, judge) without a verdict is missing.

    Returns
    -------
    pandas.DataFrame
        Long (default): ``battle``, ``question_id``, ``judge``, ``left``, ``right``,
        ``outcome`` (left / right / tie), ``winner_raw`` (model_a / model_b / tie /
        tie (bothbad)), one row per (battle, judge) in file order (battle-major,
        the judges in the order above), all as strings.

    Raises
    ------
    DataValidationError
        Missing columns, values outside Arena's winners, an ``outcome`` that
        contradicts ``winner_raw``, or (``wide=True``) a battle whose rows disagree
        on its question or models or repeat a judge.

    See Also
    --------
    arena_ppr_export : one judge's verdicts in the Chatbot Arena export layout.

    Examples
    --------
    >>> from bayesjudge.datasets import arena_ppr
    >>> table = arena_ppr()
    >>> len(table), table["battle"].iloc[0], table["judge"].nunique()
    (107676, '0', 4)
    """
    res = find_csv(ARENA_PPR_FILE, "battles.csv", path, "arena_ppr")
    df = read_csv_strings(res, (), "arena_ppr")
    if "model_a" in df.columns:  # the shipped layout
        require_columns(df, _SHIPPED, f"arena_ppr ({res.name})")
        long = _from_shipped(df)
    elif "winner_raw" not in df.columns and set(ARENA_PPR_JUDGES) <= set(df.columns):
        raise DataValidationError(
            f"arena_ppr ({res.name}): this is the wide layout (battles_wide.csv), which keeps "
            f"the outcomes only, not Arena's winner values (both ties are 'tie'). {_FIX}"
        )
    else:
        require_columns(df, _LONG, f"arena_ppr ({res.name})")
        long = _from_long(df, res.name)
    # the reader's columns (no unused-column warning); battle is AnchoredBT's
    return _wide(long) if wide else mark_info_columns(long, ("question_id", "winner_raw"))


def arena_ppr_export(path: str | Path | None = None, *, judge: str = "human") -> pd.DataFrame:
    """One judge's arena_ppr verdicts in the layout of a Chatbot Arena export.

    Parameters
    ----------
    path : str or Path, optional
        As for :func:`arena_ppr`.
    judge : str, default "human"
        One of :data:`ARENA_PPR_JUDGES`: ``"human"`` gives the Arena users' own votes,
        as lmsys/chatbot_arena_conversations publishes them.

    Returns
    -------
    pandas.DataFrame
        ``question_id``, ``model_a``, ``model_b``, ``winner`` (model_a / model_b /
        tie / tie (bothbad)): 26,919 rows in battle order, as strings, no judge column.
    """
    long = arena_ppr(path)
    judges = list(pd.unique(long["judge"].to_numpy()))
    if judge not in judges:
        raise ValueError(f"judge={judge!r}; choose one of {judges}.")
    rows = long[long["judge"].to_numpy() == judge]
    return pd.DataFrame(
        {
            "question_id": rows["question_id"].to_numpy(),
            "model_a": rows["left"].to_numpy(),
            "model_b": rows["right"].to_numpy(),
            "winner": rows["winner_raw"].to_numpy(),
        }
    )


def _outcomes(winner: pd.Series) -> np.ndarray:
    return winner.map(ARENA_WINNERS).to_numpy()


def _from_shipped(df: pd.DataFrame) -> pd.DataFrame:
    """The shipped one-row-per-battle file -> one row per (battle, judge), battle-major."""
    k = len(ARENA_PPR_JUDGES)
    for j in ARENA_PPR_JUDGES:
        check_values(df, j, ARENA_WINNERS, "arena_ppr", "Arena's winner values are expected.")
    winner = pd.Series(df[list(ARENA_PPR_JUDGES)].to_numpy().reshape(-1), dtype=str)
    return pd.DataFrame(
        {
            "battle": np.repeat(df["item"].to_numpy(), k),
            "question_id": np.repeat(df["question_id"].to_numpy(), k),
            "judge": np.tile(np.array(ARENA_PPR_JUDGES, dtype=object), len(df)),
            "left": np.repeat(df["model_a"].to_numpy(), k),
            "right": np.repeat(df["model_b"].to_numpy(), k),
            "outcome": _outcomes(winner),
            "winner_raw": winner.to_numpy(),
        }
    )


def _from_long(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The upstream battles.csv, renamed to the shared API (item -> battle, context ->
    question_id) after checking that ``outcome`` is ``winner_raw`` mapped."""
    check_values(df, "winner_raw", ARENA_WINNERS, f"arena_ppr ({name})", _FIX)
    check_values(df, "outcome", ("left", "right", "tie"), f"arena_ppr ({name})", _FIX)
    clash = df["outcome"].to_numpy() != _outcomes(df["winner_raw"])
    if clash.any():
        raise DataValidationError(
            f"arena_ppr ({name}): column 'outcome' contradicts 'winner_raw' on file lines "
            f"{show_values(np.flatnonzero(clash) + 2)} (model_a = left, model_b = right, "
            f"both ties = tie). {_FIX}"
        )
    out = df.rename(columns={"item": "battle", "context": "question_id"})
    return out[_COLUMNS].reset_index(drop=True)


def _wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per battle (first-appearance order), one outcome column per judge."""
    keys = long.drop_duplicates(["battle", "question_id", "left", "right"])
    if keys["battle"].duplicated().any():
        bad = keys.loc[keys["battle"].duplicated(keep=False), "battle"]
        raise DataValidationError(
            f"arena_ppr: battle(s) {show_values(pd.unique(bad.to_numpy()))} have rows with "
            "different question_id, left or right; one battle is one prompt and two models."
        )
    repeated = long.duplicated(["battle", "judge"]).to_numpy()
    if repeated.any():
        raise DataValidationError(
            f"arena_ppr: judges repeat a verdict on battle(s) "
            f"{show_values(pd.unique(long['battle'].to_numpy()[repeated]))}; wide=True needs "
            "one verdict per (battle, judge)."
        )
    seen = list(pd.unique(long["judge"].to_numpy()))
    judges = [j for j in ARENA_PPR_JUDGES if j in seen] + [
        j for j in seen if j not in ARENA_PPR_JUDGES
    ]
    verdicts = long.pivot(index="battle", columns="judge", values="outcome")
    verdicts = verdicts.reindex(index=keys["battle"].to_numpy(), columns=judges)
    out = keys[["battle", "question_id", "left", "right"]].reset_index(drop=True)
    for j in judges:
        out[j] = verdicts[j].to_numpy()
    return out
