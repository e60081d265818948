"""The PandaLM test set: votes, labels and binary judgments in the package's tables.

WeOpenML/PandaLM's test set (999 response pairs, three human annotators,
GPT-3.5-turbo and PandaLM-7B verdicts), read in its upstream format, becomes votes
and labels for the Davidson aggregator and binary judgments for the
misclassification model of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly
Report LLM-as-a-Judge Evaluations", arXiv:2511.21140 (Section 3).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError
from bayesjudge.data.counts import mark_info_columns
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.datasets.files import read_json, resolve_data_file

__all__ = [
    "PANDALM_FILES",
    "PANDALM_JUDGES",
    "load_pandalm",
    "pandalm_battles",
    "pandalm_judgments",
    "pandalm_labels",
    "pandalm_votes",
]

PANDALM_FILES = {
    "human": "testset-v1.json",
    "gpt35": "gpt-3.5-turbo-testset-v1.json",
    "pandalm7b": "pandalm-7b-testset-v1.json",
}
PANDALM_JUDGES = ("gpt35", "pandalm7b")

# Upstream encodings -> ternary scale (+1 = response1 better, -1 = response2 better, 0 = tie).
_HUMAN_CODES = {1: 1, 2: -1, 0: 0}
_GPT_CODES = {"1": 1, "2": -1, "Tie": 0, "tie": 0}
_PANDALM_CODES = {1: 1, 2: -1, 0: 0}


def _majority(votes: np.ndarray) -> np.ndarray:
    """Row-wise majority of three ternary votes; no majority (all differ) -> tie (0)."""
    a, b, c = votes[:, 0], votes[:, 1], votes[:, 2]
    return np.where((a == b) | (a == c), a, np.where(b == c, b, 0))


def load_pandalm(path: str | Path | None = None, *, include_text: bool = False) -> pd.DataFrame:
    """The PandaLM test set: 999 response pairs, 3 humans, GPT-3.5 and PandaLM-7B verdicts.

    Reads the three index-aligned upstream files of WeOpenML/PandaLM
    (``data/testset-v1.json``, ``data/gpt-3.5-turbo-testset-v1.json``,
    ``data/pandalm-7b-testset-v1.json``; plain or ``.gz``). Upstream encodings are
    mapped to the package's ternary scale, +1 = response1 better, -1 = response2
    better, 0 = tie: human annotators and PandaLM-7B use 1 / 2 / 0, GPT-3.5 uses
    '1' / '2' / 'Tie'. Any other verdict (GPT-3.5 writes 'garbage' when its answer
    could not be parsed) becomes ``pd.NA``: it is kept, never dropped, and counted
    in ``attrs["n_unparsable"]``.

    ``human_majority`` is the value given by at least two of the three annotators;
    when all three differ (none in v1) it is 0 (tie). Upstream's own
    ``compute_metrics.py`` instead takes annotator 1's label in that case.

    Parameters
    ----------
    path : str or Path, optional
        Folder holding the three files. Default: the copies shipped in
        ``bayesjudge/data``, else ``../shared/data/pandalm`` of a checkout.
    include_text : bool, default False
        Add ``instruction``, ``input``, ``response1``, ``response2`` (as strings;
        upstream stores a few responses as JSON booleans, e.g. item 157).

    Returns
    -------
    pandas.DataFrame
        One row per item (upstream ``idx``, 0..998), columns ``item``, ``model_1``
        and ``model_2`` (the models that wrote response1 / response2, parsed from
        ``cmp_key = "<model_1>_<model_2>"``), ``motivation_app``, ``annotator_1``,
        ``annotator_2``, ``annotator_3``, ``human_majority``, ``gpt35``,
        ``pandalm7b`` (nullable ``Int64`` in {-1, 0, +1}). ``attrs`` holds
        ``n_unparsable`` ({judge: count}), ``unparsable_items`` ({judge: [item,
        ...]}) and ``majority_rule``.
    """
    base = None if path is None else Path(path)
    if base is not None and not base.is_dir():
        raise FileNotFoundError(
            f"path={str(path)!r} is not a folder; pass the folder holding "
            f"{', '.join(PANDALM_FILES.values())} (plain or .gz), or path=None."
        )
    human, gpt, panda = (
        read_json(resolve_data_file(PANDALM_FILES[k], base, "pandalm", allow_gzip=True))
        for k in ("human", "gpt35", "pandalm7b")
    )
    if not (len(human) == len(gpt) == len(panda)):
        raise DataValidationError(
            f"PandaLM files differ in length ({len(human)}, {len(gpt)}, {len(panda)}); "
            "use the three files of one upstream commit."
        )
    idx = [r["idx"] for r in human]
    for name, rows in (("gpt35", gpt), ("pandalm7b", panda)):
        if [r["idx"] for r in rows] != idx:
            raise DataValidationError(
                f"PandaLM {name} file: column 'idx' is not aligned with testset-v1.json; "
                "use the three files of one upstream commit."
            )
    models = [str(r["cmp_key"]).split("_") for r in human]
    bad = [r["cmp_key"] for r, m in zip(human, models) if len(m) != 2]
    if bad:
        raise DataValidationError(
            f"PandaLM column 'cmp_key' must be '<model_1>_<model_2>'; got {bad[:3]}."
        )

    def ternary(values: list, codes: dict) -> pd.Series:
        return pd.Series([codes.get(v, pd.NA) for v in values], dtype="Int64")

    out = pd.DataFrame(
        {
            "item": np.asarray(idx, dtype=np.int64),
            "model_1": [m[0] for m in models],
            "model_2": [m[1] for m in models],
            "motivation_app": [r.get("motivation_app") for r in human],
        }
    )
    for k in (1, 2, 3):
        col = ternary([r[f"annotator{k}"] for r in human], _HUMAN_CODES)
        if col.isna().any():
            raise DataValidationError(
                f"PandaLM column 'annotator{k}' has values outside {{0, 1, 2}}: "
                f"{sorted({str(r[f'annotator{k}']) for r in human} - {'0', '1', '2'})[:5]}."
            )
        out[f"annotator_{k}"] = col
    annot = out[["annotator_1", "annotator_2", "annotator_3"]].to_numpy(np.int64)
    out["human_majority"] = pd.Series(_majority(annot), dtype="Int64")
    out["gpt35"] = ternary([r["gpt_result"] for r in gpt], _GPT_CODES)
    out["pandalm7b"] = ternary([r["pandalm_result"] for r in panda], _PANDALM_CODES)
    if include_text:
        for col in ("instruction", "input", "response1", "response2"):
            out[col] = [str(r[col]) for r in human]
    out.attrs = {
        "n_unparsable": {j: int(out[j].isna().sum()) for j in PANDALM_JUDGES},
        "unparsable_items": {j: out.loc[out[j].isna(), "item"].tolist() for j in PANDALM_JUDGES},
        "majority_rule": "label of >= 2 of 3 annotators; all three different -> 0 (tie)",
    }
    return out


def _pandalm_or_load(data: pd.DataFrame | None) -> pd.DataFrame:
    return load_pandalm() if data is None else data


def _check_judge(judge: str) -> None:
    if judge not in PANDALM_JUDGES:
        raise ValueError(f"judge={judge!r}; choose one of {list(PANDALM_JUDGES)}.")


Unparsable = Literal["warn", "drop"]


def _check_unparsable(unparsable: str) -> None:
    if unparsable not in ("warn", "drop"):
        raise ValueError(f"unparsable={unparsable!r}; choose 'warn' or 'drop'.")


def pandalm_votes(
    data: pd.DataFrame | None = None,
    judges: Sequence[Literal["gpt35", "pandalm7b"]] = PANDALM_JUDGES,
    unparsable: Unparsable = "warn",
) -> pd.DataFrame:
    """Votes table (one row per judge verdict) from PandaLM's LLM judges.

    Unparsable verdicts (25 of GPT-3.5's in the shipped test set) are skipped,
    with a ``UserWarning`` that says how many unless ``unparsable="drop"``.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`load_pandalm`; loaded if omitted.
    judges : sequence of {"gpt35", "pandalm7b"}
        Which judges' verdicts to include.
    unparsable : {"warn", "drop"}
        ``"warn"`` says how many verdicts were skipped; ``"drop"`` skips them
        silently (for callers who know, e.g. the README's examples).

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``judge``, ``vote`` in {-1, 0, +1} (+1 = response1
        better), ordered by judge then item.
    """
    _check_unparsable(unparsable)
    data = _pandalm_or_load(data)
    frames = []
    for judge in judges:
        _check_judge(judge)
        ok = data[judge].notna()
        if (~ok).any() and unparsable == "warn":
            warnings.warn(
                f"pandalm_votes: skipped {int((~ok).sum())} unparsable {judge} verdict(s) "
                f"of {len(data)} items.",
                UserWarning,
                skip_file_prefixes=(PACKAGE_DIR,),
            )
        frames.append(
            pd.DataFrame(
                {
                    "item": data.loc[ok, "item"].to_numpy(),
                    "judge": judge,
                    "vote": data.loc[ok, judge].to_numpy(np.int64),
                }
            )
        )
    # which judge voted: for the reader (pandalm_votes(judges=...) picks the judges)
    return mark_info_columns(pd.concat(frames, ignore_index=True), ["judge"])


def pandalm_battles(
    data: pd.DataFrame | None = None,
    judges: Sequence[Literal["gpt35", "pandalm7b"]] = PANDALM_JUDGES,
    unparsable: Unparsable = "warn",
) -> pd.DataFrame:
    """The battle table of :class:`~bayesjudge.AnchoredBT`: PandaLM's three human votes and
    its LLM judges' verdicts on each of the 999 response pairs.

    Each item is one battle (``left`` = the model of response1, ``right`` = response2's:
    one order only, upstream shows every pair one way); the three annotators are the
    crowd of the reference judge ``"human"`` (three rows per battle), each of ``judges``
    gives one row per battle. Unparsable verdicts (25 of GPT-3.5's) are skipped, with a
    ``UserWarning`` that says how many unless ``unparsable="drop"``.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`load_pandalm`; loaded if omitted.
    judges : sequence of {"gpt35", "pandalm7b"}
        Which LLM judges' verdicts to include.
    unparsable : {"warn", "drop"}
        As in :func:`pandalm_votes`.

    Returns
    -------
    pandas.DataFrame
        Columns ``battle`` (upstream ``idx``), ``judge`` ("human" or the LLM judge),
        ``left``, ``right``, ``outcome`` in {"left", "tie", "right"}; ordered by battle,
        the three human votes first (2,997 + 974 + 999 rows with both judges).
    """
    data = _pandalm_or_load(data)
    human = pd.DataFrame({
        "battle": np.repeat(data["item"].to_numpy(), 3),
        "judge": "human",
        "vote": data[["annotator_1", "annotator_2", "annotator_3"]].to_numpy(np.int64).ravel(),
    })
    frames = [human]
    if len(judges):
        _check_unparsable(unparsable)
        votes = pandalm_votes(data, judges, unparsable="drop")
        skipped = {j: int(data[j].isna().sum()) for j in judges}
        if sum(skipped.values()) and unparsable == "warn":
            warnings.warn(
                f"pandalm_battles: skipped {sum(skipped.values())} unparsable verdict(s) "
                f"({', '.join(f'{j}: {k}' for j, k in skipped.items() if k)}) of "
                f"{len(data)} battles.", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))
        frames.append(pd.DataFrame({"battle": votes["item"].to_numpy(),
                                    "judge": votes["judge"].to_numpy(),
                                    "vote": votes["vote"].to_numpy()}))
    rows = pd.concat(frames, ignore_index=True)
    # by battle, stable: the three human votes, then the judges in the order asked
    rows = rows.iloc[np.argsort(rows["battle"].to_numpy(), kind="stable")]
    pairs = data.set_index("item").loc[rows["battle"], ["model_1", "model_2"]].to_numpy()
    return pd.DataFrame({
        "battle": rows["battle"].to_numpy(),
        "judge": rows["judge"].to_numpy(),
        "left": pairs[:, 0],
        "right": pairs[:, 1],
        "outcome": rows["vote"].map({1: "left", 0: "tie", -1: "right"}).to_numpy(),
    })


def pandalm_labels(data: pd.DataFrame | None = None) -> pd.DataFrame:
    """Labels table from the human majority of PandaLM's three annotators.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`load_pandalm`; loaded if omitted.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``label`` in {-1, 0, +1} (+1 = response1 better).
    """
    data = _pandalm_or_load(data)
    return pd.DataFrame(
        {"item": data["item"].to_numpy(), "label": data["human_majority"].to_numpy(np.int64)}
    )


def pandalm_judgments(
    judge: Literal["gpt35", "pandalm7b"] = "gpt35",
    system: str | Sequence[str] | None = None,
    data: pd.DataFrame | None = None,
    unparsable: Unparsable = "warn",
) -> pd.DataFrame:
    """Binary win/not-win judgments per evaluated system, for the misclassification model.

    For a focal system S and an item comparing S with an opponent:
    ``judge_label = 1`` if the judge says S's response is strictly better, else 0
    (S loses **or tie**); ``human_label`` is the same binarisation of the human
    majority. The true "accuracy" theta of S is thus its strict win rate against the
    other PandaLM models under the human majority. Items with an unparsable judge
    verdict are skipped with a ``UserWarning`` saying how many (silently with
    ``unparsable="drop"``). Every row has a
    human label, so split into test / calibration sets as the experiment requires.

    Parameters
    ----------
    judge : {"gpt35", "pandalm7b"}
        The LLM judge.
    system : str or sequence of str, optional
        Focal model(s) (e.g. ``"llama-7b"``); default: all five. Each item appears
        once per focal system it involves, so with several systems the key is
        (``system``, ``item``).
    data : pandas.DataFrame, optional
        Output of :func:`load_pandalm`; loaded if omitted.
    unparsable : {"warn", "drop"}
        Say how many rows were skipped (default), or skip them silently.

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``item``, ``opponent``, ``judge_label``, ``human_label``
        (int 0/1), ordered by system then item.
    """
    _check_judge(judge)
    _check_unparsable(unparsable)
    data = _pandalm_or_load(data)
    available = sorted(set(data["model_1"]) | set(data["model_2"]))
    if system is None:
        systems = available
    else:
        systems = [system] if isinstance(system, str) else list(system)
        unknown = [s for s in systems if s not in available]
        if unknown:
            raise ValueError(f"system={unknown}; choose among {available}.")
    ok = data[judge].notna()
    n_bad = {s: int((~ok & ((data.model_1 == s) | (data.model_2 == s))).sum()) for s in systems}
    if sum(n_bad.values()) and unparsable == "warn":
        warnings.warn(
            f"pandalm_judgments: skipped {sum(n_bad.values())} row(s) with an unparsable "
            f"{judge} verdict ({', '.join(f'{s}: {k}' for s, k in n_bad.items() if k)}).",
            UserWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
    frames = []
    for s in systems:
        for side, sign, other in (("model_1", 1, "model_2"), ("model_2", -1, "model_1")):
            rows = data[(data[side] == s) & ok]
            frames.append(
                pd.DataFrame(
                    {
                        "system": s,
                        "item": rows["item"].to_numpy(),
                        "opponent": rows[other].to_numpy(),
                        "judge_label": (rows[judge].to_numpy(np.int64) == sign).astype(np.int64),
                        "human_label": (rows["human_majority"].to_numpy(np.int64) == sign).astype(
                            np.int64
                        ),
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out = out.sort_values(["system", "item"], ignore_index=True)
    return mark_info_columns(out, ["opponent", "human_label"])  # the test rows hide human_label
