"""Families of utilities, and how the measures read their ``utility`` argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._input import MAX_SIZE
from ._engine import (
    Parametrized,
    Predictions,
    check_int,
    check_proba_and_labels,
    evaluate_blocks,
)
from ._utilities import (
    ClassWise,
    Linear,
    Rank,
    TopClass,
    TopK,
    Utility,
)

__all__ = [
    "ClassWiseFamily",
    "FiniteFamily",
    "LinearFamily",
    "RankFamily",
    "SampledFamily",
    "TopKFamily",
    "UTILITY_NAMES",
    "UtilityFamily",
    "members",
    "resolve_utility",
]


class FiniteFamily(Parametrized):
    """A finite set of utilities, possibly depending on the number of classes."""

    def members(self, n_classes: int) -> Sequence[Utility]:
        """The utilities of the family for ``n_classes`` classes, in a fixed order.

        Parameters
        ----------
        n_classes : int
            Number of classes.

        Returns
        -------
        utilities : list of Utility
            The members.
        """
        raise NotImplementedError

    def evaluate(
        self, y_prob: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Predicted and realised utility of every member, sharing one pass over ``y_prob``.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples, n_classes)
            Probability vectors, one per row.
        y : array-like of int, shape (n_samples,)
            Column of the observed class in each row.

        Returns
        -------
        V : ndarray of shape (n_utilities, n_samples)
            Predicted utility of each member (rows, in ``members`` order).
        realised : ndarray of shape (n_utilities, n_samples)
            Realised utility of each member on each row.
        """
        data = Predictions(*check_proba_and_labels(y_prob, y))
        utilities = self.members(data.n_classes)
        blocks = list(evaluate_blocks(utilities, data, len(utilities)))
        return (
            np.concatenate([V for _, V, _ in blocks]),
            np.concatenate([r for _, _, r in blocks]),
        )


class UtilityFamily(FiniteFamily):
    """A finite union of utilities and finite families.

    ``UC(f, U) = sup_{u in U} UC(f, u)`` (Hegazy et al., eq. 3.5). Nested
    families are flattened in order; the union of the class-wise and top-K
    families is the paper's ``U_comb`` (Section 5), also available as
    ``utility="comb"``.

    Parameters
    ----------
    utilities : sequence of Utility, finite families or names
        Members; names are those accepted by
        :func:`skcal.utility_calibration_error` ("top-class", "class-wise",
        "top-k", "comb").

    Examples
    --------
    >>> from skcal import ClassWiseFamily, TopK, TopKFamily, UtilityFamily
    >>> comb = UtilityFamily([ClassWiseFamily(), TopKFamily()])
    >>> comb.members(2)
    [ClassWise(c=0), ClassWise(c=1), TopK(k=1), TopK(k=2)]
    >>> V, realised = UtilityFamily([TopK(1), TopK(2)]).evaluate([[0.75, 0.25]], [1])
    >>> V.tolist(), realised.tolist()
    ([[0.75], [1.0]], [[0.0], [1.0]])
    """

    def __init__(self, utilities: Sequence[Utility | FiniteFamily | str]) -> None:
        self.utilities = utilities
        self._validate_params()

    def _validate_params(self):
        self._parts()

    def _parts(self):
        if isinstance(self.utilities, (str, Parametrized)) or not hasattr(
            self.utilities, "__iter__"
        ):
            raise TypeError(
                "UtilityFamily: utilities must be a sequence of utilities or "
                f"families, got {self.utilities!r}."
            )
        parts = [resolve_utility(u) for u in self.utilities]
        if not parts:
            raise ValueError("UtilityFamily: utilities is empty.")
        return parts

    def members(self, n_classes: int) -> Sequence[Utility]:
        out = []
        for part in self._parts():
            out.extend(members(part, n_classes))
        return out


class ClassWiseFamily(FiniteFamily):
    """The class-wise utilities ``U_CWE = {ClassWise(c)}`` (Hegazy et al., Example 3.4).

    ``UC(f, U_CWE) = sup_c sup_I |E[(1{Y = c} - p_c) 1{p_c in I}]|``: the
    worst class-wise cutoff calibration error.

    Parameters
    ----------
    classes : sequence of int, default=None
        Columns to include; all ``n_classes`` columns by default.

    Examples
    --------
    >>> from skcal import ClassWiseFamily
    >>> ClassWiseFamily().members(3)
    [ClassWise(c=0), ClassWise(c=1), ClassWise(c=2)]
    """

    def __init__(self, classes: Sequence[int] | None = None) -> None:
        self.classes = classes
        self._validate_params()

    def _validate_params(self):
        for c in () if self.classes is None else self.classes:
            ClassWise(c)  # raises for a bad column

    def members(self, n_classes: int) -> Sequence[Utility]:
        classes = range(n_classes) if self.classes is None else self.classes
        members = [ClassWise(c) for c in classes]
        for u in members:
            u._check_n_classes(n_classes)
        return members


class TopKFamily(FiniteFamily):
    """The top-K utilities ``U_topK = {TopK(k)}`` (Hegazy et al., Example 3.6).

    Parameters
    ----------
    ks : sequence of int, default=None
        Values of ``k`` to include; ``1, ..., n_classes`` by default.

    Examples
    --------
    >>> from skcal import TopKFamily
    >>> TopKFamily().members(3)
    [TopK(k=1), TopK(k=2), TopK(k=3)]
    """

    def __init__(self, ks: Sequence[int] | None = None) -> None:
        self.ks = ks
        self._validate_params()

    def _validate_params(self):
        for k in () if self.ks is None else self.ks:
            TopK(k)  # raises for a bad k

    def members(self, n_classes: int) -> Sequence[Utility]:
        ks = range(1, n_classes + 1) if self.ks is None else self.ks
        members = [TopK(k) for k in ks]
        for u in members:
            u._check_n_classes(n_classes)
        return members


class SampledFamily(Parametrized):
    """A continuous family over ``n_classes`` classes, measured through samples.

    Hegazy et al., Section 4.
    """

    _utility: Any = None  # the class of the members

    def __init__(self, n_classes: int) -> None:
        self.n_classes = n_classes
        self._validate_params()

    def _validate_params(self):
        check_int(self.n_classes, "n_classes", type(self).__name__, minimum=2)

    def sample(
        self, n_utilities: int, random_state: int | np.random.RandomState | None = None
    ) -> UtilityFamily:
        """Draw ``n_utilities`` members i.i.d. from the family's distribution.

        Parameters
        ----------
        n_utilities : int
            Number of utilities ``M`` to draw.
        random_state : int, RandomState instance or None, default=None
            Controls the draw; an integer makes it reproducible.

        Returns
        -------
        family : UtilityFamily
            The ``M`` drawn utilities, in the order drawn.
        """
        n_utilities = check_int(n_utilities, "n_utilities", "sample", minimum=1)
        self._validate_params()
        C = int(self.n_classes)
        if n_utilities * C > MAX_SIZE:
            raise ValueError(
                f"n_utilities={n_utilities} is too large for {C} classes: at most "
                f"{MAX_SIZE:,} utility parameters (n_utilities * n_classes) are "
                f"supported; use n_utilities <= {MAX_SIZE // C:,}."
            )
        from sklearn.utils import check_random_state
        rng = check_random_state(random_state)
        # Uniform on the boundary of the cube, {a : max_j |a_j| = 1}: its 2C
        # faces have equal area, so pick one uniformly (a coordinate and a
        # sign) and draw the other coordinates uniformly in [-1, 1].
        params = rng.uniform(-1.0, 1.0, size=(n_utilities, C))
        face = rng.randint(C, size=n_utilities)
        params[np.arange(n_utilities), face] = rng.choice([-1.0, 1.0], size=n_utilities)
        params = self._shape_params(params)
        return UtilityFamily([self._utility(row) for row in params])

    @staticmethod
    def _shape_params(params):
        return params


class LinearFamily(SampledFamily):
    """Linear utilities ``U_lin = {Linear(a) : a in [-1, 1]^C}`` (Hegazy et al., Example 3.5).

    The supremum over this continuous class is hard to compute (Hegazy et al.,
    Section 4), so it is measured through the distribution of
    ``UC(f, u)`` over sampled members: ``sample`` draws ``a`` uniformly on
    the boundary of the cube, ``{a : max_j |a_j| = 1}``, as in Hegazy et al.,
    Section 4.

    Parameters
    ----------
    n_classes : int
        Number of classes ``C`` (columns of ``y_prob``).

    Examples
    --------
    >>> from skcal import LinearFamily
    >>> family = LinearFamily(3).sample(2, random_state=0)
    >>> len(family.members(3))
    2
    >>> [float(abs(u.a).max()) for u in family.members(3)]
    [1.0, 1.0]
    """

    _utility = Linear


class RankFamily(SampledFamily):
    """Rank utilities ``U_rank = {Rank(theta)}`` (Hegazy et al., Example 3.6).

    ``sample`` draws ``theta`` uniformly on the boundary of the cube among
    non-increasing vectors, ``theta_1 >= ... >= theta_C`` (a better rank is
    worth more), as in Hegazy et al., Section 4: a uniform draw on the boundary
    sorted in decreasing order.

    Parameters
    ----------
    n_classes : int
        Number of classes ``C`` (columns of ``y_prob``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcal import RankFamily
    >>> family = RankFamily(4).sample(3, random_state=0)
    >>> all(bool(np.all(np.diff(u.theta) <= 0)) for u in family.members(4))
    True
    """

    _utility = Rank

    @staticmethod
    def _shape_params(params):
        return -np.sort(-params, axis=1)



# --- resolving the ``utility`` argument of the measures -------------------------

UTILITY_NAMES = ("top-class", "class-wise", "top-k", "comb")


def resolve_utility(utility, name="utility"):
    """A utility or finite family from a name or an object.

    Parameters
    ----------
    utility : str, Utility or finite family
        One of ``UTILITY_NAMES``, a :class:`Utility`, or a finite family
        (:class:`UtilityFamily`, :class:`ClassWiseFamily`,
        :class:`TopKFamily`).
    name : str, default="utility"
        The caller's parameter, named in the errors (``family`` for the
        recalibrator).

    Returns
    -------
    utility : Utility or finite family
    """
    if isinstance(utility, str):
        if utility == "top-class":
            return TopClass()
        if utility == "class-wise":
            return ClassWiseFamily()
        if utility == "top-k":
            return TopKFamily()
        if utility == "comb":
            return UtilityFamily([ClassWiseFamily(), TopKFamily()])
        if utility in ("linear", "rank"):
            raise ValueError(
                f"{name}={utility!r} names a continuous family, whose supremum is not "
                "computable (Hegazy et al., Section 4): use utility_calibration_ecdf, "
                "or measure a sample, e.g. LinearFamily(C).sample(M, random_state)."
            )
        raise ValueError(
            f"Unknown {name} {utility!r}; use one of {UTILITY_NAMES}, a Utility "
            "or a finite family."
        )
    if isinstance(utility, (Utility, FiniteFamily)):
        return utility
    if isinstance(utility, SampledFamily):
        raise TypeError(
            f"{name}: {type(utility).__name__} is a continuous family: its supremum is "
            "not computable (Hegazy et al., Section 4). Measure a sample of it, "
            f"{type(utility).__name__}(...).sample(n_utilities, random_state), "
            "or its error distribution with utility_calibration_ecdf."
        )
    raise TypeError(
        f"{name} must be a name in {UTILITY_NAMES}, a Utility or a finite "
        f"family, got {utility!r}."
    )


def members(utility, n_classes):
    """The utilities of a resolved utility or finite family, checked against ``n_classes``."""
    if isinstance(utility, FiniteFamily):
        return utility.members(n_classes)
    utility._check_n_classes(n_classes)
    return [utility]
