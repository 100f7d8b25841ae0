# Work memory of the kernels, allocated as numpy allocates array data.
#
# Through PyMem_Raw* (so that tracemalloc sees it), and, on Linux, a block of
# 4 MiB or more is advised to the kernel for transparent huge pages
# (madvise MADV_HUGEPAGE), as numpy does for the data of every array of that
# size (numpy/_core/src/multiarray/alloc.c; np.core.multiarray.
# _set_madvise_hugepage switches it). A block of work memory is touched once, right after it is
# allocated: in 4 KiB pages a first touch costs a page fault each, and the
# dCE simplex's pieces at 10**7 values (160 MB) took 39,000 faults and 60 ms
# of system time a call, where the grouping's 240 MB of numpy arrays took
# 340 faults and 8 ms. A first touch in huge pages can cost more than in small
# ones, once: see benchmarks/bench_faults.py (results/bench_faults.txt).

cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    static void skcal_advise_huge(void* p, size_t size) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (p != NULL && size >= ((size_t)1 << 22)) {
            uintptr_t start = ((uintptr_t)p + 4095u) & ~(uintptr_t)4095u;
            madvise((void*)start, size - (size_t)(start - (uintptr_t)p), MADV_HUGEPAGE);
        }
    #else
        (void)p; (void)size;
    #endif
    }
    """
    void skcal_advise_huge(void* p, size_t size) noexcept nogil


from cpython.mem cimport PyMem_RawMalloc


cdef inline void* work_malloc(size_t size) noexcept nogil:
    """``PyMem_RawMalloc(size)``, huge pages advised for a large block."""
    cdef void* p = PyMem_RawMalloc(size)
    skcal_advise_huge(p, size)
    return p
