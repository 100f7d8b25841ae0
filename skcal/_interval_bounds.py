"""Intervals of skcal._interval that are not the basic bootstrap.

* The finite-sample SCDL interval (``method="analytic"`` of SoftBinnedCDL).
* The cutoff error's uniform bootstrap band (:func:`_cutoff_band`).
* Kumar, Liang and Ma's debiased l2 binned ECE (:func:`_kumar_debiased_l2`).

SCDL:
Conditionally on the predictions and weights, each level ``SCDL_m`` of the
soft-binned calibration decision loss (Bairaktari, Hu, Nguyen and Ullman,
Definition 1.1) is a convex function of the outcomes that moves by at most
``w_i / W`` when outcome ``i`` changes; with Lemma 3.2 (levels increase)
and ``SCDL = inf_m max(SCDL_m, 1/m)`` this gives both ends of an interval
that holds for every ``n`` (see :func:`_scdl_ends`). No resampling: one
pass of the measure (with its per-level values) and one soft-bin pass of
the squared weights.
"""

import math

import numpy as np

from ._input import (
    check_binary_calibration_input,
    plain_binary_rows,
    plain_weights_on_scale,
)

# SCDL's search levels m = 2, 4, ..., 2**40: the union bound of its interval
_MAX_SCDL_LEVEL = 40
_SCDL_GUARANTEE = (
    "finite-sample, given the predictions and weights: both ends hold for every n "
    "(Jensen and McDiarmid on each level SCDL_m, a union bound over the 40 levels, "
    "and a bound on the plug-in's upward bias for the lower end); see _scdl_ends"
)


def _scdl_bound(measure, y_true, y_prob, sample_weight, params, confidence):
    """Finite-sample two-sided bound for SCDL; see :func:`_scdl_ends`.

    Returns ``(estimate, low, high, n_effective, target)``. Numpy input is
    read twice (the measure's own pass, with the per-level values, and one
    soft-bin pass of the squared weights); a sketch or Dask input through
    its grouped statistic and per-value squared weights.
    """
    from .metrics._scdl import scdl_core, soft_binned_cdl

    m = params.get("m")
    dask = any(type(a).__module__.startswith("dask") for a in (y_true, y_prob, sample_weight))
    if dask or callable(getattr(y_true, "grouped_statistic", None)):
        from ._interval import _binary_cells

        cells, _, target = _binary_cells(measure, y_true, y_prob, sample_weight, params)
        value, details = scdl_core(cells.G, m, details=True)
        p = np.ascontiguousarray(cells.G.values, dtype=np.float64)
        sq = cells.pos2 + cells.neg2
        total = float(cells.G.total)
    else:
        if callable(getattr(y_true, "canonical_rows", None)):
            # the boundary's canonical form: read as it is, no second check
            value, details = soft_binned_cdl(
                y_true, y_prob, sample_weight=sample_weight, m=m, return_details=True
            )
            from ._interval import _on_scale

            _, p, w = y_true.canonical_rows()
            p = np.ascontiguousarray(p, dtype=np.float64)
            w = _on_scale(np.asarray(w, dtype=np.float64))
            total = float(w.sum())
            low, high, n_eff = _scdl_finish(details, p, np.square(w), total, m, confidence)
            return float(value), low, high, n_eff, "binary"
        if y_prob is None:
            raise ValueError("y_prob is required (the predicted probabilities).")
        opts = {k: params.get(k) for k in ("pos_label", "labels")}
        opts["multiclass"] = params.get("multiclass", "top-label")
        # the measure validates; plain rows are then read as they are
        value, details = soft_binned_cdl(
            y_true, y_prob, sample_weight=sample_weight, m=m, return_details=True, **opts
        )
        rows = plain_binary_rows(
            y_true, y_prob, sample_weight, pos_label=opts["pos_label"],
            multiclass=opts["multiclass"],
        )
        w = False if rows is None else plain_weights_on_scale(rows[2])
        if w is False:
            from ._interval import _on_scale

            _, p, w = check_binary_calibration_input(
                y_true, y_prob, sample_weight, compact=True, **opts
            )
            w = _on_scale(w)
        else:
            p = rows[1]
            w = np.broadcast_to(1.0, p.shape) if w is None else w
        target = "top-label" if np.ndim(y_prob) == 2 and np.shape(y_prob)[1] > 2 else "binary"
        p = np.ascontiguousarray(p, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        total = float(w.sum())
        sq = np.square(w) if w.strides != (0,) else np.broadcast_to(float(w[0]) ** 2, p.shape)
    low, high, n_eff = _scdl_finish(details, p, sq, total, m, confidence)
    return float(value), low, high, n_eff, target


def scdl_bound_of_cells(G, sq, m, confidence):
    """:func:`_scdl_bound` of a grouped statistic ``G`` whose distinct values
    carry the squared weights ``sq`` (summed over their rows): ``(low, high)``.
    """
    from .metrics._scdl import scdl_core

    _, details = scdl_core(G, m, details=True)
    p = np.ascontiguousarray(G.values, dtype=np.float64)
    sq = np.asarray(sq, dtype=np.float64)
    low, high, _ = _scdl_finish(details, p, sq, float(G.total), m, confidence)
    return low, high


def _scdl_finish(details, p, sq, total, m, confidence):
    """The two ends of :func:`_scdl_bound` from SCDL's per-level details and
    the squared weights ``sq`` at the predictions ``p``; and ``n_eff``."""
    n_eff = total**2 / float(np.sum(sq))
    levels = np.asarray(details.levels, dtype=np.int64)
    # the bias bound at every evaluated level up to 2**16: one soft-bin pass
    # of the squared weights at the finest, the others by coarsening
    dyadic = levels[(levels & (levels - 1)) == 0]
    finest = int(min(dyadic.max(), 1 << 16)) if dyadic.size else int(levels.max())
    if m is not None:
        finest = int(m)
    bias = {
        lv: 0.5 * float(np.sqrt(np.maximum(b, 0.0)).sum()) / total
        for lv, b in _soft_sums(p, sq, finest).items()
    }
    low, high = _scdl_ends(
        dict(zip(levels.tolist(), np.asarray(details.scdl_m, float).tolist())),
        bias, n_eff, confidence, fixed=m is not None,
    )
    return low, high, n_eff


def _soft_sums(p, c, finest):
    """``{m: sum_i c_i w_j(p_i) for j = 0..m}`` at ``finest`` and every level
    reached by halving it (one soft-bin pass, then the exact coarsening)."""
    from ._kernels._binning import coarsen, soft_bin

    bins = np.zeros((finest + 1, 2))
    soft_bin(p, np.zeros(p.shape[0], np.uint8), c, bins)
    out = {finest: bins}
    m = finest
    while m % 2 == 0:
        out[m // 2] = np.empty((m // 2 + 1, 2))
        coarsen(out[m], out[m // 2])
        m //= 2
    return {k: b[:, 0] for k, b in out.items()}


def _scdl_ends(scdl_m, bias, n_eff, confidence, fixed=False):
    """``(low, high)`` of SCDL (or of ``SCDL_m``, ``fixed``) from its levels.

    Conditionally on the predictions and weights, with ``a = 1 -
    confidence``: ``SCDL_m`` is convex in the outcomes, so its expectation
    is at least its value ``SCDL_m(D)`` at the outcome law (Jensen), and it
    moves by at most ``w_i / W`` when outcome ``i`` changes (the soft-bin
    weights of a row sum to 1), so by McDiarmid it falls below its mean by
    ``t = sqrt(ln(L / (a/2)) / (2 N))`` with probability at most
    ``a / (2 L)``, ``N`` Kish's effective size, ``L`` the levels of the
    union bound. As ``SCDL = inf_m max(SCDL_m, 1/m)``,
    ``SCDL(D) <= max(SCDL_m + t, 1/m)`` at every level at once: the upper
    end is the smallest of these. Downwards, the plug-in's mean exceeds
    ``SCDL_m(D)`` by at most ``sum_j sd(e_j) <= bias_m`` (``(x + e)_+ - x_+
    <= |e|`` bin by bin) and ``SCDL(D) >= min(1/m, SCDL_m(D))`` (levels
    increase, Lemma 3.2), so the lower end is the largest
    ``min(1/m, SCDL_m - bias_m - t)``. Both hold for every ``n``.
    """
    a = 1.0 - confidence
    n_levels = 1 if fixed else _MAX_SCDL_LEVEL
    t = math.sqrt(math.log(n_levels / (a / 2)) / (2 * n_eff))
    if fixed:
        (m, value), = scdl_m.items()
        return max(value - bias.get(m, math.inf) - t, 0.0), value + t
    high, low = 0.5, 0.0
    for m, value in scdl_m.items():
        if m & (m - 1) or m < 2:
            continue
        high = min(high, max(value + t, 1.0 / m))
        if m in bias:
            low = max(low, min(1.0 / m, value - bias[m] - t))
    return low, max(high, low)


def _cutoff_band(work, estimate, confidence, R, rng):
    """``(low, high, debiased)``: the cutoff error's uniform bootstrap band.

    With ``S(t)`` the normalised residual sum of the predictions up to
    ``t``, the cutoff error is the largest increment ``sup_{s<t} |S(t) -
    S(s)|`` of ``S``, a seminorm; by the triangle inequality it differs
    between the population and the data by at most the largest increment
    of the *difference* ``S_D - S_data``. Its ``confidence`` quantile ``q``
    is bootstrapped (the empirical-process bootstrap of ``S``, consistent
    on the class of intervals; Bayesian bootstrap on the cells) and the
    interval is ``[T - q, T + q]`` clipped to ``[0, 1]``: it does not rely
    on the supremum being attained by one well-separated interval (where
    near-ties, as on a tempered model, made the bootstrap of ``T`` itself
    under-cover), at the price of some width.
    """
    sup, draws, center = _cutoff_sup_draws(work, rng, R)
    q = float(np.quantile(sup, confidence))
    debiased = float(min(max(estimate - (draws.mean() - center), 0.0), 1.0))
    return max(estimate - q, 0.0), min(estimate + q, 1.0), debiased


def _cutoff_sup_draws(work, rng, R):
    """``(sup, draws, center)``: per resample, the largest increment of the
    resampled process's deviation, and the resampled cutoff; the cells' cutoff."""
    from ._interval import _vector_draws

    pos, W = _vector_draws(work, rng, R)
    v = work.G.values
    W0 = work.pos + work.neg
    base = (work.pos - W0 * v) / W0.sum()
    S0 = np.cumsum(base)
    S = np.cumsum((pos - W * v) / W.sum(axis=1, keepdims=True), axis=1)

    def increment(x):
        return np.maximum(x.max(axis=-1), 0.0) - np.minimum(x.min(axis=-1), 0.0)

    return increment(S - S0), increment(S), float(increment(S0))


def _kumar_debiased_l2(cells, measure):
    """The debiased l2 binned ECE of Kumar, Liang and Ma, *Verified Uncertainty Calibration* (2019).

    Per bin ``b`` with mass share ``pi_b``, mean outcome ``y_b``, mean
    prediction ``p_b`` and (effective) count ``n_b``, ``(y_b - p_b)**2 -
    y_b (1 - y_b) / (n_b - 1)`` is unbiased for the squared bias given the
    predictions; the estimate is the square root of their ``pi``-weighted
    sum, clipped at 0 (bins with one row are skipped).
    """
    G = cells.G
    # the bins of binned_ece (skcal.metrics._ece), recomputed here
    if measure.strategy == "uniform":
        edges = np.arange(measure.n_bins + 1) / measure.n_bins
        b = np.searchsorted(edges[1:-1], G.values, side="right")
    else:
        before = np.concatenate([[0.0], np.cumsum(G.weights)[:-1]])
        b = np.minimum(
            np.floor(measure.n_bins * before / G.total).astype(np.intp), measure.n_bins - 1
        )
    W = np.bincount(b, G.weights, measure.n_bins)
    P = np.bincount(b, G.positives, measure.n_bins)
    V = np.bincount(b, G.values * G.weights, measure.n_bins)
    S2 = np.bincount(b, cells.pos2 + cells.neg2, measure.n_bins)
    keep = W > 0
    W, P, V, S2 = W[keep], P[keep], V[keep], S2[keep]
    n_b = W**2 / S2
    ybar, pbar = P / W, V / W
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (ybar - pbar) ** 2 - np.where(n_b > 1, ybar * (1 - ybar) / (n_b - 1), 0.0)
    return float(np.sqrt(max(float(np.sum(W * term)) / G.total, 0.0)))


def _plain_ece_cells(y_true, y_prob, sample_weight, params, layout):
    """The ECE layout's cells of plain, already validated rows, or None.

    The cells are ``n_cells`` equal bins (the measure's bin edges are among
    theirs); ``checked_uniform_bin_sums`` gives per cell the weight and the
    residual ``sum w (y - p)``, and with the outcomes read as 1 the
    prediction sum: two passes (four with weights, for the squares).
    """

    rows = plain_binary_rows(
        y_true, y_prob, sample_weight, pos_label=params.get("pos_label"),
        multiclass=params.get("multiclass", "top-label"),
    )
    if rows is None:
        return None
    return _ece_cells(*rows, layout)


def _ece_cells(y, p, w, layout):
    """:func:`_plain_ece_cells` of plain rows ``(y, p, w)`` (``w`` None: unit weights)."""
    from ._kernels._binning import checked_uniform_bin_sums

    w = plain_weights_on_scale(w)
    if w is False:
        return None
    edges = np.arange(layout.n_cells + 1) / layout.n_cells
    ones = np.ones(p.shape[0], np.uint8)

    def cell_sums(weights):
        """Per cell: weight, positive weight, weight times prediction."""
        a, b = np.zeros((layout.n_cells, 2)), np.zeros((layout.n_cells, 2))
        if not (
            checked_uniform_bin_sums(p, y, weights, edges, a)
            and checked_uniform_bin_sums(p, ones, weights, edges, b)
        ):
            return None
        pw = a[:, 0] - b[:, 1]
        # (rounding of the differences must not leave the cell's mass)
        return a[:, 0], np.clip(a[:, 1] + pw, 0.0, a[:, 0]), pw

    first = cell_sums(w)
    if first is None:
        return None
    W, pos, vw = first
    if w is None:  # counts: exact integers (the difference above is rounded)
        pos = np.rint(pos)
    W2, pos2, _ = (W, pos, None) if w is None else cell_sums(np.square(w))
    # the differences above are exact up to rounding: an outcome's mass
    # below 1e-9 of its cell's is that rounding (weights are on the scale
    # of the largest, in [1, 2)), and is 0, so cells match a sketch's
    no_pos = pos <= 1e-9 * W
    no_neg = W - pos <= 1e-9 * W
    pos = np.where(no_pos, 0.0, np.where(no_neg, W, pos))
    pos2 = np.where(no_pos, 0.0, np.where(no_neg, W2, pos2))
    below = np.nextafter(edges[1:], 0.0)
    below[-1] = 1.0
    from ._interval import _Cells

    return _Cells.from_sums(vw, W - pos, pos, W2 - pos2, pos2, bounds=(edges[:-1], below))
