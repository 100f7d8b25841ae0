"""Post-hoc recalibration by utility patching (Hegazy et al., Appendix A).

:class:`UtilityPatchingRecalibrator` is Algorithm 1 of Hegazy, Jordan and
Dieuleveut, *Scalable Utility-Aware Multiclass Calibration*: audit the worst
(utility, interval, sign) of a utility family with
:func:`skcal.utility_calibration_error`, move the predictions whose predicted
utility falls in that interval along the utility vector, project back onto
the simplex, repeat. The patches are stored and replayed on new predictions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    clone,
)
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._compat import _check_feature_names, _fit_context
from .._input import (
    as_probability_array,
    check_sample_weight,
    label_positions,
    resolve_labels,
    user_stacklevel,
)
from .._kernels._patching import (
    scatter_row_brier,
)
from ..utilities._families import members
from ._base import checked_probabilities
from ._common import (
    draw_seed,
    fit_recalibrator,
    predict_recalibrator,
    seed_random_states,
    weighted_sum,
)
from ._patch_ops import (
    IncrementalAudit,
    Patch,
    apply_patch,
    audit_family,
    patch_rows,
    predicted_utility,
    project_simplex,
    row_brier,
    utility_rows,
)
from ._patch_params import (
    _PATCHING_CONSTRAINTS,
    _auto_tol,
    _check_family,
    _check_init,
    _check_not_boolean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..display import PatchingHistoryDisplay

__all__ = ["Patch", "UtilityPatchingRecalibrator", "project_simplex"]

# Armijo line search: accept eta when the Brier score drops by at least
# 2 * _ARMIJO_C * eta * err (the decrease the linearisation promises is
# 2 * eta * err), starting from _ARMIJO_START times the unprojected optimum
# eta* = err / E||w||^2 and halving at most _ARMIJO_HALVINGS times.
_ARMIJO_C = 0.25
_ARMIJO_START = 4.0
_ARMIJO_HALVINGS = 40



class UtilityPatchingRecalibrator(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Recalibrate probability vectors by patching the worst utility bias.

    Algorithm 1 of Hegazy et al. (Appendix A, "Iterative Patching for Utility
    Calibration"), as implemented in its Appendix C.1: at iteration ``t``

    1. audit: find the utility ``u`` of ``family``, the interval ``I`` of
       predicted utility ``v_u(p) = sum_j p_j u(p, e_j)`` and the sign
       ``xi`` attaining ``err_t = UC(f_t, family)``
       (:func:`skcal.utility_calibration_error`, eq. 3.2 and 3.5);
    2. stop if ``err_t <= tol``;
    3. patch: every row with ``v_u(p)`` in ``I`` becomes
       ``proj_simplex(p + eta_t * xi * u_vec(p))``, where
       ``u_vec(p) = (u(p, e_1), ..., u(p, e_C))`` is evaluated at the current
       ``p`` and ``proj_simplex`` is the exact Euclidean projection onto the
       simplex (:func:`project_simplex`); other rows are unchanged.

    The patches are stored in ``patches_`` and :meth:`transform` replays
    them, in order, on new predictions, exactly as on the fitted ones.

    Parameters
    ----------
    family : str, Utility or finite family, default="comb"
        The utilities audited, as in :func:`skcal.utility_calibration_error`:
        "top-class", "class-wise", "top-k", "comb" (class-wise and top-K, the
        family of Hegazy et al., Appendix C.1), a :class:`~skcal.Utility` or a
        finite family such as :class:`~skcal.UtilityFamily`.
    max_iter : int, default=100
        Maximum number of patches.
    tol : "auto" or float, default="auto"
        Stop once ``UC(f_t, family) <= tol`` on the fitted data (the
        ``epsilon`` of Algorithm 1). ``"auto"`` sets it to the order of the
        sampling error of UC, ``sqrt(log(4 m) / (2 n))`` for ``m`` utilities
        in the family and ``n = sum(sample_weight)`` (the number of samples
        without weights). ``err_t`` is the largest over ``m`` utilities of a
        sum of ``n`` residuals ``(u(p, e_y) - v_u(p)) / n`` over an interval,
        a difference of two prefix sums; for residuals in an interval of
        length 1, Hoeffding's maximal inequality bounds a one-sided maximum
        of prefix sums by ``exp(-2 n t^2)``, and ``tol="auto"`` is the ``t``
        at which the union bound over the ``4 m`` such maxima (two ends, two
        signs, ``m`` utilities) reaches 1: the typical size of the noise,
        not a high-probability bound. The paper's Appendix A asks for an
        ``epsilon`` of order ``sqrt(log(|U| / delta) / N)`` for the same
        reason. On simulated perfectly calibrated predictions (Dirichlet, 2
        to 20 classes, ``n = 2000``) ``UC`` exceeds it in at most 10% of the
        samples for "comb" and "class-wise", and in up to 28% for the single
        top-class utility. It is a guard, not a guarantee (the patches are
        chosen on the data they are audited on); for utilities with values
        in ``[-1, 1]`` rather than ``[0, 1]`` the noise doubles, so pass a
        float. See also ``validation_fraction``.
    step : {"armijo", "paper"} or float, default="armijo"
        Step size ``eta_t``:

        - ``"armijo"``: backtracking line search on the (weighted) Brier
          score, as in Hegazy et al., Appendix C.1. With
          ``S = E[||u_vec(p)||^2 1{v_u(p) in I}]`` and
          ``eta* = err_t / S`` (the minimiser of the quadratic bound in the
          proof of Proposition A.1, exact when no coordinate is clipped by
          the projection), it starts at ``4 eta*`` and halves until the Brier
          score drops by at least ``eta err_t / 2`` (Armijo's condition
          with constant 1/4 on the slope ``-2 err_t``). Because projecting
          onto the simplex never increases the Brier score, ``eta*`` always
          passes, so the step taken is at least ``eta*`` and each patch
          lowers the Brier score by at least
          ``err_t^2 / (2 S) >= err_t^2 / (2 C)``.
        - ``"paper"``: ``eta_t = err_t / C`` with ``C`` classes, the step of
          Proposition A.1 (Brier decrease ``>= err_t^2 / C``).
        - a float: that constant step.

        Whatever the rule, a step that does not lower the Brier score on the
        fitted data is not taken and fitting stops, so the Brier score in
        ``history_`` never increases.
    validation_fraction : float or None, default=None
        If a float in (0, 1), that fraction of the samples (stratified by
        class when possible) is held out: patches are fitted on the rest,
        the held-out Brier score is recorded after each patch, fitting stops
        when it has not improved for ``n_iter_no_change`` patches (as the
        early stopping of
        :class:`~sklearn.ensemble.HistGradientBoostingClassifier`), and the
        patches after the best held-out Brier score are dropped. A
        data-driven guard against overfitting the calibration set, at the
        cost of fitting on fewer samples.
    n_iter_no_change : int, default=10
        Patience of the early stopping; used only with
        ``validation_fraction``.
    random_state : int, RandomState instance or None, default=None
        The held-out split (with ``validation_fraction``), the folds of
        ``init_cv`` and the inner randomness of an ``init`` estimator whose
        own ``random_state`` is None (it gets a seed drawn from this one;
        one given explicitly is kept).
    init : None, {"temperature", "isotonic", "sigmoid"}, recalibrator or \
callable, default=None
        Warm start: a first recalibration that the patches then correct.
        A name is scikit-learn's recalibration of that name
        (:class:`~sklearn.calibration.CalibratedClassifierCV` on the
        probabilities; "temperature" needs scikit-learn >= 1.8, else an
        equivalent temperature scaling fitted by weighted log-loss is used);
        an object with ``fit(P, y[, sample_weight])`` and
        ``predict_proba(P)`` is cloned and fitted; a callable ``P -> P'`` is
        applied as it is. :meth:`transform` applies it before the patches.
    init_cv : int or None, default=5
        Cross-fitting of a fitted ``init``: the patches are fitted on its
        out-of-fold predictions over ``init_cv`` folds (stratified when
        possible), so that the start and the patches are not fitted on the
        same rows; the start used by :meth:`transform` is refitted on all
        the rows. None fits the start and the patches on the same rows.
    labels : array-like of shape (n_classes,), default=None
        The class of each column of ``P``, sorted (a classifier's
        ``classes_``). By default the distinct labels of ``y``, which must
        then show every class (or be {0, 1} / {-1, 1} for two columns): with
        a class absent from ``y`` the columns are ambiguous and ``fit``
        raises. :class:`RecalibratedClassifier` fills it in itself.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class of each column of the probability matrices.
    n_features_in_ : int
        Number of columns of the fitted probability matrix (1 for a 1-D
        binary input).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of a data frame ``P``, if it had string names; the
        output keeps them (:meth:`get_feature_names_out`, ``set_output``).
    init_ : None, fitted recalibrator or callable
        The warm start applied before the patches.
    patches_ : list of Patch
        ``(utility, interval, sign, step)`` of each patch, in order.
    history_ : dict of ndarray
        One entry per iteration ``t = 0, ..., n_iter_`` (``t = 0``: the
        input; ``t``: after ``t`` patches) of

        - ``"uc"``: ``UC(f_t, family)`` on the fitted samples;
        - ``"brier"``: the weighted Brier score
          ``E ||f_t(X) - e_Y||^2`` (in ``[0, 2]``, the potential of
          Proposition A.1) on the fitted samples; never increasing;
        - ``"validation_uc"``, ``"validation_brier"``: the same on the held
          out samples (only with ``validation_fraction``).
    n_iter_ : int
        Number of patches made while fitting (``len(patches_)`` unless
        early stopping dropped the last ones).
    tol_ : float
        The tolerance used (``tol`` with ``"auto"`` resolved).
    stopping_reason_ : str
        ``"tol"``, ``"max_iter"``, ``"no_decrease"`` (no step lowered the
        Brier score) or ``"early_stopping"``.

    See Also
    --------
    RecalibratedClassifier : Fit a classifier and this recalibrator on its
        out-of-fold probabilities.
    skcal.utility_calibration_error : The audit.

    Notes
    -----
    **Sign convention.** Hegazy et al. write the witness as
    ``w(p) = xi u_vec(p) 1{v_u(p) in I}`` with
    ``err_t = E<f_t(X) - Y, w_t(f_t(X))>`` and the update
    ``f_{t+1} = proj(f_t - eta_t w_t)``. Since
    ``<p - e_y, u_vec(p)> = v_u(p) - u(p, e_y)``, its ``xi`` is minus the
    ``sign`` reported by the audit (+1 when realised utility exceeds
    predicted utility); the update ``p + eta * sign * u_vec(p)`` here is the
    paper's.

    **Deviations from Algorithm 1.** The expectations are empirical
    averages over the fitted samples, reused at every iteration (the paper's
    analysis assumes fresh samples per iteration; ``tol="auto"`` and
    ``validation_fraction`` are the guards against the resulting
    overfitting). The default step is the Armijo search described above
    rather than the ``err_t / C`` of Proposition A.1 (available as
    ``step="paper"``), and the loop also stops when no step lowers the
    Brier score, which the proposition rules out in exact arithmetic but
    rounding does not.

    **Exact replay.** The membership test ``v_u(p) in [a, b]`` and the
    utility vector are computed row by row, in the same way while fitting
    and in :meth:`transform`, so replaying ``patches_`` on the fitted
    predictions reproduces the fitted predictions bit for bit. For the
    built-in top-class, class-wise and top-K utilities ``v_u`` is also
    computed exactly as the audit does; for other utilities (whose audit
    uses matrix products) a row whose ``v_u`` lies on an end of the interval
    to the last bit may be left out of the patch.

    Examples
    --------
    An over-confident model: it predicts 0.9 for its top class, which is
    right half of the time.

    >>> import numpy as np
    >>> from skcal import UtilityPatchingRecalibrator
    >>> P = np.array([[0.9, 0.1]] * 10)
    >>> y = np.array([0, 1] * 5)
    >>> rec = UtilityPatchingRecalibrator(family="top-class").fit(P, y)
    >>> len(rec.patches_)
    1
    >>> patch = rec.patches_[0]
    >>> patch.utility, patch.interval, patch.sign, round(patch.step, 12)
    (TopClass(), (0.9, 0.9), -1, 0.8)

    The top class (column 0) was over-promised on the interval ``[0.9, 0.9]``
    of top-class confidence: the patch lowers it, and every prediction in
    that interval becomes ``[0.5, 0.5]``.

    >>> rec.transform(P[:2])
    array([[0.5, 0.5],
           [0.5, 0.5]])
    >>> rec.history_["uc"], rec.history_["brier"]
    (array([0.4, 0. ]), array([0.82, 0.5 ]))

    A 1-D input is the probability of ``classes_[1]``; a prediction outside
    the patched interval is left as it is.

    >>> rec.transform([0.1, 0.3])
    array([0.5, 0.3])
    """

    def __init__(
        self,
        family: str | object = "comb",
        *,
        max_iter: int = 100,
        tol: str | float = "auto",
        step: str | float = "armijo",
        validation_fraction: float | None = None,
        n_iter_no_change: int = 10,
        random_state: int | np.random.RandomState | None = None,
        init: str | BaseEstimator | Callable | None = None,
        init_cv: int | None = 5,
        labels: ArrayLike | None = None,
    ) -> None:
        self.family = family
        self.labels = labels
        self.init = init
        self.init_cv = init_cv
        self.max_iter = max_iter
        self.tol = tol
        self.step = step
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state

    # -- input checks -------------------------------------------------------

    def _check_P(self, P, name="X", n_columns=None):
        """``P`` as an (n, C) float64 matrix, and whether it was 1-D."""
        input_dtype = getattr(P, "dtype", None)
        array = as_probability_array(P, name)
        if array.ndim not in (1, 2):
            raise ValueError(
                f"{name} must be of shape (n_samples, n_classes) or (n_samples,), "
                f"got shape {array.shape}."
            )
        one_d = array.ndim == 1
        if not one_d and array.shape[1] < 2:
            raise ValueError(
                f"{name} has {array.shape[1]} column(s); probabilities need at "
                "least 2 classes (pass the probability of the second of two "
                "classes as a 1-D array, or the full predict_proba output)."
            )
        return checked_probabilities(
            array, name, input_dtype, n_columns, type(self).__name__
        )

    def _encode_y(self, y, n_columns, one_d=False):
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        # the class of each column: labels, or the distinct labels of y when
        # all are present; a class absent from y makes the columns ambiguous
        classes = resolve_labels(
            y, self.labels, n_columns, proba_name="X", y_name="y", one_d=one_d
        )
        return classes, label_positions(classes, y).astype(np.intp)

    # -- fitting -------------------------------------------------------------

    _parameter_constraints = dict(_PATCHING_CONSTRAINTS)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> UtilityPatchingRecalibrator:
        """Fit the patches on predicted probabilities and observed classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities, rows summing to 1 (within 1e-6), e.g.
            held-out ``predict_proba`` output; a 1-D array is the probability
            of the second of two classes. Not modified.
        y : array-like of shape (n_samples,)
            Observed classes: the sorted distinct labels are the columns of
            ``X``; when some class is missing, pass column indices.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, used by the audit, the Brier score and the
            line search; integer weights equal repeating rows.

        Returns
        -------
        self : UtilityPatchingRecalibrator
            The estimator itself.
        """
        self._fit(X, y, sample_weight)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(
        self, X: ArrayLike, y: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> np.ndarray:
        """Fit, and return the patched predictions computed while fitting.

        Equal, bit for bit, to ``fit(X, y).transform(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities, as for :meth:`fit`.
        y : array-like of shape (n_samples,)
            Observed classes, as for :meth:`fit`.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows; equal weights when None.

        Returns
        -------
        X_new : ndarray of the shape of ``X``
            The patched predictions.
        """
        if self.init is not None:
            # the patches were fitted on cross-fitted starts: replay them
            return self.fit(X, y, sample_weight).transform(X)
        return self._fit(X, y, sample_weight)

    def _start(self, P, y_index, w):
        """The warm-started predictions the patches are fitted on, and ``init_``."""
        init = _check_init(self.init)
        init_cv = self.init_cv
        if init is None:
            return P, None
        if not callable(getattr(init, "fit", None)):
            return self._check_P(init(P.copy()), name="init(P)")[0], init
        if init_cv is not None and P.shape[0] < init_cv:
            n = P.shape[0]
            raise ValueError(
                f"init_cv={init_cv} folds need at least {init_cv} samples, "
                f"got {n} sample{'' if n == 1 else 's'}."
            )
        # the warm start's own randomness (inner folds, subsamples) follows
        # random_state: an estimator whose random_state is None gets a seed
        # drawn from it, as RecalibratedClassifier and AutoRecalibrator do
        init = seed_random_states(clone(init), draw_seed(self.random_state))
        fitted = fit_recalibrator(init, P, y_index, w)  # our clone: fit it as it is
        if init_cv is None:
            start = predict_recalibrator(fitted, P, check=False)
        else:
            from sklearn.model_selection import KFold, StratifiedKFold

            rng = check_random_state(self.random_state)
            counts = np.bincount(y_index)
            folds = (
                StratifiedKFold(init_cv, shuffle=True, random_state=rng)
                if counts[counts > 0].min() >= init_cv
                else KFold(init_cv, shuffle=True, random_state=rng)
            )
            start = np.empty_like(P)
            for train, test in folds.split(P, y_index):
                model = fit_recalibrator(
                    clone(init), P[train], y_index[train], w[train]
                )
                start[test] = predict_recalibrator(model, P[test], check=False)
        if hasattr(fitted, "_predict_canonical"):
            return start, fitted  # skcal's own output: canonical already
        return self._check_P(start, name="init.predict_proba(P)")[0], fitted

    def _fit_canonical(self, P, y, w):
        """Fit on the canonical form without validating it (skcal's inner fits).

        ``P`` float64 ``(n, C)`` probabilities, ``y`` column indices, ``w``
        checked weights, as an entry point hands them down; the parameters
        are still checked.
        """
        self._validate_params()
        C = P.shape[1]
        classes = np.arange(C) if self.labels is None else np.asarray(self.labels)
        self._fit_checked(P, False, classes, y, w)
        return self

    def _predict_canonical(self, P):
        """The patched probabilities of a canonical ``P`` (skcal's inner predictions)."""
        init = getattr(self, "init_", None)
        if init is not None:
            if hasattr(init, "_predict_canonical"):
                P = init._predict_canonical(P)
            else:
                P = init.predict_proba(P) if hasattr(init, "predict_proba") else init(P)
                P = self._check_P(P, name="the warm start's output")[0]
        elif not self.patches_:
            P = P.copy()
        for patch in self.patches_:
            P = apply_patch(P, patch)
        return P

    def _fit(self, P, y, sample_weight):
        _check_feature_names(self, P, reset=True)
        # parameters before data, as everywhere (_fit_checked uses them)
        _check_not_boolean(self.get_params(deep=False))
        _check_family(self.family)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        P, one_d = self._check_P(P)
        n, C = P.shape
        y = column_or_1d(y, warn=True)
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]} elements.")
        w = check_sample_weight(sample_weight, n)
        classes, y_index = self._encode_y(y, C, one_d)
        return self._fit_checked(P, one_d, classes, y_index, w)

    def _fit_checked(self, P, one_d, classes, y_index, w):
        """The fit on checked input; returns the patched fitted rows."""
        # the other parameters were checked by _fit_context
        _check_not_boolean(self.get_params(deep=False))
        family = _check_family(self.family)
        max_iter = int(self.max_iter)
        tol = self.tol if isinstance(self.tol, str) else float(self.tol)
        step_rule = self.step if isinstance(self.step, str) else float(self.step)
        fraction = (
            None if self.validation_fraction is None else float(self.validation_fraction)
        )
        patience = int(self.n_iter_no_change)
        n, C = P.shape
        utilities = members(family, C)
        P, self.init_ = self._start(P, y_index, w)

        if fraction is None:
            fit_rows, val_rows = np.arange(n), None
        else:
            fit_rows, val_rows = self._split(y_index, fraction)

        # fancy indexing copies: P_fit is the fit's own, patched in place
        P_fit, y_fit, w_fit = P[fit_rows], y_index[fit_rows], w[fit_rows]
        W = w_fit.sum()
        if not W > 0:
            raise ValueError(
                "sample_weight is zero on all the samples left for fitting."
            )
        self.tol_ = _auto_tol(len(utilities), W) if tol == "auto" else tol

        history = {"uc": [], "brier": []}
        if val_rows is not None:
            P_val, y_val, w_val = P[val_rows].copy(), y_index[val_rows], w[val_rows]
            history["validation_uc"] = []
            history["validation_brier"] = []
            best = (np.inf, 0, None)  # (held-out Brier, iteration, P_val)

        row_loss = row_brier(P_fit, y_fit)
        brier = weighted_sum(w_fit, row_loss) / W
        patches = []
        reason = "max_iter"
        auditor = (
            IncrementalAudit(utilities, P_fit, y_fit, w_fit)
            if IncrementalAudit.applies(utilities, P_fit.shape[0])
            else None
        )
        for t in range(max_iter + 1):
            if auditor is not None:
                uc, details = auditor.audit()
            else:
                uc, details = audit_family(utilities, P_fit, y_fit, w_fit)
            history["uc"].append(uc)
            history["brier"].append(brier)
            if val_rows is not None:
                val_brier = float(np.average(row_brier(P_val, y_val), weights=w_val))
                history["validation_brier"].append(val_brier)
                history["validation_uc"].append(
                    audit_family(utilities, P_val, y_val, w_val, return_details=False)
                )
                if val_brier < best[0]:
                    best = (val_brier, t, (P_fit.copy(), P_val.copy()))
                elif t - best[1] >= patience:
                    reason = "early_stopping"
                    break
            if uc <= self.tol_ or details["sign"] == 0:
                reason = "tol"
                break
            if t == max_iter:
                break
            patch, P_fit, row_loss, brier, patched = self._patch(
                P_fit,
                y_fit,
                w_fit,
                W,
                row_loss,
                brier,
                details,
                step_rule,
                None if auditor is None else auditor.V[details["index"]],
            )
            if patch is None:
                reason = "no_decrease"
                break
            patches.append(patch)
            if auditor is not None:
                auditor.update(P_fit, patched)
            if val_rows is not None:
                P_val = apply_patch(P_val, patch)

        self.n_iter_ = len(patches)
        if not patches and reason == "tol" and self.tol == "auto" and history["uc"][0] > 0:
            # tol="auto" is the size of UC that sampling noise alone reaches on
            # W rows; below it no patch is made. Say how many rows would let
            # an error of the size found exceed it: log(4|U|) / (2 UC^2).
            with np.errstate(divide="ignore", over="ignore"):
                needed = np.log(4.0 * len(utilities)) / (2.0 * history["uc"][0] ** 2)
            needed = f"about {int(np.ceil(needed))}" if needed < 1e15 else "far more than that"
            warnings.warn(
                f"UtilityPatchingRecalibrator made no patch: the utility calibration "
                f"error found on the fitted rows, {history['uc'][0]:.3g}, is within "
                f"tol='auto' = {self.tol_:.3g}, the size sampling noise alone reaches "
                f"with a total weight of {W:.4g}. An error of this size would exceed "
                f"it from a total weight of {needed}; pass a smaller tol to "
                "patch anyway.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        if val_rows is not None:
            # keep the patches up to the best held-out Brier score
            patches = patches[: best[1]]
            P_fit, P_val = best[2]
        self.classes_ = classes
        self.n_features_in_ = 1 if one_d else C
        self.patches_ = patches
        self.history_ = {key: np.asarray(values) for key, values in history.items()}
        self.stopping_reason_ = reason

        if val_rows is None:
            P_out = P_fit  # every row, in order: the fit's own copy
        else:
            P_out = np.empty_like(P)
            P_out[fit_rows] = P_fit
            P_out[val_rows] = P_val
        return P_out[:, 1].copy() if one_d else P_out

    def _split(self, y_index, fraction):
        rows = np.arange(y_index.shape[0])
        rng = check_random_state(self.random_state)
        n_val = int(np.ceil(fraction * rows.shape[0]))
        if n_val < 1 or n_val >= rows.shape[0]:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves no sample "
                f"for fitting or for validation out of {rows.shape[0]}."
            )
        try:
            fit_rows, val_rows = train_test_split(
                rows, test_size=n_val, stratify=y_index, random_state=rng
            )
        except ValueError:
            # too few members in some class to stratify
            fit_rows, val_rows = train_test_split(
                rows,
                test_size=n_val,
                random_state=check_random_state(self.random_state),
            )
        return np.sort(fit_rows), np.sort(val_rows)

    def _patch(self, P, y, w, W, row_loss, brier, details, step_rule, v=None):
        """One patch from the audit ``details``; ``(None, ...)`` if no step helps.

        ``v``: the audited utility's ``v_u`` of every row of ``P`` when the
        caller has it (the incremental audit computes it row by row, as
        :func:`predicted_utility` does).
        """
        utility = details["utility"]
        a, b = details["interval"]
        sign = int(details["sign"])
        if v is None:
            v = predicted_utility(utility, P)
        mask = (v >= a) & (v <= b)
        failed = (None, P, row_loss, brier, None)
        # Shrink the interval to the rows that carry weight: an end at a
        # zero-weight row would make the patch on new data depend on rows that
        # do not count (integer weights must equal repeating rows).
        weighted = mask & (w > 0)
        if not weighted.any():
            return failed
        v_weighted = v[weighted]
        a, b = float(v_weighted.min()), float(v_weighted.max())
        index = np.flatnonzero((v >= a) & (v <= b))  # the rows patched
        rows = P[index]
        U = utility_rows(utility, rows)
        w_rows, y_rows = w[index], y[index]
        realised = U[np.arange(rows.shape[0]), y_rows]
        # err_t and E||w_t||^2 on exactly the rows patched
        err = weighted_sum(w_rows, sign * (realised - v[index])) / W
        norm2 = weighted_sum(w_rows, np.einsum("ij,ij->i", U, U)) / W
        if not (err > 0 and norm2 > 0):
            return failed

        def trial(eta):
            new_rows = patch_rows(rows, U, sign, eta)
            loss = row_loss.copy()
            # loss[index] = row_brier(new_rows, y_rows), without temporaries
            new_rows = np.ascontiguousarray(new_rows, dtype=np.float64)
            scatter_row_brier(
                np.einsum("ij,ij->i", new_rows, new_rows), new_rows, y_rows, index, loss
            )
            return new_rows, loss, weighted_sum(w, loss) / W

        if step_rule == "armijo":
            eta = _ARMIJO_START * err / norm2
            for _ in range(_ARMIJO_HALVINGS):
                new_rows, loss, new_brier = trial(eta)
                if new_brier < brier and new_brier <= brier - 2 * _ARMIJO_C * eta * err:
                    break
                eta /= 2
            else:
                return failed
        else:
            eta = err / P.shape[1] if step_rule == "paper" else step_rule
            new_rows, loss, new_brier = trial(eta)
            if not new_brier < brier:
                return failed
        P[index] = new_rows  # in place: the caller's own copy of the rows fitted
        patch = Patch(utility=utility, interval=(a, b), sign=sign, step=float(eta))
        return patch, P, loss, new_brier, index

    # -- prediction ------------------------------------------------------------

    def plot_history(self, ax: Axes | None = None) -> PatchingHistoryDisplay:
        """Draw UC and Brier score after each patch (needs matplotlib).

        See :class:`skcal.PatchingHistoryDisplay`.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes for UC; a new figure when None.

        Returns
        -------
        display : PatchingHistoryDisplay
            The display, drawn.
        """
        check_is_fitted(self)
        from ..display import PatchingHistoryDisplay

        return PatchingHistoryDisplay.from_recalibrator(self, ax=ax)

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Replay the patches on predicted probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities, with the columns of the fitted ones
            (a 1-D array for two classes: the probability of ``classes_[1]``).
            Not modified.

        Returns
        -------
        X_new : ndarray of the shape of ``X``
            The recalibrated probabilities (1-D in, 1-D out).
        """
        check_is_fitted(self)
        _check_feature_names(self, X, reset=False)
        P, one_d = self._check_P(X, n_columns=self.classes_.shape[0])
        # copies when nothing changes P: never hand back the caller's array
        P = self._predict_canonical(P)
        return P[:, 1].copy() if one_d else P

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Recalibrated probabilities, always of shape (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            As in :meth:`transform`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The recalibrated class probabilities.
        """
        P_new = self.transform(X)
        if P_new.ndim == 1:
            return np.column_stack([1.0 - P_new, P_new])
        return P_new

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class of largest recalibrated probability (ties: lowest column).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            As in :meth:`transform`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.target_tags.required = True
        return tags
