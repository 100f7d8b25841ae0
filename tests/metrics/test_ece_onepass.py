"""Uniform binned ECE on plain input: validation fused into the one pass.

``checked_uniform_bin_sums`` against its slow twin in ``reference_ece.py`` and,
bit for bit, against ``uniform_bin_sums``; the public function on plain
input against the same function through the full validator.
"""

import numpy as np
import pytest

from skcal import binned_ece
from skcal._kernels._binning import checked_uniform_bin_sums, uniform_bin_sums
from skcal.metrics import _ece

from reference_ece import (
    binned_ece_reference,
    plain_rows_reference,
    uniform_bin_sums_reference,
)
from test_scdl_onepass import LABEL_DTYPES, corrupt, kernel_labels, outcome, plain_case

MSG = "kernel argument shapes do not match"
NORMS = ["l1", "l2", "max"]


def test_checked_uniform_bin_sums_matches_reference_and_unchecked_kernel():
    rng = np.random.default_rng(200)
    for case in range(400):
        n_bins = int(rng.choice([1, 2, 3, 5, 7, 10, 15, 49]))
        y, p, w = plain_case(rng, grid=n_bins)
        edges = np.arange(n_bins + 1) / n_bins
        sums = np.zeros((n_bins, 2))
        assert checked_uniform_bin_sums(p, kernel_labels(y), w, edges, sums), case
        expected = uniform_bin_sums_reference(y, p, w, n_bins)
        np.testing.assert_allclose(sums, expected, rtol=1e-12, atol=1e-12, err_msg=str(case))
        # the same additions in the same order as the unchecked kernel
        unchecked = np.zeros((n_bins, 2))
        weights = np.ones(len(p)) if w is None else w
        uniform_bin_sums(p, y.astype(np.uint8), weights, edges, unchecked)
        np.testing.assert_array_equal(sums, unchecked)


def test_checked_uniform_bin_sums_flags_exactly_the_invalid_rows():
    rng = np.random.default_rng(201)
    edges = np.arange(16) / 15
    for case in range(400):
        y, p, w = plain_case(rng, grid=15)
        if rng.random() < 0.6:
            y, p, w = corrupt(rng, y, p, w)
        sums = np.zeros((15, 2))
        ok = checked_uniform_bin_sums(p, kernel_labels(y), w, edges, sums)
        assert ok == plain_rows_reference(y, p, w), case


def test_public_function_equals_full_validation_and_reference():
    rng = np.random.default_rng(202)
    for case in range(250):
        n_bins = int(rng.choice([1, 2, 3, 7, 10, 15]))
        y, p, w = plain_case(rng, max_n=60, grid=n_bins)
        yf, wf = y.astype(float), (np.ones(len(y)) if w is None else w)
        for norm in NORMS:
            value = binned_ece(y, p, sample_weight=w, n_bins=n_bins, norm=norm)
            slow = binned_ece(
                y.tolist(), p.tolist(), sample_weight=None if w is None else w.tolist(),
                n_bins=n_bins, norm=norm,
            )
            assert value == slow, case
            ref = binned_ece_reference(yf, p, wf, n_bins, "uniform", norm)
            assert value == pytest.approx(ref, abs=1e-9), case


def test_n_equal_one_and_edges():
    for dtype in LABEL_DTYPES:
        for label in (0, 1):
            for v in (0.0, -0.0, 0.2, 1 / 3, 1.0):
                y = np.array([label], dtype=dtype)
                assert binned_ece(y, np.array([v]), n_bins=3) == binned_ece(
                    [label], [v], n_bins=3
                )
    # every edge k/B and its neighbours, B = 1..50: the bins of the validator's path
    for B in range(1, 51):
        edges = np.arange(B + 1) / B
        p = np.r_[edges, np.nextafter(edges[1:], 0), np.nextafter(edges[:-1], 1)]
        y = np.arange(p.shape[0]) % 2
        for norm in NORMS:
            assert binned_ece(y, p, n_bins=B, norm=norm) == binned_ece(
                list(y), list(p), n_bins=B, norm=norm
            )


def test_errors_are_those_of_the_full_validator():
    rng = np.random.default_rng(203)
    raised = 0
    for case in range(300):
        y, p, w = plain_case(rng)
        y, p, w = corrupt(rng, y, p, w)
        if plain_rows_reference(y, p, w):
            continue
        fast = outcome(binned_ece, y, p, sample_weight=w)
        slow = outcome(binned_ece, list(y), list(p), sample_weight=None if w is None else list(w))
        assert fast == slow, case
        raised += isinstance(slow, tuple)
    assert raised > 200
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        binned_ece(np.array([0, 1]), np.array([np.nan, 0.5]), sample_weight=np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        binned_ece(np.array([0, 1]), np.array([0.1, 0.5]), sample_weight=np.zeros(2))


def test_huge_weights_take_the_rescaling_path():
    # sums past 1e300 leave the one pass: check_sample_weight rescales them
    y, p = np.array([0, 1, 1]), np.array([0.1, 0.6, 0.9])
    w = np.array([1e308, 1e308, 1e308])
    assert binned_ece(y, p, sample_weight=w) == binned_ece(y, p, sample_weight=w / 2.0**1000)


def test_plain_input_skips_the_full_validator(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the full validator was called")

    monkeypatch.setattr(_ece, "binary_rows", refuse)
    rng = np.random.default_rng(204)
    for _ in range(50):
        y, p, w = plain_case(rng)
        binned_ece(y, p, sample_weight=w, n_bins=int(rng.integers(1, 20)))
    # quantile bins, details and labels {-1, 1} take the full validator
    for kwargs in ({"strategy": "quantile"}, {"return_details": True}):
        with pytest.raises(AssertionError, match="full validator"):
            binned_ece(np.array([0, 1]), np.array([0.2, 0.8]), **kwargs)
    with pytest.raises(AssertionError, match="full validator"):
        binned_ece(np.array([-1, 1]), np.array([0.2, 0.8]))


def test_inputs_are_not_written_and_may_be_read_only():
    rng = np.random.default_rng(205)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(np.int64)
    w = rng.exponential(size=300)
    copies = y.copy(), p.copy(), w.copy()
    for a in (y, p, w):
        a.setflags(write=False)
    value = binned_ece(y, p, sample_weight=w)
    for a, c in zip((y, p, w), copies):
        np.testing.assert_array_equal(a, c)
    assert value == binned_ece(*copies[:2], sample_weight=copies[2])


def test_checked_uniform_bin_sums_checks_shapes():
    p = np.array([0.1, 0.6])
    y = np.array([0, 1], dtype=np.uint8)
    edges = np.array([0.0, 0.5, 1.0])
    sums = np.zeros((2, 2))
    assert checked_uniform_bin_sums(p, y, None, edges, sums)
    np.testing.assert_allclose(sums, [[1.0, -0.1], [1.0, 0.4]])
    with pytest.raises(ValueError, match=MSG):
        checked_uniform_bin_sums(p, y[:1].copy(), None, edges, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        checked_uniform_bin_sums(p, y, np.ones(1), edges, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        checked_uniform_bin_sums(p, y, None, edges[:2].copy(), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=MSG):
        checked_uniform_bin_sums(p, y, None, edges, np.zeros((0, 2)))
