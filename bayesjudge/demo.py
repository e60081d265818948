"""The demo behind ``bayesjudge demo`` (and ``make demo``): the main job on real data.

PandaLM test set (shipped in ``bayesjudge/data``): each of 999 response pairs
has one verdict from GPT-3.5-turbo and one from PandaLM-7B (votes, n <= 2, ties
allowed) and three human annotations (gold = their majority). The Davidson
aggregator is calibrated on 5% of the items (Section 5 of Dadkhahi, Trabelsi,
Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time
Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019), decides every item by
the MAE Bayes action, and is compared with majority vote and the rounded median
over random calibration/evaluation splits. Returns text; the CLI prints it.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import validate_labels, validate_votes
from bayesjudge.datasets import load_pandalm, pandalm_labels, pandalm_votes
from bayesjudge.metrics import mae, pairwise_accuracy
from bayesjudge.models.davidson.aggregator import DavidsonAggregator

#: Files :func:`run_demo` writes into ``out_dir``.
DEMO_FILES = ("decisions.csv", "split_protocol_summary.csv", "decision_map_n2.png")
#: NUTS chains of the demo's fit.
DEMO_CHAINS = 2


def run_demo(
    out_dir: Path, n_splits: int = 100, draws: int = 1000, tune: int = 1000,
    random_seed: int = 0, cores: int | None = None,
) -> str:
    """Run the demo, write :data:`DEMO_FILES` to ``out_dir``, return a report.

    ``cores``: chains sampled in parallel by the NUTS fit (None: one per chain).
    """
    from bayesjudge.experiments.calibration import calibration_splits, split_protocol
    from bayesjudge.plots import plot_decision_map

    out_dir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    data = load_pandalm()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        votes = pandalm_votes(data)
    labels = pandalm_labels(data)
    lines.append(
        f"PandaLM: {len(labels)} response pairs, {len(votes)} LLM verdicts "
        f"(GPT-3.5-turbo + PandaLM-7B); gold = majority of 3 human annotators."
    )
    lines += [f"  note: {w.message}" for w in caught]

    counts = validate_votes(votes)
    gold = validate_labels(labels)
    counts = counts.take(counts.items.get_indexer(gold.items))  # label order

    cal, ev = calibration_splits(len(gold), 0.05, 1, random_seed)[0]
    model = DavidsonAggregator(random_seed=random_seed)
    model.fit(counts.take(cal), gold.take(cal), method="nuts", draws=draws, tune=tune,
              chains=DEMO_CHAINS, cores=cores, progressbar=sys.stderr.isatty())
    lines.append(f"\nDavidson aggregator calibrated on {len(cal)} items (NUTS, 95% intervals):")
    lines.append(model.summarize().to_string(float_format=lambda v: f"{v:.3f}"))

    pred = model.predict(counts)
    pred.insert(1, "gold", gold.values)
    pred["calibration"] = np.isin(np.arange(len(gold)), cal)
    pred.to_csv(out_dir / DEMO_FILES[0], index=False)
    held = pred.loc[ev]
    lines.append(
        f"held-out {len(ev)} items: MAE {mae(held['decision'], held['gold']):.3f}, "
        f"pairwise accuracy {pairwise_accuracy(held['decision'], held['gold']):.3f}"
    )

    fig, _ = plot_decision_map(model, 2)
    fig.savefig(out_dir / DEMO_FILES[2], dpi=120)

    result = split_protocol(counts, gold, n_splits=n_splits, random_seed=random_seed,
                            progressbar=False)
    summary = result.summary
    summary.to_csv(out_dir / DEMO_FILES[1])
    lines.append(f"\n{n_splits} random 5% calibration splits, every method scored on the same "
                 f"held-out items (mean and 95% interval over splits):")
    lines.append(_compact(summary).to_string())
    lines.append(f"top cluster (paired permutation test, tau = 0.05): {result.top_cluster_text()}")
    lines.append(
        f"\nwrote {out_dir}/decisions.csv, split_protocol_summary.csv, decision_map_n2.png"
    )
    return "\n".join(lines)


def _compact(summary: pd.DataFrame) -> pd.DataFrame:
    """The columns a reader needs: mean and percentile interval, top cluster."""

    def yes(flag) -> str:
        return "yes" if flag else "no"

    def cell(metric: str, row) -> str:
        return (f"{row[f'{metric}_mean']:.3f} [{row[f'{metric}_percentile_lower']:.3f}, "
                f"{row[f'{metric}_percentile_upper']:.3f}]")

    return pd.DataFrame(
        {
            "MAE [95% over splits]": [cell("mae", r) for _, r in summary.iterrows()],
            "pairwise acc. [95%]": [cell("pa", r) for _, r in summary.iterrows()],
            "top cluster (MAE/PA)": [
                f"{yes(r['top_cluster_mae'])}/{yes(r['top_cluster_pa'])}"
                for _, r in summary.iterrows()
            ],
        },
        index=summary.index,
    )


__all__ = ["run_demo"]
