"""The `bayesjudge` command on CSV files: round trip, help, readable errors."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main
from bayesjudge.datasets import simulate_davidson_votes


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    votes, labels = simulate_davidson_votes(200, 8, beta=1.5, eta0=-0.5, random_seed=3)
    # long form, one row per vote, shuffled: the CLI must keep first-appearance order
    rows = []
    for item, p, t, n in votes[["item", "n_pos", "n_tie", "n_neg"]].itertuples(index=False):
        rows += [(item, 1)] * p + [(item, 0)] * t + [(item, -1)] * n
    long = pd.DataFrame(rows, columns=["item", "vote"])
    long.to_csv(d / "votes.csv", index=False)
    labels.iloc[:60].to_csv(d / "labels.csv", index=False)
    return d, long, labels


def test_aggregate_round_trip(csv_files, capsys):
    d, long, _ = csv_files
    out = d / "decisions.csv"
    code = main(["aggregate", str(d / "votes.csv"), "--calibration", str(d / "labels.csv"),
                 "--out", str(out)])
    assert code == 0
    got = pd.read_csv(out)
    assert got["item"].tolist() == list(pd.unique(long["item"]))
    assert set(got["decision"]) <= {-1, 0, 1}
    np.testing.assert_allclose(got[["p_neg", "p_tie", "p_pos"]].sum(axis=1), 1.0, atol=1e-12)
    assert "margin_scale" in capsys.readouterr().out


def test_malformed_votes_give_readable_error(csv_files, capsys):
    d, _, _ = csv_files
    bad = d / "bad.csv"
    bad.write_text("item,vote\n1,2\n2,1\n")
    code = main(["aggregate", str(bad), "--calibration", str(d / "labels.csv"),
                 "--out", str(d / "x.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "votes.vote" in err and "{0, 1, -1}" in err.replace("{-1, 0, 1}", "{0, 1, -1}")


def test_missing_file_and_wrong_columns(csv_files, capsys):
    d, _, _ = csv_files
    with pytest.raises(SystemExit, match="does not exist"):
        main(["aggregate", str(d / "nope.csv"), "--calibration", str(d / "labels.csv"),
              "--out", str(d / "x.csv")])
    wrong = d / "wrong.csv"
    wrong.write_text("id,score\n1,1\n")
    assert main(["aggregate", str(wrong), "--calibration", str(d / "labels.csv"),
                 "--out", str(d / "x.csv")]) == 2
    assert "missing column" in capsys.readouterr().err


def test_help_runs_as_installed_command():
    res = subprocess.run([sys.executable, "-m", "bayesjudge.cli", "aggregate", "--help"],
                         capture_output=True, text=True, check=True)
    assert "--calibration" in res.stdout and "item,n_pos,n_tie,n_neg" in res.stdout
