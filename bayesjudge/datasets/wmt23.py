"""WMT23 zh-en side-by-side MQM ratings: per-rater penalties and ternary preferences.

Google's ``wmt-mqm-human-evaluation`` release, read in its upstream format, becomes
per-rater MQM penalties and ternary system-vs-system preferences: the input of the
Davidson aggregator of Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et al.
(2025), "Distribution-Calibrated Inference Time Compute for Thinking
LLM-as-a-Judge", arXiv:2512.03019 (Section 5), and of leave-one-rater-out
comparisons.
"""

from __future__ import annotations

import csv
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError, check_header_rows
from bayesjudge.data.counts import mark_info_columns
from bayesjudge.datasets.files import require_columns, resolve_data_file

__all__ = ["MQM_WEIGHTS", "WMT23_SXS_FILE", "load_wmt23_sxs", "wmt23_preferences"]

WMT23_SXS_FILE = "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"

#: MQM penalty per error span (Freitag et al. 2021 weighting used by WMT).
MQM_WEIGHTS = {
    "non_translation": 25.0,  # category "Non-translation!", whatever its severity
    "major": 5.0,
    "minor": 1.0,
    "minor_punctuation": 0.1,  # Minor with category "Fluency/Punctuation"
}

_WMT_COLUMNS = ["system", "doc", "docSegId", "globalSegId", "rater", "category", "severity"]
_WMT_SEVERITIES = {"Major", "Minor", "Neutral", "No-error", "HOTW-test"}



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
    res = resolve_data_file(WMT23_SXS_FILE, path, "wmt23_sxs_zhen", allow_gzip=False)
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
        require_columns(header, _WMT_COLUMNS, res.name)
        raw = pd.read_csv(
            tar.extractfile(members[0]),
            sep="\t",
            quoting=csv.QUOTE_NONE,
            usecols=_WMT_COLUMNS,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
        )

    check_header_rows(raw, res.name)
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
    require_columns(penalties, cols, "penalties")
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
    out = out.sort_values(["segment", "system_a", "system_b", "rater"], ignore_index=True)
    return mark_info_columns(out, ["segment", "system_a", "system_b", "rater"])
