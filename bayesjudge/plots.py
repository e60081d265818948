"""Figures. Every function returns ``(fig, ax)``, takes keyword-only options and never shows.

:func:`plot_decision_map` is Figure 1 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019: the decision of a fitted aggregator
for every split of n votes into A, B and tie votes, optionally marking where it
departs from majority vote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from bayesjudge.models.davidson.aggregator import DavidsonAggregator

__all__ = ["DECISION_COLORS", "plot_decision_map"]

#: Colours of the decisions -1 (B better), 0 (tie), +1 (A better).
DECISION_COLORS = ("#d95f02", "#bdbdbd", "#1b9e77")
_DECISION_LABELS = ("B better (-1)", "tie (0)", "A better (+1)")


def plot_decision_map(
    model: "DavidsonAggregator",
    n: int,
    *,
    ax: "Axes | None" = None,
    mark_majority: bool = True,
    colors: tuple[str, str, str] = DECISION_COLORS,
    title: str | None = None,
) -> tuple["Figure", "Axes"]:
    """Decision for every split of ``n`` votes (Figure 1 of the Davidson paper).

    Cell (a, b) holds the decision for a votes for A (+1), b votes for B (-1)
    and n - a - b tie votes; cells with a + b > n are empty.

    Parameters
    ----------
    model : DavidsonAggregator
        A fitted aggregator (anything with ``decision_map(n)``).
    n : int
        Votes per item.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made if omitted.
    mark_majority : bool, default True
        Put a dot on the cells where majority vote (ties in the counts -> 0)
        decides differently.
    colors : 3 colours
        For the decisions -1, 0, +1.
    title : str, optional
        Default: ``"Decision map, n = {n}"`` with the fitted parameters.

    Returns
    -------
    (fig, ax)
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    from bayesjudge.baselines import majority_vote

    table = model.decision_map(n)
    grid = np.full((n + 1, n + 1), np.nan)  # rows: b (B votes), columns: a (A votes)
    a, b = table["votes_a"].to_numpy(), table["votes_b"].to_numpy()
    grid[b, a] = table["decision"].to_numpy()
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.2, 4.6))
    else:
        fig = ax.figure
    cmap = ListedColormap(list(colors))
    norm = BoundaryNorm([-1.5, -0.5, 0.5, 1.5], cmap.N)
    edges = np.arange(n + 2) - 0.5
    ax.pcolormesh(edges, edges, np.ma.masked_invalid(grid), cmap=cmap, norm=norm,
                  edgecolors="white", linewidth=0.3)
    handles = [Patch(color=c, label=lab) for c, lab in zip(colors, _DECISION_LABELS)]
    if mark_majority:
        tie = table["votes_tie"].to_numpy()
        mv = majority_vote(a, tie, b, tie_break="tie")
        diff = mv != table["decision"].to_numpy()
        if diff.any():
            ax.plot(a[diff], b[diff], "k.", markersize=3)
        handles.append(plt.Line2D([], [], color="k", marker=".", linestyle="",
                                  label="differs from majority vote"))
    ax.set_xlim(-0.5, n + 0.5)
    ax.set_ylim(-0.5, n + 0.5)
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("# votes for A")
    ax.set_ylabel("# votes for B")
    if title is None:
        params = getattr(model, "map_", None) or {}
        shown = ", ".join(f"{k} = {float(np.asarray(v)):.2f}" for k, v in params.items()
                          if np.ndim(v) == 0)
        title = f"Decision map, n = {n}" + (f"\n({shown}, MAP)" if shown else "")
    ax.set_title(title, fontsize=10)
    ax.legend(handles=handles, loc="upper right", fontsize=8, frameon=True)
    return fig, ax
