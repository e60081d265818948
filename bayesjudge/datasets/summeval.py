"""SummEval expert scores: the ground truth of the LLM-as-a-jury experiments on summaries.

SummEval (Fabbri, Kryscinski, McCann, Xiong, Socher & Radev (2021), "SummEval:
Re-evaluating Summarization Evaluation", TACL, arXiv:2007.12626): 100 CNN/DailyMail
articles x 16 system summaries, each scored 1-5 by three experts on coherence,
consistency, fluency and relevance (mean of the experts). It is the primary benchmark
of Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury for Comparative
Assessment", arXiv:2602.16610 (Section 4: pairwise preferences derived from these
scores, SRC per article averaged over articles). The file read here is the expert-mean
table extracted from BARTScore's ``SUM/SummEval/data.pkl`` (neulab/BARTScore @
248f511, Apache-2.0; SummEval itself is MIT).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError, show_values
from bayesjudge.datasets.files import require_columns, resolve_data_file

__all__ = ["SUMMEVAL_ASPECTS", "SUMMEVAL_FILE", "load_summeval"]

SUMMEVAL_FILE = "summeval_scores.csv"

#: The four aspects, with the paper's abbreviations (Qian et al. 2026, Table 1).
SUMMEVAL_ASPECTS = {
    "coherence": "COH",
    "consistency": "CON",
    "fluency": "FLU",
    "relevance": "REL",
}


def load_summeval(path: str | Path | None = None) -> pd.DataFrame:
    """SummEval's expert-mean scores as a long table (100 articles x 16 systems x 4 aspects).

    Parameters
    ----------
    path : str or Path, optional
        ``summeval_scores.csv`` (plain or ``.gz``; columns ``doc_id, system,
        coherence, consistency, fluency, relevance``) or its folder. Default: the
        copy shipped in ``bayesjudge/data``, else ``../shared/data/summeval``.

    Returns
    -------
    pandas.DataFrame
        6,400 rows: ``context`` (article id, e.g. ``"dm-test-8764fb95..."``),
        ``item`` (system id, ``"M0"`` ... ``"M23"``), ``aspect`` (one of
        :data:`SUMMEVAL_ASPECTS`), ``score`` (float in [1, 5], higher is better).
        Ids are strings exactly as in the file; rows follow the file (article,
        system), the four aspects of a row together.

    Raises
    ------
    DataValidationError
        Missing columns, duplicate (article, system) rows, or scores outside [1, 5].
    """
    res = resolve_data_file(SUMMEVAL_FILE, path, "summeval", allow_gzip=True)
    raw = res.read_bytes()
    if res.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    df = pd.read_csv(
        io.BytesIO(raw), dtype={"doc_id": str, "system": str}, keep_default_na=False
    )
    require_columns(df, ["doc_id", "system", *SUMMEVAL_ASPECTS], res.name)
    dup = df.duplicated(["doc_id", "system"])
    if dup.any():
        raise DataValidationError(
            f"{res.name}: (doc_id, system) must be unique; duplicated e.g. "
            f"{df.loc[dup, ['doc_id', 'system']].head(3).to_dict('records')}."
        )
    values = df[list(SUMMEVAL_ASPECTS)].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values) | (values < 1) | (values > 5)
    if bad.any():
        raise DataValidationError(
            f"{res.name}: aspect scores must be numbers in [1, 5]; got "
            f"{show_values(values[bad])}. Pass the upstream expert-mean table."
        )
    n, k = len(df), len(SUMMEVAL_ASPECTS)
    out = pd.DataFrame(
        {
            "context": np.repeat(df["doc_id"].to_numpy(object), k),
            "item": np.repeat(df["system"].to_numpy(object), k),
            "aspect": np.tile(np.array(list(SUMMEVAL_ASPECTS), dtype=object), n),
            "score": values.reshape(-1),
        }
    )
    out.attrs = {"source": str(res)}
    return out
