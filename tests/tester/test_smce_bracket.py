"""The smCE tester's bracketed null draws (skcal.tester._smcebound).

The kernel ``smce_null_bracket`` against numpy and the linear program of
``reference_smce.py`` (same outcomes as ``smce_null_draw``, the grouped smCE,
the bound, and the bound holding), and the tester with brackets against the
tester with every draw exact: the same decisions, thresholds, p-values and
null statistics, bit for bit.
"""

import math
import pickle

import numpy as np
import pytest

from skcal._kernels import _flow
from skcal._kernels._flow import (
    smce_null_bracket,
    smce_null_bracket_counts,
    smce_null_draw,
    smce_null_draw_counts,
    smce_one_side,
)
from skcal.tester import CalibrationTester, _smcebound
from skcal.tester._smcebound import SmceNull, _groups

from reference_smce import smce_linprog


def _values(rng, K):
    """``K`` distinct sorted predictions, with 0 and 1 and near-ties at times."""
    kind = rng.integers(4)
    if kind == 0:
        v = rng.random(K)
    elif kind == 1:  # crowded near one point
        v = np.clip(0.3 + 1e-3 * rng.standard_normal(K), 0, 1)
    elif kind == 2:  # the ends included
        v = np.concatenate([[0.0, 1.0], rng.random(max(K - 2, 0))])[:K]
    else:  # a grid of tenths and a few others
        v = np.concatenate([np.linspace(0, 1, 11), rng.random(K)])[:K]
    v = np.unique(v)
    return v


def _random_ends(rng, K):
    cuts = np.sort(rng.choice(np.arange(1, K), size=rng.integers(0, K), replace=False)) \
        if K > 1 else np.empty(0, dtype=np.intp)
    return np.append(cuts, K).astype(np.intp)


def _means(values, ends):
    starts = np.concatenate(([0], ends[:-1]))
    return np.add.reduceat(values, starts) / np.diff(np.append(starts, values.shape[0]))


def _case(rng, max_k):
    """Predictions, random groups of them, their means, a weight and a seed."""
    values = _values(rng, int(rng.integers(1, max_k)))
    ends = _random_ends(rng, values.shape[0])
    scale = float(rng.choice([1.0, 0.25, 2.0, 3.0]))
    return values, ends, _means(values, ends), scale, int(rng.integers(2**31))


def _bracket(values, bit_generator, scale, ends, means):
    G = ends.shape[0]
    positives = np.empty(G)
    value, bound = smce_null_bracket(
        values, bit_generator, scale, values.shape[0] * scale, ends, means,
        positives, np.empty(2 * G),
    )
    return value, bound, positives


@pytest.mark.parametrize("generator", [np.random.PCG64, np.random.Philox])
@pytest.mark.parametrize("inline", [True, False])
def test_bracket_draws_what_the_exact_draw_draws(generator, inline):
    # the same uniforms as Generator.random(K), the generator left alike,
    # positives and bound as numpy computes them
    rng = np.random.default_rng(1)
    _flow._set_inline_pcg64(inline)
    try:
        for case in range(60):
            values, ends, means, scale, seed = _case(rng, 200)
            K = values.shape[0]
            bg = generator(seed)
            value, bound, positives = _bracket(values, bg, scale, ends, means)
            twin = generator(seed)
            u = np.random.Generator(twin).random(K)
            # the generators left in one state: they go on alike
            np.testing.assert_array_equal(
                np.random.Generator(bg).random(3), np.random.Generator(twin).random(3)
            )
            hits = (u < values).astype(float)
            starts = np.concatenate(([0], ends[:-1]))
            np.testing.assert_array_equal(positives, np.add.reduceat(hits, starts) * scale)
            group = np.repeat(np.arange(ends.shape[0]), np.diff(np.append(starts, K)))
            expected = np.sum(np.abs(values - means[group]) * np.abs(hits - values)) / K
            assert bound == pytest.approx(expected, rel=1e-12, abs=1e-15), case
            # the exact draw of the same seed sees the same outcomes
            exact = smce_null_draw(
                values, generator(seed), scale, K * scale, np.empty(2 * K)
            )
            w = np.full(K, scale)
            assert exact == pytest.approx(smce_linprog(hits, values, w), abs=1e-7), case
    finally:
        _flow._set_inline_pcg64(True)


def test_bracket_value_is_the_grouped_smce_and_bounds_the_draw():
    # value: smCE of the rows moved to their group's mean (the LP of the
    # reference on those rows); the exact draw within value +- bound
    rng = np.random.default_rng(2)
    for case in range(80):
        values, ends, means, scale, seed = _case(rng, 60)
        K = values.shape[0]
        value, bound, positives = _bracket(values, np.random.PCG64(seed), scale, ends, means)
        counts = np.diff(np.concatenate(([0], ends)))
        y = np.concatenate([np.ones(len(means)), np.zeros(len(means))])
        p = np.concatenate([means, means])
        w = np.concatenate([positives, counts * scale - positives])
        keep = w > 0
        assert value == pytest.approx(smce_linprog(y[keep], p[keep], w[keep]), abs=1e-7), case
        hits = (np.random.Generator(np.random.PCG64(seed)).random(K) < values).astype(float)
        exact = smce_linprog(hits, values, np.full(K, scale))
        assert abs(exact - value) <= bound + 1e-7, case
        if np.all(counts == 1):  # every group one value: nothing moves
            assert bound == 0.0


def test_bracket_input_errors():
    v = np.array([0.2, 0.5, 0.9])
    bg = np.random.PCG64(0)
    good = (np.array([1, 3], dtype=np.intp), np.array([0.2, 0.7]))
    with pytest.raises(ValueError, match="end at len"):
        smce_null_bracket(v, bg, 1.0, 3.0, np.array([1, 2], dtype=np.intp), good[1],
                          np.empty(2), np.empty(4))
    with pytest.raises(ValueError, match="increase"):
        smce_null_bracket(v, bg, 1.0, 3.0, np.array([2, 2, 3], dtype=np.intp),
                          np.zeros(3), np.empty(3), np.empty(6))
    with pytest.raises(ValueError, match="one length"):
        smce_null_bracket(v, bg, 1.0, 3.0, good[0], np.zeros(3), np.empty(2), np.empty(4))
    with pytest.raises(ValueError, match="heap"):
        smce_null_bracket(v, bg, 1.0, 3.0, *good, np.empty(2), np.empty(3))


@pytest.mark.parametrize("K", [1, 2, 255, 256, 257, 1000, 2**15, 10**6])
def test_groups(K):
    values = np.linspace(0, 1, K)
    ends, means = _groups(values)
    m = max(1, math.isqrt(K) // 16)
    assert ends[-1] == K and np.all(np.diff(ends) > 0)
    sizes = np.diff(np.concatenate(([0], ends)))
    assert np.all(sizes[:-1] == m) and 1 <= sizes[-1] <= m
    np.testing.assert_allclose(means, _means(values, ends), rtol=1e-15)


def _fit(y, p, bracket, monkeypatch, **params):
    monkeypatch.setattr(_smcebound, "_BRACKETS", bracket)
    monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 1)
    return CalibrationTester(**params).fit(y, p)


def _same(a, b):
    assert a.result_.calibrated == b.result_.calibrated
    assert a.threshold_ == b.threshold_
    assert a.p_value_ == b.p_value_
    assert a.n_resamples_ == b.n_resamples_
    np.testing.assert_array_equal(a.null_statistics_, b.null_statistics_)


@pytest.mark.parametrize("n", [1, 2, 40, 700, 3000])
@pytest.mark.parametrize("shift", [0.0, 0.1])
@pytest.mark.parametrize("risk", [0.001, None])
def test_tester_with_brackets_is_the_tester(n, shift, risk, monkeypatch):
    # sequential (default risk) and fixed test, calibrated and shifted data
    rng = np.random.default_rng(n)
    p = rng.random(n)
    for seed in range(3):
        y = (rng.random(n) < np.minimum(p + shift, 1)).astype(int)
        kw = dict(random_state=seed, resampling_risk=risk)
        fast = _fit(y, p, True, monkeypatch, **kw)
        assert isinstance(fast.__dict__["_null_statistics"], SmceNull)
        slow = _fit(y, p, False, monkeypatch, **kw)
        assert isinstance(slow.__dict__["_null_statistics"], np.ndarray)
        _same(fast, slow)


def test_tester_brackets_with_weights_threads_and_pickling(monkeypatch):
    # equal non-unit weights (scale != 1), two threads, and a fitted tester
    # pickled before its null statistics are read
    rng = np.random.default_rng(5)
    n = 5000
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    w = np.full(n, 2.5)
    kw = dict(random_state=7, n_resamples=199, resampling_risk=None)
    monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 1)
    monkeypatch.setattr(_smcebound, "_BRACKETS", False)
    slow = CalibrationTester(**kw).fit(y, p, sample_weight=w)
    for n_jobs in (None, 2):
        monkeypatch.setattr(_smcebound, "_BRACKETS", True)
        fast = CalibrationTester(n_jobs=n_jobs, **kw).fit(y, p, sample_weight=w)
        null = fast.__dict__["_null_statistics"]
        assert isinstance(null, SmceNull)
        # the bracket decided most draws without computing them
        assert null.n_exact < null.size // 4
        copy = pickle.loads(pickle.dumps(fast))
        _same(copy, slow)
        _same(fast, slow)


def test_bracketed_only_where_smce_draws_rows(monkeypatch):
    # ties among rows of one weight (a binomial per prediction) and other
    # measures keep exact draws
    monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 1)
    rng = np.random.default_rng(6)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    cases = [
        # one weight, many rows per prediction: binomial draws
        (dict(), dict(y_prob=np.round(p, 1))),
        (dict(measure="cutoff"), dict()),
        (dict(measure="cutoff"), dict(sample_weight=rng.random(300) + 0.5)),
    ]
    for params, data in cases:
        kw = dict(y_prob=p) | data
        tester = CalibrationTester(random_state=0, **params).fit(y, **kw)
        assert isinstance(tester.__dict__["_null_statistics"], np.ndarray)
    tester = CalibrationTester(random_state=0).fit(y, p)
    assert isinstance(tester.__dict__["_null_statistics"], SmceNull)
    # one weight, a few rows per prediction: a uniform per row, bracketed
    tester = CalibrationTester(random_state=0).fit(y, np.round(p, 3))
    assert isinstance(tester.__dict__["_null_statistics"], SmceNull)
    # below _BRACKET_FROM distinct predictions, every draw is exact
    monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 301)
    tester = CalibrationTester(random_state=0).fit(y, p)
    assert isinstance(tester.__dict__["_null_statistics"], np.ndarray)


@pytest.mark.parametrize("n", [1, 3, 500, 4000])
def test_weighted_rows_with_brackets_are_the_tester(n, monkeypatch):
    # unequal weights (zeros, ties among predictions, integer and real), the
    # fixed and the sequential test: the same answers as every draw exact
    rng = np.random.default_rng(100 + n)
    for case in range(3):
        p = rng.random(n)
        if case == 1:
            p = np.round(p, 2)  # ties among rows
        w = rng.choice([0.0, 1.0, 2.0, 0.5, 3.7], size=n)
        if not np.any(w):
            w[0] = 1.0
        y = (rng.random(n) < np.minimum(p + 0.05 * case, 1)).astype(int)
        for risk in (0.001, None):
            kw = dict(random_state=case, resampling_risk=risk, n_resamples=299)
            monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 1)
            monkeypatch.setattr(_smcebound, "_BRACKETS", False)
            slow = CalibrationTester(**kw).fit(y, p, sample_weight=w)
            monkeypatch.setattr(_smcebound, "_BRACKETS", True)
            fast = CalibrationTester(**kw).fit(y, p, sample_weight=w)
            if not np.all(w == w[0]):  # weighted rows: bracketed
                assert isinstance(fast.__dict__["_null_statistics"], SmceNull), (n, case)
            copy = pickle.loads(pickle.dumps(fast))
            _same(copy, slow)
            _same(fast, slow)


def test_bracket_rows_kernel():
    # the outcomes of Generator.random(n) < p, summed per group with weights,
    # and the bound's sum, against numpy
    rng = np.random.default_rng(8)
    for inline in (True, False):
        _flow._set_inline_pcg64(inline)
        try:
            for _ in range(30):
                n = int(rng.integers(1, 300))
                p = np.round(rng.random(n), int(rng.integers(1, 4)))
                w = rng.choice([0.0, 1.0, 2.5], size=n)
                G = int(rng.integers(1, 20))
                group = rng.integers(0, G, size=n).astype(np.intp)
                wd = rng.random(n)
                positives = np.full(G, np.nan)
                seed = int(rng.integers(2**31))
                err = _flow.smce_null_bracket_rows(
                    p, w, wd, group, np.random.PCG64(seed), positives
                )
                hits = (np.random.default_rng(seed).random(n) < p).astype(float)
                np.testing.assert_allclose(
                    positives, np.bincount(group, weights=w * hits, minlength=G),
                    rtol=1e-13, atol=1e-13,
                )
                assert err == pytest.approx(np.sum(wd * np.abs(p - hits)), rel=1e-12)
        finally:
            _flow._set_inline_pcg64(True)
    with pytest.raises(ValueError, match="out of range"):
        _flow.smce_null_bracket_rows(
            np.array([0.5]), np.ones(1), np.ones(1), np.array([1], dtype=np.intp),
            np.random.PCG64(0), np.empty(1),
        )


# --- values of a few rows each (ties among rows of one weight) ---------------


def _counts_case(rng, max_k):
    """Predictions, rows per prediction (1 to 4, half of them 1), a weight, a seed."""
    values = _values(rng, int(rng.integers(1, max_k)))
    K = values.shape[0]
    counts = rng.integers(1, 5, K).astype(np.int64)
    counts[rng.random(K) < 0.5] = 1
    scale = float(rng.choice([1.0, 0.25, 2.0, 3.0]))
    return values, counts, scale, int(rng.integers(2**31))


def _row_positives(generator, seed, values, counts, scale):
    """What the rows' uniforms give: counts of random(n) < repeat(values, counts)."""
    rng = np.random.Generator(generator(seed))
    hits = rng.random(int(counts.sum())) < np.repeat(values, counts)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return np.add.reduceat(hits, starts, dtype=np.int64) * scale, rng.random(4)


@pytest.mark.parametrize("generator", [np.random.PCG64, np.random.Philox])
@pytest.mark.parametrize("inline", [True, False])
def test_count_draws_are_the_rows_uniforms(generator, inline):
    # the positives of the rows' uniforms (the generator left alike), and the
    # smCE of smce_one_side on them, bit for bit; the LP of the reference
    rng = np.random.default_rng(11)
    _flow._set_inline_pcg64(inline)
    try:
        for case in range(60):
            values, counts, scale, seed = _counts_case(rng, 200)
            K = values.shape[0]
            weights = counts * scale
            total = float(weights.sum())
            bg = generator(seed)
            positives = np.empty(K)
            value = smce_null_draw_counts(
                values, weights, counts, bg, scale, total, np.empty(2 * K), positives
            )
            want, after = _row_positives(generator, seed, values, counts, scale)
            np.testing.assert_array_equal(positives, want)
            np.testing.assert_array_equal(np.random.Generator(bg).random(4), after)
            assert value == smce_one_side(values, weights, want, total, np.empty(2 * K), True)
            if case % 6 == 0:
                y = np.concatenate([np.ones(K), np.zeros(K)])
                w = np.concatenate([want, weights - want])
                p = np.concatenate([values, values])
                keep = w > 0
                assert value == pytest.approx(
                    smce_linprog(y[keep], p[keep], w[keep]), abs=1e-7
                ), case
    finally:
        _flow._set_inline_pcg64(True)


def test_count_bracket_is_the_grouped_smce_and_bounds_the_draw():
    # the same outcomes as the exact draw; value: smCE of each group's rows at
    # the group's mean by rows; the exact draw within value +- bound
    rng = np.random.default_rng(12)
    for case in range(80):
        values, counts, scale, seed = _counts_case(rng, 80)
        K = values.shape[0]
        ends = _random_ends(rng, K)
        _, means = _groups(values, counts) if case % 2 else (None, None)
        if means is None or means.shape[0] != ends.shape[0]:
            starts = np.concatenate(([0], ends[:-1]))
            means = np.add.reduceat(values * counts, starts) / np.add.reduceat(counts, starts)
        G = ends.shape[0]
        total = float(counts.sum() * scale)
        bg = np.random.PCG64(seed)
        positives = np.empty(G)
        value, bound = smce_null_bracket_counts(
            values, counts, bg, scale, total, ends, means, positives, np.empty(2 * G)
        )
        rows, after = _row_positives(np.random.PCG64, seed, values, counts, scale)
        np.testing.assert_array_equal(np.random.Generator(bg).random(4), after)
        starts = np.concatenate(([0], ends[:-1]))
        np.testing.assert_array_equal(positives, np.add.reduceat(rows, starts))
        group_weight = np.add.reduceat(counts, starts) * scale
        y = np.concatenate([np.ones(G), np.zeros(G)])
        p = np.concatenate([means, means])
        w = np.concatenate([positives, group_weight - positives])
        keep = w > 0
        assert value == pytest.approx(smce_linprog(y[keep], p[keep], w[keep]), abs=1e-7), case
        exact = smce_null_draw_counts(
            values, counts * scale, counts, np.random.PCG64(seed), scale, total,
            np.empty(2 * K), np.empty(K),
        )
        assert abs(exact - value) <= bound + 1e-9, case
        assert bound * total / scale == pytest.approx(
            np.sum(np.abs(values - np.repeat(means, np.diff(np.append(starts, K))))
                   * np.abs(rows / scale - counts * values)), rel=1e-12, abs=1e-12
        )


def test_count_kernels_input_errors():
    v = np.array([0.2, 0.5, 0.9])
    c = np.array([1, 2, 1], dtype=np.int64)
    bg = np.random.PCG64(0)
    with pytest.raises(ValueError, match="one length"):
        smce_null_draw_counts(v, c * 1.0, c[:2].copy(), bg, 1.0, 4.0, np.empty(6), np.empty(3))
    with pytest.raises(ValueError, match="positive"):
        smce_null_draw_counts(v, c * 1.0, c * 0, bg, 1.0, 4.0, np.empty(6), np.empty(3))
    with pytest.raises(ValueError, match="heap"):
        smce_null_draw_counts(v, c * 1.0, c, bg, 1.0, 4.0, np.empty(5), np.empty(3))
    ends, means = np.array([1, 3], dtype=np.intp), np.array([0.2, 0.63])
    with pytest.raises(ValueError, match="one length"):
        smce_null_bracket_counts(v, c[:2].copy(), bg, 1.0, 4.0, ends, means,
                                 np.empty(2), np.empty(4))
    with pytest.raises(ValueError, match="positive"):
        smce_null_bracket_counts(v, -c, bg, 1.0, 4.0, ends, means, np.empty(2), np.empty(4))
    with pytest.raises(ValueError, match="end at len"):
        smce_null_bracket_counts(v, c, bg, 1.0, 4.0, np.array([1, 2], dtype=np.intp),
                                 means, np.empty(2), np.empty(4))


@pytest.mark.parametrize("n", [1, 40, 3000])
def test_count_draws_with_brackets_are_the_tester(n, monkeypatch):
    # predictions rounded so that each holds a few rows of one weight: the
    # bracketed tester gives the answers of every draw exact, and the draws
    # are those of the resampler's positives (what the dCE and other
    # measures' draws read) through smce_core
    from skcal.metrics._smce import smce_core
    from skcal.tester._null import _BinaryData

    rng = np.random.default_rng(300 + n)
    p = np.round(rng.random(n), 3)
    for shift in (0.0, 0.1):
        y = (rng.random(n) < np.minimum(p + shift, 1)).astype(int)
        for risk in (0.001, None):
            kw = dict(random_state=7, resampling_risk=risk, n_resamples=299)
            monkeypatch.setattr(_smcebound, "_BRACKET_FROM", 1)
            monkeypatch.setattr(_smcebound, "_BRACKETS", False)
            slow = CalibrationTester(**kw).fit(y, p)
            monkeypatch.setattr(_smcebound, "_BRACKETS", True)
            fast = CalibrationTester(**kw).fit(y, p)
            _same(fast, slow)
            _same(pickle.loads(pickle.dumps(fast)), slow)
    tester = CalibrationTester()
    measure, _ = tester._check_params()
    data = _BinaryData(measure, y, p, np.full(n, 0.5), None, None)
    assert data.count_draws == (len(data.G) < n)
    for seed in range(3):
        positives = data.resampler.positives(seed)
        assert data.draw(seed) == float(smce_core(data.G.with_positives(positives)))
