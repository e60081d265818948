"""Validation of the annotations and judge-outputs tables (bayesjudge.data.annotations)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge.data import (
    AnnotationCounts,
    DataValidationError,
    align_outputs,
    check_both_classes,
    validate_annotations,
    validate_judge_outputs,
)


def _ann(labels, items=None, annotators=None):
    n = len(labels)
    return pd.DataFrame({"item": items if items is not None else ["x"] * n,
                         "annotator": annotators if annotators is not None
                         else [f"r{i}" for i in range(n)],
                         "label": labels})


# ------------------------------------------------------------------ annotations
def test_counts_in_first_appearance_order_and_ids_kept():
    ann = pd.DataFrame({
        "item": ["10", "2", "10", "002", "2", "10"],
        "annotator": ["a", "a", "b", "a", "b", "c"],
        "label": ["B", "A", "tie", "B", "B", "b"],
    })
    ac = validate_annotations(ann)
    assert ac.items.tolist() == ["10", "2", "002"]  # "2" and "002" stay distinct
    np.testing.assert_array_equal(ac.counts, [[0, 1, 2], [1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(ac.m, [3, 2, 1])
    assert ac.has_ties
    frame = ac.to_frame()
    assert frame.columns.tolist() == ["item", "k_a", "k_tie", "k_b", "m"]


def test_zero_one_codes_follow_the_paper_y_equals_one_is_b():
    # Li et al. (2025) section 2.1: Y = 1 means B is preferred.
    ac = validate_annotations(_ann([1, 0, 1, 1.0, "0", "1"]))
    np.testing.assert_array_equal(ac.counts, [[2, 0, 4]])


@pytest.mark.parametrize("bad", ["C", 2, -1, "B better", True, 0.5])
def test_labels_outside_the_set_raise(bad):
    with pytest.raises(DataValidationError, match="annotations.label"):
        validate_annotations(_ann(["A", bad]))


def test_tie_raises_when_ties_are_not_declared():
    with pytest.raises(DataValidationError, match="without ties"):
        validate_annotations(_ann(["A", "tie"]), allow_ties=False)
    ac = validate_annotations(_ann(["A", "tie"]))
    with pytest.raises(DataValidationError, match="without ties"):
        validate_annotations(ac, allow_ties=False)


def test_duplicated_item_annotator_raises():
    ann = _ann(["A", "B"], annotators=["r1", "r1"])
    with pytest.raises(DataValidationError, match="duplicated \\(item, annotator\\)"):
        validate_annotations(ann)


def test_missing_values_and_columns_raise():
    with pytest.raises(DataValidationError, match="missing value"):
        validate_annotations(_ann(["A", None]))
    with pytest.raises(DataValidationError, match="missing column"):
        validate_annotations(pd.DataFrame({"item": [1], "annotator": ["r1"]}))
    with pytest.raises(DataValidationError, match="empty"):
        validate_annotations(_ann([]))


# ------------------------------------------------------------------ judge outputs
def test_judge_outputs_rows_kept_in_order():
    out = validate_judge_outputs(pd.DataFrame({"item": ["b", "a"], "prob": [0.2, 1.0],
                                               "prob_swapped": [0.7, np.nan]}))
    assert out.items.tolist() == ["b", "a"]
    np.testing.assert_array_equal(out.prob, [0.2, 1.0])
    assert np.isnan(out.prob_swapped[1]) and out.prob_swapped[0] == 0.7
    assert out.judge is None


@pytest.mark.parametrize("bad", [1.2, -0.1, np.nan, "high", np.inf])
def test_probability_outside_unit_interval_or_nan_raises(bad):
    df = pd.DataFrame({"item": ["a", "b"], "prob": [0.3, bad]})
    with pytest.raises(DataValidationError, match="prob"):
        validate_judge_outputs(df)
    df = pd.DataFrame({"item": ["a", "b"], "prob": [0.3, 0.4], "prob_swapped": [0.5, bad]})
    if isinstance(bad, float) and np.isnan(bad):
        validate_judge_outputs(df)  # one order only: allowed
    else:
        with pytest.raises(DataValidationError, match="prob_swapped"):
            validate_judge_outputs(df)


def test_swapped_prediction_without_its_original_raises():
    df = pd.DataFrame({"item": ["a", "b"], "prob": [0.3, np.nan], "prob_swapped": [0.6, 0.2]})
    with pytest.raises(DataValidationError, match="without its original"):
        validate_judge_outputs(df)


def test_duplicated_keys_raise_but_judges_may_share_items():
    with pytest.raises(DataValidationError, match="duplicated"):
        validate_judge_outputs(pd.DataFrame({"item": ["a", "a"], "prob": [0.3, 0.4]}))
    out = validate_judge_outputs(pd.DataFrame({"item": ["a", "a"], "judge": ["g", "h"],
                                               "prob": [0.3, 0.4]}))
    assert out.judge.tolist() == ["g", "h"]


def test_items_with_zero_annotations_raise_when_aligned():
    ac = validate_annotations(_ann(["A", "B"], items=["x", "y"]))
    out = validate_judge_outputs(pd.DataFrame({"item": ["y", "z", "x"], "prob": [0.1, 0.2, 0.3]}))
    with pytest.raises(DataValidationError, match="zero annotations.*'z'"):
        align_outputs(out, ac)
    ok = validate_judge_outputs(pd.DataFrame({"item": ["y", "x", "y"], "judge": [1, 1, 2],
                                              "prob": [0.1, 0.3, 0.5]}))
    np.testing.assert_array_equal(align_outputs(ok, ac), [1, 0, 1])


def test_one_class_only_raises():
    with pytest.raises(DataValidationError, match="only one class"):
        check_both_classes(np.array([0, 0]), np.array([3, 2]), "labels")
    with pytest.raises(DataValidationError, match="only one class"):
        check_both_classes(np.array([3, 2]), np.array([3, 2]), "labels")
    check_both_classes(np.array([0, 1]), np.array([3, 2]), "labels")


def test_annotation_counts_pass_through():
    ac = AnnotationCounts(pd.Index(["a"], name="item"), np.array([[1, 0, 2]]))
    assert validate_annotations(ac) is ac
    assert len(ac.take([0])) == 1


def test_one_label_per_item_without_annotators():
    """``item, label`` is one label per item; ``item, label, n`` n labels of a value."""
    ac = validate_annotations(pd.DataFrame({"item": ["07", "7", "x"], "label": ["B", 0, "tie"]}))
    assert ac.items.tolist() == ["07", "7", "x"]
    assert ac.counts.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    counted = validate_annotations(pd.DataFrame({"item": ["a", "a", "b"], "label": ["A", "B", "B"],
                                                 "n": [3, 2, 1]}))
    assert counted.counts.tolist() == [[3, 0, 2], [0, 0, 1]]
    with pytest.raises(DataValidationError, match="gold has no annotator column but repeats an "
                                                  "item: \\['a'\\]"):
        validate_annotations(pd.DataFrame({"item": ["a", "a"], "label": ["A", "B"]}), name="gold")
    with pytest.raises(DataValidationError, match="repeats an \\(item, label\\) pair"):
        validate_annotations(pd.DataFrame({"item": ["a", "a"], "label": ["A", "A"], "n": [1, 2]}))
