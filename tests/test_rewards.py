"""Rewards and training data (Li, Li, Huang et al. 2025, arXiv:2510.00263, Section 3):
the parser g (a table of tricky strings and hypothesis fuzzing), the piecewise Brier
(eq. 1) and clipped log (eq. 2) rewards against hand values, Proposition 1 as
properties, swap augmentation, SFT targets and the parsability report."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesjudge.data import DataValidationError
from bayesjudge.rewards import (
    UNPARSABLE,
    brier_reward,
    format_target,
    log_reward,
    parsability_report,
    parse_probability,
    sft_targets,
    swap_augment,
)

T = "<prob_rb_better>{}</prob_rb_better>"

# ---------------------------------------------------------------------- parser
PARSE_TABLE = [
    (T.format("0.85"), 0.85),
    (T.format(" 0.85\n"), 0.85),  # whitespace inside the tag
    ("<think>A is vague; B cites a source.</think>" + T.format("0.7"), 0.7),  # CoT ignored
    ("Sure!\n" + T.format("1.0") + "\nDone.", 1.0),
    (T.format("1"), 1.0),
    (T.format("0"), 0.0),
    (T.format(".5"), 0.5),
    (T.format("0."), 0.0),
    (T.format("1.000"), 1.0),
    (T.format("000.25"), 0.25),
    (T.format("1.0000001"), UNPARSABLE),  # above 1: not clipped
    (T.format("85"), UNPARSABLE),
    (T.format("85%"), UNPARSABLE),  # percentages are not the requested format
    (T.format("-0.0"), UNPARSABLE),  # no signs
    (T.format("+0.5"), UNPARSABLE),
    (T.format("5e-1"), UNPARSABLE),  # no exponents
    (T.format("0,5"), UNPARSABLE),  # no decimal comma
    (T.format("1/2"), UNPARSABLE),
    (T.format("nan"), UNPARSABLE),
    (T.format("inf"), UNPARSABLE),
    (T.format("0.5 (B is better)"), UNPARSABLE),
    (T.format(""), UNPARSABLE),
    (T.format("٠.٥"), UNPARSABLE),  # Arabic-Indic digits: ASCII only
    (T.format("0.3") + T.format("0.7"), UNPARSABLE),  # two answers
    (T.format("0.3") + "</prob_rb_better>", UNPARSABLE),
    ("</prob_rb_better>0.3<prob_rb_better>", UNPARSABLE),  # tags in the wrong order
    ("<prob_rb_better>0.3", UNPARSABLE),  # truncated generation
    ("<PROB_RB_BETTER>0.3</PROB_RB_BETTER>", UNPARSABLE),  # tags as the prompt spells them
    ("<prob_rb_better>0.3</prob_rb_better >", UNPARSABLE),
    ("The probability is 0.8", UNPARSABLE),
    ("", UNPARSABLE),
    (UNPARSABLE, UNPARSABLE),
    (None, UNPARSABLE),
    (0.5, UNPARSABLE),  # not text
    (b"<prob_rb_better>0.5</prob_rb_better>", UNPARSABLE),
]


@pytest.mark.parametrize("text, expected", PARSE_TABLE)
def test_parser_table(text, expected):
    assert parse_probability(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary(), st.none(), st.integers(), st.floats(),
                 st.lists(st.text(), max_size=3)))
def test_parser_never_raises(anything):
    out = parse_probability(anything)
    assert out == UNPARSABLE or (isinstance(out, float) and 0.0 <= out <= 1.0)


TAGLESS = st.text().filter(lambda s: "<prob_rb_better>" not in s and "</prob_rb_better>" not in s)


@settings(max_examples=200, deadline=None)
@given(TAGLESS, TAGLESS, st.text(alphabet="0123456789.<>/ abc%-e", max_size=12))
def test_parser_on_tag_soup(prefix, suffix, body):
    """Any body between one tag pair, amid arbitrary text, parses as the rules say."""
    out = parse_probability(prefix + T.format(body) + suffix)
    stripped = body.strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", stripped) and float(stripped) <= 1:
        assert out == float(stripped)
    else:
        assert out == UNPARSABLE


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1), st.integers(1, 6), TAGLESS)
def test_target_round_trips_through_the_parser(p, decimals, think):
    out = parse_probability("<think>" + think + "</think>" + format_target(p, decimals))
    assert out == pytest.approx(p, abs=0.5 * 10 ** -decimals + 1e-12)


# --------------------------------------------------------------------- rewards
def test_brier_reward_hand_values():
    # 1 - (0.8 - 1)^2 = 0.96 ; 1 - (0.8 - 0)^2 = 0.36 ; unparsable -> 0 (eq. 1)
    assert brier_reward(0.8, 1) == pytest.approx(0.96)
    assert brier_reward(0.8, 0) == pytest.approx(0.36)
    assert brier_reward(0.8, "A") == pytest.approx(0.36)
    assert brier_reward(UNPARSABLE, 1) == 0.0
    assert brier_reward("I think B", 0) == 0.0
    mixed = brier_reward([T.format("0.25"), 0.25, UNPARSABLE, "oops"], [1, 1, 1, 0])
    assert mixed.tolist() == pytest.approx([1 - 0.75 ** 2, 1 - 0.75 ** 2, 0.0, 0.0])


def test_log_reward_hand_values():
    # y log p' + (1 - y) log(1 - p'), p' = clip(p, eps, 1 - eps); unparsable -> log eps (eq. 2)
    assert log_reward(0.8, 1) == pytest.approx(np.log(0.8))
    assert log_reward(0.8, 0) == pytest.approx(np.log(0.2))
    assert log_reward(1.0, 0) == pytest.approx(np.log(1e-3))  # clipped, not -inf
    assert log_reward(0.0, 0, epsilon=0.1) == pytest.approx(np.log(0.9))
    assert log_reward(UNPARSABLE, 1, epsilon=0.01) == pytest.approx(np.log(0.01))
    grid = log_reward(np.array([[0.5], [0.9]]), np.array([0, 1]))
    assert grid.shape == (2, 2)
    assert grid == pytest.approx(np.log([[0.5, 0.5], [0.1, 0.9]]))


@pytest.mark.parametrize("bad", [np.nan, 1.5, -0.1, None, True])
def test_rewards_reject_bad_parsed_values(bad):
    with pytest.raises(DataValidationError, match="`p`"):
        brier_reward([0.5, bad], [1, 1])


def test_reward_argument_checks():
    with pytest.raises(DataValidationError, match="epsilon"):
        log_reward(0.5, 1, epsilon=0.5)
    with pytest.raises(DataValidationError, match="label"):
        brier_reward(0.5, "tie")


# ----------------------------------------------------------- Proposition 1
def expected(reward, q, p_star, **kw):
    """E_{Y ~ Bernoulli(p*)} R(q; Y), computed from the two branches."""
    return p_star * reward(q, 1, **kw) + (1 - p_star) * reward(q, 0, **kw)


probs = st.floats(0, 1, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(probs, probs)
def test_brier_truthful_report_is_optimal(p_star, q):
    """E R(q) = E R(p*) - (q - p*)^2 exactly: maximised by q = p* (Prop. 1a)."""
    gap = expected(brier_reward, p_star, p_star) - expected(brier_reward, q, p_star)
    assert gap == pytest.approx((q - p_star) ** 2, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(probs, probs, st.sampled_from([1e-3, 0.05, 0.2]))
def test_log_clipped_truthful_report_is_optimal(p_star, q, eps):
    """E R(q) <= E R(clip(p*)), strictly when clip(q) != clip(p*) (Prop. 1b).

    The gap is the Bernoulli KL divergence between p* and clip(q) minus that between
    p* and clip(p*), which is positive by the strict concavity of phi.
    """
    best = expected(log_reward, p_star, p_star, epsilon=eps)
    got = expected(log_reward, q, p_star, epsilon=eps)
    assert got <= best + 1e-12
    cq, cp = np.clip(q, eps, 1 - eps), np.clip(p_star, eps, 1 - eps)
    if abs(cq - cp) > 1e-3:
        assert got < best - 1e-9


reports = st.lists(st.tuples(probs, st.floats(0.01, 1)), min_size=2, max_size=6)


@settings(max_examples=200, deadline=None)
@given(probs, reports)
def test_randomness_in_the_report_lowers_the_brier_reward(p_star, support):
    """A random report Q (finite support, weights w) earns E_Q E_Y R(Q) = E_Y R(E Q) - Var Q.

    So any non-degenerate Q earns strictly less than its own mean reported
    deterministically, and less than the truthful p*.
    """
    q = np.array([s[0] for s in support])
    w = np.array([s[1] for s in support])
    w = w / w.sum()
    mixed = float(np.sum(w * expected(brier_reward, q, p_star)))
    # a weighted mean of reports all equal to 1 can round to 1 + 2e-16, which the reward
    # rightly refuses as a probability: clip the test's own rounding
    mean_q = float(np.clip(np.sum(w * q), 0.0, 1.0))
    var_q = float(np.sum(w * (q - mean_q) ** 2))
    assert mixed == pytest.approx(expected(brier_reward, mean_q, p_star) - var_q, abs=1e-12)
    assert mixed <= expected(brier_reward, p_star, p_star) + 1e-12


@settings(max_examples=200, deadline=None)
@given(probs, reports, st.sampled_from([1e-3, 0.05]))
def test_randomness_in_the_report_lowers_the_log_reward(p_star, support, eps):
    """Jensen: E_Q E_Y R(Q) <= E_Y R(E[clip Q]), strictly when clip(Q) is not constant."""
    q = np.array([s[0] for s in support])
    w = np.array([s[1] for s in support])
    w = w / w.sum()
    clipped = np.clip(q, eps, 1 - eps)
    mixed = float(np.sum(w * expected(log_reward, q, p_star, epsilon=eps)))
    deterministic = expected(log_reward, float(np.sum(w * clipped)), p_star, epsilon=eps)
    assert mixed <= deterministic + 1e-12
    if np.sum(w * (clipped - np.sum(w * clipped)) ** 2) > 1e-4:
        assert mixed < deterministic


@settings(max_examples=100, deadline=None)
@given(probs, st.floats(0, 0.99))
def test_unparsable_mass_lowers_the_reward(p_star, s):
    """Parsing with probability s < 1 earns s E R(p*) + (1 - s) R(perp) < E R(p*)."""
    for reward in (brier_reward, log_reward):
        truthful = expected(reward, p_star, p_star)
        partial = s * truthful + (1 - s) * expected(reward, UNPARSABLE, p_star)
        assert partial < truthful


# ------------------------------------------------------- data preparation
def test_swap_augment():
    data = pd.DataFrame({
        "item": ["q1", "q2", "q3"],
        "response_a": ["short", "long", "x"],
        "response_b": ["long", "short", "y"],
        "label": ["B", "tie", "A"],
        "p_hat": [1.0, 0.5, 0.25],
        "prob": [0.9, 0.4, 0.2],
    })
    out = swap_augment(data)
    assert len(out) == 6 and out["swapped"].tolist() == [False] * 3 + [True] * 3
    sw = out[out.swapped].reset_index(drop=True)
    assert sw["item"].tolist() == ["q1", "q2", "q3"]
    assert sw["response_a"].tolist() == ["long", "short", "y"]
    assert sw["label"].tolist() == ["A", "tie", "B"]
    assert sw["p_hat"].tolist() == pytest.approx([0.0, 0.5, 0.75])
    assert sw["prob"].tolist() == pytest.approx([0.1, 0.6, 0.8])
    # swapping the swapped copy gives back the original
    back = swap_augment(sw.drop(columns="swapped"))
    pd.testing.assert_frame_equal(back[back.swapped].drop(columns="swapped")
                                  .reset_index(drop=True), data, check_dtype=False)
    numeric = swap_augment(pd.DataFrame({"item": [1, 2], "label": [0, 1]}))
    assert numeric["label"].tolist() == [0, 1, 1, 0]


def test_swap_augment_exchanges_judge_outputs_of_both_orders():
    data = pd.DataFrame({"item": ["a"], "prob": [0.7], "prob_swapped": [0.4]})
    sw = swap_augment(data).iloc[1]
    assert (sw["prob"], sw["prob_swapped"]) == (0.4, 0.7)
    with pytest.raises(DataValidationError, match="both"):
        swap_augment(pd.DataFrame({"item": ["a"], "prob": [0.7], "prob_swapped": [np.nan]}))
    with pytest.raises(DataValidationError, match="label"):
        swap_augment(pd.DataFrame({"item": ["a"], "label": ["C"]}))
    with pytest.raises(DataValidationError, match="swapped"):
        swap_augment(swap_augment(data))
    with pytest.raises(DataValidationError, match="original"):
        swap_augment(pd.DataFrame({"item": ["a"], "prob_swapped": [0.4]}))


def test_sft_targets():
    ann = pd.DataFrame({
        "item": ["007", "007", "007", "7", "7"],
        "annotator": ["u", "v", "w", "u", "v"],
        "label": ["B", "B", "A", "tie", 1],
    })
    out = sft_targets(ann)
    assert out["item"].tolist() == ["007", "7"]  # ids exactly as given
    assert out["m"].tolist() == [3, 2]
    assert out["p_hat"].tolist() == pytest.approx([2 / 3, 0.75])  # tie = half a vote
    assert out["target"].tolist() == [T.format("0.67"), T.format("0.75")]
    assert [parse_probability(t) for t in out["target"]] == pytest.approx([0.67, 0.75])


def test_parsability_report_counts_and_keeps_every_failure():
    texts = [T.format("0.2"), "no answer", T.format("2"), T.format("0.9"), None]
    r = parsability_report(texts, n_examples=2)
    assert (r.n_total, r.n_parsable, r.n_unparsable) == (5, 2, 3)
    assert r.parsable_rate == pytest.approx(0.4)
    assert r.unparsable_positions.tolist() == [1, 2, 4]
    assert r.examples == ((1, "no answer"), (2, T.format("2")))
