"""Random test instances shared by the fast-versus-reference tests.

Each case is ``(y, p, w)`` of validated float64 arrays. The mix covers what
DESIGN.md section 7 asks for: n = 1, 2, 3, ..., heavy ties, predictions
exactly 0 or 1, integer, real and zero weights, a single class, and both
near-calibrated and badly calibrated data.
"""

import functools
import inspect

import numpy as np


def random_case(rng, n):
    """One random (y, p, w) instance of size n with a randomly chosen flavour."""
    kind = rng.integers(6)
    if kind == 0:  # continuous predictions
        p = rng.random(n)
    elif kind == 1:  # heavy ties on a coarse grid
        p = rng.integers(0, 6, n) / 5.0
    elif kind == 2:  # many end points
        p = rng.choice([0.0, 1.0, 0.5, rng.random()], n)
    elif kind == 3:  # a single distinct value
        p = np.full(n, rng.random())
    else:
        p = np.round(rng.random(n), 2)
    flavour = rng.integers(4)
    if flavour == 0:  # near calibrated
        y = (rng.random(n) < p).astype(float)
    elif flavour == 1:  # badly calibrated
        y = (rng.random(n) < 1 - p).astype(float)
    elif flavour == 2:  # a single class
        y = np.full(n, float(rng.integers(2)))
    else:  # shifted
        y = (rng.random(n) < np.clip(p + rng.uniform(-0.3, 0.3), 0, 1)).astype(float)
    wkind = rng.integers(4)
    if wkind == 0:
        w = np.ones(n)
    elif wkind == 1:
        w = rng.integers(1, 5, n).astype(float)
    elif wkind == 2:
        w = rng.exponential(size=n)
    else:  # some zero weights, positive sum
        w = rng.integers(0, 3, n).astype(float)
        w[rng.integers(n)] += 1.0
    return y, p, w


def random_cases(seed, count, max_n=60):
    """``count`` cases: n = 1, 2, 3 first, then random sizes up to ``max_n``."""
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 3] + list(rng.integers(1, max_n + 1, count - 3))
    return [random_case(rng, int(n)) for n in sizes[:count]]


def repeat_rows(y, p, w_int):
    """Rows repeated by integer weights: (y, p) with unit weights."""
    reps = w_int.astype(int)
    return np.repeat(y, reps), np.repeat(p, reps)


def over_cases(names, cases):
    """Run a test on every random case in a loop inside one test item.

    ``@over_cases("case", CASES)`` replaces ``@pytest.mark.parametrize`` for
    lists of random instances: the same cases are checked, without one test
    id (and its collection and reporting cost) per random draw. A failure
    names the case that failed and its values.
    """
    names = [name.strip() for name in names.split(",")]
    cases = list(cases)

    def decorate(test):
        signature = inspect.signature(test)
        rest = [p for name, p in signature.parameters.items() if name not in names]

        @functools.wraps(test)
        def run(**kwargs):
            for i, case in enumerate(cases):
                values = tuple(case) if len(names) > 1 else (case,)
                try:
                    test(**kwargs, **dict(zip(names, values)))
                except BaseException as error:
                    if hasattr(error, "add_note"):  # Python >= 3.11
                        error.add_note(
                            f"failed on random case {i} of {len(cases)}: "
                            f"{', '.join(names)} = {values!r}"[:4000]
                        )
                    raise

        run.__signature__ = signature.replace(parameters=rest)
        return run

    return decorate
