"""The one-sided smCE kernels and the tester's smCE null draw against references.

``smce_one_side`` (the value of every smCE since the tester's tail work) and
``smce_bernoulli`` (one null draw of the tester on distinct predictions of one
weight) against the linear program of ``reference_smce.py`` on small cases, and
against the two-sided forward pass ``smce_value`` on larger ones.
"""

import numpy as np
import pytest

from skcal._grouped import group
from skcal._kernels._flow import smce_bernoulli, smce_one_side, smce_value
from skcal.measures import SmoothCalibrationError
from skcal.tester._null import _BinaryData

from cases import random_cases
from reference_null import smce_bernoulli_reference
from reference_smce import smce_linprog


def _grouped(y, p, w):
    keep = w > 0
    return group(y[keep], p[keep], w[keep])


def test_one_side_matches_linprog():
    # ties, integer/real/zero weights, n = 1, p in {0, 1}, one class
    for i, (y, p, w) in enumerate(random_cases(31, 150, max_n=40)):
        G = _grouped(y, p, w)
        K = len(G)
        got = smce_one_side(G.values, G.weights, G.positives, G.total, np.empty(2 * K))
        assert got == pytest.approx(smce_linprog(y, p, w), abs=1e-7), i


def test_one_side_matches_the_two_sided_pass():
    # larger cases, where the heap sees many pushes, pops and partial clips;
    # smce_value keeps both sides whole (its own tests tie it to the LP)
    rng = np.random.default_rng(32)
    for i in range(300):
        K = int(rng.integers(1, 3000))
        values = np.unique(np.round(rng.random(K), int(rng.integers(2, 8))))
        K = values.shape[0]
        weights = rng.choice([np.ones(K), rng.exponential(size=K) + 1e-3])
        kind = i % 4
        if kind == 0:  # calibrated draws: B a centred walk
            positives = weights * (rng.random(K) < values)
        elif kind == 1:  # shifted: B drifts away from 0
            positives = weights * (rng.random(K) < np.minimum(values + 0.1, 1))
        elif kind == 2:  # one class
            positives = weights * float(rng.integers(2))
        else:  # grouped counts
            positives = weights * rng.random(K)
        total = float(weights.sum())
        work = np.empty(2 * K)
        got = smce_one_side(values, weights, positives, total, work)
        want = smce_value(values, weights, positives, total, np.empty(2 * K))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), i


def test_bernoulli_is_the_one_side_value_of_its_outcomes():
    rng = np.random.default_rng(33)
    for i in range(300):
        K = int(rng.integers(1, 500 if i % 10 else 30))
        values = np.unique(rng.choice([rng.random(K), np.round(rng.random(K), 2)]))
        values = np.unique(np.concatenate([values, [0.0, 1.0][: i % 3]]))
        K = values.shape[0]
        scale = float(rng.choice([1.0, 0.25, 3.0]))
        weights = np.full(K, scale)
        total = float(weights.sum())
        u = rng.random(K)
        work = np.empty(2 * K)
        got = smce_bernoulli(values, u, scale, total, work)
        want = smce_one_side(values, weights, scale * (u < values), total, work)
        assert got == want, i
        if K <= 30:  # the LP of reference_smce.py, on the small cases
            ref = smce_bernoulli_reference(values, u, scale)
            assert got == pytest.approx(ref, abs=1e-7), i


def test_kernels_check_shapes():
    values = np.array([0.1, 0.5, 0.9])
    ones = np.ones(3)
    with pytest.raises(ValueError, match="shapes"):
        smce_one_side(values, ones, ones, 3.0, np.empty(5))
    with pytest.raises(ValueError, match="shapes"):
        smce_one_side(values, ones[:2].copy(), ones, 3.0, np.empty(6))
    with pytest.raises(ValueError, match="shapes"):
        smce_bernoulli(values, ones[:2].copy(), 1.0, 3.0, np.empty(6))
    with pytest.raises(ValueError, match="shapes"):
        smce_bernoulli(values, ones, 1.0, 3.0, np.empty(5))
    empty = np.empty(0)
    with pytest.raises(ValueError, match="shapes"):
        smce_one_side(empty, empty, empty, 1.0, empty)


def test_tester_draws_on_distinct_values_match_the_reference():
    # the tester's draw on distinct predictions of one weight (the fast path)
    # equals the LP on the outcomes u < v, u from the draw's own seed in the
    # order of the sorted values
    rng = np.random.default_rng(34)
    for i in range(30):
        n = int(rng.integers(1, 30))
        p = rng.permutation(np.unique(rng.random(n)))
        if i % 5 == 0:
            p[: min(2, p.shape[0])] = [0.0, 1.0][: min(2, p.shape[0])]
            p = np.unique(p)
        n = p.shape[0]
        y = (rng.random(n) < p).astype(float)
        w = np.full(n, float(rng.choice([1.0, 2.5])))
        data = _BinaryData(SmoothCalibrationError(), y, p, w, None, None)
        assert data.single
        for seed in range(2):
            u = np.random.default_rng(seed).random(n)
            ps = np.sort(p)
            want = smce_linprog((u < ps).astype(float), ps, w)
            assert data.draw(seed) == pytest.approx(want, abs=1e-7), (i, seed)
