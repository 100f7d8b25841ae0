"""The top-K members' shared work: rank of the observed class and the sorted rows.

``rank_of_label`` (one read of ``y_prob``) against the definition of
DESIGN.md section 4 (``rank_bruteforce`` in tests/utilities/reference_utilities.py), and
``_sorted_columns_and_rank`` against ``np.sort`` of the rows in decreasing
order, on random cases with ties, one-hot rows, one row and two classes.
"""

import numpy as np
import pytest

from skcal._kernels._members import rank_of_label
from skcal.metrics._uc_binary import _sorted_columns_and_rank
from skcal.utilities._engine import Predictions

from reference_utilities import rank_bruteforce
from test_utilities import random_labels, random_proba


def test_rank_and_sorted_columns_against_the_definitions():
    rng = np.random.default_rng(26)
    for _ in range(300):
        n = int(rng.choice([1, 2, 5, 40, 300]))  # 300 > one chunk of 256 rows
        C = int(rng.integers(2, 9))
        P = random_proba(rng, n, C)
        y = random_labels(rng, P)
        rank = np.empty(n, dtype=np.intp)
        rank_of_label(np.ascontiguousarray(P), y.astype(np.intp), rank)
        expected = [rank_bruteforce(P[i], y[i]) for i in range(n)]
        np.testing.assert_array_equal(rank, expected)
        np.testing.assert_array_equal(rank, Predictions(P, y).rank_of_y)
        n_top = int(rng.integers(1, C + 1))
        S, rank2 = _sorted_columns_and_rank(P, y, n_top)
        np.testing.assert_array_equal(rank2, rank)
        np.testing.assert_array_equal(S, np.sort(P, axis=1)[:, ::-1][:, :n_top].T)


def test_rank_of_label_checks_its_arguments():
    P = np.full((2, 2), 0.5)
    with pytest.raises(ValueError, match="n_classes"):
        rank_of_label(P, np.array([0, 2], dtype=np.intp), np.empty(2, dtype=np.intp))
    with pytest.raises(ValueError, match="n rows"):
        rank_of_label(P, np.array([0], dtype=np.intp), np.empty(2, dtype=np.intp))
