"""`bayesjudge demo` (what `make demo` runs) works end to end on the shipped data."""

import pandas as pd
import pytest

from bayesjudge.cli import main


# 200 draws keep the test fast; the demo's own default (1000) converges cleanly.
@pytest.mark.filterwarnings("ignore::bayesjudge.engine.ConvergenceWarning")
def test_demo_runs_on_shipped_pandalm(tmp_path, capsys):
    args = ["--out-dir", str(tmp_path), "--splits", "3", "--draws", "200", "--tune", "200"]
    assert main(["demo", *args]) == 0
    out = capsys.readouterr().out
    assert "PandaLM: 999 response pairs" in out and "margin_scale" in out
    decisions = pd.read_csv(tmp_path / "decisions.csv")
    assert len(decisions) == 999 and set(decisions["decision"]) <= {-1, 0, 1}
    assert decisions["calibration"].sum() == 50  # 5% of 999, rounded
    summary = pd.read_csv(tmp_path / "split_protocol_summary.csv", index_col=0)
    assert {"davidson", "majority_vote"} <= set(summary.index)
    assert (tmp_path / "decision_map_n2.png").stat().st_size > 0
