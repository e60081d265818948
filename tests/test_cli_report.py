"""`bayesjudge report`: CSV round trip, numbers equal to the estimators, readable errors."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from bayesjudge.cli import main
from bayesjudge.datasets import simulate_misclassification
from bayesjudge.estimators import lang_reiczigel_interval, rogan_gladen
from bayesjudge.inference import ConvergenceWarning

THETA = [0.3, 0.5, 0.7]


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    judgments, calibration = simulate_misclassification(
        theta=THETA, q0=0.8, q1=0.9, n=400, m0=40, m1=30, random_seed=11,
        systems=["alpha", "beta", "gamma"],
    )
    judgments.to_csv(d / "judgments.csv", index=False)
    calibration.to_csv(d / "calibration.csv", index=False)
    one_j, one_c = simulate_misclassification(theta=0.4, q0=0.75, q1=0.85, n=600, m0=50, m1=50, random_seed=12)
    one_j.to_csv(d / "one_judgments.csv", index=False)
    one_c.to_csv(d / "one_calibration.csv", index=False)
    return d, judgments, calibration, one_j, one_c


def _counts(j: pd.DataFrame, c: pd.DataFrame) -> dict[str, int]:
    """The six counts, computed by hand from the tables (independent of bayesjudge.data)."""
    z, zh = c["human_label"].to_numpy(), c["judge_label"].to_numpy()
    return {
        "judged_pos": int(j["judge_label"].sum()), "n": len(j),
        "tp": int(((z == 1) & (zh == 1)).sum()), "m1": int((z == 1).sum()),
        "tn": int(((z == 0) & (zh == 0)).sum()), "m0": int((z == 0).sum()),
    }


def _run(d, *args, judgments="judgments.csv", calibration="calibration.csv"):
    return main(["report", str(d / judgments), "--calibration", str(d / calibration), *args])


def test_closed_form_by_system_matches_estimators(csv_files, capsys):
    d, judgments, calibration, _, _ = csv_files
    out = d / "table.csv"
    assert _run(d, "--by", "system", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "Lang-Reiczigel" in printed and "q0 (specificity)" in printed
    table = pd.read_csv(out)
    assert table["system"].tolist() == ["alpha", "beta", "gamma"]
    for row in table.itertuples(index=False):
        k = _counts(judgments[judgments.system == row.system], calibration[calibration.system == row.system])
        ci = lang_reiczigel_interval(**k)
        assert row.n == k["n"] and row.m0 == k["m0"] and row.m1 == k["m1"]
        assert row.naive == pytest.approx(k["judged_pos"] / k["n"], abs=1e-12)
        assert row.adjusted == pytest.approx(rogan_gladen(**k), abs=1e-12)
        assert (row.lower, row.upper) == pytest.approx((ci.lower, ci.upper), abs=1e-12)
        assert row.q0 == pytest.approx(k["tn"] / k["m0"]) and row.q1 == pytest.approx(k["tp"] / k["m1"])
        for q, s, m in (("q0", k["tn"], k["m0"]), ("q1", k["tp"], k["m1"])):
            wilson = binomtest(s, m).proportion_ci(0.95, method="wilson")
            assert (getattr(row, f"{q}_lower"), getattr(row, f"{q}_upper")) == pytest.approx(
                (wilson.low, wilson.high), abs=1e-10
            )
        assert row.lower <= row.adjusted <= row.upper
        # the printed table carries the same numbers, rounded
        assert f"[{row.lower:.3f}, {row.upper:.3f}]" in printed


def test_overall_single_system_and_level(csv_files):
    d, _, _, one_j, one_c = csv_files
    out = d / "one.csv"
    code = _run(d, "--level", "0.9", "--out", str(out), judgments="one_judgments.csv",
                calibration="one_calibration.csv")
    assert code == 0
    table = pd.read_csv(out)
    assert table["system"].tolist() == ["all"]
    ci = lang_reiczigel_interval(**_counts(one_j, one_c), alpha=0.1)
    assert (table.lower[0], table.upper[0]) == pytest.approx((ci.lower, ci.upper), abs=1e-12)


def test_bayes_by_system_uses_hierarchical_model(csv_files):
    d, _, _, _, _ = csv_files
    out_b, out_c = d / "bayes.csv", d / "closed.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert _run(d, "--by", "system", "--method", "bayes", "--draws", "300", "--chains", "2",
                    "--out", str(out_b)) == 0
    assert _run(d, "--by", "system", "--out", str(out_c)) == 0
    bayes, closed = pd.read_csv(out_b), pd.read_csv(out_c)
    assert list(bayes.columns) == list(closed.columns)
    assert (bayes[["m0", "m1", "n"]] == closed[["m0", "m1", "n"]]).all().all()
    for col in ("adjusted", "q0", "q1"):
        prefix = "" if col == "adjusted" else f"{col}_"
        assert ((bayes[f"{prefix}lower"] < bayes[col]) & (bayes[col] < bayes[f"{prefix}upper"])).all()
    # same data, same model up to priors and pooling: the estimates agree roughly
    np.testing.assert_allclose(bayes["adjusted"], closed["adjusted"], atol=0.1)
    assert (bayes["lower"] < np.asarray(THETA)).all() and (np.asarray(THETA) < bayes["upper"]).all()


# ---------------------------------------------------------------------------- errors


def _calibration_variant(d, name, frame):
    path = d / name
    frame.to_csv(path, index=False)
    return name


def test_malformed_judgments(csv_files, capsys):
    d, _, _, _, _ = csv_files
    (d / "bad.csv").write_text("item,judge_label\n1,2\n2,1\n")
    assert _run(d, judgments="bad.csv", calibration="one_calibration.csv") == 2
    err = capsys.readouterr().err
    assert "judge_label" in err and "{0, 1}" in err


def test_non_identifiable_judge_is_explained(csv_files, capsys):
    d, _, calibration, _, _ = csv_files
    swapped = calibration.assign(human_label=1 - calibration["human_label"])
    name = _calibration_variant(d, "swapped.csv", swapped)
    assert _run(d, "--by", "system", calibration=name) == 2
    err = capsys.readouterr().err
    assert "system 'alpha'" in err and "q0 + q1 <= 1" in err and "non-identifiable" in err


def test_missing_human_labels(csv_files, capsys):
    d, _, calibration, _, _ = csv_files
    holes = calibration.astype({"human_label": float})
    holes.loc[holes.index[:2], "human_label"] = np.nan
    name = _calibration_variant(d, "holes.csv", holes)
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "human_label is missing" in capsys.readouterr().err

    name = _calibration_variant(d, "nohuman.csv", calibration.drop(columns="human_label"))
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "missing column" in capsys.readouterr().err


def test_empty_class_overlap_and_systems_without_by(csv_files, capsys):
    d, judgments, calibration, _, _ = csv_files
    name = _calibration_variant(d, "only1.csv", calibration[calibration.human_label == 1])
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "m0" in capsys.readouterr().err

    name = _calibration_variant(d, "overlap.csv", judgments.head(5).assign(human_label=1))
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "disjoint" in capsys.readouterr().err

    assert _run(d) == 2  # three systems, no --by system
    assert "--by system" in capsys.readouterr().err

    with pytest.raises(SystemExit, match="does not exist"):
        _run(d, judgments="nope.csv")


def test_help_documents_formats_and_example():
    res = subprocess.run([sys.executable, "-m", "bayesjudge.cli", "report", "--help"],
                         capture_output=True, text=True, check=True)
    text = res.stdout
    assert "item,judge_label,human_label" in text and "Lang-Reiczigel" in text
    assert "bayesjudge report judgments.csv --calibration calibration.csv" in text
    assert "95%" in text and "%%" not in text
