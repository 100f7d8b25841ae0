# Smooth calibration error (smCE): an exact dynamic program on the dual
# min-cost flow problem of Hu, Jambulapati, Tian and Yang (Lemma 3
# and Section 3.2). Callers validate, sort and group.
#
# With grouped residuals b_1..b_K, prefix sums B_k = b_1 + ... + b_k and gaps
# d_k = v_{k+1} - v_k, write G_k = B_k - f_k for the flow f_k on path edge k:
#
#     smCE = min { sum_k |G_k - G_{k-1}| + sum_{k<K} d_k |G_k - B_k| :
#                  G_0 = 0, G_K = B_K }.
#
# Forward, chi_0(g) = |g| and chi_k = clip(chi_{k-1} + d_k |g - B_k|), where
# clip (inf-convolution with |.|) cuts every slope to [-1, 1]. So chi_k is
# convex piecewise linear with slopes rising from -1 to +1: a multiset of
# breakpoints of total weight 2. Step k adds weight 2 d_k at B_k, then clip
# removes weight d_k from the far left and d_k from the far right. Breakpoints
# never move and are only removed at the two ends, so heaps hold them
# (O(K log K) in all), where keeping them split at the primal optimum (the
# usual "slope trick") would move many of them every step: about sqrt(K) per
# step on near-calibrated data and K/2 at worst. Where each clip stops,
# L_k <= R_k, is where chi_{k-1} + d_k |g - B_k| has a slope in [-1, 1];
# backtracking G_k = clamp(G_{k+1}, L_k, R_k) from G_K = B_K gives an
# optimal G, hence the value.
#
# The initial breakpoint (weight 2 at 0) is never used up before the last
# step, as each end loses at most sum_k d_k = v_K - v_1 <= 1 in all. It is a
# barrier: breakpoints below 0 only ever leave from the left, those above 0
# only from the right. So each side is one min-heap of (key, weight) pairs,
# keys B_j on the left and -B_j on the right, and a side whose heap is empty
# takes from the barrier.
#
# One side is enough for the value (``smce_one_side``): there the clip only
# ever takes the largest key, from a heap (``_walk_heap``). For the tester's
# null draws, about half of the keys are never taken: they go to buckets by
# value at O(1) and only the buckets the clip reaches are ordered
# (``_walk_buckets``), with the heap as the fallback.
#
# What the one-sided walk computes: a level set of G above (or below) both
# its neighbours could move towards them, saving twice the move in the first
# sum and losing at most sum_k d_k <= 1 times it in the second, so some
# optimal G is monotone from 0 to B_K and its first sum is c = |B_K|. With
# x_k = sign(B_K) B_k:
#
#     smCE = c + sum_k d_k dist(x_k, [0, c])
#              + min { sum_k d_k |g_k - clip(x_k, 0, c)| : 0 <= g_1 <= ... <= c },
#
# an L1 isotonic regression with weights d_k (tests/metrics/reference_smce.py,
# ``smce_isotonic``, solves it as a linear program). The walk is the slope
# trick of that regression, a key's clip at c the "beyond" weight; its
# priority-queue work (insert 2 d_k, take d_k from the top) is the work of
# the regression, for which the exact algorithms we know of take
# O(K log K). At 10**7 rows of the benchmark's data (10**7 values) an
# instrumented copy of ``_walk_buckets`` (not kept) counted 3.4 million
# pushes onto the run, 6.6 million keys put in buckets and moved back (in
# 1.8 million bucket moves, 15 million insertion steps), 4 million pops and
# 10 million partial takes: 16 to 20 ns a value.

from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport fabs
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memmove, memset

from ._entry cimport _all_in
from ._memory cimport work_malloc

# Both kernels check their argument shapes at entry (O(1)) and raise
# ValueError on a mismatch rather than reading or writing out of bounds.


cdef inline void _need(bint ok, str what) except *:
    if not ok:
        raise ValueError(f"kernel argument shapes do not match: {what}")


# 4-ary heaps: half the depth of binary ones, and the four children of a slot
# (four 16-byte pairs) sit together in memory. Pair i of a heap is at
# h[i * step], h[i * step + 1]: step 2 grows a heap upwards from h, step -2
# downwards, so the two sides can share one buffer from its two ends (they
# hold at most one breakpoint per step between them).
cdef inline void _heap_push(
    double* h, Py_ssize_t n, double key, double weight, Py_ssize_t step
) noexcept nogil:
    """Insert (key, weight) into the min-heap of pairs 0..n-1."""
    cdef Py_ssize_t parent
    while n > 0:
        parent = (n - 1) >> 2
        if h[parent * step] <= key:
            break
        h[n * step] = h[parent * step]
        h[n * step + 1] = h[parent * step + 1]
        n = parent
    h[n * step] = key
    h[n * step + 1] = weight


cdef inline void _heap_pop(double* h, Py_ssize_t n, Py_ssize_t step) noexcept nogil:
    """Remove the root of the min-heap of pairs 0..n-1, n >= 1.

    Bottom-up (Floyd): the hole at the root moves down to a leaf along the
    least children without comparing them with the moved-in last pair, which
    then rises from that leaf; it is a large key (a leaf's), so it rarely
    rises, and each level costs three comparisons instead of four.
    """
    cdef double key = h[(n - 1) * step], weight = h[(n - 1) * step + 1], least
    cdef Py_ssize_t i = 0, first, last, j, child, parent
    n -= 1
    while True:
        first = 4 * i + 1
        if first >= n:
            break
        last = first + 4 if first + 4 < n else n
        child = first
        least = h[first * step]
        for j in range(first + 1, last):
            if h[j * step] < least:
                least = h[j * step]
                child = j
        h[i * step] = least
        h[i * step + 1] = h[child * step + 1]
        i = child
    while i > 0:
        parent = (i - 1) >> 2
        if h[parent * step] <= key:
            break
        h[i * step] = h[parent * step]
        h[i * step + 1] = h[parent * step + 1]
        i = parent
    h[i * step] = key
    h[i * step + 1] = weight


cdef inline Py_ssize_t _lower_bound(
    const double* a, Py_ssize_t n, double x, Py_ssize_t hint
) noexcept nogil:
    """Number of entries of the sorted a[:n] below x, galloping from ``hint``.

    Costs O(log |answer - hint|): the queries of one kind (the walk B_k, or
    one end of the breakpoints) mostly move by a few places per step.
    """
    cdef Py_ssize_t lo, hi, step = 1
    if hint < n and a[hint] < x:        # the answer is in (hint, n]
        lo = hint + 1
        while True:
            hi = lo + step - 1
            if hi >= n:
                hi = n
                break
            if a[hi] >= x:
                break
            lo = hi + 1
            step *= 2
    else:                               # the answer is in [0, hint]
        hi = hint
        while True:
            lo = hi - step
            if lo <= 0:
                lo = 0
                break
            if a[lo] < x:
                lo += 1
                break
            hi = lo
            step *= 2
    # binary search of [lo, hi); the answer is in [lo, hi]
    n = hi - lo
    while n > 0:
        step = n >> 1
        if a[lo + step] < x:
            lo += step + 1
            n -= step + 1
        else:
            n = step
    return lo


cdef inline void _fenwick_add(
    double* tree, Py_ssize_t n, Py_ssize_t i, double delta
) noexcept nogil:
    """Add delta at 0-based slot i of the Fenwick tree tree[1..n]."""
    i += 1
    while i <= n:
        tree[i] += delta
        i += i & -i


cdef inline double _fenwick_prefix(const double* tree, Py_ssize_t count) noexcept nogil:
    """Sum of the first ``count`` slots."""
    cdef double s = 0.0
    while count > 0:
        s += tree[count]
        count -= count & -count
    return s


def dual_frontiers(
    const double[::1] B,                # IN  (K,) prefix sums B_1..B_K
    const double[::1] d,                # IN  (K-1,) gaps d_1..d_{K-1}, positive
    const double[::1] positions,        # IN  (K,) or (0,) 0, B_1..B_{K-1} sorted; witness only
    double[:, ::1] heap,                # OUT (2, 2K) work: (key, weight) pairs per side
    double[::1] tree,                   # OUT (K + 1,) or (0,) zeroed Fenwick tree of weights
    double[:, ::1] front,               # OUT (2, K-1) where clip k stops: L_k, R_k
    double[::1] peak,                   # OUT (K,) or (0,) a maximiser of the primal f_k
):
    """Run the forward pass, filling ``front`` (and ``peak``).

    With ``peak`` non-empty, a Fenwick tree over the sorted breakpoint
    positions mirrors the weights, and gives before step k the slope of
    chi_{k-1} at B_k: -1 plus the weight below B_k. By the envelope theorem
    it is a maximiser of f_k(x) = max sum_{j<=k} b_j x_j over feasible
    x_1..x_k with x_k = x.
    """
    cdef Py_ssize_t K = B.shape[0]
    cdef bint witness = peak.shape[0] > 0
    cdef const double* pos = NULL
    cdef double* fen = NULL
    cdef double* h[2]
    cdef Py_ssize_t size[2]
    cdef Py_ssize_t slot[3]             # last Fenwick slot of B_k and of each end
    cdef Py_ssize_t k, s, zero = 0
    cdef double need, m, key
    _need(K >= 1, "B must not be empty")
    _need(d.shape[0] == K - 1, "d must have len(B) - 1 entries")
    _need(peak.shape[0] == K or peak.shape[0] == 0, "peak must have len(B) entries or none")
    _need(positions.shape[0] == K if witness else positions.shape[0] == 0,
          "positions must have len(B) entries with a witness and none without")
    _need(tree.shape[0] >= K + 1 if witness else True,
          "tree needs len(B) + 1 entries with a witness")
    _need(heap.shape[0] == 2 and heap.shape[1] >= 2 * K, "heap must have shape (2, 2 len(B))")
    _need(front.shape[0] == 2 and front.shape[1] >= K - 1,
          "front must have shape (2, len(B) - 1)")
    h[0] = &heap[0, 0]
    h[1] = &heap[1, 0]
    size[0] = 0
    size[1] = 0
    if witness:
        pos = &positions[0]
        fen = &tree[0]
    with nogil:
        if witness:
            zero = _lower_bound(pos, K, 0.0, 0)
            slot[0] = slot[1] = slot[2] = zero
            _fenwick_add(fen, K, zero, 2.0)         # chi_0(g) = |g|
        for k in range(K):
            if witness:
                slot[2] = _lower_bound(pos, K, B[k], slot[2])
                peak[k] = _fenwick_prefix(fen, slot[2]) - 1.0
            if k == K - 1:
                break
            # weight 2 d_k at B_k; at exactly 0 it joins the barrier
            if B[k] < 0.0:
                _heap_push(h[0], size[0], B[k], 2.0 * d[k], 2)
                size[0] += 1
            elif B[k] > 0.0:
                _heap_push(h[1], size[1], -B[k], 2.0 * d[k], 2)
                size[1] += 1
            if witness:
                _fenwick_add(fen, K, slot[2], 2.0 * d[k])
            # clip: weight d_k off each end; s = 0 left, s = 1 right
            for s in range(2):
                need = d[k]
                while True:
                    if size[s] == 0:
                        front[s, k] = 0.0
                        if witness:
                            _fenwick_add(fen, K, zero, -need)
                        break
                    key = h[s][0]
                    m = h[s][1]
                    front[s, k] = key if s == 0 else -key
                    if m > need:
                        h[s][1] = m - need
                        m = need
                    else:
                        _heap_pop(h[s], size[s], 2)
                        size[s] -= 1
                    if witness:
                        slot[s] = _lower_bound(pos, K, front[s, k], slot[s])
                        _fenwick_add(fen, K, slot[s], -m)
                    need -= m
                    if need <= 0.0:
                        break


def backtrack(
    const double[::1] B,                # IN  (K,) prefix sums B_1..B_K
    const double[::1] d,                # IN  (K-1,) gaps d_1..d_{K-1}
    const double[:, ::1] front,         # IN  (2, K-1) L_k, R_k from dual_frontiers
    double[::1] x,                      # IN/OUT (K,) or (0,) peaks in, witness out
):
    """Return smCE from the optimal dual G; turn peaks into the witness.

    G_K = B_K and G_k = clamp(G_{k+1}, L_k, R_k). The witness is x_K = p_K,
    x_k = clamp(p_k, x_{k+1} - d_k, x_{k+1} + d_k): the maximiser of the
    concave f_k over the window the Lipschitz bound allows, so it is
    feasible by construction and attains max f_K.
    """
    cdef Py_ssize_t K = B.shape[0]
    cdef bint witness = x.shape[0] > 0
    cdef Py_ssize_t k
    cdef double g, g_next, total = 0.0, pk
    _need(K >= 1, "B must not be empty")
    _need(d.shape[0] == K - 1, "d must have len(B) - 1 entries")
    _need(front.shape[0] == 2 and front.shape[1] >= K - 1,
          "front must have shape (2, len(B) - 1)")
    _need(x.shape[0] == K or x.shape[0] == 0, "x must have len(B) entries or none")
    g_next = B[K - 1]
    with nogil:
        if witness:
            x[K - 1] = min(max(x[K - 1], -1.0), 1.0)  # peaks carry rounding
        for k in range(K - 2, -1, -1):
            g = min(max(g_next, front[0, k]), front[1, k])
            total += fabs(g_next - g) + d[k] * fabs(g - B[k])
            g_next = g
            if witness:
                pk = min(max(x[k], -1.0), 1.0)
                x[k] = min(max(pk, x[k + 1] - d[k]), x[k + 1] + d[k])
        total += fabs(g_next)
    return total


def smce_value(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    const double[::1] weights,          # IN  (K,) weight per value
    const double[::1] positives,        # IN  (K,) positive weight per value
    double total,                       # IN  weights.sum(), positive
    double[::1] heap,                   # OUT (2K,) work: both sides' (key, weight) pairs
):
    """smCE of a grouped statistic by the forward pass alone (no witness).

    The residuals b_k = (P_k - v_k W_k) / total, their prefix sums B_k and
    the gaps d_k are formed on the fly, as ``np.cumsum`` and ``np.diff``
    would. No frontier is stored and nothing is backtracked: the barrier
    keeps 0 inside every [L_k, R_k], where the clip leaves chi unchanged, so

        chi_{K-1}(0) = sum_{k<K} d_k |B_k|,

    and the value chi_{K-1}(B_K) integrates the slope from 0 to B_K. On the
    side of B_K's sign the slope is 1 - (weight beyond t) (right) or
    -1 + (weight below t) (left), as the total weight is 2, hence

        smCE = chi_{K-1}(0) + |B_K| - sum_j w_j min(|x_j|, |B_K|)

    over the breakpoints x_j left on that side: one scan of its heap. The
    two heaps share ``heap``, the left one growing up from its start and
    the right one down from its end, as they hold at most K - 1 pairs in
    all. Extra memory: 16 bytes per distinct value.
    """
    cdef Py_ssize_t K = values.shape[0]
    cdef double* h[2]
    cdef Py_ssize_t size[2]
    cdef Py_ssize_t k, s, j
    cdef double B = 0.0, d, need, m, chi0 = 0.0, absB, x, acc = 0.0
    _need(K >= 1, "values must not be empty")
    _need(weights.shape[0] == K and positives.shape[0] == K,
          "values, weights and positives must have one length")
    _need(heap.shape[0] >= 2 * K, "heap needs 2 len(values) entries")
    h[0] = &heap[0]
    h[1] = &heap[2 * K - 2]
    size[0] = 0
    size[1] = 0
    with nogil:
        for k in range(K - 1):
            B += (positives[k] - values[k] * weights[k]) / total
            d = values[k + 1] - values[k]
            chi0 += d * fabs(B)
            # weight 2 d at B; at exactly 0 it joins the barrier
            if B < 0.0:
                _heap_push(h[0], size[0], B, 2.0 * d, 2)
                size[0] += 1
            elif B > 0.0:
                _heap_push(h[1], size[1], -B, 2.0 * d, -2)
                size[1] += 1
            # clip: weight d off each end; an empty side takes from the barrier
            for s in range(2):
                need = d
                while size[s] > 0:
                    m = h[s][1]
                    if m > need:
                        h[s][1] = m - need
                        break
                    _heap_pop(h[s], size[s], 2 if s == 0 else -2)
                    size[s] -= 1
                    need -= m
                    if need <= 0.0:
                        break
        B += (positives[K - 1] - values[K - 1] * weights[K - 1]) / total
        absB = fabs(B)
        if B != 0.0:
            s = 0 if B < 0.0 else 1
            for j in range(size[s]):
                # keys are B_j on the left and -B_j on the right: |x_j| = |key|
                if s == 0:
                    x = fabs(h[0][2 * j])
                    acc += h[0][2 * j + 1] * (x if x < absB else absB)
                else:
                    x = fabs(h[1][-2 * j])
                    acc += h[1][-2 * j + 1] * (x if x < absB else absB)
    return chi0 + absB - acc


cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__GNUC__) || defined(__clang__)
    static inline int skcal_top_bit(uint64_t x) { return 63 - __builtin_clzll(x); }
    #elif defined(_MSC_VER) && defined(_M_X64)
    #include <intrin.h>
    static inline int skcal_top_bit(uint64_t x) {
        unsigned long i; _BitScanReverse64(&i, x); return (int)i;
    }
    #else
    static inline int skcal_top_bit(uint64_t x) {
        int r = 0;
        while (x >>= 1) r++;
        return r;
    }
    #endif
    """
    int skcal_top_bit(uint64_t x) noexcept nogil    # x != 0


cdef inline Py_ssize_t _bucket(double key, double inv, Py_ssize_t nb) noexcept nogil:
    """Bucket of a key in (0, c): floor(key * nb / c), at most nb - 1.

    Non-decreasing in ``key`` (a product by a positive constant rounds
    monotonically), so a key in a higher bucket is the larger one.
    """
    cdef double x = key * inv
    if x >= <double>nb:
        return nb - 1
    return <Py_ssize_t>x


cdef inline Py_ssize_t _highest_below(const uint64_t* bits, Py_ssize_t b) noexcept nogil:
    """The highest set bit of the bitmap below bit ``b``, or -1."""
    cdef Py_ssize_t word = b >> 6
    cdef uint64_t x = bits[word] & ((<uint64_t>1 << (b & 63)) - 1)
    while x == 0:
        word -= 1
        if word < 0:
            return -1
        x = bits[word]
    return (word << 6) + skcal_top_bit(x)


# Values per bucket of the walk (the number of buckets is a power of two
# near K / 16: 8 to 64 timed within 10% of each other at K = 10**6, 1 and 2
# slower, their memory no longer reused between calls).
cdef Py_ssize_t _BUCKET_DIVISOR = 16
# False: every walk uses the heap (the previous kernel; benchmarks and tests
# compare the two).
cdef bint _use_buckets = True
# A key below the run's top but not below its _NEAR_TOP-th pair from the top
# goes into the run at once rather than into a bucket. On the benchmark's
# data (outcomes from p**1.2) every key that went to a bucket came back (6.6
# million at 10**7 values, 2.2 insertion steps each). Inserted at once: the
# value's pass (smce_core) 211 -> 203 ms at 10**7 values and 1.94 -> 1.84 ms
# at 10**5, calibrated data within 3% either way; the public smCE's peak 55
# -> 50 bytes a row (fewer keys in the pool). 4 to 16 pairs timed within 1%
# of each other in a copy of the walk, 1 and 2 slower.
cdef Py_ssize_t _NEAR_TOP = 8
# Insertion steps a value the bucket walk may spend moving buckets onto the
# run before it hands its breakpoints to the heap walk.
cdef Py_ssize_t _BUDGET = 16
# The step at which the last ``smce_one_side`` call handed over, or -1
# (written with the GIL held; for tests).
cdef Py_ssize_t _last_handover = -1


def _set_buckets(bint on, Py_ssize_t divisor=16, Py_ssize_t budget=16):
    """Use the buckets in the one-sided pass (True) or the heap alone.

    ``divisor``: values per bucket (at least 1); ``budget``: insertion steps
    a value before the bucket walk hands over to the heap (at least 0). For
    benchmarks and tests.
    """
    global _use_buckets, _BUCKET_DIVISOR, _BUDGET
    if divisor < 1:
        raise ValueError(f"divisor must be at least 1, got {divisor}.")
    if budget < 0:
        raise ValueError(f"budget must be at least 0, got {budget}.")
    _use_buckets = on
    _BUCKET_DIVISOR = divisor
    _BUDGET = budget


def _handover_step():
    """The step at which the last ``smce_one_side`` walk left the buckets for
    the heap, or -1 if it did not (for tests)."""
    return _last_handover


cdef struct _Resume:
    # where ``_walk_buckets`` left a walk for the heap walk to finish
    Py_ssize_t k                        # the step reached, or -1
    double B                            # the prefix sum and chi0 so far
    double chi0
    double need                         # still to take at step k
    Py_ssize_t size                     # pairs in the heap and in the run
    Py_ssize_t n_run


cdef struct _Item:
    double key
    double weight                       # 0 once moved to the stack
    Py_ssize_t next                     # the item before it in its bucket, or -1


cdef inline double _residual(
    const double* values, const double* weights, const double* positives,
    const uint8_t* hits, double scale, double total, Py_ssize_t k,
) noexcept nogil:
    """b_k: from the outcomes ``hits`` of rows of weight ``scale`` when given."""
    if hits != NULL:
        # no branch on the outcome: hits[k] * scale is exactly scale or 0
        return (hits[k] * scale - values[k] * scale) / total
    return (positives[k] - values[k] * weights[k]) / total


cdef inline Py_ssize_t _stack_insert(
    double* h, Py_ssize_t n, double key, double weight
) noexcept nogil:
    """Insert (key, weight) into the increasing stack of n pairs; pairs passed."""
    cdef Py_ssize_t j = n
    while j > 0 and h[2 * j - 2] > key:
        h[2 * j] = h[2 * j - 2]
        h[2 * j + 1] = h[2 * j - 1]
        j -= 1
    h[2 * j] = key
    h[2 * j + 1] = weight
    return n - j


cdef struct _Pool:
    # the keys that go to buckets beyond each bucket's first, item i at
    # chunks[i >> shift][i & mask]: chunks allocated as needed (none moves,
    # as a grown array would; a large chunk in huge pages, _memory.pxd)
    _Item** chunks
    Py_ssize_t shift
    Py_ssize_t size                     # items
    Py_ssize_t n_chunks


cdef inline _Item* _pool_item(_Pool* pool, Py_ssize_t i) noexcept nogil:
    return &pool.chunks[i >> pool.shift][i & ((<Py_ssize_t>1 << pool.shift) - 1)]


cdef void _pool_free(_Pool* pool) noexcept nogil:
    cdef Py_ssize_t j
    if pool.chunks != NULL:
        for j in range(pool.n_chunks):
            PyMem_RawFree(pool.chunks[j])
    PyMem_RawFree(pool.chunks)
    pool.chunks = NULL


cdef void _hand_over(
    double* h, Py_ssize_t K, Py_ssize_t n_s, const _Item* slots,
    const uint64_t* bits, Py_ssize_t nb, _Pool* pool, _Resume* resume,
) noexcept nogil:
    """The breakpoints of a bucket walk as the heap walk keeps them.

    The stack (``n_s`` pairs from ``h`` up, increasing) becomes the heap
    walk's run (pairs from the end of the buffer down, increasing): its
    pairs reversed in place, then moved up as one block (``memmove``: the
    two places may overlap). The keys still in buckets (the first of each
    non-empty bucket, and every pool item of weight > 0: those of buckets
    moved already have weight 0) go to the heap, from ``h`` up. At most one
    breakpoint a step lives, so the heap and the run (at most K - 1 pairs
    between them) never meet in the 2K entries.
    """
    cdef Py_ssize_t i, j, size = 0, b
    cdef double t
    cdef uint64_t x
    cdef _Item* item
    for i in range(n_s // 2):
        j = n_s - 1 - i
        t = h[2 * i]
        h[2 * i] = h[2 * j]
        h[2 * j] = t
        t = h[2 * i + 1]
        h[2 * i + 1] = h[2 * j + 1]
        h[2 * j + 1] = t
    if n_s > 0:
        memmove(h + 2 * (K - n_s), h, 2 * n_s * sizeof(double))
    for j in range(pool.size):
        item = _pool_item(pool, j)
        if item.weight > 0.0:
            _heap_push(h, size, -item.key, item.weight, 2)
            size += 1
    for j in range(nb >> 6):
        x = bits[j]
        while x:
            i = skcal_top_bit(x)
            x &= ~(<uint64_t>1 << i)
            b = (j << 6) + i
            _heap_push(h, size, -slots[b].key, slots[b].weight, 2)
            size += 1
    resume.size = size
    resume.n_run = n_s


cdef double _walk_buckets(
    const double* values, const double* weights, const double* positives,
    const uint8_t* hits, double scale, Py_ssize_t K, double total, double BK,
    double* h, _Resume* resume,
) noexcept nogil:
    """The second pass of ``smce_one_side`` with buckets, given B_K (|B_K| > 0).

    Returns -1.0 if out of memory, -2.0 if it handed over (below).

    The clip takes the largest key of the side of B_K; keys lie in (0, c),
    c = |B_K|. About half of them are never taken, and a heap of all of
    them costs a sift-down per take. Here a key at least the largest so far
    kept goes on the top of an increasing stack (the run of the heap walk),
    one among the stack's top pairs into it (``_NEAR_TOP``);
    any other goes to a bucket by value (``_bucket``; the first in the
    bucket's own slot, the others in a linked list; a bitmap of the non-empty
    ones; O(1)). A bucket moves onto the stack, in
    order, only when the clip may take from it: when it is the highest
    non-empty one and not below the stack's top. Its keys then lie above the
    stack's except for those of its own bucket, so the insertion passes over
    a few pairs at most. If the passes add up to more than ``_BUDGET`` (16)
    per value (keys crowding a few buckets), the walk hands its breakpoints
    over to the heap walk (``_hand_over``), with the state of the step it
    reached in ``resume``, and the caller goes on there. Same
    breakpoints taken in the same order as from a heap; only the order of
    the final sum changes.
    """
    cdef Py_ssize_t n_s = 0, k, j, i, t, b, nb = 64, top = -1
    cdef Py_ssize_t budget = _BUDGET * K
    cdef double B = 0.0, c, d, need, m, chi0 = 0.0, key, beyond = 0.0, acc = 0.0
    cdef double sign, inv
    cdef uint64_t x
    cdef _Pool pool
    cdef _Item* item
    cdef _Item* slots                   # each bucket's first item; next: the others
    cdef uint64_t* bits                 # non-empty buckets
    cdef void* block
    # the stack: pairs (key, weight) of increasing key from h up, top last
    sign = 1.0 if BK > 0.0 else -1.0
    c = sign * BK
    while nb * _BUCKET_DIVISOR < K:
        nb *= 2
    inv = nb / c                        # inf for a tiny c: all keys in the top bucket
    # the buckets and their bitmap; the pool of the others in chunks of
    # about K / 8 items, at most 2**20 (24 MB), allocated as it fills (it
    # holds about half the keys on real data, K at most), all through
    # PyMem_Raw* so that tracemalloc sees them
    block = PyMem_RawMalloc(nb * sizeof(_Item) + (nb >> 6) * sizeof(uint64_t))
    pool.shift = 10
    while pool.shift < 20 and (<Py_ssize_t>1 << pool.shift) < K // 8:
        pool.shift += 1
    pool.size = 0
    pool.n_chunks = 0
    pool.chunks = <_Item**>PyMem_RawMalloc(((K >> pool.shift) + 1) * sizeof(_Item*))
    if block == NULL or pool.chunks == NULL:
        PyMem_RawFree(block)
        _pool_free(&pool)
        return -1.0
    slots = <_Item*>block
    bits = <uint64_t*>(slots + nb)
    memset(bits, 0, (nb >> 6) * sizeof(uint64_t))
    for k in range(K - 1):
        B += _residual(values, weights, positives, hits, scale, total, k)
        d = values[k + 1] - values[k]
        chi0 += d * fabs(B)
        key = sign * B
        if key >= c:
            beyond += 2.0 * d
        elif key > 0.0:
            if n_s == 0 or key >= h[2 * n_s - 2]:
                h[2 * n_s] = key
                h[2 * n_s + 1] = 2.0 * d
                n_s += 1
            elif n_s > _NEAR_TOP and key >= h[2 * (n_s - _NEAR_TOP) - 2]:
                # among the run's top pairs: inserted there, past at most
                # _NEAR_TOP pairs, for less than a bucket and its move back
                _stack_insert(h, n_s, key, 2.0 * d)
                n_s += 1
            else:
                b = _bucket(key, inv, nb)
                if bits[b >> 6] & (<uint64_t>1 << (b & 63)):
                    if pool.size == pool.n_chunks << pool.shift:
                        pool.chunks[pool.n_chunks] = <_Item*>work_malloc(
                            (<size_t>1 << pool.shift) * sizeof(_Item))
                        if pool.chunks[pool.n_chunks] == NULL:
                            PyMem_RawFree(block)
                            _pool_free(&pool)
                            return -1.0
                        pool.n_chunks += 1
                    item = _pool_item(&pool, pool.size)
                    item.key = key
                    item.weight = 2.0 * d
                    item.next = slots[b].next
                    slots[b].next = pool.size
                    pool.size += 1
                else:
                    # the first of its bucket is stored in the bucket: the
                    # buckets the clip opens lie together in memory
                    slots[b].key = key
                    slots[b].weight = 2.0 * d
                    slots[b].next = -1
                    bits[b >> 6] |= <uint64_t>1 << (b & 63)
                    if b > top:
                        top = b
        # clip: weight d off this side's far end: first what lies beyond
        # |B_K|, then the stack, then (an empty side) the barrier
        need = d
        if beyond > need:
            beyond -= need
            continue
        need -= beyond
        beyond = 0.0
        while need > 0.0:
            # one test for "a bucket, and none below the stack's top bucket"
            if top >= (_bucket(h[2 * n_s - 2], inv, nb) if n_s > 0 else 0):
                # the farthest breakpoint may be in the top bucket: onto the stack
                t = top
                budget -= _stack_insert(h, n_s, slots[t].key, slots[t].weight)
                n_s += 1
                i = slots[t].next
                while i >= 0:
                    item = _pool_item(&pool, i)
                    budget -= _stack_insert(h, n_s, item.key, item.weight)
                    n_s += 1
                    item.weight = 0.0
                    i = item.next
                if budget < 0:
                    # crowded buckets: the heap walk takes over from this
                    # step (before, the walk started again with the heap: up
                    # to twice the time where that happened late)
                    bits[t >> 6] &= ~(<uint64_t>1 << (t & 63))
                    resume.k = k
                    resume.B = B
                    resume.chi0 = chi0
                    resume.need = need
                    _hand_over(h, K, n_s, slots, bits, nb, &pool, resume)
                    PyMem_RawFree(block)
                    _pool_free(&pool)
                    return -2.0
                bits[t >> 6] &= ~(<uint64_t>1 << (t & 63))
                top = _highest_below(bits, t)
            if n_s == 0:
                break
            m = h[2 * n_s - 1]
            if m > need:
                h[2 * n_s - 1] = m - need
                break
            n_s -= 1
            need -= m
    acc = beyond * c
    for j in range(n_s):
        acc += h[2 * j + 1] * h[2 * j]
    for j in range(pool.size):
        item = _pool_item(&pool, j)
        acc += item.weight * item.key
    for j in range(nb >> 6):
        x = bits[j]
        while x:
            i = skcal_top_bit(x)
            x &= ~(<uint64_t>1 << i)
            acc += slots[(j << 6) + i].weight * slots[(j << 6) + i].key
    PyMem_RawFree(block)
    _pool_free(&pool)
    return chi0 + c - acc


cdef inline void _heap_take(
    double* h, double* run, Py_ssize_t* size, Py_ssize_t* n_run, double need
) noexcept nogil:
    """The clip of the heap walk: weight ``need`` off the farther end of the
    run (pairs of increasing key from ``run`` down) and the heap (a min-heap
    on -key from ``h`` up); what neither holds comes from the barrier."""
    cdef Py_ssize_t j
    cdef double m
    while need > 0.0:
        if n_run[0] > 0 and (size[0] == 0 or run[-2 * (n_run[0] - 1)] >= -h[0]):
            j = -2 * (n_run[0] - 1)
            m = run[j + 1]
            if m > need:
                run[j + 1] = m - need
                return
            n_run[0] -= 1
            need -= m
        elif size[0] > 0:
            m = h[1]
            if m > need:
                h[1] = m - need
                return
            _heap_pop(h, size[0], 2)
            size[0] -= 1
            need -= m
        else:
            return


cdef double _walk_heap(
    const double* values, const double* weights, const double* positives,
    const uint8_t* hits, double scale, Py_ssize_t K, double total, double BK,
    double* h, Py_ssize_t k0=0, double B=0.0, double chi0=0.0, double need=0.0,
    Py_ssize_t size=0, Py_ssize_t n_run=0,
) noexcept nogil:
    """The second pass of ``smce_one_side`` with a heap, given B_K; see there.

    The walk of the previous versions, kept for inputs that crowd the
    buckets of ``_walk_buckets`` and for comparison (``_set_buckets``).
    From ``k0 > 0`` it resumes a walk whose steps before ``k0`` are done but
    for ``need`` still to take at step ``k0 - 1``: ``B`` and ``chi0`` are the
    sums so far, ``size`` pairs in the heap and ``n_run`` in the run (where
    ``_walk_buckets`` hands over its breakpoints; nothing lies beyond B_K
    then, as the clip takes that first).
    """
    cdef Py_ssize_t k, j
    cdef double d, key, beyond = 0.0, acc = 0.0
    cdef double sign, c
    # the run: pairs (|x|, w) of increasing |x|, from the end of the buffer
    # down (pair i at run[-2 i]); the heap grows up from its start
    cdef double* run = h + 2 * K - 2
    # the side of B_K: keys are sign * B_j > 0, the clip takes the largest
    sign = 1.0 if BK > 0.0 else -1.0
    c = sign * BK
    _heap_take(h, run, &size, &n_run, need)
    for k in range(k0, K - 1):
        B += _residual(values, weights, positives, hits, scale, total, k)
        d = values[k + 1] - values[k]
        chi0 += d * fabs(B)
        if c == 0.0:
            continue
        key = sign * B
        if key >= c:
            beyond += 2.0 * d
        elif key > 0.0:
            if n_run == 0 or key >= run[-2 * (n_run - 1)]:
                # a new farthest breakpoint of the run: no heap needed
                run[-2 * n_run] = key
                run[-2 * n_run + 1] = 2.0 * d
                n_run += 1
            else:
                # min-heap on -key: the root is the breakpoint farthest from 0
                _heap_push(h, size, -key, 2.0 * d, 2)
                size += 1
        # clip: weight d off this side's far end: first what lies beyond
        # |B_K|, then the heap, then (an empty side) the barrier
        need = d
        if beyond > need:
            beyond -= need
            continue
        need -= beyond
        beyond = 0.0
        _heap_take(h, run, &size, &n_run, need)
    acc = beyond * c
    for j in range(size):
        acc += h[2 * j + 1] * (-h[2 * j])
    for j in range(n_run):
        acc += run[-2 * j + 1] * run[-2 * j]
    return chi0 + c - acc


cdef double _walk(
    const double* values, const double* weights, const double* positives,
    const uint8_t* hits, double scale, Py_ssize_t K, double total, double BK,
    double* h, bint buckets, Py_ssize_t* handed=NULL,
) noexcept nogil:
    """The second pass: with buckets if asked and they pay, else with the heap
    (from the start, or from where the buckets handed over: ``handed``, if
    not NULL, gets that step, or -1)."""
    cdef double value
    cdef _Resume resume
    resume.k = -1
    if handed != NULL:
        handed[0] = -1
    if buckets and _use_buckets and K > 256 and BK != 0.0:
        value = _walk_buckets(values, weights, positives, hits, scale, K, total, BK, h,
                              &resume)
        if value != -2.0:
            return value
        if handed != NULL:
            handed[0] = resume.k
        return _walk_heap(values, weights, positives, hits, scale, K, total, BK, h,
                          resume.k + 1, resume.B, resume.chi0, resume.need,
                          resume.size, resume.n_run)
    return _walk_heap(values, weights, positives, hits, scale, K, total, BK, h)


cdef double _one_side(
    const double* values, const double* weights, const double* positives,
    const uint8_t* hits, double scale, Py_ssize_t K, double total, double* h,
    bint buckets, Py_ssize_t* handed=NULL,
) noexcept nogil:
    """Both passes of ``smce_one_side``: B_K, then the walk; -1.0 if out of memory."""
    cdef Py_ssize_t k
    cdef double B = 0.0
    for k in range(K):
        B += _residual(values, weights, positives, hits, scale, total, k)
    return _walk(values, weights, positives, hits, scale, K, total, B, h, buckets,
                 handed)


def smce_one_side(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    const double[::1] weights,          # IN  (K,) weight per value
    const double[::1] positives,        # IN  (K,) positive weight per value
    double total,                       # IN  weights.sum(), positive
    double[::1] heap,                   # OUT (2K,) work: (key, weight) pairs
    bint buckets=False,                 # IN  the bucket walk (see below)
):
    """smCE of a grouped statistic, as ``smce_value``, keeping one side only.

    ``smce_value`` ends with a scan of the breakpoints on the side of B_K's
    sign; the two sides never exchange breakpoints (the barrier at 0 parts
    them, and each side's clip reads only its own heap), so the other
    side's heap is not needed at all. B_K is summed first (one pass, the
    same sums in the same order as the second, so it is the same number),
    then the forward pass keeps only the breakpoints of that side, and of
    those only the ones strictly between 0 and B_K in order: a breakpoint
    x with |x| >= |B_K| adds ``w |B_K|`` to the final sum wherever it lies,
    and the clip takes these (the farthest from 0) before any other, so
    their remaining weight is one number. The others go to a run of
    increasing keys while each is the farthest so far (the clip takes from
    its end in O(1)), else to a heap (``_walk_heap``); the clip takes the
    farther of the two ends. On calibrated draws of 10**6 values about 3
    times faster than ``smce_value`` (2 to 9 times, by how much of the walk
    B lies between 0 and B_K). Same value as ``smce_value`` up to the order
    of the rounding.

    With ``buckets`` (and K > 256) the others go to buckets by value instead,
    which join the run, in order, only when the clip reaches them
    (``_walk_buckets``; where keys crowd a few buckets it hands over to the
    heap walk at the step it reached):
    about 1.5 times faster on the tester's draws at 10**6. It allocates 24
    bytes per key that goes to a bucket (about half of them on real data,
    all at worst), in chunks of about K / 8 keys (at most 24 MB, in huge
    pages where the system has them, as numpy's arrays) allocated as they
    fill: no copy when the pool grows. Once the grouping
    took one ``np.sort`` (numpy's SIMD sort) the walk became most of a
    measure's time, and the public measure takes the buckets too: at 10**7
    rows 0.32 instead of 0.41 s, 54 to 66 instead of 40 bytes a row at the
    peak (``benchmarks/results/bench_binary_smce_buckets.txt``).
    """
    global _last_handover
    cdef Py_ssize_t K = values.shape[0], handed = -1
    cdef double value
    _need(K >= 1, "values must not be empty")
    _need(weights.shape[0] == K and positives.shape[0] == K,
          "values, weights and positives must have one length")
    _need(heap.shape[0] >= 2 * K, "heap needs 2 len(values) entries")
    with nogil:
        value = _one_side(&values[0], &weights[0], &positives[0], NULL, 1.0, K,
                          total, &heap[0], buckets, &handed)
    _last_handover = handed
    if value < 0.0:
        raise MemoryError("smce_one_side: no memory for the buckets")
    return value


ctypedef struct _bitgen_t:
    # numpy's bitgen_t (numpy/random/bitgen.h, stable since numpy 1.17): the
    # layout that the "BitGenerator" capsule of every bit generator points to
    void* state
    uint64_t (*next_uint64)(void* st) noexcept nogil
    uint32_t (*next_uint32)(void* st) noexcept nogil
    double (*next_double)(void* st) noexcept nogil
    uint64_t (*next_raw)(void* st) noexcept nogil


cdef extern from *:
    """
    /* numpy's PCG64 (O'Neill's PCG XSL RR 128/64): the 128-bit LCG steps,
       then the output of the new state; next_double is its top 53 bits
       times 2**-53. Inline where the compiler has 128-bit integers. */
    #if defined(__SIZEOF_INT128__)
    #define SKCAL_PCG64_INLINE 1
    typedef struct { unsigned __int128 state, inc; } skcal_pcg64;
    static inline void skcal_pcg64_set(skcal_pcg64* g, uint64_t state_hi,
            uint64_t state_lo, uint64_t inc_hi, uint64_t inc_lo) {
        g->state = ((unsigned __int128)state_hi << 64) | state_lo;
        g->inc = ((unsigned __int128)inc_hi << 64) | inc_lo;
    }
    static inline double skcal_pcg64_double(skcal_pcg64* g) {
        const unsigned __int128 mult =
            ((unsigned __int128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL;
        uint64_t hi, x;
        unsigned rot;
        g->state = g->state * mult + g->inc;
        hi = (uint64_t)(g->state >> 64);
        x = hi ^ (uint64_t)g->state;
        rot = (unsigned)(hi >> 58);
        x = (x >> rot) | (x << ((64u - rot) & 63u));
        return (double)(x >> 11) * (1.0 / 9007199254740992.0);
    }
    static inline uint64_t skcal_pcg64_hi(const skcal_pcg64* g) {
        return (uint64_t)(g->state >> 64);
    }
    static inline uint64_t skcal_pcg64_lo(const skcal_pcg64* g) {
        return (uint64_t)g->state;
    }
    #else
    #define SKCAL_PCG64_INLINE 0
    typedef struct { uint64_t unused; } skcal_pcg64;
    static inline void skcal_pcg64_set(skcal_pcg64* g, uint64_t a, uint64_t b,
            uint64_t c, uint64_t d) { (void)g; (void)a; (void)b; (void)c; (void)d; }
    static inline double skcal_pcg64_double(skcal_pcg64* g) { (void)g; return 0.0; }
    static inline uint64_t skcal_pcg64_hi(const skcal_pcg64* g) { (void)g; return 0; }
    static inline uint64_t skcal_pcg64_lo(const skcal_pcg64* g) { (void)g; return 0; }
    #endif
    """
    int SKCAL_PCG64_INLINE
    ctypedef struct skcal_pcg64:
        pass
    void skcal_pcg64_set(skcal_pcg64* g, uint64_t state_hi, uint64_t state_lo,
                         uint64_t inc_hi, uint64_t inc_lo) noexcept nogil
    double skcal_pcg64_double(skcal_pcg64* g) noexcept nogil
    uint64_t skcal_pcg64_hi(const skcal_pcg64* g) noexcept nogil
    uint64_t skcal_pcg64_lo(const skcal_pcg64* g) noexcept nogil


_LOW64 = (1 << 64) - 1
# False: draw PCG64's doubles through numpy's function pointer (tests compare)
cdef bint _inline_pcg64 = True


def _set_inline_pcg64(bint on):
    """Step PCG64 inline (True) or through numpy's bitgen_t (False)."""
    global _inline_pcg64
    _inline_pcg64 = on


cdef object _generator(object bit_generator, skcal_pcg64* pcg, _bitgen_t** bitgen):
    """Ready the doubles of ``bit_generator`` for a kernel.

    numpy's PCG64 is stepped inline (``pcg`` set from its state, without a
    call per double): returns its state, for ``_give_back``. Any other bit
    generator (or with ``_set_inline_pcg64(False)``) is read through its
    bitgen_t: ``bitgen[0]`` is set and None returned.
    """
    state = bit_generator.state
    if SKCAL_PCG64_INLINE and state.get("bit_generator") == "PCG64" and _inline_pcg64:
        lcg, inc = state["state"]["state"], state["state"]["inc"]
        skcal_pcg64_set(pcg, lcg >> 64, lcg & _LOW64, inc >> 64, inc & _LOW64)
        return state
    bitgen[0] = <_bitgen_t*>PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
    return None


cdef int _give_back(object bit_generator, object state, skcal_pcg64* pcg) except -1:
    """Leave ``bit_generator`` where the inline ``pcg`` got to (``state`` from
    ``_generator``; nothing to do when it is None)."""
    if state is not None:
        hi, lo = skcal_pcg64_hi(pcg), skcal_pcg64_lo(pcg)     # Python ints
        state["state"]["state"] = (hi << 64) | lo
        bit_generator.state = state
    return 0


cdef double _bernoulli(
    const double* values, const double* uniforms, _bitgen_t* bitgen,
    skcal_pcg64* pcg, double scale, Py_ssize_t K, double total, double* h,
) noexcept nogil:
    """Outcomes ``u_k < v_k`` and B_K in one pass, then the walk; -1.0 if out of memory.

    ``u_k`` is ``uniforms[k]``; or the next double of ``pcg`` (numpy's
    PCG64, inline); or of ``bitgen``, through its function pointer:
    ``Generator.random`` fills its array with exactly these
    (``random_standard_uniform_fill`` calls ``next_double`` once per entry),
    so a generator's draw here is the same as ``rng.random(K) < values``.
    The outcomes are kept as bytes (K bytes) for the second pass.
    """
    cdef uint8_t* hits = <uint8_t*>PyMem_RawMalloc(K)
    cdef Py_ssize_t k
    cdef double B = 0.0, u, value
    if hits == NULL:
        return -1.0
    if uniforms != NULL:
        for k in range(K):
            hits[k] = uniforms[k] < values[k]
            B += (hits[k] * scale - values[k] * scale) / total
    elif pcg != NULL:
        for k in range(K):
            hits[k] = skcal_pcg64_double(pcg) < values[k]
            B += (hits[k] * scale - values[k] * scale) / total
    else:
        for k in range(K):
            u = bitgen.next_double(bitgen.state)
            hits[k] = u < values[k]
            B += (hits[k] * scale - values[k] * scale) / total
    value = _walk(values, NULL, NULL, hits, scale, K, total, B, h, True)
    PyMem_RawFree(hits)
    return value


def smce_bernoulli(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    const double[::1] uniforms,         # IN  (K,) uniforms in [0, 1)
    double scale,                       # IN  the weight of every value, positive
    double total,                       # IN  K * scale
    double[::1] heap,                   # OUT (2K,) work: (key, weight) pairs
):
    """``smce_one_side`` of one row per value, positive iff ``uniforms < values``.

    A null draw of the tester on distinct predictions of one weight, without
    forming the outcome arrays: the same number as ``smce_one_side(values,
    scale * ones, scale * (uniforms < values), total, heap, buckets=True)``
    (the heap walk's up to the order of the final sum). Extra memory: about
    26 bytes per value, allocated here.
    """
    cdef Py_ssize_t K = values.shape[0]
    cdef double value
    _need(K >= 1, "values must not be empty")
    _need(uniforms.shape[0] == K, "values and uniforms must have one length")
    _need(heap.shape[0] >= 2 * K, "heap needs 2 len(values) entries")
    with nogil:
        value = _bernoulli(&values[0], &uniforms[0], NULL, NULL, scale, K, total,
                           &heap[0])
    if value < 0.0:
        raise MemoryError("smce_bernoulli: no memory for the outcomes")
    return value


def smce_null_draw(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    object bit_generator,               # IN/OUT a numpy BitGenerator; advanced by K
    double scale,                       # IN  the weight of every value, positive
    double total,                       # IN  K * scale
    double[::1] heap,                   # OUT (2K,) work: (key, weight) pairs
):
    """``smce_bernoulli`` with the uniforms drawn here from ``bit_generator``.

    The same number as ``smce_bernoulli(values, Generator(bit_generator)
    .random(K), scale, total, heap)`` and the generator left in the same
    state, without the array of uniforms: each double is drawn, compared and
    summed in the first pass (through the C interface numpy gives every bit
    generator, its "BitGenerator" capsule). The caller owns the generator
    (no lock is taken).
    """
    cdef Py_ssize_t K = values.shape[0]
    cdef double value
    cdef _bitgen_t* bitgen = NULL
    cdef skcal_pcg64 pcg
    cdef skcal_pcg64* inline_pcg = NULL
    _need(K >= 1, "values must not be empty")
    _need(heap.shape[0] >= 2 * K, "heap needs 2 len(values) entries")
    state = _generator(bit_generator, &pcg, &bitgen)
    if state is not None:
        inline_pcg = &pcg
    with nogil:
        value = _bernoulli(&values[0], NULL, bitgen, inline_pcg, scale, K, total,
                           &heap[0])
    _give_back(bit_generator, state, &pcg)
    if value < 0.0:
        raise MemoryError("smce_null_draw: no memory for the outcomes")
    return value


cdef double _bernoulli_groups(
    const double* values, _bitgen_t* bitgen, skcal_pcg64* pcg, Py_ssize_t G,
    const Py_ssize_t* ends, const double* means, double* positives,
) noexcept nogil:
    """Outcomes ``u_k < v_k`` summed per group; returns ``sum_k |v_k - m_g| |y_k - v_k|``.

    The uniforms as in ``_bernoulli`` (``pcg`` inline, else ``bitgen``): the
    same outcomes as ``rng.random(K) < values``. ``positives[g]`` is the
    number of outcomes 1 in group ``g`` (values ``ends[g - 1]`` to
    ``ends[g] - 1``), ``m_g = means[g]``.
    """
    cdef Py_ssize_t g, k, start = 0, count
    cdef double v, err = 0.0, e
    cdef int hit
    # the generator's state in a local the compiler can keep in registers
    cdef skcal_pcg64 local
    if pcg != NULL:
        local = pcg[0]
    for g in range(G):
        count = 0
        e = 0.0
        # no branch on the outcome (it is random, a branch would mispredict
        # half the time): an integer count, and |y - v| as fabs(v - y)
        if pcg != NULL:
            for k in range(start, ends[g]):
                v = values[k]
                hit = skcal_pcg64_double(&local) < v
                count += hit
                e += fabs(v - means[g]) * fabs(v - <double>hit)
        else:
            for k in range(start, ends[g]):
                v = values[k]
                hit = bitgen.next_double(bitgen.state) < v
                count += hit
                e += fabs(v - means[g]) * fabs(v - <double>hit)
        positives[g] = <double>count
        err += e
        start = ends[g]
    if pcg != NULL:
        pcg[0] = local
    return err


cdef int _check_groups(
    Py_ssize_t K, const Py_ssize_t[::1] ends, const double[::1] means,
    const double[::1] positives, const double[::1] heap,
) except -1:
    """The brackets' groups: consecutive runs of the ``K`` values, and their arrays."""
    cdef Py_ssize_t G = ends.shape[0], g
    _need(G >= 1 and ends[G - 1] == K, "ends must end at len(values)")
    _need(means.shape[0] == G and positives.shape[0] == G,
          "ends, means and positives must have one length")
    _need(heap.shape[0] >= 2 * G, "heap needs 2 len(ends) entries")
    for g in range(G):
        _need(ends[g] > (ends[g - 1] if g > 0 else 0), "ends must increase")
    return 0


def smce_null_bracket(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    object bit_generator,               # IN/OUT a numpy BitGenerator; advanced by K
    double scale,                       # IN  the weight of every value, positive
    double total,                       # IN  K * scale
    const Py_ssize_t[::1] ends,         # IN  (G,) one past each group's last value
    const double[::1] means,            # IN  (G,) each group's mean value
    double[::1] positives,              # OUT (G,) positive weight per group
    double[::1] heap,                   # OUT (2G,) work: (key, weight) pairs
):
    """One null draw of ``smce_null_draw``, bracketed on groups of values.

    The same outcomes as ``smce_null_draw(values, bit_generator, ...)`` (the
    generator is advanced alike), but instead of smCE on the ``K`` values
    this returns ``(value, bound)``: ``value`` is smCE of the draw with each
    group's rows moved to the group's mean (weight ``count * scale``,
    positive weight ``positives[g]``), and ``bound`` is
    ``sum_k scale |v_k - m_g| |y_k - v_k| / total``, so that, in exact
    arithmetic, ``|smCE(draw) - value| <= bound``: for any test function
    ``w`` (1-Lipschitz), ``sum_k w(v_k) r_k`` and ``sum_g w(m_g) sum_{k in g}
    r_k`` differ by at most ``sum_k |v_k - m_g| |r_k|``, and at the mean the
    group's residual ``sum (y_k - v_k)`` is kept. The groups are
    consecutive runs of values: ``ends`` increasing, ``ends[G - 1] = K``.
    """
    cdef Py_ssize_t K = values.shape[0], G = ends.shape[0], g
    cdef double value, err
    cdef _bitgen_t* bitgen = NULL
    cdef skcal_pcg64 pcg
    cdef skcal_pcg64* inline_pcg = NULL
    _need(K >= 1, "values must not be empty")
    _check_groups(K, ends, means, positives, heap)
    state = _generator(bit_generator, &pcg, &bitgen)
    if state is not None:
        inline_pcg = &pcg
    cdef double* weights = <double*>PyMem_RawMalloc(G * sizeof(double))
    if weights == NULL:
        raise MemoryError("smce_null_bracket: no memory for the group weights")
    with nogil:
        err = _bernoulli_groups(&values[0], bitgen, inline_pcg, G, &ends[0], &means[0],
                                &positives[0])
        for g in range(G):
            weights[g] = (ends[g] - (ends[g - 1] if g > 0 else 0)) * scale
            positives[g] *= scale
        value = _one_side(&means[0], weights, &positives[0], NULL, 1.0, G, total,
                          &heap[0], True)
    PyMem_RawFree(weights)
    _give_back(bit_generator, state, &pcg)
    if value < 0.0:
        raise MemoryError("smce_null_bracket: no memory for the buckets")
    return value, err * scale / total


def smce_null_bracket_rows(
    const double[::1] p,                # IN  (n,) each row's prediction, in row order
    const double[::1] w,                # IN  (n,) each row's weight
    const double[::1] wd,               # IN  (n,) w_i |p_i - m_g| (m_g: its group's mean)
    const Py_ssize_t[::1] group,        # IN  (n,) each row's group, in [0, G)
    object bit_generator,               # IN/OUT a numpy BitGenerator; advanced by n
    double[::1] positives,              # OUT (G,) positive weight per group
):
    """The outcomes of ``rng.random(n) < p`` summed per group, for weighted rows.

    The rows' outcomes are those of ``Generator(bit_generator).random(n) <
    p`` (the generator is advanced alike), as the tester's weighted null
    draw (``_Resampler``) draws them; ``positives[g]`` gets ``sum w_i y_i``
    over the rows of group ``g`` (in row order), and the return value is
    ``sum_i wd_i |y_i - p_i|``: with the groups' weights and means, the
    bound of ``smce_null_bracket`` (before dividing by the total weight).
    """
    cdef Py_ssize_t n = p.shape[0], G = positives.shape[0], i, g
    cdef double err = 0.0, u
    cdef int hit
    cdef _bitgen_t* bitgen = NULL
    cdef skcal_pcg64 pcg
    cdef bint inline
    _need(w.shape[0] == n and wd.shape[0] == n and group.shape[0] == n,
          "p, w, wd and group must have one length")
    _need(G >= 1, "positives must not be empty")
    _need(_all_in(group, 0, G), "group out of range")
    state = _generator(bit_generator, &pcg, &bitgen)
    inline = state is not None
    with nogil:
        memset(&positives[0], 0, G * sizeof(double))
        # no branch on the outcome (random): see _bernoulli_groups
        if inline:
            for i in range(n):
                hit = skcal_pcg64_double(&pcg) < p[i]
                g = group[i]
                positives[g] += w[i] * <double>hit
                err += wd[i] * fabs(p[i] - <double>hit)
        else:
            for i in range(n):
                u = bitgen.next_double(bitgen.state)
                hit = u < p[i]
                g = group[i]
                positives[g] += w[i] * <double>hit
                err += wd[i] * fabs(p[i] - <double>hit)
    _give_back(bit_generator, state, &pcg)
    return err


# --- null draws of values of several rows each (ties among rows of one weight)
#
# A value of ``c`` rows of weight ``scale`` gets ``scale`` times the number of
# ``c`` uniforms below it: ``Binomial(c, v)`` exactly, drawn as the rows would
# be, in the order of the values (the outcomes of ``rng.random(counts.sum())
# < np.repeat(values, counts)`` summed per value). One double per row, so it
# pays where the values hold few rows each (predictions rounded to float32);
# numpy's binomial costs about 25 ns a value whatever its count.


cdef int64_t _least(const int64_t* counts, Py_ssize_t K) noexcept nogil:
    """The least of ``counts[:K]`` (K >= 1): one check for the kernels' entry."""
    cdef int64_t least = counts[0]
    cdef Py_ssize_t k
    for k in range(1, K):
        least = counts[k] if counts[k] < least else least
    return least


cdef inline Py_ssize_t _hits(
    _bitgen_t* bitgen, skcal_pcg64* pcg, double v, int64_t c
) noexcept nogil:
    """How many of the next ``c`` doubles (``c >= 1``) of the generator lie below ``v``.

    The first without a loop: most values hold one row (the bracket of
    10**6 float32-rounded predictions took 4.0 ms with the loop alone, 3.8
    with the first double apart).
    """
    cdef int64_t _j
    cdef Py_ssize_t hits
    if pcg != NULL:
        hits = skcal_pcg64_double(pcg) < v
        if c > 1:
            for _j in range(c - 1):
                hits += skcal_pcg64_double(pcg) < v
    else:
        hits = bitgen.next_double(bitgen.state) < v
        if c > 1:
            for _j in range(c - 1):
                hits += bitgen.next_double(bitgen.state) < v
    return hits


def smce_null_draw_counts(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    const double[::1] weights,          # IN  (K,) weight per value (counts times scale)
    const int64_t[::1] counts,          # IN  (K,) rows per value, >= 1
    object bit_generator,               # IN/OUT a numpy BitGenerator; advanced by counts.sum()
    double scale,                       # IN  the weight of every row, positive
    double total,                       # IN  weights.sum()
    double[::1] heap,                   # OUT (2K,) work: (key, weight) pairs
    double[::1] positives,              # OUT (K,) the draw's positive weight per value
):
    """One null draw of the smCE tester on values of ``counts`` rows each.

    ``positives[k]`` is ``scale`` times the number of the next ``counts[k]``
    doubles of ``bit_generator`` below ``values[k]`` (see above), and the
    return value is ``smce_one_side(values, weights, positives, total, heap,
    buckets=True)``, the same number: the residuals summed in the same
    order, then the same walk.
    """
    cdef Py_ssize_t K = values.shape[0], k
    cdef double value, B = 0.0
    cdef _bitgen_t* bitgen = NULL
    cdef skcal_pcg64 pcg, local
    cdef skcal_pcg64* inline_pcg = NULL
    _need(K >= 1, "values must not be empty")
    _need(weights.shape[0] == K and counts.shape[0] == K and positives.shape[0] == K,
          "values, weights, counts and positives must have one length")
    _need(heap.shape[0] >= 2 * K, "heap needs 2 len(values) entries")
    _need(_least(&counts[0], K) >= 1, "counts must be positive")
    state = _generator(bit_generator, &pcg, &bitgen)
    if state is not None:
        # the state in a local, as _bernoulli_groups keeps it (timed alike
        # here with and without)
        local = pcg
        inline_pcg = &local
    with nogil:
        for k in range(K):
            positives[k] = _hits(bitgen, inline_pcg, values[k], counts[k]) * scale
            B += _residual(&values[0], &weights[0], &positives[0], NULL, 1.0, total, k)
        if inline_pcg != NULL:
            pcg = local
        value = _walk(&values[0], &weights[0], &positives[0], NULL, 1.0, K, total, B,
                      &heap[0], True)
    _give_back(bit_generator, state, &pcg)
    if value < 0.0:
        raise MemoryError("smce_null_draw_counts: no memory for the buckets")
    return value


def smce_null_bracket_counts(
    const double[::1] values,           # IN  (K,) distinct predictions, increasing
    const int64_t[::1] counts,          # IN  (K,) rows per value, >= 1
    object bit_generator,               # IN/OUT a numpy BitGenerator; advanced by counts.sum()
    double scale,                       # IN  the weight of every row, positive
    double total,                       # IN  scale * counts.sum()
    const Py_ssize_t[::1] ends,         # IN  (G,) one past each group's last value
    const double[::1] means,            # IN  (G,) each group's mean value, by rows
    double[::1] positives,              # OUT (G,) positive weight per group
    double[::1] heap,                   # OUT (2G,) work: (key, weight) pairs
):
    """``smce_null_bracket`` of the draw of ``smce_null_draw_counts``.

    The same outcomes (the generator advanced alike); each group's rows
    moved to the group's mean by rows (``sum c_k v_k / sum c_k``, which
    keeps the group's residual), of weight ``scale sum c_k``, and the bound
    ``sum_k scale |v_k - m_g| |h_k - c_k v_k| / total`` (``h_k`` the value's
    outcomes 1): ``(value, bound)`` as there.
    """
    cdef Py_ssize_t K = values.shape[0], G = ends.shape[0], g, k, start
    cdef Py_ssize_t h, hits
    cdef int64_t rows
    cdef double value, err = 0.0, e, v
    cdef _bitgen_t* bitgen = NULL
    cdef skcal_pcg64 pcg, local
    cdef skcal_pcg64* inline_pcg = NULL
    _need(K >= 1, "values must not be empty")
    _need(counts.shape[0] == K, "values and counts must have one length")
    _check_groups(K, ends, means, positives, heap)
    _need(_least(&counts[0], K) >= 1, "counts must be positive")
    state = _generator(bit_generator, &pcg, &bitgen)
    if state is not None:
        local = pcg                     # a local: see smce_null_draw_counts
        inline_pcg = &local
    cdef double* weights = <double*>PyMem_RawMalloc(G * sizeof(double))
    if weights == NULL:
        raise MemoryError("smce_null_bracket_counts: no memory for the group weights")
    with nogil:
        start = 0
        for g in range(G):
            hits = 0
            rows = 0
            e = 0.0
            for k in range(start, ends[g]):
                v = values[k]
                h = _hits(bitgen, inline_pcg, v, counts[k])
                hits += h
                rows += counts[k]
                e += fabs(v - means[g]) * fabs(<double>counts[k] * v - <double>h)
            positives[g] = <double>hits * scale
            weights[g] = <double>rows * scale
            err += e
            start = ends[g]
        if inline_pcg != NULL:
            pcg = local
        value = _one_side(&means[0], weights, &positives[0], NULL, 1.0, G, total,
                          &heap[0], True)
    PyMem_RawFree(weights)
    _give_back(bit_generator, state, &pcg)
    if value < 0.0:
        raise MemoryError("smce_null_bracket_counts: no memory for the buckets")
    return value, err * scale / total
