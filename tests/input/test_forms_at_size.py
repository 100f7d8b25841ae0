"""Every form of the input gives the value of the plain form, at every size.

``test_input_variants.py`` checks the forms of issue 22 on 30 to 40 rows. The
input checks and the grouping now take kernels that work in blocks (the
range and row sums of a binary ``predict_proba``, float labels made bytes,
the two classes of object or categorical labels, integer keys sorted by
numpy) and fall back to the general path on what they cannot read. Here the
same forms go through at sizes that take those blocks, their tails, and the
thresholds between paths (1 row to 65,537), on predictions with ties, with
-0.0, exactly 0 and 1, and rounded to float32, with and without weights
(some of them 0). The plain form is int64 labels in {0, 1}, float64
predictions and float64 weights (or none); every other form must give the
same number (to the rounding of a weight scale where weights are rescaled),
or the same error, and leave the caller's arrays as they were.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import skcal

from test_input_variants import BINARY_FUNCTIONS as BINARY

# the measures that read a multiclass predict_proba by its top label
MULTICLASS = [
    name for name in BINARY
    if name not in ("calibration_fixed_decision_loss", "maximum_swap_regret")
]
SIZES = [1, 2, 17, 1000, 4099, 65537]


def _outcome(call, *args, **kwargs):
    """The value as a float, or the error's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return float(result[0] if isinstance(result, tuple) else result)


def _same(expected, got, rel):
    if isinstance(expected, str) or isinstance(got, str):
        return expected == got
    return got == pytest.approx(expected, rel=rel, abs=1e-15)


def _predictions(rng, n, kind):
    if kind == "continuous":
        return rng.random(n)
    if kind == "rounded":
        return np.round(rng.random(n), 2)
    if kind == "float32":
        return rng.random(n).astype(np.float32).astype(np.float64)
    return rng.choice([0.0, -0.0, 0.5, 1.0], n)       # "ends": ties at 0 and 1


def _binary_forms(y, p, w):
    """Name -> (y_true, y_prob, sample_weight, options, relative tolerance)."""
    n = y.shape[0]
    strings = np.where(y == 1, "yes", "no")
    frozen = [None if a is None else a.copy() for a in (y, p, w)]
    for a in frozen:
        if a is not None:
            a.flags.writeable = False
    forms = {
        "bool": (y.astype(bool), p, w, {}, 0.0),
        "uint8": (y.astype(np.uint8), p, w, {}, 0.0),
        "int8": (y.astype(np.int8), p, w, {}, 0.0),
        "float": (y.astype(float), p, w, {}, 0.0),
        "float with -0.0": (np.where(y == 1, 1.0, -0.0), p, w, {}, 0.0),
        "-1/1": (2 * y - 1, p, w, {}, 0.0),
        "strings": (strings, p, w, {"pos_label": "yes"}, 0.0),
        "object strings": (strings.astype(object), p, w, {"pos_label": "yes"}, 0.0),
        "Categorical": (
            pd.Categorical(strings, categories=["no", "yes"]), p, w, {"pos_label": "yes"}, 0.0
        ),
        "lists": (y.tolist(), p.tolist(), None if w is None else w.tolist(), {}, 0.0),
        "Series": (pd.Series(y), pd.Series(p), None if w is None else pd.Series(w), {}, 0.0),
        "big-endian": (
            y.astype(">i8"), p.astype(">f8"), None if w is None else w.astype(">f8"), {}, 0.0
        ),
        "strided": (
            np.repeat(y, 2)[::2], np.repeat(p, 2)[::2],
            None if w is None else np.repeat(w, 2)[::2], {}, 0.0,
        ),
        "read-only": (*frozen, {}, 0.0),
        "predict_proba": (y, np.column_stack([1.0 - p, p]), w, {}, 1e-12),
        "predict_proba, Fortran order": (
            y, np.asfortranarray(np.column_stack([1.0 - p, p])), w, {}, 1e-12
        ),
    }
    if w is None:
        forms["weights of ones"] = (y, p, np.ones(n), {}, 1e-12)
        forms["integer weights of ones"] = (y, p, np.ones(n, dtype=np.int64), {}, 1e-12)
        forms["weights of 1/2"] = (y, p, np.full(n, 0.5), {}, 1e-12)
        forms["float32 weights of 4"] = (y, p, np.full(n, 4.0, dtype=np.float32), {}, 1e-12)
        forms["weights of 3"] = (y, p, np.full(n, 3.0), {}, 1e-9)
        forms["broadcast weights"] = (y, p, np.broadcast_to(np.float64(1.0), (n,)), {}, 1e-12)
    else:
        forms["weights times 2**-3"] = (y, p, w * 0.125, {}, 1e-12)
    return forms


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_forms_give_the_plain_value(n, weighted):
    rng = np.random.default_rng(1000 * n + weighted)
    failures = []
    for kind in ("continuous", "rounded", "float32", "ends"):
        if n > 4099 and kind in ("rounded", "ends"):
            continue            # the ties of these are covered at 4099 rows
        p = _predictions(rng, n, kind)
        y = (rng.random(n) < p).astype(np.int64)
        w = None
        if weighted:
            w = rng.random(n)
            w[rng.random(n) < 0.2] = 0.0
            w[0] = 1.0
        kept = [None if a is None else a.copy() for a in (y, p, w)]
        forms = _binary_forms(y, p, w)
        if np.unique(y).shape[0] < 2:
            # one class shown: string labels name their positive class, the
            # others keep 0/1's default; -1/1 with one class is ambiguous
            forms.pop("-1/1")
        for name in BINARY:
            call = getattr(skcal, name)
            plain = _outcome(call, y, p, sample_weight=w)
            for form, (yy, pp, ww, options, rel) in forms.items():
                if name == "maximum_swap_regret" and "weights" in form:
                    continue    # a total, not a mean: it scales with the weights
                got = _outcome(call, yy, pp, sample_weight=ww, **options)
                if not _same(plain, got, rel):
                    failures.append(f"{name}, {kind}, {form}: {got!r} != {plain!r}")
        for a, b in zip(kept, (y, p, w)):
            assert b is None or np.array_equal(a, b), "the caller's array was written"
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("n", [1, 17, 1001, 5003])
@pytest.mark.parametrize("n_classes", [3, 16])
def test_multiclass_forms_give_the_plain_value(n, n_classes):
    rng = np.random.default_rng(n * n_classes)
    P = rng.dirichlet(np.full(n_classes, 0.5), n)
    if n > 17:
        P[: n // 3] = np.round(P[: n // 3], 2)      # ties of confidence
        P[: n // 3] /= P[: n // 3].sum(axis=1, keepdims=True)
    y = np.array([rng.choice(n_classes, p=row) for row in P])
    w = rng.random(n) + 0.1
    labels = np.arange(n_classes)
    names = np.array([f"class {c:02d}" for c in range(n_classes)])
    forms = {
        "Fortran order": (y, np.asfortranarray(P), {"labels": labels}),
        "big-endian": (y, P.astype(">f8"), {"labels": labels}),
        "strided columns": (y, np.repeat(P, 2, axis=1)[:, ::2], {"labels": labels}),
        "DataFrame": (pd.Series(y), pd.DataFrame(P), {"labels": labels}),
        "strings": (names[y], P, {"labels": names}),
        "object strings": (names[y].astype(object), P, {"labels": names.astype(object)}),
        "Categorical": (pd.Categorical(names[y], categories=names), P, {"labels": names}),
        "int8": (y.astype(np.int8), P, {"labels": labels.astype(np.int8)}),
        "float": (y.astype(float), P, {"labels": labels.astype(float)}),
        "shifted": (y + 10, P, {"labels": labels + 10}),
    }
    failures = []
    calls = [(name, getattr(skcal, name)) for name in MULTICLASS] + [
        (f"utility {u}", lambda yy, PP, u=u, **k: skcal.utility_calibration_error(yy, PP, u, **k))
        for u in ("top-class", "class-wise")
    ]
    kept = P.copy(), y.copy()
    for weights in (None, w):
        for name, call in calls:
            plain = _outcome(call, y, P, sample_weight=weights, labels=labels)
            for form, (yy, PP, options) in forms.items():
                got = _outcome(call, yy, PP, sample_weight=weights, **options)
                if not _same(plain, got, 0.0):
                    failures.append(f"{name}, {form}: {got!r} != {plain!r}")
    assert np.array_equal(kept[0], P) and np.array_equal(kept[1], y)
    assert not failures, "\n".join(failures[:20])
