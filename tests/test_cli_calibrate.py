"""`bayesjudge calibrate` and `bayesjudge metrics` on small CSV files: every prediction row
back in input order with its ids as written, each corrector against its closed form or an
independent scipy fit, the metric table against hand computations and the library, and
one-line errors (exit 2) for bad arguments and bad files, arguments checked first."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

from bayesjudge import PreferenceDistribution, alignment_error
from bayesjudge.cli import main
from bayesjudge.datasets.simulate_autorater import simulate_autorater
from bayesjudge.metrics import metric_table

# ids that pandas would mangle (000 -> 0, 1.10 -> 1.1, NA -> NaN) if read as numbers
WEIRD = ["000", "1.1", "1.10", "NA", "007", "2", "2.0"]
N_ITEMS, N_LABELLED = 40, 30
PRIOR_SD = 1.5  # TemperatureScaling's default prior: log T ~ Normal(0, 1.5)


def _logit(p):
    """logit; an exact 0 / 1 (none among the labelled rows) is a category the fit never
    saw, calibrated to its Beta(1, 1) prior mean 0.5 = expit(0): its logit is set to 0."""
    p = np.asarray(p, float)
    return special.logit(np.where((p == 0) | (p == 1), 0.5, p))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two judges (j1 over-confident with a slot bias, j2 a distortion of j1) on 40
    items judged in both orders; 3 annotators (ties possible) on the first 30."""
    d = tmp_path_factory.mktemp("calibrate")
    sim = simulate_autorater(N_ITEMS, 3, temperature=2.0, bias=0.4, tie_mean=0.1,
                             swapped=True, random_seed=5)
    ids = dict(zip(sim.outputs["item"], WEIRD + [f"q{i:02d}" for i in range(N_ITEMS)]))
    out = sim.outputs.assign(item=sim.outputs["item"].map(ids)).round(4)
    j2 = out.assign(prob=(out["prob"] ** 1.5).round(4), prob_swapped=out["prob_swapped"])
    pred = pd.concat([out.assign(judge="j1"), j2.assign(judge="j2")], ignore_index=True)
    pred.loc[pred.index[-1], "prob_swapped"] = np.nan  # one item judged in one order only
    pred = pred[["judge", "item", "prob", "prob_swapped"]]
    pred.to_csv(d / "pred.csv", index=False)
    ann = sim.annotations.assign(item=sim.annotations["item"].map(ids))
    ann = ann[ann["item"].isin(pd.unique(ann["item"])[:N_LABELLED])]
    ann.to_csv(d / "ann.csv", index=False)
    return d, pred, ann


def _read_exact(path) -> pd.DataFrame:
    """An output file with its ids exactly as written (empty value cells are NaN)."""
    values = [c for c in path.read_text().splitlines()[0].split(",") if c not in ("item", "judge")]
    return pd.read_csv(path, dtype={"item": str, "judge": str}, keep_default_na=False,
                       na_values={c: [""] for c in values})


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def _ids_as_written(path) -> list[str]:
    lines = path.read_text().splitlines()
    col = lines[0].split(",").index("item")
    return [line.split(",")[col] for line in lines[1:]]


def _counts(ann: pd.DataFrame, items) -> np.ndarray:
    """(k_A, k_tie, k_B) per item, by hand."""
    tab = pd.crosstab(ann["item"], ann["label"]).reindex(columns=["A", "tie", "B"], fill_value=0)
    return tab.reindex(list(items)).to_numpy()


def _scipy_temperature(pred: pd.DataFrame, ann: pd.DataFrame, fit_items) -> float:
    """Independent MAP of log T: binomial k_B of k_A + k_B per order, prior N(0, 1.5)."""
    rows = pred[pred["item"].isin(fit_items)]
    k = _counts(ann, rows["item"])
    s, n = k[:, 2], k[:, 0] + k[:, 2]
    logit = _logit(rows["prob"])
    swap = rows["prob_swapped"].to_numpy()
    has = ~np.isnan(swap)
    x = np.concatenate([logit, _logit(swap[has])])
    s, n = np.concatenate([s, (n - s)[has]]), np.concatenate([n, n[has]])
    certain = (rows["prob"].isin([0, 1]).any()
               or pd.Series(swap[has]).isin([0, 1]).any())
    assert not certain  # no certainty among the fitted rows (own category)

    def neg_log_post(log_t):
        z = x * np.exp(-log_t[0])
        return np.sum(s * np.logaddexp(0, -z) + (n - s) * np.logaddexp(0, z)) \
            + log_t[0] ** 2 / (2 * PRIOR_SD**2)

    return float(np.exp(optimize.minimize(neg_log_post, [0.0], method="BFGS").x[0]))


def _calibrate(d, *extra, out_name="cal.csv"):
    out = d / out_name
    args = ["calibrate", str(d / "pred.csv"), "--labels", str(d / "ann.csv"), "--out", str(out),
            "--boot", "100", *extra]
    return main(args), out


# ------------------------------------------------------------------------- calibrate
def test_temperature_every_row_in_order_and_matches_scipy(files, capsys):
    d, pred, ann = files
    code, out = _calibrate(d)
    assert code == 0
    assert _ids_as_written(out) == pred["item"].tolist()  # byte-exact, every row, in order
    got = _read_exact(out)
    assert got["judge"].tolist() == pred["judge"].tolist()
    np.testing.assert_allclose(got["prob"], pred["prob"])
    labelled = pred["item"].isin(ann["item"]).to_numpy()
    assert got["labelled"].tolist() == labelled.tolist() == got["in_fit"].tolist()
    assert "prob_calibrated_lower" not in got  # MAP: no intervals
    for judge in ("j1", "j2"):  # each judge on its own, on its labelled rows only
        rows = (pred["judge"] == judge).to_numpy()
        t = _scipy_temperature(pred[rows], ann, ann["item"])
        p = pred.loc[rows, "prob"].to_numpy()
        np.testing.assert_allclose(got.loc[rows, "prob_calibrated"],
                                   special.expit(_logit(p) / t), rtol=1e-5)
        swap = pred.loc[rows, "prob_swapped"].to_numpy()
        np.testing.assert_allclose(got.loc[rows, "prob_swapped_calibrated"],
                                   special.expit(_logit(swap) / t), rtol=1e-5)
        assert t > 1  # the simulated judge is over-confident
    captured = capsys.readouterr()
    printed = captured.out
    assert f"on the {N_LABELLED} labelled items" in printed and "optimistic" in printed
    # a library warning during one judge's fit: one line, saying which judge
    assert "warning: judge 'j1': 1 judged item(s) have only tie annotations" in captured.err
    assert "before" in printed and "after" in printed and "T = " in printed


def test_holdout_fits_on_the_rest_and_scores_the_held_out(files, capsys):
    d, pred, ann = files
    code, out = _calibrate(d, "--holdout", "0.3", "--seed", "3", out_name="hold.csv")
    assert code == 0
    got = _read_exact(out)
    held = got["labelled"] & ~got["in_fit"]
    assert got.loc[held, "item"].nunique() == round(0.3 * N_LABELLED)
    assert (got.groupby("item")["in_fit"].nunique() == 1).all()  # same split for every judge
    rows = (pred["judge"] == "j1").to_numpy()
    fit_items = got.loc[got["in_fit"] & rows, "item"]
    t = _scipy_temperature(pred[rows], ann, fit_items)
    np.testing.assert_allclose(got.loc[rows, "prob_calibrated"],
                               special.expit(_logit(pred.loc[rows, "prob"]) / t),
                               rtol=1e-5)
    printed = capsys.readouterr().out
    assert f"the {round(0.3 * N_LABELLED)} held-out labelled items" in printed
    assert "optimistic" not in printed


def test_temperature_nuts_gives_intervals(files):
    d, pred, _ = files
    code, out = _calibrate(d, "--inference", "nuts", "--bias", "--draws", "100", "--tune",
                           "100", "--chains", "2", out_name="nuts.csv")
    assert code == 0
    got = _read_exact(out)
    assert len(got) == len(pred)
    lo, mid, hi = (got[f"prob_calibrated{s}"] for s in ("_lower", "", "_upper"))
    assert (lo <= mid + 1e-12).all() and (mid <= hi + 1e-12).all() and (hi > lo).all()
    assert got["prob_swapped_calibrated_lower"].isna().sum() == 1  # the one-order row


def test_contextual_is_the_closed_form(files, capsys):
    d, pred, _ = files
    code, out = _calibrate(d, "--method", "contextual", "--probe", "0.7", "0.5",
                           out_name="cc.csv")
    assert code == 0
    got = _read_exact(out)
    q = 0.6  # probes averaged in probability space
    for col in ("prob", "prob_swapped"):
        want = special.expit(special.logit(pred[col]) - special.logit(q))
        np.testing.assert_allclose(got[f"{col}_calibrated"], want, rtol=1e-10)
    assert "in_fit" not in got
    assert "labels were not used" in capsys.readouterr().out
    # one probe per judge from a file
    (d / "probes.csv").write_text("judge,prob\nj2,0.3\nj1,0.8\nj1,0.6\n")
    code, out = _calibrate(d, "--method", "contextual", "--probe-file", str(d / "probes.csv"),
                           out_name="cc2.csv")
    assert code == 0
    got = _read_exact(out)
    q = np.where(pred["judge"] == "j1", 0.7, 0.3)
    np.testing.assert_allclose(got["prob_calibrated"],
                               special.expit(special.logit(pred["prob"]) - special.logit(q)))


def test_batch_is_the_closed_form(files):
    d, pred, _ = files
    code, out = _calibrate(d, "--method", "batch", out_name="bc.csv")
    assert code == 0
    got = _read_exact(out)
    for judge, rows in pred.groupby("judge").groups.items():
        part = pred.loc[rows]
        # both orders are P(second shown response better): one batch
        pbar = np.nanmean(np.concatenate([part["prob"], part["prob_swapped"]]))
        for col in ("prob", "prob_swapped"):
            want = special.expit(special.logit(part[col]) - special.logit(pbar))
            np.testing.assert_allclose(got.loc[rows, f"{col}_calibrated"], want, rtol=1e-10)


def test_hard_labels_one_per_item(files, tmp_path):
    d, pred, ann = files
    k = _counts(ann, pd.unique(ann["item"]))
    items = pd.unique(ann["item"])[k[:, 0] != k[:, 2]]
    major = np.where(k[k[:, 0] != k[:, 2], 2] > k[k[:, 0] != k[:, 2], 0], 1, 0)
    (tmp_path / "hard.csv").write_text("item,label\n" + "".join(
        f"{i},{y}\n" for i, y in zip(items, major)))
    one = pred[pred["judge"] == "j1"].drop(columns="judge")
    one.to_csv(tmp_path / "pred.csv", index=False)
    out = tmp_path / "cal.csv"
    assert main(["calibrate", str(tmp_path / "pred.csv"), "--labels", str(tmp_path / "hard.csv"),
                 "--out", str(out), "--boot", "100"]) == 0
    got = _read_exact(out)
    assert "judge" not in got and _ids_as_written(out) == one["item"].tolist()
    hard_ann = pd.DataFrame({"item": items, "annotator": "x",
                             "label": np.where(major == 1, "B", "A")})
    t = _scipy_temperature(one, hard_ann, items)
    np.testing.assert_allclose(got["prob_calibrated"],
                               special.expit(_logit(one["prob"]) / t), rtol=1e-5)


# --------------------------------------------------------------------------- metrics
def test_metrics_table_with_alignment_error(files, capsys):
    d, pred, ann = files
    out = d / "table.csv"
    assert main(["metrics", str(d / "pred.csv"), "--labels", str(d / "ann.csv"), "--out",
                 str(out), "--boot", "200", "--seed", "4", "--level", "0.9"]) == 0
    got = pd.read_csv(out, dtype={"judge": str})
    labelled = pred[pred["item"].isin(ann["item"])].reset_index(drop=True)
    table = metric_table(labelled, ann, n_boot=200, ci_prob=0.9, random_seed=4)
    model = PreferenceDistribution(random_seed=4).fit(ann)
    for judge in ("j1", "j2"):
        mine = got[got["judge"] == judge].set_index("metric")
        ref = table[table["judge"] == judge].set_index("metric")
        pd.testing.assert_frame_equal(mine.loc[ref.index, ["estimate", "lower", "upper"]],
                                      ref[["estimate", "lower", "upper"]])
        part = labelled[labelled["judge"] == judge]
        k = _counts(ann, part["item"])  # hand computation of the paper's MSE to p-hat
        p_hat = (k[:, 2] + k[:, 1] / 2) / k.sum(1)
        assert mine.loc["mse", "estimate"] == pytest.approx(np.mean((part["prob"] - p_hat) ** 2))
        ae = alignment_error(part[["item", "prob"]], model, ci_prob=0.9)
        assert mine.loc["alignment_error", "estimate"] == pytest.approx(ae["alignment_error"])
        assert mine.loc["alignment_error", "lower"] == pytest.approx(ae["alignment_error_lower"])
        assert mine.loc["noise_floor", "estimate"] == pytest.approx(ae["noise_floor"])
        assert mine["n_items"].dtype.kind == "i"
    printed = capsys.readouterr().out
    assert f"{2 * (N_ITEMS - N_LABELLED)} of {2 * N_ITEMS} prediction rows have no labels" in \
        printed
    assert "alignment_error" in printed and "90% bootstrap" in printed


def test_metrics_with_one_label_per_item_has_no_alignment_rows(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("item,prob\n000,0.9\n1.1,0.2\n1.10,0.6\n007,0.4\n")
    (tmp_path / "l.csv").write_text("item,label\n000,B\n1.1,A\n1.10,1\n007,0\n7,B\n")
    out = tmp_path / "t.csv"
    assert main(["metrics", str(tmp_path / "p.csv"), "--labels", str(tmp_path / "l.csv"),
                 "--out", str(out), "--boot", "100"]) == 0
    assert "1 labelled items have no prediction row" in capsys.readouterr().out
    got = pd.read_csv(out).set_index("metric")
    assert "alignment_error" not in got.index
    want = np.mean((np.array([0.9, 0.2, 0.6, 0.4]) - np.array([1, 0, 1, 0])) ** 2)
    assert got.loc["brier", "estimate"] == pytest.approx(want)
    assert got.loc["agreement", "estimate"] == 1.0


# ---------------------------------------------------------------------------- errors
def _no_inputs(d, *extra, command="calibrate"):
    # input files that do not exist: an argument error must come first
    args = [command, str(d / "no-pred.csv"), "--labels", str(d / "no-ann.csv"), *extra]
    if command == "calibrate" and "--out" not in extra:
        args += ["--out", str(d / "x.csv")]
    return args


@pytest.mark.parametrize("extra, expect", [
    (["--method", "contextual"], "needs the judge's P(B better) on a content-free input"),
    (["--method", "batch", "--probe", "0.6"], "apply to --method contextual only"),
    (["--method", "contextual", "--probe", "1.5"], "--probe must be a probability"),
    (["--method", "contextual", "--probe", "0.5", "--probe-file", "p.csv"], "not both"),
    (["--method", "batch", "--bias"], "--bias applies to --method temperature only"),
    (["--method", "contextual", "--probe", "0.6", "--inference", "nuts"],
     "--inference nuts applies to --method temperature only"),
    (["--holdout", "1.5"], "--holdout must lie strictly between 0 and 1"),
    (["--level", "95"], "--level must lie strictly between 0.5 and 1"),
    (["--boot", "10"], "--boot must be at least 100"),
    (["--inference", "nuts", "--draws", "1"], "--draws 1 is too small"),
    (["--method", "platt"], "invalid choice: 'platt'"),
    (["--out", "missing/x.csv"], "does not exist; create it first"),
])
def test_bad_calibrate_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    extra = [str(tmp_path / e) if e == "missing/x.csv" else e for e in extra]
    assert main(_no_inputs(tmp_path, *extra)) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert expect in line and "no-pred" not in line


@pytest.mark.parametrize("extra, expect", [
    (["--level", "95"], "--level must lie strictly between 0.5 and 1"),
    (["--boot", "0"], "--boot must be at least"),
    (["--seed", "-1"], "--seed must lie in"),
    (["--out", "missing/t.csv"], "does not exist; create it first"),
])
def test_bad_metrics_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    extra = [str(tmp_path / e) if e == "missing/t.csv" else e for e in extra]
    assert main(_no_inputs(tmp_path, *extra, command="metrics")) == 2
    assert expect in _one_error_line(capsys.readouterr().err)


def test_output_must_not_overwrite_an_input(files, capsys):
    d, _, _ = files
    assert main(["calibrate", str(d / "pred.csv"), "--labels", str(d / "ann.csv"), "--out",
                 str(d / "ann.csv")]) == 2
    assert "would be overwritten" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("pred_text, labels_text, extra, expect", [
    ("item,prob\na,1.2\nb,0.3\n", "item,label\na,A\nb,B\n", [],
     "judge outputs.prob must be a probability in [0, 1]"),
    ("item,prob\na,\nb,0.3\n", "item,label\na,A\nb,B\n", [], "prob"),
    ("item,prob\na,0.8\nb,0.3\nc,0.6\n", "item,label\na,B\nb,B\nc,1\n", [],
     "hold only one class"),
    ("item,prob\na,0.8\nb,0.3\n", "item,label\na,B\na,A\n", [], "no annotator column"),
    ("item,prob\na,0.8\nb,0.3\n", "item,annotator,label\na,u,B\nb,u,C\n", [],
     "labels.label must be one of"),
    ("item,prob\n07,0.8\n08,0.3\n", "item,label\n7,A\n8,B\n", [], "'7' is not '07'"),
    ("item,prob\na,0.8\nb,0.3\n", "item,vote\na,1\n", [], "no column(s) ['label']"),
    ("item,prob,judge\na,0.8,x\nb,0.3,y\n", "item,label\na,B\nb,A\n",
     ["--method", "contextual", "--probe-file", "PROBES"], "no probe for judge(s) ['y']"),
    ("item,prob\na,1\nb,1\n", "item,label\na,B\nb,A\n", ["--method", "batch"],
     "batch mean must lie strictly between 0 and 1"),
])
def test_bad_files_give_one_line(tmp_path, capsys, pred_text, labels_text, extra, expect):
    (tmp_path / "p.csv").write_text(pred_text)
    (tmp_path / "l.csv").write_text(labels_text)
    (tmp_path / "probes.csv").write_text("judge,prob\nx,0.6\n")
    extra = [str(tmp_path / "probes.csv") if e == "PROBES" else e for e in extra]
    out = tmp_path / "out.csv"
    assert main(["calibrate", str(tmp_path / "p.csv"), "--labels", str(tmp_path / "l.csv"),
                 "--out", str(out), "--boot", "100", *extra]) == 2
    assert expect in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.parametrize("command", ["calibrate", "metrics"])
def test_the_out_file_is_written_before_a_closed_stdout_ends_the_command(files, tmp_path,
                                                                         command):
    """`bayesjudge calibrate ... --out F | head -2`: the reader closes stdout; the command
    ends (status 141, no traceback) with F written (calibrate printed its tables first and
    never wrote F). Unbuffered output makes the first print after the close fail."""
    import subprocess
    import sys

    d = files[0]
    out = tmp_path / f"{command}.csv"
    extra = ["--method", "batch"] if command == "calibrate" else []
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "bayesjudge", command, str(d / "pred.csv"), "--labels",
         str(d / "ann.csv"), "--boot", "100", "--out", str(out), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command prints anything
    err = proc.stderr.read()
    assert proc.wait() == 141, err
    assert b"Traceback" not in err
    assert len(pd.read_csv(out)) > 0
