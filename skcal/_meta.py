"""The base shared by the classifier meta-estimators of skcal.

:class:`~skcal.RecalibratedClassifier` and
:class:`~skcal.RoundedResponseClassifier` both fit a probabilistic base
classifier, collect its held-out ``predict_proba`` (cross-validated, or all
the data for a :class:`~sklearn.frozen.FrozenEstimator`) and fit something on
those probabilities. This module holds that common part: the check that the
base has ``predict_proba``, the routing of ``sample_weight`` and other fit
metadata (scikit-learn's metadata routing when it is enabled, today's
behaviour otherwise), the held-out probabilities, and the forwarding of
``n_features_in_``, ``feature_names_in_`` and input tags.
"""

import warnings

from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import check_cv, cross_val_predict
from sklearn.utils import get_tags
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.validation import has_fit_parameter

from ._compat import _raise_for_params, _routing_enabled
from ._input import user_stacklevel

__all__ = ["HeldOutProbaMetaEstimator", "check_cv_param"]


def check_cv_param(cv):
    """Refuse a string ``cv`` (``"prefit"`` above all) with the way to do it.

    Nothing was released with ``cv="prefit"``: a fitted classifier is used as
    is by wrapping it in :class:`~sklearn.frozen.FrozenEstimator`, the one
    way, as in scikit-learn 1.6's own ``CalibratedClassifierCV``.
    """
    if isinstance(cv, str):
        raise ValueError(
            "cv must be an int, a cross-validation generator, an iterable or None, "
            f"got {cv!r}"
            + (
                "; to use a fitted estimator as is, wrap it in "
                "sklearn.frozen.FrozenEstimator."
                if cv == "prefit"
                else "."
            )
        )


class HeldOutProbaMetaEstimator(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Fit a base classifier and get its held-out probabilities.

    Subclasses define ``_base()`` (the unfitted or frozen base estimator) and
    call :meth:`_check_predict_proba`, :meth:`_route_fit_params`,
    :meth:`_held_out_proba` and :meth:`_forward_attributes` from ``fit``.
    """

    def _base(self):
        return self.estimator

    def _check_predict_proba(self, base):
        """A clear error for a base estimator without ``predict_proba``."""
        if isinstance(base, FrozenEstimator):
            inner = base.estimator
        else:
            inner = base
        try:
            has = callable(getattr(inner, "predict_proba", None))
        except AttributeError:  # available_if raising on access
            has = False
        if not has:
            raise TypeError(
                f"estimator must be a classifier with predict_proba; "
                f"{type(inner).__name__} has no predict_proba (for SVC, pass "
                "probability=True; otherwise wrap a model that has it)."
                if type(inner).__name__ == "SVC"
                else f"estimator must be a classifier with predict_proba; "
                f"{type(inner).__name__} has no predict_proba."
            )

    def _route_fit_params(self, base, sample_weight, fit_params, frozen, what):
        """The fit parameters of the base estimator.

        With metadata routing enabled, those it requested (scikit-learn's
        :func:`~sklearn.utils.metadata_routing.process_routing`); otherwise
        ``sample_weight`` when its ``fit`` accepts it (with a warning when it
        does not and is refitted), and no other parameter.
        """
        _raise_for_params(fit_params, self, "fit")
        if _routing_enabled():
            routed = process_routing(
                self, "fit", sample_weight=sample_weight, **fit_params
            )
            return dict(routed.estimator.fit)
        params = {}
        if sample_weight is not None:
            if has_fit_parameter(base, "sample_weight"):
                params["sample_weight"] = sample_weight
            elif not frozen:
                warnings.warn(
                    f"{type(base).__name__} does not accept sample_weight; the "
                    f"weights are only used {what}.",
                    stacklevel=user_stacklevel(),
                )
        return params

    def _held_out_proba(self, base, X, y, params, frozen, cv):
        """``(estimator_, held_out)``: the final base model and held-out probabilities.

        A frozen base is used as is and all of ``X`` is held out from it;
        otherwise the held-out probabilities are cross-validated over ``cv``
        and the final model is a clone fitted on all the data.
        """
        if frozen:
            estimator = clone(base).fit(X, y)
            return estimator, estimator.predict_proba(X)
        held_out = cross_val_predict(
            clone(base),
            X,
            y,
            cv=check_cv(cv, y, classifier=True),
            method="predict_proba",
            n_jobs=self.n_jobs,
            params=params,
        )
        return clone(base).fit(X, y, **params), held_out

    def _forward_attributes(self):
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, name):
                setattr(self, name, getattr(self.estimator_, name))
            elif name in self.__dict__:
                delattr(self, name)

    def get_metadata_routing(self) -> MetadataRouter:
        """Metadata routing of this meta-estimator.

        ``sample_weight`` is consumed by the meta-estimator itself (for what
        it fits on the held-out probabilities) and routed to the base
        estimator's ``fit`` when that estimator requests it; any other fit
        parameter is routed to the base estimator only.

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRouter
            What ``fit`` consumes itself and what it routes to the base
            estimator.
        """
        base = self._base()
        if base is None:
            from sklearn.linear_model import LogisticRegression

            base = LogisticRegression()
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=base,
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = self._base()
        if base is not None:
            estimator_tags = get_tags(base)
            tags.input_tags.sparse = estimator_tags.input_tags.sparse
            tags.input_tags.allow_nan = estimator_tags.input_tags.allow_nan
            tags.input_tags.string = estimator_tags.input_tags.string
        return tags

