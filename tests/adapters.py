"""A probability adapter for scikit-learn's estimator checks.

The probability transformers (``UtilityPatchingRecalibrator``,
``SCDLRounding``) take predicted probabilities, rows in [0, 1] summing to 1,
while ``parametrize_with_checks`` feeds arbitrary real features. The
adapter maps each feature row to a probability row by a fixed softmax and
hands it to the wrapped transformer, so that the checks exercise the
transformer's own behaviour: fit returning self, idempotence, pickling,
subset and order invariance, sample weights, no mutation of the input or of
the parameters, read-only input. Non-finite features stay non-finite
(softmax of NaN is NaN), so the transformer's own input checks answer the
NaN and infinity checks.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data


def probability_rows(X, n_columns):
    """Softmax of ``X @ W``, ``W[j, c] = 1{j mod n_columns == c}``: rows summing to 1."""
    W = (np.arange(X.shape[1])[:, None] % n_columns == np.arange(n_columns)).astype(float)
    Z = X @ W
    with np.errstate(invalid="ignore", over="ignore"):
        Z = Z - Z.max(axis=1, keepdims=True)  # inf - inf is NaN: kept
        E = np.exp(Z)
        return E / E.sum(axis=1, keepdims=True)


class ProbabilityRows(TransformerMixin, BaseEstimator):
    """Fit and transform ``estimator`` on the probability rows of ``X``.

    Parameters
    ----------
    estimator : transformer of probabilities
    binary : bool, default=False
        Two columns and ``y == max(y)`` as the outcome, for a transformer of
        binary probabilities.
    """

    def __init__(self, estimator=None, binary=False):
        self.estimator = estimator
        self.binary = binary


    def fit(self, X, y, sample_weight=None):
        # the features first, so that their errors come first, as they would
        X = validate_data(self, X, ensure_all_finite=False, dtype=np.float64)
        if y is None:
            self.n_columns_ = 2  # the transformer answers the missing y
        else:
            y = np.asarray(y)
            classes = np.unique(y)
            if self.binary:
                y = (y == classes[-1]).astype(int)
                self.n_columns_ = 2
            else:
                self.n_columns_ = max(classes.shape[0], 2)
        P = probability_rows(X, self.n_columns_)
        self.estimator_ = clone(self.estimator).fit(P, y, sample_weight=sample_weight)
        return self

    def transform(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite=False, dtype=np.float64)
        return self.estimator_.transform(probability_rows(X, self.n_columns_))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags

