"""Figures return (fig, ax), draw on a given axis and never show."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bayesjudge.plots import plot_decision_map  # noqa: E402


def test_decision_map_draws_every_vote_split(davidson_map):
    fig, ax = plot_decision_map(davidson_map, 20)
    mesh = ax.collections[0]
    values = np.ma.masked_invalid(mesh.get_array())
    assert values.count() == 21 * 22 // 2  # cells with a + b <= 20
    assert set(np.unique(values.compressed())) <= {-1.0, 0.0, 1.0}
    assert "n = 20" in ax.get_title()
    plt.close(fig)


def test_decision_map_uses_given_axis(davidson_map):
    fig, axes = plt.subplots(1, 2)
    out_fig, out_ax = plot_decision_map(davidson_map, 4, ax=axes[1], mark_majority=False, title="t")
    assert out_fig is fig and out_ax is axes[1] and out_ax.get_title() == "t"
    assert not axes[0].collections
    plt.close(fig)
