"""MAE (eq. 1) and pairwise accuracy: hand cases, split masks, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.data import DataValidationError
from bayesjudge.metrics import mae, pairwise_accuracy


def test_mae_hand_case_counts_reversal_twice():
    # errors 0, 1, 2: a full reversal costs twice a tie/preference confusion
    assert mae([1, 0, -1], [1, 1, 1]) == pytest.approx(1.0)
    assert mae([-1], [1]) == 2.0
    assert mae([0, 0], [1, -1]) == 1.0
    assert isinstance(mae([1], [1]), float)


def test_pairwise_accuracy_hand_case():
    assert pairwise_accuracy([1, 0, -1], [1, 1, 1]) == pytest.approx(1 / 3)
    assert pairwise_accuracy([1, 0, -1, 0], [1, 0, -1, 0]) == 1.0
    # PA ignores the size of the miss, MAE does not
    assert pairwise_accuracy([-1], [1]) == pairwise_accuracy([0], [1]) == 0.0


def test_metrics_accept_integer_and_float_labels_alike():
    y = np.array([1, 0, -1, 1])
    p = np.array([1.0, 1.0, 1.0, -1.0])
    assert mae(p, y) == mae(p.astype(int), y.astype(float)) == pytest.approx(5 / 4)


def test_masked_splits_match_loop_reference():
    rng = np.random.default_rng(0)
    n_splits, n_items = 25, 60
    y_true = rng.integers(-1, 2, n_items)
    y_pred = rng.integers(-1, 2, (n_splits, n_items))
    mask = rng.random((n_splits, n_items)) < 0.7
    mask[:, 0] = True
    expected_mae = [np.abs(y_pred[s][mask[s]] - y_true[mask[s]]).mean() for s in range(n_splits)]
    expected_pa = [(y_pred[s][mask[s]] == y_true[mask[s]]).mean() for s in range(n_splits)]
    np.testing.assert_allclose(mae(y_pred, y_true, mask=mask), expected_mae, rtol=1e-12)
    got = pairwise_accuracy(y_pred, y_true, mask=mask)
    np.testing.assert_allclose(got, expected_pa, rtol=1e-12)


def test_one_prediction_vector_scored_on_many_splits():
    y_true = np.array([1, 1, 0, -1])
    y_pred = np.array([1, -1, 0, 0])
    mask = np.array([[True, True, False, False], [False, False, True, True]])
    np.testing.assert_allclose(mae(y_pred, y_true, mask=mask), [1.0, 0.5])
    np.testing.assert_allclose(pairwise_accuracy(y_pred, y_true, mask=mask), [0.5, 0.5])


def test_two_d_predictions_without_mask_score_each_row():
    y_true = np.array([1, 0])
    y_pred = np.array([[1, 0], [-1, 1]])
    np.testing.assert_allclose(mae(y_pred, y_true), [0.0, 1.5])


def test_nan_outside_mask_is_ignored_inside_raises():
    y_true = np.array([1, 0, -1])
    y_pred = np.array([[1.0, np.nan, -1.0]])
    assert mae(y_pred, y_true, mask=np.array([[True, False, True]])).tolist() == [0.0]
    with pytest.raises(DataValidationError, match="NaN"):
        mae(y_pred, y_true, mask=np.array([[True, True, True]]))


@pytest.mark.parametrize("metric", [mae, pairwise_accuracy])
@pytest.mark.parametrize(
    ("y_pred", "y_true", "kwargs", "match"),
    [
        ([1, 0], [1, 0, 1], {}, "2 items but `y_true` has 3"),
        ([], [], {}, "empty"),
        ([np.nan, 1], [1, 1], {}, "NaN"),
        ([1, 1], [1, np.nan], {}, "NaN"),
        ([2, 1], [1, 1], {}, r"found \[2.0\]"),
        ([1, 1], [0, 0.5], {}, r"found \[0.5\]"),
        (["a"], [1], {}, "numeric"),
        ([[[1]]], [1], {}, "1-D or 2-D"),
        ([1, 0], [1, 0], {"mask": np.array([[True, True], [False, False]])}, "selects no items"),
        ([1, 0], [1, 0], {"mask": np.array([[1, 1]])}, "boolean"),
        ([[1, 0]], [1, 0], {"mask": np.ones((2, 2), bool)}, "does not match"),
    ],
)
def test_metrics_reject_bad_input(metric, y_pred, y_true, kwargs, match):
    with pytest.raises(DataValidationError, match=match):
        metric(y_pred, y_true, **kwargs)
