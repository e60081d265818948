"""Real juries as comparisons tables: PandaLM's five systems and WMT23 zh-en's ten.

Builds the comparisons table (``judge``, ``left``, ``right``, ``outcome`` in {left,
right, tie}, optional ``context``) of the Bradley-Terry family (Qian, Sun, Gales &
Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative Assessment",
arXiv:2602.16610, Section 3; ties by Davidson's model) from the existing loaders:
the PandaLM test set (three human annotators, GPT-3.5-turbo and PandaLM-7B judging
pairs of five 7B systems, with ties) and the WMT23 zh-en side-by-side MQM ratings
(eight raters, ten systems, ties from equal MQM penalties). Nothing is re-read here:
the upstream files are parsed by :mod:`~bayesjudge.datasets.pandalm` and
:mod:`~bayesjudge.datasets.wmt23`.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.data.counts import mark_info_columns
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.datasets.pandalm import load_pandalm
from bayesjudge.datasets.wmt23 import load_wmt23_sxs, wmt23_preferences

__all__ = ["PANDALM_JURY", "pandalm_jury", "wmt23_jury"]

#: PandaLM judge column -> judge id in the jury table.
PANDALM_JURY = {
    "annotator_1": "annotator_1",
    "annotator_2": "annotator_2",
    "annotator_3": "annotator_3",
    "gpt35": "gpt-3.5-turbo",
    "pandalm7b": "pandalm-7b",
}

_OUTCOME = np.array(["right", "tie", "left"], dtype=object)  # vote -1, 0, +1


def pandalm_jury(
    data: pd.DataFrame | None = None,
    *,
    context: Literal["none", "item"] = "none",
    unparsable: Literal["warn", "drop"] = "warn",
) -> pd.DataFrame:
    """PandaLM's test set as a five-judge jury over five systems, with ties.

    Each of the 999 test items compares response1 (written by ``model_1``) with
    response2 (``model_2``); the five systems are bloom-7b, cerebras-gpt-6.7B,
    llama-7b, opt-7b and pythia-6.9b (10 pairs, 386-421 items per system). Every
    judge gives one verdict per item: ``left`` = ``model_1`` better, ``right`` =
    ``model_2`` better, ``tie``. Judges: the three human annotators
    (``annotator_1..3``), ``gpt-3.5-turbo`` and ``pandalm-7b``. Each pair was shown
    in one order only (response1 / response2 as in upstream), so positional bias can
    only be modelled (``DavidsonBT(position_bias=True)``), not symmetrised away.
    GPT-3.5's 25 unparsable verdicts are skipped (with a warning unless
    ``unparsable="drop"``); every other verdict is a row.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.
    context : {"none", "item"}
        ``"none"`` (default): no ``context`` column, so the five systems get one skill
        each over all items -- the ranking of the systems. ``"item"``: ``context`` =
        the item id, so each item is its own context (two responses compared once
        per judge: skills per item, for per-prompt models; validation warns with a
        :class:`~bayesjudge.data.BattleContextWarning`, since one latent difference per
        item is beyond the Laplace approximation: fit it by NUTS).
    unparsable : {"warn", "drop"}
        Say how many verdicts were skipped, or skip them silently.

    Returns
    -------
    pandas.DataFrame
        ``judge``, [``context``], ``left``, ``right``, ``outcome``, ``item`` (the
        upstream ``idx`` as a string, kept for provenance); judge-major, then item
        order: 5 x 999 - 25 = 4,970 rows for the shipped test set.
    """
    if context not in ("none", "item"):
        raise ValueError(f"context={context!r}; choose 'none' or 'item'.")
    if unparsable not in ("warn", "drop"):
        raise ValueError(f"unparsable={unparsable!r}; choose 'warn' or 'drop'.")
    if data is None:
        data = load_pandalm()
    frames = []
    for col, name in PANDALM_JURY.items():
        ok = data[col].notna().to_numpy()
        if (~ok).any() and unparsable == "warn":
            warnings.warn(
                f"pandalm_jury: skipped {int((~ok).sum())} unparsable {col} verdict(s) of "
                f"{len(data)} items.",
                UserWarning,
                skip_file_prefixes=(PACKAGE_DIR,),
            )
        vote = data.loc[ok, col].to_numpy(np.int64)
        item = data.loc[ok, "item"].astype(str).to_numpy(object)
        f = pd.DataFrame({"judge": np.full(ok.sum(), name, dtype=object)})
        if context == "item":
            f["context"] = item
        f["left"] = data.loc[ok, "model_1"].to_numpy(object)
        f["right"] = data.loc[ok, "model_2"].to_numpy(object)
        f["outcome"] = _OUTCOME[vote + 1]
        f["item"] = item
        frames.append(f)
    return mark_info_columns(pd.concat(frames, ignore_index=True), ["item"])


def wmt23_jury(
    penalties: pd.DataFrame | None = None,
    *,
    context: Literal["none", "segment"] = "none",
    tie_threshold: float = 0.0,
) -> pd.DataFrame:
    """WMT23 zh-en side-by-side MQM as an eight-rater jury over ten systems, with ties.

    From :func:`~bayesjudge.datasets.wmt23_preferences`: per segment (377), per rater
    who rated it (3 of the 8), every pair of the 10 systems that rater scored
    (45): ``left`` = the system first in string order, ``outcome`` = ``left`` if it
    has the lower MQM penalty, ``right`` if higher, ``tie`` if the penalties differ
    by at most ``tie_threshold`` (0: equal error profiles, e.g. both error-free).
    One order per pair (the raters saw all ten side by side, so there is no slot
    order to symmetrise).

    Parameters
    ----------
    penalties : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_wmt23_sxs`; loaded if omitted.
    context : {"none", "segment"}
        ``"none"`` (default): no ``context`` column, one skill per system over all
        segments (the system ranking). ``"segment"``: ``context`` = the segment id,
        skills per (segment, system).
    tie_threshold : float, default 0.0
        Largest penalty difference still counted as a tie.

    Returns
    -------
    pandas.DataFrame
        ``judge`` (rater id), [``context``], ``left``, ``right``, ``outcome``,
        ``segment`` (upstream ``globalSegId`` as a string, for provenance):
        377 x 45 x 3 = 50,895 rows, ordered by segment, pair, rater.
    """
    if context not in ("none", "segment"):
        raise ValueError(f"context={context!r}; choose 'none' or 'segment'.")
    if penalties is None:
        penalties = load_wmt23_sxs()
    prefs = wmt23_preferences(penalties, tie_threshold=tie_threshold)
    seg = prefs["segment"].astype(str).to_numpy(object)
    out = pd.DataFrame({"judge": prefs["rater"].astype(str).to_numpy(object)})
    if context == "segment":
        out["context"] = seg
    out["left"] = prefs["system_a"].to_numpy(object)
    out["right"] = prefs["system_b"].to_numpy(object)
    out["outcome"] = _OUTCOME[prefs["vote"].to_numpy(np.int64) + 1]
    out["segment"] = seg
    return mark_info_columns(out, ["segment"])
