"""Loaders for the real data shipped with bayesjudge, and simulators with known truth.

The loaders read the *upstream* file formats (nothing pre-digested) and return the
package's long tables (see the data contracts in DESIGN.md): WMT23 zh-en
side-by-side MQM ratings (Google's ``wmt-mqm-human-evaluation``) become per-rater
MQM penalties and ternary system-vs-system preferences, the input of the Davidson
aggregator (``davidson_itc_aggregation.txt``, Sec. 5) and of leave-one-rater-out
comparisons; the PandaLM test set (three human annotators, GPT-3.5-turbo and
PandaLM-7B verdicts) becomes votes, labels and binary judgments for the
misclassification model (``misclassification_adjusted_reporting.txt``, Sec. 3).
The simulators draw data whose generating parameters are exactly the parameters
of those models: :func:`simulate_davidson_votes` follows eqs. 2-4 of the Davidson
paper, :func:`simulate_misclassification` eqs. 1 and 3 of the misclassification
paper. Every simulator takes one ``random_seed`` and never touches global RNG state.
"""

from __future__ import annotations

import csv
import gzip
import json
import tarfile
import warnings
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError


__all__ = [
    "MQM_WEIGHTS",
    "load_wmt23_sxs",
    "wmt23_preferences",
    "load_pandalm",
    "pandalm_votes",
    "pandalm_labels",
    "pandalm_judgments",
    "davidson_probabilities",
    "simulate_davidson_votes",
    "simulate_misclassification",
]

WMT23_SXS_FILE = "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"
PANDALM_FILES = {
    "human": "testset-v1.json",
    "gpt35": "gpt-3.5-turbo-testset-v1.json",
    "pandalm7b": "pandalm-7b-testset-v1.json",
}
PANDALM_JUDGES = ("gpt35", "pandalm7b")

#: MQM penalty per error span (Freitag et al. 2021 weighting used by WMT).
MQM_WEIGHTS = {
    "non_translation": 25.0,  # category "Non-translation!", whatever its severity
    "major": 5.0,
    "minor": 1.0,
    "minor_punctuation": 0.1,  # Minor with category "Fluency/Punctuation"
}

_WMT_COLUMNS = ["system", "doc", "docSegId", "globalSegId", "rater", "category", "severity"]
_WMT_SEVERITIES = {"Major", "Minor", "Neutral", "No-error", "HOTW-test"}
# Upstream encodings -> ternary scale (+1 = response1 better, -1 = response2 better, 0 = tie).
_HUMAN_CODES = {1: 1, 2: -1, 0: 0}
_GPT_CODES = {"1": 1, "2": -1, "Tie": 0, "tie": 0}
_PANDALM_CODES = {1: 1, 2: -1, 0: 0}

# Fallback for a source checkout: <repo>/../shared/data.
_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

SeedLike = int | np.random.Generator | None


# ---------------------------------------------------------------------------
# locating files
# ---------------------------------------------------------------------------
def _resolve(
    name: str, path: str | Path | None, shared_subdir: str, allow_gzip: bool
) -> Path | Traversable:
    """Find ``name`` (or ``name + '.gz'``): explicit path, packaged copy, ../shared/data."""
    names = [name, name + ".gz"] if allow_gzip else [name]
    if path is not None:
        p = Path(path)
        if p.is_file():
            return p
        for n in names:
            if (p / n).is_file():
                return p / n
        raise FileNotFoundError(
            f"path={str(path)!r}: neither a file nor a folder holding {' or '.join(names)}; "
            "pass the upstream file (or its folder), or path=None for the shipped copy."
        )
    try:
        packaged = resources.files("bayesjudge.data")
    except ModuleNotFoundError:  # pragma: no cover
        packaged = None
    for root in ([packaged] if packaged is not None else []) + [_SHARED_DATA / shared_subdir]:
        for n in names:
            candidate = root / n
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"{name} is neither shipped in bayesjudge/data nor in {_SHARED_DATA / shared_subdir}; "
        "pass path= to the upstream file."
    )


def _read_json(res: Path | Traversable) -> list[dict]:
    raw = res.read_bytes()
    if res.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def _require_columns(df: pd.DataFrame, columns: Sequence[str], table: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataValidationError(
            f"{table}: missing column(s) {missing}; got {list(df.columns)}. "
            f"Provide a table with columns {list(columns)}."
        )


# ---------------------------------------------------------------------------
# WMT23 zh-en side-by-side MQM
# ---------------------------------------------------------------------------
def load_wmt23_sxs(path: str | Path | None = None) -> pd.DataFrame:
    """MQM penalty per (segment, system, rater) from the raw WMT23 zh-en SxS ratings.

    Reads the upstream ``sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz``
    (google/wmt-mqm-human-evaluation, ``generalMT2023/zhen``), which has one row per
    error span with columns ``system doc docSegId globalSegId rater source target
    category severity metadata``. Each span is weighted (:data:`MQM_WEIGHTS`):
    category ``Non-translation!`` 25, other Major 5, Minor with category
    ``Fluency/Punctuation`` 0.1, other Minor 1, ``Neutral`` 0. Rows with severity
    ``HOTW-test`` (attention checks with injected errors) are dropped; a rated
    segment whose only row is ``No-error`` gets penalty 0. The penalty is computed
    from integer span counts, so equal error profiles give bit-identical penalties.

    Parameters
    ----------
    path : str or Path, optional
        The ``.tsv.tar.gz`` file or its folder. Default: the copy shipped in
        ``bayesjudge/data``, else ``../shared/data/wmt23_sxs_zhen`` of a checkout.

    Returns
    -------
    pandas.DataFrame
        One row per (segment, system, rater), 377 x 10 x 3 = 11,310 rows, sorted by
        ``segment, system, rater``; columns ``segment`` (upstream ``globalSegId``,
        int), ``doc``, ``doc_segment`` (``docSegId``, int), ``system``, ``rater``,
        ``mqm_penalty`` (float, lower is better), ``n_major`` (Major spans,
        Non-translation included), ``n_minor``. ``attrs["n_hotw_rows_dropped"]``
        counts the dropped attention-check rows.

    Raises
    ------
    DataValidationError
        If the file lacks an expected column or has an unknown severity.

    Examples
    --------
    >>> pen = load_wmt23_sxs()
    >>> pen.groupby("system").mqm_penalty.mean().idxmin()  # doctest: +SKIP
    """
    res = _resolve(WMT23_SXS_FILE, path, "wmt23_sxs_zhen", allow_gzip=False)
    with res.open("rb") as fh, tarfile.open(fileobj=fh, mode="r:*") as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".tsv")]
        if len(members) != 1:
            raise DataValidationError(
                f"{res.name}: expected exactly one .tsv inside, found "
                f"{[m.name for m in members]}; pass the upstream archive."
            )
        # QUOTE_NONE: source/target texts contain unbalanced quotes; the header has a
        # trailing documentation column that data rows leave empty.
        header = pd.read_csv(
            tar.extractfile(members[0]), sep="\t", quoting=csv.QUOTE_NONE, nrows=0
        )
        _require_columns(header, _WMT_COLUMNS, res.name)
        raw = pd.read_csv(
            tar.extractfile(members[0]),
            sep="\t",
            quoting=csv.QUOTE_NONE,
            usecols=_WMT_COLUMNS,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
        )

    unknown = sorted(set(raw["severity"].unique()) - _WMT_SEVERITIES)
    if unknown:
        raise DataValidationError(
            f"{res.name}: column 'severity' has unknown values {unknown[:5]}; "
            f"expected {sorted(_WMT_SEVERITIES)}."
        )
    keys = ["globalSegId", "doc", "docSegId", "system", "rater"]
    # Every (segment, system, rater) that appears at all was rated, even if only by
    # an attention-check row; its penalty then comes from its remaining rows (or 0).
    rated = raw[keys].drop_duplicates()
    is_hotw = raw["severity"].eq("HOTW-test")
    spans = raw.loc[~is_hotw]
    sev, cat = spans["severity"], spans["category"]
    nontrans = cat.str.startswith("Non-translation")
    punct = sev.eq("Minor") & cat.eq("Fluency/Punctuation") & ~nontrans
    counts = pd.DataFrame(
        {
            "n_major": sev.eq("Major"),
            "n_minor": sev.eq("Minor"),
            "_nontrans": nontrans,
            "_major_other": sev.eq("Major") & ~nontrans,
            "_minor_other": sev.eq("Minor") & ~nontrans & ~punct,
            "_punct": punct,
        }
    ).astype(np.int64)
    counts[keys] = spans[keys]
    agg = counts.groupby(keys, sort=False).sum().reset_index()
    out = rated.merge(agg, on=keys, how="left")
    count_cols = ["n_major", "n_minor", "_nontrans", "_major_other", "_minor_other", "_punct"]
    out[count_cols] = out[count_cols].fillna(0).astype(np.int64)
    w = MQM_WEIGHTS
    out["mqm_penalty"] = (
        w["non_translation"] * out["_nontrans"]
        + w["major"] * out["_major_other"]
        + w["minor"] * out["_minor_other"]
        + w["minor_punctuation"] * out["_punct"]
    ).astype(float)
    out = out.rename(columns={"globalSegId": "segment", "docSegId": "doc_segment"})
    out["segment"] = out["segment"].astype(np.int64)
    out["doc_segment"] = out["doc_segment"].astype(np.int64)
    out = out.sort_values(["segment", "system", "rater"], ignore_index=True)
    out = out[
        ["segment", "doc", "doc_segment", "system", "rater", "mqm_penalty", "n_major", "n_minor"]
    ]
    out.attrs = {"source": str(res), "n_hotw_rows_dropped": int(is_hotw.sum())}
    return out


def wmt23_preferences(
    penalties: pd.DataFrame | None = None, tie_threshold: float = 0.0
) -> pd.DataFrame:
    """Ternary per-rater preferences for every pair of systems on every segment.

    For each segment, each pair of systems (A, B) with A < B in Python string order,
    and each rater who rated both: vote +1 if A has the lower MQM penalty (A better),
    -1 if B has, 0 if ``|penalty_A - penalty_B| <= tie_threshold``. Differences are
    rounded to 9 decimals first so that float noise never breaks a tie.

    Parameters
    ----------
    penalties : pandas.DataFrame, optional
        Columns ``segment``, ``system``, ``rater``, ``mqm_penalty`` (as returned by
        :func:`load_wmt23_sxs`); default: ``load_wmt23_sxs()``.
    tie_threshold : float, default 0.0
        Largest absolute penalty difference still counted as a tie.

    Returns
    -------
    pandas.DataFrame
        Long votes table with columns ``item`` (``"segment|system_a|system_b"``),
        ``segment``, ``system_a``, ``system_b``, ``rater``, ``vote`` in {-1, 0, +1};
        sorted by segment, system_a, system_b, rater. For WMT23 zh-en:
        377 segments x 45 pairs x 3 raters = 50,895 rows.
    """
    if not np.isfinite(tie_threshold) or tie_threshold < 0:
        raise ValueError(f"tie_threshold={tie_threshold!r}; pass a finite number >= 0.")
    if penalties is None:
        penalties = load_wmt23_sxs()
    cols = ["segment", "system", "rater", "mqm_penalty"]
    _require_columns(penalties, cols, "penalties")
    pen = penalties[cols]
    dup = pen.duplicated(["segment", "system", "rater"])
    if dup.any():
        raise DataValidationError(
            "penalties: (segment, system, rater) must be unique; duplicated e.g. "
            f"{pen.loc[dup, ['segment', 'system', 'rater']].head(3).to_dict('records')}. "
            "Aggregate to one penalty per rater first."
        )
    pairs = pen.merge(pen, on=["segment", "rater"], suffixes=("_a", "_b"))
    pairs = pairs[pairs["system_a"].astype(str) < pairs["system_b"].astype(str)]
    diff = np.round(
        pairs["mqm_penalty_a"].to_numpy(float) - pairs["mqm_penalty_b"].to_numpy(float), 9
    )
    vote = np.where(np.abs(diff) <= tie_threshold, 0, np.where(diff < 0, 1, -1))
    out = pd.DataFrame(
        {
            "item": pairs["segment"].astype(str)
            + "|"
            + pairs["system_a"].astype(str)
            + "|"
            + pairs["system_b"].astype(str),
            "segment": pairs["segment"],
            "system_a": pairs["system_a"],
            "system_b": pairs["system_b"],
            "rater": pairs["rater"],
            "vote": vote.astype(np.int64),
        }
    )
    return out.sort_values(["segment", "system_a", "system_b", "rater"], ignore_index=True)


# ---------------------------------------------------------------------------
# PandaLM
# ---------------------------------------------------------------------------
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
    human = _read_json(_resolve(PANDALM_FILES["human"], base, "pandalm", allow_gzip=True))
    gpt = _read_json(_resolve(PANDALM_FILES["gpt35"], base, "pandalm", allow_gzip=True))
    panda = _read_json(_resolve(PANDALM_FILES["pandalm7b"], base, "pandalm", allow_gzip=True))
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


def pandalm_votes(
    data: pd.DataFrame | None = None,
    judges: Sequence[Literal["gpt35", "pandalm7b"]] = PANDALM_JUDGES,
) -> pd.DataFrame:
    """Votes table (one row per judge verdict) from PandaLM's LLM judges.

    Unparsable verdicts are skipped with a ``UserWarning`` that says how many.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        Output of :func:`load_pandalm`; loaded if omitted.
    judges : sequence of {"gpt35", "pandalm7b"}
        Which judges' verdicts to include.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``judge``, ``vote`` in {-1, 0, +1} (+1 = response1
        better), ordered by judge then item.
    """
    data = _pandalm_or_load(data)
    frames = []
    for judge in judges:
        _check_judge(judge)
        ok = data[judge].notna()
        if (~ok).any():
            warnings.warn(
                f"pandalm_votes: skipped {int((~ok).sum())} unparsable {judge} verdict(s) "
                f"of {len(data)} items.",
                UserWarning,
                stacklevel=2,
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
    return pd.concat(frames, ignore_index=True)


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
) -> pd.DataFrame:
    """Binary win/not-win judgments per evaluated system, for the misclassification model.

    For a focal system S and an item comparing S with an opponent:
    ``judge_label = 1`` if the judge says S's response is strictly better, else 0
    (S loses **or tie**); ``human_label`` is the same binarisation of the human
    majority. The true "accuracy" theta of S is thus its strict win rate against the
    other PandaLM models under the human majority. Items with an unparsable judge
    verdict are skipped with a ``UserWarning`` saying how many. Every row has a
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

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``item``, ``opponent``, ``judge_label``, ``human_label``
        (int 0/1), ordered by system then item.
    """
    _check_judge(judge)
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
    if sum(n_bad.values()):
        warnings.warn(
            f"pandalm_judgments: skipped {sum(n_bad.values())} row(s) with an unparsable "
            f"{judge} verdict ({', '.join(f'{s}: {k}' for s, k in n_bad.items() if k)}).",
            UserWarning,
            stacklevel=2,
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
    return out.sort_values(["system", "item"], ignore_index=True)


# ---------------------------------------------------------------------------
# simulators with known truth
# ---------------------------------------------------------------------------
def davidson_probabilities(u: np.ndarray, eta: np.ndarray | float) -> np.ndarray:
    """Davidson outcome probabilities (eq. 4): columns p(+1), p(0), p(-1).

    ``p(+1) = e^u / Z``, ``p(-1) = e^-u / Z``, ``p(0) = e^eta / Z``,
    ``Z = e^u + e^-u + e^eta``; computed as a stable softmax.
    """
    u = np.asarray(u, dtype=float)
    logits = np.stack(np.broadcast_arrays(u, np.asarray(eta, dtype=float), -u), axis=-1)
    logits = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=-1, keepdims=True)


def simulate_davidson_votes(
    n_items: int,
    n_votes: int | Sequence[int] | np.ndarray,
    beta: float,
    eta0: float | None = None,
    random_seed: SeedLike = 0,
    *,
    tie: Literal["global", "local"] = "global",
    gamma: float | None = None,
    alpha: float = 1.0,
    kappa: float = 1.0,
    class_prior: Sequence[float] = (0.4, 0.2, 0.4),
    concentration: tuple[float, float] = (4.0, 1.0),
    votes_format: Literal["counts", "long"] = "counts",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judge votes and gold labels whose conditional law is exactly the Davidson model.

    Generative process per item i (``davidson_itc_aggregation.txt``, eqs. 2-4):

    1. a latent class ``z_i`` in (+1, 0, -1) ~ ``class_prior``; it only shapes the
       judge's vote distribution ``pi_i ~ Dirichlet(c_off + (c_on - c_off) e_{z_i})``
       with ``(c_on, c_off) = concentration``, so votes are realistic mixtures;
    2. vote counts ``(c+, c0, c-) ~ Multinomial(n_i, pi_i)``;
    3. features ``s_i = 0.5 log((c+ + alpha) / (c- + alpha))`` (eq. 2) and
       ``t_i = log((c0 + kappa) / (n_i + kappa))`` (eq. 3);
    4. the label ``y_i ~ Davidson(u = beta s_i, eta)`` (eq. 4), with ``eta = eta0``
       (global tie) or ``eta = gamma t_i`` (local tie).

    Because step 4 draws the label from the model given the votes, (``beta``,
    ``eta0``) or (``beta``, ``gamma``) are exactly the true parameters of the
    conditional label model that :class:`DavidsonAggregator` fits.

    Parameters
    ----------
    n_items : int
        Number of items.
    n_votes : int or array of int
        Votes per item (one number, or one per item).
    beta : float
        Margin scale (``margin_scale``), u = beta * s.
    eta0 : float, optional
        Global tie logit (``tie_logit``); required when ``tie="global"``.
    random_seed : int, numpy Generator or None, default 0
        Seed of the only random generator used.
    tie : {"global", "local"}
        Tie model: eta = eta0, or eta = gamma * t.
    gamma : float, optional
        Local tie slope; required when ``tie="local"``.
    alpha, kappa : float, default 1.0
        Smoothing of s (eq. 2) and t (eq. 3), as in the paper.
    class_prior : 3 floats
        Probabilities of the latent class (+1, 0, -1); normalised.
    concentration : (float, float)
        Dirichlet concentration on the latent class and on the other two outcomes.
    votes_format : {"counts", "long"}
        ``"counts"``: columns ``item, n_pos, n_tie, n_neg``; ``"long"``: one row
        per vote, columns ``item, vote``.

    Returns
    -------
    votes : pandas.DataFrame
        Vote counts (or long votes) per item, items ``0..n_items-1``.
    labels : pandas.DataFrame
        Columns ``item``, ``label`` in {-1, 0, +1}.

    Examples
    --------
    >>> votes, labels = simulate_davidson_votes(500, 8, beta=2.0, eta0=-0.5, random_seed=1)
    >>> list(votes.columns)
    ['item', 'n_pos', 'n_tie', 'n_neg']
    """
    if tie == "global":
        if eta0 is None or gamma is not None:
            raise ValueError('tie="global" takes eta0 (a float) and no gamma.')
    elif tie == "local":
        if gamma is None or eta0 is not None:
            raise ValueError('tie="local" takes gamma (a float) and no eta0.')
    else:
        raise ValueError(f'tie={tie!r}; choose "global" or "local".')
    if votes_format not in ("counts", "long"):
        raise ValueError(f'votes_format={votes_format!r}; choose "counts" or "long".')
    if int(n_items) != n_items or n_items < 1:
        raise ValueError(f"n_items={n_items!r}; pass a positive integer.")
    n_items = int(n_items)
    n = np.broadcast_to(np.asarray(n_votes), (n_items,)).astype(np.int64)
    if (n < 0).any():
        raise ValueError("n_votes must be >= 0.")
    if alpha <= 0 or kappa <= 0:
        raise ValueError(f"alpha={alpha}, kappa={kappa}; both must be > 0.")
    prior = np.asarray(class_prior, dtype=float)
    if prior.shape != (3,) or (prior < 0).any() or prior.sum() <= 0:
        raise ValueError(f"class_prior={class_prior!r}; pass 3 non-negative weights.")
    c_on, c_off = map(float, concentration)
    if c_on <= 0 or c_off <= 0:
        raise ValueError(f"concentration={concentration!r}; both must be > 0.")

    rng = np.random.default_rng(random_seed)
    z = rng.choice(3, size=n_items, p=prior / prior.sum())  # 0:+1, 1:tie, 2:-1
    conc = np.full((n_items, 3), c_off)
    conc[np.arange(n_items), z] = c_on
    g = rng.gamma(conc)
    pi = g / g.sum(axis=1, keepdims=True)
    counts = rng.multinomial(n, pi)  # columns (+, 0, -)
    c_pos, c_tie, c_neg = counts[:, 0], counts[:, 1], counts[:, 2]
    s = 0.5 * np.log((c_pos + alpha) / (c_neg + alpha))
    if tie == "global":
        eta = np.full(n_items, float(eta0))
    else:
        t = np.log((c_tie + kappa) / (n + kappa))
        eta = float(gamma) * t
    p = davidson_probabilities(beta * s, eta)
    cls = (rng.random(n_items)[:, None] > np.cumsum(p, axis=1)[:, :2]).sum(axis=1)
    label = np.array([1, 0, -1])[cls]

    items = np.arange(n_items, dtype=np.int64)
    labels = pd.DataFrame({"item": items, "label": label.astype(np.int64)})
    if votes_format == "counts":
        votes = pd.DataFrame({"item": items, "n_pos": c_pos, "n_tie": c_tie, "n_neg": c_neg})
    else:
        reps = counts.reshape(-1)
        votes = pd.DataFrame(
            {
                "item": np.repeat(np.repeat(items, 3), reps),
                "vote": np.repeat(np.tile(np.array([1, 0, -1], dtype=np.int64), n_items), reps),
            }
        )
    return votes, labels


def simulate_misclassification(
    theta: float | Sequence[float],
    q0: float | Sequence[float],
    q1: float | Sequence[float],
    n: int | Sequence[int],
    m0: int | Sequence[int],
    m1: int | Sequence[int],
    random_seed: SeedLike = 0,
    *,
    systems: Sequence[str] | None = None,
    return_truth: bool = False,
) -> tuple[pd.DataFrame, ...]:
    """Test judgments and a human-labelled calibration set from an imperfect judge.

    Per system k (``misclassification_adjusted_reporting.txt``, eqs. 1 and 3):
    test items have a true label ``Z ~ Bernoulli(theta_k)`` and a judge label with
    ``P(Zhat = 1 | Z = 1) = q1_k`` (sensitivity) and ``P(Zhat = 0 | Z = 0) = q0_k``
    (specificity); the calibration set has exactly ``m0_k`` items with Z = 0 and
    ``m1_k`` with Z = 1 (stratified, as in the paper), judged the same way.

    Parameters
    ----------
    theta, q0, q1 : float or sequence of float
        True accuracy, specificity and sensitivity, one value or one per system.
    n, m0, m1 : int or sequence of int
        Test size and calibration sizes per true class, one value or one per system.
    random_seed : int, numpy Generator or None, default 0
        Seed of the only random generator used.
    systems : sequence of str, optional
        System names; default ``system_0, system_1, ...`` when any argument has
        several values. With one system and no names, no ``system`` column is added.
    return_truth : bool, default False
        Also return the test items' true labels.

    Returns
    -------
    judgments : pandas.DataFrame
        ``[system,] item, judge_label`` for the test items (``item`` 0..n-1).
    calibration : pandas.DataFrame
        ``[system,] item, judge_label, human_label`` (``item`` n..n+m0+m1-1, so
        never equal to a test item of the same system).
    truth : pandas.DataFrame, only if ``return_truth``
        ``[system,] item, true_label`` for the test items.
    """
    args = {"theta": theta, "q0": q0, "q1": q1, "n": n, "m0": m0, "m1": m1}
    arrays = {k: np.atleast_1d(np.asarray(v)) for k, v in args.items()}
    sizes = {a.size for a in arrays.values()} - {1}
    if len(sizes) > 1 or any(a.ndim != 1 for a in arrays.values()):
        raise ValueError(
            "theta, q0, q1, n, m0, m1 must each be one value or one value per system "
            f"(same length); got lengths { {k: a.size for k, a in arrays.items()} }."
        )
    n_sys = sizes.pop() if sizes else 1
    if systems is not None:
        systems = [str(s) for s in systems]
        if len(systems) != n_sys and n_sys != 1:
            raise ValueError(f"systems has {len(systems)} names for {n_sys} parameter values.")
        n_sys = len(systems)
    arrays = {k: np.broadcast_to(a, (n_sys,)) for k, a in arrays.items()}
    for k in ("theta", "q0", "q1"):
        v = arrays[k].astype(float)
        if ((v < 0) | (v > 1) | ~np.isfinite(v)).any():
            raise ValueError(f"{k}={args[k]!r}; probabilities must lie in [0, 1].")
    for k in ("n", "m0", "m1"):
        v = arrays[k]
        if not np.issubdtype(v.dtype, np.integer) or (v < 0).any():
            raise ValueError(f"{k}={args[k]!r}; pass non-negative integers.")
    with_system = systems is not None or n_sys > 1
    names = systems if systems is not None else [f"system_{k}" for k in range(n_sys)]

    rng = np.random.default_rng(random_seed)
    judg, calib, truth = [], [], []
    for k in range(n_sys):
        th, s0, s1 = (float(arrays[x][k]) for x in ("theta", "q0", "q1"))
        nk, m0k, m1k = (int(arrays[x][k]) for x in ("n", "m0", "m1"))
        z = (rng.random(nk) < th).astype(np.int64)
        zhat = (rng.random(nk) < np.where(z == 1, s1, 1.0 - s0)).astype(np.int64)
        zc = np.repeat(np.array([0, 1], dtype=np.int64), [m0k, m1k])
        zc_hat = (rng.random(zc.size) < np.where(zc == 1, s1, 1.0 - s0)).astype(np.int64)
        test_items = np.arange(nk, dtype=np.int64)
        cal_items = np.arange(nk, nk + zc.size, dtype=np.int64)
        prefix = {"system": names[k]} if with_system else {}
        judg.append(pd.DataFrame({**prefix, "item": test_items, "judge_label": zhat}))
        calib.append(
            pd.DataFrame({**prefix, "item": cal_items, "judge_label": zc_hat, "human_label": zc})
        )
        truth.append(pd.DataFrame({**prefix, "item": test_items, "true_label": z}))
    out = (pd.concat(judg, ignore_index=True), pd.concat(calib, ignore_index=True))
    if return_truth:
        out = out + (pd.concat(truth, ignore_index=True),)
    return out
