"""The one-sided smCE kernels and the tester's smCE null draw against references.

``smce_one_side`` (the value of every smCE since the tester's tail work) and
``smce_bernoulli`` (one null draw of the tester on distinct predictions of one
weight) against the linear program of ``reference_smce.py`` on small cases, and
against the two-sided forward pass ``smce_value`` on larger ones.
"""

import numpy as np
import pytest

from skcal._grouped import group
from skcal._kernels import _flow
from skcal._kernels._flow import smce_bernoulli, smce_null_draw, smce_one_side, smce_value
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
        want = smce_value(values, weights, positives, total, np.empty(2 * K))
        # the heap walk, and the bucket walk (past K = 256; keys near the
        # run's top inserted into it, the others into buckets)
        for buckets in (False, True):
            got = smce_one_side(values, weights, positives, total, work, buckets)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (i, buckets)


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
        # the same walk as the draws' (buckets past K = 256): the same number
        want = smce_one_side(values, weights, scale * (u < values), total, work, buckets=True)
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


def _buckets(on):
    """Switch the one-sided walk between buckets and the heap alone."""
    _flow._set_buckets(on)


def _walk_cases(rng, count):
    """(values, weights, positives, total) of several kinds, K past the bucket cut."""
    for i in range(count):
        K = int(rng.integers(257, 4000))
        kind = i % 7
        if kind == 5:  # values crowded near 0.5: a lattice walk, crowded buckets
            values = 0.5 + np.arange(K) * 1e-13
        else:
            values = np.unique(np.round(rng.random(K), int(rng.integers(3, 9))))
            values = np.unique(np.concatenate([values, [0.0, 1.0][: i % 3]]))
        K = values.shape[0]
        weights = rng.choice([np.ones(K), rng.exponential(size=K) + 1e-3, np.full(K, 0.25)])
        if kind in (0, 5):  # calibrated draws: B a centred walk
            positives = weights * (rng.random(K) < values)
        elif kind == 1:  # shifted: B drifts away from 0
            positives = weights * (rng.random(K) < np.minimum(values + 0.05, 1))
        elif kind == 2:  # one class
            positives = weights * float(rng.integers(2))
        elif kind == 3:  # grouped counts
            positives = weights * rng.random(K)
        elif kind == 4:  # exactly calibrated: B_K = 0 up to rounding, many ties
            positives = weights * values
        else:  # positives on a coarse grid: repeated walk values (ties of keys)
            positives = weights * np.round(values * 4) / 4
        yield values, weights, positives, float(weights.sum())


def test_bucket_walk_matches_the_heap_walk():
    # the walk of the previous versions (one heap of all breakpoints) is the
    # twin: the same breakpoints taken in the same order, so the values agree
    # up to the order of the final sum
    rng = np.random.default_rng(35)
    for i, (values, weights, positives, total) in enumerate(_walk_cases(rng, 140)):
        K = values.shape[0]
        work = np.empty(2 * K)
        got = smce_one_side(values, weights, positives, total, work, buckets=True)
        want = smce_one_side(values, weights, positives, total, work)
        assert got == pytest.approx(want, rel=1e-11, abs=1e-15), i
        if i < 8:  # and the two-sided pass, on a few
            two = smce_value(values, weights, positives, total, np.empty(2 * K))
            assert got == pytest.approx(two, rel=1e-11, abs=1e-15), i


def test_bucket_walk_hands_over_to_the_heap_walk():
    # where keys crowd a few buckets the walk hands its breakpoints to the
    # heap walk and goes on from the step it reached (at 10**7 arcsine-law
    # predictions, 99.5% of the way through); a budget of 0 or 1 insertion
    # steps a value makes that happen early, late and in between here, and
    # the value is still the heap walk's
    rng = np.random.default_rng(37)
    cases = list(_walk_cases(rng, 140))
    try:
        for budget in (0, 1):
            _flow._set_buckets(True, 16, budget)
            where = []
            for i, (values, weights, positives, total) in enumerate(cases):
                K = values.shape[0]
                work = np.empty(2 * K)
                got = smce_one_side(values, weights, positives, total, work, buckets=True)
                step = _flow._handover_step()
                want = smce_one_side(values, weights, positives, total, work)
                assert _flow._handover_step() == -1  # the heap walk hands nothing over
                assert got == pytest.approx(want, rel=1e-11, abs=1e-15), (budget, i)
                if step >= 0:
                    where.append(step / K)
            if budget == 0:
                assert len(where) > 40
                assert min(where) < 0.1 and max(where) > 0.9
            else:
                assert len(where) > 0
    finally:
        _flow._set_buckets(True)
    with pytest.raises(ValueError, match="budget"):
        _flow._set_buckets(True, 16, -1)


def test_bucket_walk_over_many_chunks_of_its_pool():
    # the keys the walk puts in buckets live in chunks of about K / 8 items,
    # allocated as they fill: calibrated and shifted walks of 6 * 10**4
    # values (several chunks) and one of 1.2 * 10**6, as the heap walk gives them
    rng = np.random.default_rng(39)
    for K, shift in ((60_000, 0.0), (60_000, 0.02), (1_200_000, 0.0)):
        # (1.2 * 10**6: chunks of 2**18 keys, 6 MB, in huge pages)
        values = np.unique(rng.random(K))
        K = values.shape[0]
        weights = np.ones(K)
        positives = (rng.random(K) < np.minimum(values + shift, 1)).astype(float)
        work = np.empty(2 * K)
        got = smce_one_side(values, weights, positives, float(K), work, buckets=True)
        want = smce_one_side(values, weights, positives, float(K), work)
        assert got == pytest.approx(want, rel=1e-11, abs=1e-15), shift


def test_bucket_walk_matches_linprog():
    # past the bucket cut (K > 256), against the LP of reference_smce.py
    rng = np.random.default_rng(36)
    for i in range(4):
        n = 300
        p = np.unique(rng.random(n))
        y = (rng.random(p.shape[0]) < np.minimum(p + 0.05 * (i % 2), 1)).astype(float)
        w = np.ones(p.shape[0])
        G = _grouped(y, p, w)
        work = np.empty(2 * len(G))
        got = smce_one_side(G.values, G.weights, G.positives, G.total, work, buckets=True)
        assert got == pytest.approx(smce_linprog(y, p, w), abs=1e-7), i


def test_kernel_draw_is_the_draw_of_the_uniforms():
    # smce_null_draw reads the generator's doubles itself: the same number as
    # smce_bernoulli on rng.random(K), exactly, and the generator left alike;
    # values 0 and 1 and exactly representable ones, K = 1, K past the cut
    rng = np.random.default_rng(37)
    makers = [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64]
    for i in range(120):
        K = int(rng.integers(1, 3000 if i % 4 else 20))
        values = np.unique(rng.choice([rng.random(K), np.round(rng.random(K) * 8) / 8]))
        values = np.unique(np.concatenate([values, [[], [0.0], [1.0], [0.0, 0.5, 1.0]][i % 4]]))
        K = values.shape[0]
        scale = float(rng.choice([1.0, 0.25, 3.0]))
        seed = int(rng.integers(2**31))
        maker = makers[i % 4] if i < 40 else np.random.PCG64
        bit_a, bit_b = maker(seed), maker(seed)
        # PCG64 stepped inline, or through numpy's function pointer (1 in 5)
        _flow._set_inline_pcg64(i % 5 != 0)
        try:
            got = smce_null_draw(values, bit_a, scale, K * scale, np.empty(2 * K))
        finally:
            _flow._set_inline_pcg64(True)
        u = np.random.Generator(bit_b).random(K)
        want = smce_bernoulli(values, u, scale, K * scale, np.empty(2 * K))
        assert got == want, i
        np.testing.assert_array_equal(bit_a.random_raw(3), bit_b.random_raw(3))


def test_tester_draws_are_the_previous_draws():
    # the tester's fast path (the kernel draws) against the previous one
    # (uniforms first, then the heap walk): same null statistics and decision
    import skcal.tester._null as null
    from skcal.tester import CalibrationTester

    rng = np.random.default_rng(38)
    for i in range(4):
        n = 3000
        p = rng.random(n)
        y = (rng.random(n) < np.minimum(p + 0.04 * (i % 2), 1)).astype(float)
        new = CalibrationTester(n_resamples=200, random_state=i).fit(y, p)
        null._KERNEL_DRAWS = False
        _buckets(False)
        try:
            old = CalibrationTester(n_resamples=200, random_state=i).fit(y, p)
        finally:
            null._KERNEL_DRAWS = True
            _buckets(True)
        assert new.n_resamples_ == old.n_resamples_, i
        np.testing.assert_allclose(new.null_statistics_, old.null_statistics_, rtol=1e-12)
        assert new.p_value_ == old.p_value_, i
