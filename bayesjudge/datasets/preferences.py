"""Real preference distributions: PandaLM and WMT23 zh-en as annotations and judge outputs.

Turns the shipped PandaLM test set (three human annotators per response pair,
GPT-3.5-turbo and PandaLM-7B verdicts) and the WMT23 zh-en side-by-side MQM
ratings (three raters per segment) into the tables of
:mod:`bayesjudge.data.annotations`, the input of the preference-distribution
models for Li, Li, Huang et al. (2025), "Judging with Confidence: Calibrating
Autoraters to Preference Distributions", arXiv:2510.00263 (section 2.1: p* from
m annotators; section 2.2: a hard verdict is a degenerate probability). The
upstream files are read by :mod:`~bayesjudge.datasets.pandalm` and
:mod:`~bayesjudge.datasets.wmt23`; this module only relabels.

Orientation: response A is PandaLM's ``response1`` (WMT23: ``system_a``, the
first of the pair in string order) and B is ``response2`` (``system_b``), so
``prob`` = P(B better) = P(response2 better).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.data.counts import mark_info_columns
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.datasets.pandalm import PANDALM_JUDGES, load_pandalm
from bayesjudge.datasets.wmt23 import wmt23_preferences

__all__ = ["pandalm_annotations", "pandalm_judge_outputs", "wmt23_annotations"]

# package ternary votes (+1 = first/A better, -1 = second/B better, 0 = tie)
_LABEL_OF_VOTE = {1: "A", -1: "B", 0: "tie"}
_PROB_OF_VOTE = {1: 0.0, -1: 1.0, 0: 0.5}


def pandalm_annotations(data: pd.DataFrame | None = None) -> pd.DataFrame:
    """PandaLM's three human annotations per item as an annotations table.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.

    Returns
    -------
    pandas.DataFrame
        ``item`` (upstream ``idx``), ``annotator`` ("annotator_1".."annotator_3"),
        ``label`` in {"A", "B", "tie"} (A = response1); 999 items x 3 = 2,997 rows,
        ordered by item then annotator.
    """
    data = load_pandalm() if data is None else data
    cols = ["annotator_1", "annotator_2", "annotator_3"]
    votes = data[cols].to_numpy(np.int64)
    return pd.DataFrame({
        "item": np.repeat(data["item"].to_numpy(), len(cols)),
        "annotator": np.tile(cols, len(data)),
        "label": [_LABEL_OF_VOTE[v] for v in votes.ravel()],
    })


def pandalm_judge_outputs(
    data: pd.DataFrame | None = None,
    judges: Sequence[Literal["gpt35", "pandalm7b"]] = PANDALM_JUDGES,
    unparsable: Literal["warn", "drop"] = "warn",
) -> pd.DataFrame:
    """GPT-3.5 and PandaLM-7B verdicts as (degenerate) probabilities P(B better).

    A hard verdict is the probability 1 (response2 better), 0 (response1 better)
    or 0.5 (tie): the discrete autorater of section 2.1, whose cost against p* is
    what section 2.2 of Li et al. (2025) argues. Verdicts that could not be
    parsed (25 of GPT-3.5's) have no probability; their rows are left out and
    counted: ``attrs["n_unparsable"]`` ({judge: count}) and
    ``attrs["unparsable_items"]`` ({judge: [item, ...]}), with a
    ``UserWarning`` unless ``unparsable="drop"``.

    Returns
    -------
    pandas.DataFrame
        ``judge``, ``item``, ``prob``, ``verdict`` ("A", "B", "tie"), ordered by
        judge then item.
    """
    if unparsable not in ("warn", "drop"):
        raise ValueError(f"unparsable={unparsable!r}; choose 'warn' or 'drop'.")
    data = load_pandalm() if data is None else data
    frames, n_bad, bad_items = [], {}, {}
    for judge in judges:
        if judge not in PANDALM_JUDGES:
            raise ValueError(f"judge={judge!r}; choose among {list(PANDALM_JUDGES)}.")
        ok = data[judge].notna().to_numpy()
        n_bad[judge] = int((~ok).sum())
        bad_items[judge] = data.loc[~ok, "item"].tolist()
        votes = data.loc[ok, judge].to_numpy(np.int64)
        frames.append(pd.DataFrame({
            "judge": judge,
            "item": data.loc[ok, "item"].to_numpy(),
            "prob": [_PROB_OF_VOTE[v] for v in votes],
            "verdict": [_LABEL_OF_VOTE[v] for v in votes],
        }))
    if sum(n_bad.values()) and unparsable == "warn":
        warnings.warn(
            "pandalm_judge_outputs: left out unparsable verdicts "
            f"({', '.join(f'{j}: {k}' for j, k in n_bad.items() if k)} of {len(data)} items); "
            "see attrs['unparsable_items'].", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
    out = pd.concat(frames, ignore_index=True)
    out.attrs = {"n_unparsable": n_bad, "unparsable_items": bad_items}
    return mark_info_columns(out, ["verdict"])


def wmt23_annotations(
    penalties: pd.DataFrame | None = None, tie_threshold: float = 0.0
) -> pd.DataFrame:
    """WMT23 zh-en: 3-rater preference distributions per system pair per segment.

    Each rater's MQM penalties of two systems on a segment give one preference
    (:func:`~bayesjudge.datasets.wmt23_preferences`): the lower penalty is
    better, equal penalties (within ``tie_threshold``) are a tie. The item is a
    (segment, system pair) and keeps that loader's id ``"segment|system_a|system_b"``
    (system_a < system_b in string order; A = system_a, B = system_b).

    Returns
    -------
    pandas.DataFrame
        ``item``, ``annotator`` (the rater), ``label`` in {"A", "B", "tie"}, and
        ``segment``, ``system_a``, ``system_b``; 377 segments x 45 pairs x 3 raters
        = 50,895 rows for the shipped file.
    """
    prefs = wmt23_preferences(penalties, tie_threshold=tie_threshold)
    return pd.DataFrame({
        "item": prefs["item"].to_numpy(),
        "annotator": prefs["rater"].to_numpy(),
        "label": prefs["vote"].map(_LABEL_OF_VOTE).to_numpy(),
        "segment": prefs["segment"].to_numpy(),
        "system_a": prefs["system_a"].to_numpy(),
        "system_b": prefs["system_b"].to_numpy(),
    }).pipe(mark_info_columns, ["segment", "system_a", "system_b"])
