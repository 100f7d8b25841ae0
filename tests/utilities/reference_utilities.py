"""Slow, obviously-correct twins of utilities and families (skcal/utilities/).

Each is written straight from a definition in the papers, with no
attempt at speed, so that the fast paths can be checked against it.
"""

import numpy as np


def rank_bruteforce(p, j):
    """rank(p, j) = 1 + #{i: p_i > p_j} + #{i < j: p_i = p_j} (DESIGN.md section 4)."""
    rank = 1
    for i in range(len(p)):
        if p[i] > p[j] or (i < j and p[i] == p[j]):
            rank += 1
    return rank


def _first_argmax(values):
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


def utility_vector_bruteforce(spec, p):
    """[u(p, e_0), ..., u(p, e_{C-1})] straight from paper 001's definitions.

    ``spec`` is ``(name, parameter)``: ("top-class", None), ("class-wise", c),
    ("top-k", k), ("linear", a), ("rank", theta), ("dcg", gamma) (Examples
    3.4-3.6, C.3), ("decision", loss) (Example 3.7), ("gain", R) (C.2),
    ("similarity", S) (C.3). Argmax and rank ties go to the lowest index.
    """
    name, param = spec
    C = len(p)
    if name == "top-class":
        star = _first_argmax(p)
        return [1.0 if j == star else 0.0 for j in range(C)]
    if name == "class-wise":
        return [1.0 if j == param else 0.0 for j in range(C)]
    if name == "top-k":
        return [1.0 if rank_bruteforce(p, j) <= param else 0.0 for j in range(C)]
    if name == "linear":
        return [float(param[j]) for j in range(C)]
    if name == "rank":
        return [float(param[rank_bruteforce(p, j) - 1]) for j in range(C)]
    if name == "dcg":
        return [np.log2(1.0 + rank_bruteforce(p, j)) ** -param for j in range(C)]
    if name == "decision":
        loss = np.asarray(param)
        expected = [sum(p[j] * loss[j, a] for j in range(C)) for a in range(loss.shape[1])]
        best = _first_argmax([-e for e in expected])
        return [-float(loss[j, best]) for j in range(C)]
    if name == "gain":
        R = np.asarray(param)
        expected = [sum(p[i] * R[i, j] for i in range(C)) for j in range(C)]
        star = _first_argmax(expected)
        return [float(R[i, star]) for i in range(C)]
    if name == "similarity":
        S = np.asarray(param)
        return [sum(p[i] * S[i, j] for i in range(C)) for j in range(C)]
    raise ValueError(f"unknown utility {name!r}")


def predicted_and_realised_bruteforce(spec, P, y):
    """v_u(p_i) = sum_j p_ij u(p_i, e_j) (001 eq. 3.1) and u(p_i, e_{y_i}), row by row."""
    v, realised = [], []
    for i in range(P.shape[0]):
        u = utility_vector_bruteforce(spec, P[i])
        v.append(sum(P[i, j] * u[j] for j in range(P.shape[1])))
        realised.append(u[y[i]])
    return np.array(v), np.array(realised)
