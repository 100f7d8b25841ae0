"""The one module that reaches into private scikit-learn API.

A scikit-learn upgrade that moves any of these touches only this file.
"""

from sklearn.metrics._scorer import _Scorer

__all__ = ["_Scorer"]
