"""Compiled kernels. Private: call them only through the validated wrappers."""
