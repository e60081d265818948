"""MCMC diagnostics of many parameters at once (numpy): ArviZ's estimators, vectorised.

ArviZ (``arviz_stats``) computes these one scalar parameter at a time in a Python
loop (a rank transform, an FFT and Geyer's sequences per element): ~5 ms a
parameter on 4 x 1000 draws, 8.4 s of a BT-sigma NUTS fit on SummEval (1,600
parameters). The same estimators on a (parameters, chains, draws) block:

- split chains: each chain's first and last ``draws // 2`` draws become two chains
  (M = 2 x chains chains of N = draws // 2 draws);
- rank normalisation (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021, eq. 14):
  z = Phi^-1((r - 3/8) / (M N + 1/4)), r the average rank among all M N draws;
- R-hat = sqrt((B / W + N - 1) / N), B = N var(chain means), W = mean chain variance;
  rank R-hat = max(R-hat of z, R-hat of the z of |x - median(x)|);
- bulk ESS = M N / tau of z, tau = -1 + 2 sum of the autocorrelation pairs
  rho_2m + rho_2m+1 (Geyer's initial positive sequence, cut at the first pair whose
  sum is not positive, the cut pair's even term kept when positive, made monotone:
  each pair sum the running minimum), tau at least 1 / log10(M N).

The columns of ``az.summary(kind="diagnostics")`` (:func:`summary_diagnostics`) add the
tail ESS (the ESS of the indicators x <= q_p for p and 1 - p, q the linear-interpolated
quantile of all draws, the smaller of the two), the ESS of the mean (the same estimate
on the split draws themselves), mcse_mean = sd / sqrt(ESS_mean) and mcse_sd =
sqrt(var(x_c^2) / ESS(x_c^2) / E[x_c^2] / 4), x_c = x - mean.

Every step follows ``arviz_stats.base.diagnostics`` (the cut, the even term, the floor),
so the numbers equal ArviZ's to rounding (tested against ``az.rhat`` / ``az.ess`` on
autocorrelated, tied, odd-length and real posterior draws). Parameters with a
non-finite draw, or fewer than 2 chains (R-hat) or 4 draws, are not handled here:
:func:`bayesjudge.engine.diagnostics.check_convergence` passes them to ArviZ.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.fftpack import next_fast_len

#: Elements (parameters x chains x draws) handled at once: ~32 MB per float array.
BLOCK = 4_000_000


def split_chains(x: np.ndarray) -> np.ndarray:
    """(P, C, D) -> (P, 2C, D // 2): first halves of every chain, then last halves."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half:]], axis=1)


def z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise each parameter's (M, N) draws together (average ranks, Blom 3/8).

    ``scipy.special.ndtri`` is what ``scipy.stats.norm.ppf`` evaluates (without its
    argument checks, ~4x slower on these arrays); same numbers.
    """
    p, m, n = x.shape
    ranks = average_ranks(x.reshape(p, m * n))
    return special.ndtri((ranks - 3 / 8) / (m * n + 1 / 4)).reshape(p, m, n)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n along each row, ties sharing their average (``rankdata(method="average")``).

    One argsort per row and a pass over the sorted values (scipy's ``rankdata`` with
    ``axis=`` takes ~8x longer on (400, 8000) draws).
    """
    p, n = x.shape
    order = np.argsort(x, axis=1)
    xs = np.take_along_axis(x, order, axis=1)
    new = np.ones((p, n), bool)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]  # a run of equal values starts here
    if new.all():  # no ties (continuous draws): the sorted positions are the ranks
        mean_rank = np.broadcast_to(np.arange(1.0, n + 1), (p, n))
    else:
        group = np.cumsum(new.ravel()) - 1  # runs numbered across the rows
        start = np.flatnonzero(new.ravel()) % n  # a run's first position in its row
        size = np.bincount(group)
        # ranks start + 1 .. start + size, averaged
        mean_rank = (start + (size + 1) / 2.0)[group].reshape(p, n)
    ranks = np.empty((p, n))
    np.put_along_axis(ranks, order, mean_rank, axis=1)
    return ranks


def _rhat(z: np.ndarray) -> np.ndarray:
    n = z.shape[2]
    between = n * np.var(z.mean(axis=2), axis=1, ddof=1)
    within = np.mean(np.var(z, axis=2, ddof=1), axis=1)
    return np.sqrt((between / within + n - 1) / n)


def rank_rhat_ess_bulk(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat and bulk ESS per parameter of (P, C, D) draws.

    C >= 2 and D >= 4, every draw finite (the caller checks). Both use the same z of
    the split draws; R-hat is the larger of the bulk's and the folded draws'.
    """
    rhat, ess = np.empty(x.shape[0]), np.empty(x.shape[0])
    for sl in _blocks(x):
        split = split_chains(x[sl])
        with np.errstate(divide="ignore", invalid="ignore"):  # a constant: 0/0, NaN
            z = z_scale(split)
            bulk = _rhat(z)
            ess[sl] = _ess(z)
            med = np.median(split.reshape(split.shape[0], -1), axis=1)
            tail = _rhat(z_scale(np.abs(split - med[:, None, None])))
        # ArviZ's max(bulk, tail): NaN bulk stays NaN, a NaN tail is ignored
        rhat[sl] = np.where(np.isnan(bulk) | ~(tail > bulk), bulk, tail)
    return rhat, ess


def summary_diagnostics(x: np.ndarray, tail_prob: float) -> dict[str, np.ndarray]:
    """``ess_bulk``, ``ess_tail``, ``r_hat``, ``mcse_mean``, ``mcse_sd`` of (P, C, D) draws.

    As ``az.summary(kind="diagnostics")`` computes them (``tail_prob``: ArviZ's
    ``stats.ci_prob``, the tail ESS taken at it and at 1 - it). C >= 2, D >= 4, every
    draw finite (the caller checks).
    """
    out = {k: np.empty(x.shape[0]) for k in ("ess_bulk", "ess_tail", "r_hat", "mcse_mean",
                                             "mcse_sd")}
    low, high = sorted((tail_prob, 1 - tail_prob))
    for sl in _blocks(x):
        block = x[sl]
        out["r_hat"][sl], out["ess_bulk"][sl] = rank_rhat_ess_bulk(block)
        flat = block.reshape(block.shape[0], -1)
        with np.errstate(divide="ignore", invalid="ignore"):  # constants: ArviZ's NaN / size
            q = np.quantile(flat, [low, high], axis=1)  # (2, P), linear as ArviZ
            tails = [_ess(split_chains((block <= qp[:, None, None]).astype(float)))
                     for qp in q]
            out["ess_tail"][sl] = np.minimum(*tails)
            out["mcse_mean"][sl] = mcse_mean(block)
            centred_sq = (block - flat.mean(axis=1)[:, None, None]) ** 2
            evar = centred_sq.reshape(len(flat), -1).mean(axis=1)
            varvar = ((centred_sq ** 2).reshape(len(flat), -1).mean(axis=1) - evar ** 2)
            varvar = varvar / _ess(split_chains(centred_sq))
            out["mcse_sd"][sl] = np.sqrt(varvar / evar / 4)
    return out


def mcse_mean(x: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of each parameter's posterior mean from (P, C, D) draws.

    ArviZ's ``mcse_mean``: sd / sqrt(ESS of the mean), the ESS on the split chains
    (0 for a parameter that does not vary; NaN, as ArviZ, with fewer than 4 draws a chain).
    """
    if x.shape[2] < 4:
        return np.full(x.shape[0], np.nan)
    flat = x.reshape(x.shape[0], -1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant: 0 / 0 inside _ess
        return np.std(flat, axis=1, ddof=1) / np.sqrt(_ess(split_chains(x)))


def _ess(z: np.ndarray) -> np.ndarray:
    """Geyer's initial monotone sequence estimate, vectorised (``_ess`` of arviz_stats)."""
    p, m, n = z.shape
    total = m * n
    size = next_fast_len(2 * n)
    centred = z - z.mean(axis=2, keepdims=True)
    spec = np.fft.rfft(centred, n=size, axis=2)
    spec *= np.conjugate(spec)
    acov = np.fft.irfft(spec, n=size, axis=2)[:, :, :n] / n  # (P, M, N), lag last
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + np.var(z.mean(axis=2), axis=1, ddof=1)
    rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    rho[:, 0] = 1.0
    # pairs (rho_2k, rho_2k+1); ArviZ computes pair k >= 1 while 2k - 1 < n - 3
    last = max(0, (n - 3) // 2)
    n_pairs = last + 1
    even = rho[:, 0:2 * n_pairs:2]
    odd = rho[:, 1:2 * n_pairs:2]
    sums = even + odd  # (P, n_pairs); every pair index exists since 2 last + 1 < n
    # the last pair computed: the first whose sum is not positive, else the last allowed
    stop = sums <= 0
    stop[:, last] = True
    end = np.argmax(stop, axis=1)
    rows = np.arange(p)
    # pairs 0 .. end - 1 enter tau as their running minimum (the monotone sequence)
    running = np.minimum.accumulate(sums, axis=1)
    kept = np.arange(n_pairs)[None, :] < end[:, None]
    tau = -1.0 + 2.0 * np.sum(np.where(kept, running, 0.0), axis=1)
    # pair `end`'s even term: kept if positive, or if its pair was stored (sum >= 0)
    last_even = even[rows, end]
    stored = (end == 0) | (sums[rows, end] >= 0)
    tau = tau + np.where((last_even > 0) | stored, last_even, 0.0)
    tau = np.maximum(tau, 1 / np.log10(total))
    ess = total / tau
    # ArviZ returns the number of draws for a parameter that does not vary
    flat = z.reshape(p, -1)
    constant = (flat.max(axis=1) - flat.min(axis=1)) < np.finfo(float).resolution
    ess = np.where(constant, float(total), ess)
    return np.where(np.isnan(rho).any(axis=1) & ~constant, np.nan, ess)


def _blocks(x: np.ndarray):
    step = max(1, BLOCK // max(1, x.shape[1] * x.shape[2]))
    for start in range(0, x.shape[0], step):
        yield slice(start, start + step)
