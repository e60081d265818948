"""`bayesjudge report`: CSV round trip, numbers equal to the estimators, flagged rows,
readable errors."""

import inspect
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from bayesjudge.cli import build_parser, main, report_table
from bayesjudge.constants import CI_PROB
from bayesjudge.datasets import simulate_misclassification
from bayesjudge.estimators import lang_reiczigel_interval, rogan_gladen

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
    one_j, one_c = simulate_misclassification(theta=0.4, q0=0.75, q1=0.85, n=600, m0=50, m1=50,
                                              random_seed=12)
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


def _calibration_variant(d, name, frame):
    path = d / name
    frame.to_csv(path, index=False)
    return name


def _run(d, *args, judgments="judgments.csv", calibration="calibration.csv"):
    return main(["report", str(d / judgments), "--calibration", str(d / calibration), *args])


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_closed_form_by_system_matches_estimators(csv_files, capsys):
    d, judgments, calibration, _, _ = csv_files
    out = d / "table.csv"
    assert _run(d, "--by", "system", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "Lang-Reiczigel" in printed and "q0 (specificity)" in printed
    table = pd.read_csv(out)
    assert table["system"].tolist() == ["alpha", "beta", "gamma"]
    for row in table.itertuples(index=False):
        k = _counts(judgments[judgments.system == row.system],
                    calibration[calibration.system == row.system])
        ci = lang_reiczigel_interval(**k)
        assert row.n == k["n"] and row.m0 == k["m0"] and row.m1 == k["m1"]
        assert row.naive == pytest.approx(k["judged_pos"] / k["n"], abs=1e-12)
        assert row.adjusted == pytest.approx(rogan_gladen(**k), abs=1e-12)
        assert (row.lower, row.upper) == pytest.approx((ci.lower, ci.upper), abs=1e-12)
        assert row.q0 == pytest.approx(k["tn"] / k["m0"])
        assert row.q1 == pytest.approx(k["tp"] / k["m1"])
        for q, s, m in (("q0", k["tn"], k["m0"]), ("q1", k["tp"], k["m1"])):
            wilson = binomtest(s, m).proportion_ci(0.95, method="wilson")
            assert (getattr(row, f"{q}_lower"), getattr(row, f"{q}_upper")) == pytest.approx(
                (wilson.low, wilson.high), abs=1e-10
            )
        assert row.lower <= row.adjusted <= row.upper
        # the printed table carries the same numbers, rounded
        assert f"[{row.lower:.3f}, {row.upper:.3f}]" in printed
    assert table["flag"].isna().all() and "!" not in printed  # nothing to flag here


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


def test_bayes_by_system_flags_borrowed_calibration(csv_files, capsys):
    # The one NUTS run of this file. System gamma has no calibration items of its own:
    # the closed form refuses it (pointing to --method bayes); the hierarchical model
    # borrows its q0, q1 from alpha and beta and flags the row.
    d, judgments, calibration, _, _ = csv_files
    name = _calibration_variant(d, "no_gamma.csv", calibration[calibration.system != "gamma"])
    assert _run(d, "--by", "system", calibration=name) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "system 'gamma'" in line and "--method bayes" in line and "borrows" in line

    out_b = d / "bayes.csv"
    assert _run(d, "--by", "system", "--method", "bayes", "--draws", "100", "--tune", "100",
                "--chains", "2", "--out", str(out_b), calibration=name) == 0
    captured = capsys.readouterr()
    bayes = pd.read_csv(out_b, keep_default_na=False)
    assert bayes["system"].tolist() == ["alpha", "beta", "gamma"]
    assert bayes["flag"].tolist()[:2] == ["", ""]
    assert "borrowed-calibration" in bayes["flag"][2].split(";")
    printed = captured.out.splitlines()
    gamma = next(r for r in printed if r.lstrip().startswith("gamma"))
    assert gamma.rstrip().endswith("*")
    assert any(r.startswith("* no calibration items") for r in printed)
    # 2 x 100 draws cannot reach the ESS target: the warning is one line with CLI advice
    warns = [r for r in captured.err.splitlines() if r and not r.startswith("progress: ")]
    assert warns and all(r.startswith("warning: ") for r in warns)
    assert any("NUTS diagnostics" in r and "--tune and --draws (now 100 and 100)" in r
               for r in warns)
    assert "Traceback" not in captured.err and "ConvergenceWarning" not in captured.err

    # alpha and beta against the closed form on the same two systems
    out_c = d / "closed.csv"
    two = _calibration_variant(d, "two_j.csv", judgments[judgments.system != "gamma"])
    assert _run(d, "--by", "system", "--out", str(out_c), judgments=two, calibration=name) == 0
    closed = pd.read_csv(out_c)
    assert list(bayes.columns) == list(closed.columns)
    both = bayes.iloc[:2]
    assert (both[["m0", "m1", "n"]].to_numpy() == closed[["m0", "m1", "n"]].to_numpy()).all()
    for col in ("adjusted", "q0", "q1"):
        lo, hi = ("lower", "upper") if col == "adjusted" else (f"{col}_lower", f"{col}_upper")
        assert ((bayes[lo] < bayes[col]) & (bayes[col] < bayes[hi])).all()
    # same data, same model up to priors and pooling: the estimates agree roughly
    np.testing.assert_allclose(both["adjusted"], closed["adjusted"], atol=0.1)
    theta = np.asarray(THETA)
    assert (bayes["lower"] < theta).all() and (theta < bayes["upper"]).all()
    # gamma borrows: its interval is wider than the calibrated systems'
    width = bayes["upper"] - bayes["lower"]
    assert width[2] > width[:2].max()


def test_zero_width_closed_form_interval_is_flagged(tmp_path, capsys):
    # Regression: p_hat = 5/200 is far below the false-positive rate 1 - q0 = 0.2, so the
    # Rogan-Gladen estimate is clipped at 0 and eq. (6) collapses to [0, 0]: the CLI
    # printed "0.000 [0.000, 0.000]" and exited 0 without a mark.
    pd.DataFrame({"item": [f"t{i}" for i in range(200)],
                  "judge_label": [1] * 5 + [0] * 195}).to_csv(tmp_path / "j.csv", index=False)
    pd.DataFrame({"item": [f"c{i}" for i in range(100)],
                  "human_label": [1] * 50 + [0] * 50,
                  "judge_label": [1] * 45 + [0] * 5 + [0] * 40 + [1] * 10},
                 ).to_csv(tmp_path / "c.csv", index=False)
    out = tmp_path / "t.csv"
    assert _run(tmp_path, "--out", str(out), judgments="j.csv", calibration="c.csv") == 0
    captured = capsys.readouterr()
    table = pd.read_csv(out)
    # so far below that no accuracy reconciles it with the calibration (likelihood ratio
    # 16.7 on 1 df, p < 0.001): a conflict as well
    assert table["flag"].tolist() == ["boundary;calibration-conflict"]
    assert table["adjusted"][0] == table["lower"][0] == table["upper"][0] == 0
    lines = captured.out.splitlines()
    row = next(r for r in lines if r.lstrip().startswith("all"))
    assert "0.000 [0.000, 0.000]" in row and row.rstrip().endswith("!x")
    note = [r for r in lines if r.startswith("! ")]
    assert len(note) == 1 and "--method bayes" in note[0] and "zero width" in note[0]
    assert captured.err == ""  # the flag replaces the estimator's BoundaryWarning


def test_level_default_is_ci_prob():
    assert inspect.signature(report_table).parameters["level"].default == CI_PROB
    args = build_parser().parse_args(["report", "j.csv", "--calibration", "c.csv"])
    assert args.level == CI_PROB and args.tune == 1000


def test_report_table_keeps_the_callers_system_dtype(csv_files):
    _, judgments, calibration, _, _ = csv_files
    codes = {"alpha": 10, "beta": 20, "gamma": 30}
    table = report_table(judgments.replace({"system": codes}),
                         calibration.replace({"system": codes}), by_system=True)
    assert table["system"].tolist() == [10, 20, 30]
    assert table["flag"].tolist() == ["", "", ""]


# ---------------------------------------------------------------------------- errors


def test_malformed_judgments(csv_files, capsys):
    d, _, _, _, _ = csv_files
    (d / "bad.csv").write_text("item,judge_label\n1,2\n2,1\n")
    assert _run(d, judgments="bad.csv", calibration="one_calibration.csv") == 2
    err = _one_error_line(capsys.readouterr().err)
    assert "judge_label" in err and "{0, 1}" in err
    # binary columns: no ternary codes in the message
    assert "-1" not in err and "ternary" not in err and "tie" not in err


def test_non_identifiable_judge_is_explained(csv_files, capsys):
    d, _, calibration, _, _ = csv_files
    swapped = calibration.assign(human_label=1 - calibration["human_label"])
    name = _calibration_variant(d, "swapped.csv", swapped)
    assert _run(d, "--by", "system", calibration=name) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert "system 'alpha'" in err and "q0 + q1 <= 1" in err and "non-identifiable" in err


def test_missing_human_labels(csv_files, capsys):
    d, _, calibration, _, _ = csv_files
    holes = calibration.astype({"human_label": float})
    holes.loc[holes.index[:2], "human_label"] = np.nan
    name = _calibration_variant(d, "holes.csv", holes)
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "human_label is missing" in _one_error_line(capsys.readouterr().err)

    name = _calibration_variant(d, "nohuman.csv", calibration.drop(columns="human_label"))
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "missing column" in _one_error_line(capsys.readouterr().err)


def test_empty_class_overlap_and_systems_without_by(csv_files, capsys):
    d, judgments, calibration, _, _ = csv_files
    name = _calibration_variant(d, "only1.csv", calibration[calibration.human_label == 1])
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "m0" in _one_error_line(capsys.readouterr().err)

    name = _calibration_variant(d, "overlap.csv", judgments.head(5).assign(human_label=1))
    assert _run(d, "--by", "system", calibration=name) == 2
    assert "disjoint" in _one_error_line(capsys.readouterr().err)

    assert _run(d) == 2  # three systems, no --by system
    assert "--by system" in _one_error_line(capsys.readouterr().err)

    assert _run(d, judgments="nope.csv") == 2
    assert "does not exist" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("extra, expect", [
    (["--level", "1.5"], "--level must lie strictly between 0.5 and 1, got 1.5"),
    (["--level", "95"], "--level 0.95 for a 95% interval"),
    (["--level", "0"], "--level must lie strictly between 0.5 and 1"),
    (["--method", "bayes", "--draws", "0"], "--draws 0 is too small to diagnose NUTS"),
    (["--method", "bayes", "--chains", "0"], "--chains 0 is too small to diagnose NUTS"),
    (["--out", "{d}"], "is a folder"),
    (["--out", "{d}/missing/table.csv"], "does not exist; create it first"),
])
def test_bad_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    extra = [e.format(d=tmp_path) for e in extra]
    code = main(["report", str(tmp_path / "no-j.csv"), "--calibration",
                 str(tmp_path / "no-c.csv"), *extra])
    assert code == 2
    line = _one_error_line(capsys.readouterr().err)
    assert expect in line and "no-j.csv" not in line


def test_help_documents_formats_and_example():
    res = subprocess.run([sys.executable, "-m", "bayesjudge", "report", "--help"],
                         capture_output=True, text=True, check=True)
    text = res.stdout
    assert "item,judge_label,human_label" in text and "Lang-Reiczigel" in text
    assert "bayesjudge report judgments.csv --calibration calibration.csv" in text
    assert "95%" in text and "%%" not in text
    assert "--tune" in text and "boundary" in text and "borrowed-calibration" in text
    assert "arXiv:2511.21140" in text and ".txt" not in text
