"""Slow, obviously-correct twins of CalibrationSketch (skcal/sketch/).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def exact_grouped_reference(y, p, w):
    """(values, weights, positives), each sum exact (Fractions) then rounded once.

    The statistic a merge of sketches must reproduce bit for bit: the
    correctly rounded exact sums, whatever the order of the rows.
    """
    from fractions import Fraction

    sums = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        total, positive = sums.get(pi, (Fraction(0), Fraction(0)))
        sums[pi] = (total + Fraction(wi), positive + Fraction(wi) * int(yi != 0))
    values = sorted(sums)
    return (
        np.array(values, dtype=float),
        np.array([float(sums[v][0]) for v in values]),
        np.array([float(sums[v][1]) for v in values]),
    )


def compacted_rows_reference(y, p, w, level):
    """Rows moved as a compacted sketch moves them, slowly, with Fractions.

    On the cells ``[j 2**-level, (j + 1) 2**-level)`` (1 in the last), the
    positive-weight rows of each class in a cell move to their exact weighted
    mean prediction (rounded once). Returns ``(y, p, w)`` of the moved rows
    (zero-weight rows dropped) and the largest distance a row moved.
    """
    from fractions import Fraction

    cells = {}
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist()):
        if wi == 0:
            continue
        j = min(int(Fraction(pi) * 2**level), 2**level - 1)
        mass, moment, members = cells.get((j, yi != 0), (Fraction(0), Fraction(0), []))
        members.append(pi)
        cells[(j, yi != 0)] = (mass + Fraction(wi), moment + Fraction(wi) * Fraction(pi), members)
    ys, ps, ws, moved = [], [], [], 0.0
    for (_cell, positive), (mass, moment, members) in sorted(cells.items()):
        mean = float(moment / mass)
        mean = min(max(mean, min(members)), max(members))
        if min(members) == max(members):
            mean = members[0]
        moved = max(moved, max(abs(m - mean) for m in members))
        ys.append(1.0 if positive else 0.0)
        ps.append(mean)
        ws.append(float(mass))
    return np.array(ys), np.array(ps), np.array(ws), moved
