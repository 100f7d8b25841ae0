"""The Table 2 reproduction (benchmarks/repro_scdl_table2.py) at a small size.

The benchmark's pipeline (data of Section 9 of Bairaktari, Hu, Nguyen and
Ullman, a logistic-regression predictor, the four measures with the paper's
options) is run for alpha = 0.8 on small evaluation samples, and every
measure is compared with the slow references of ``reference_*.py``; the
benchmark's own SCDL helpers (used for the variants it investigates) are
checked against the same reference.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from reference_cutoff import cutoff_bruteforce
from reference_ece import binned_ece_reference
from reference_scdl import scdl_m_reference, scdl_reference
from reference_smce import smce_linprog

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "repro_scdl_table2.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("repro_scdl_table2", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_conditional_mean_is_the_papers(bench):
    # E[Y|X=x] = alpha (1 - 2x)^2 + (1 - alpha) x, at points worked by hand
    for alpha, x, expected in [
        (0.8, 0.0, 0.8),
        (0.8, 1.0, 1.0),
        (0.8, 0.5, 0.1),
        (0.8, 0.25, 0.8 * 0.25 + 0.2 * 0.25),
        (1.0, 0.5, 0.0),
        (0.0, 0.3, 0.3),
    ]:
        assert bench.conditional_mean(np.array([x]), alpha)[0] == pytest.approx(expected)


def test_measures_agree_with_references(bench):
    alpha = 0.8
    for run in range(6):
        # a small evaluation sample; n_eval = 1 and 2 exercise the edge cases
        n_eval = (1, 2, 17, 40, 60, 80)[run]
        y, p, model, (x_train, y_train) = bench.replicate(alpha, run, n_eval=n_eval)
        assert x_train.shape == y_train.shape == (bench.N_TRAIN,)
        assert y.shape == p.shape == (n_eval,)
        assert set(np.unique(y)) <= {0.0, 1.0}
        w = np.ones(n_eval)
        got = bench.measures(y, p)
        assert got["Cutoff"] == pytest.approx(cutoff_bruteforce(y, p, w), abs=1e-12)
        assert got["smCE"] == pytest.approx(smce_linprog(y, p, w), abs=1e-7)
        assert got["bECE"] == pytest.approx(
            binned_ece_reference(y, p, w, n_bins=11), abs=1e-12
        )
        assert got["SCDL"] == pytest.approx(scdl_reference(y, p, w, 12), abs=1e-12)


def test_variant_helpers_against_reference(bench):
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 50))
        p = rng.uniform(size=n)
        if trial % 3 == 0:
            p = np.round(p, 1)  # ties, and p in {0, 1}
        y = (rng.uniform(size=n) < rng.uniform()).astype(float)
        if trial % 7 == 0:
            y[:] = trial % 2  # one class only
        w = np.ones(n)
        for m in (1, 2, 4, 8, 16):
            per_i = bench._per_threshold(y, p, m)
            assert per_i.shape == (m + 1,)
            assert per_i.max() == pytest.approx(scdl_m_reference(y, p, w, m), abs=1e-12)
        # random rounding: on the grid, next to p, and unbiased on average
        m = 8
        draws = np.array([bench._round_at_random(p, m, rng) for _ in range(400)])
        assert np.all(np.abs(draws - p) < 1 / m + 1e-12)
        assert np.allclose(draws * m, np.round(draws * m))
        assert np.all(np.abs(draws.mean(axis=0) - p) < 4.5 / (2 * m * np.sqrt(400)))
