"""The label column of a report's file: what the labels are and which class is which.

Labels that are all numbers are classes by value, true/false labels are
booleans, other labels are text; the class of each probability column is
given (``--classes``) or read off the column names.
"""

import math
import os

from ._report_text import ReportInputError, quoted, safe_text

__all__ = ["Labels", "TRUE_FALSE", "as_number", "classes_of_columns", "positive_class"]

TRUE_FALSE = {"true": True, "false": False}




def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


class Labels:
    """The classes of the label column: their kind, order and display form.

    ``kind`` is ``"number"`` (every label reads as a number: equal numbers
    are one class, e.g. ``1``, ``1.0`` and ``01``, sorted as numbers),
    ``"true/false"`` (every label is true or false, in any case) or
    ``"text"`` (sorted as text).
    """

    def __init__(self, spellings, column):
        self.column = column
        lowered = {s.lower() for s in spellings}
        if spellings and lowered <= set(TRUE_FALSE):
            self.kind, self.order = "true/false", "false < true"
        else:
            numbers = {s: as_number(s) for s in spellings}
            if spellings and all(v is not None for v in numbers.values()):
                bad = sorted(s for s, v in numbers.items() if not math.isfinite(v))
                if bad:
                    raise ReportInputError(
                        f"column {quoted(column)} (--label): the label {quoted(bad[0])} is not "
                        "a finite number (a missing label?); remove or fill those rows."
                    )
                self.kind, self.order = "number", "numeric order"
            else:
                self.kind, self.order = "text", "text order"
        # spelling -> class key; key -> display text
        self.key_of = {s: self.key(s) for s in spellings}
        self.display = {}
        for s in sorted(spellings):
            self.display.setdefault(self.key_of[s], []).append(s)
        self.display = {
            k: (v[0] if len(v) == 1 else self._canonical(k)) for k, v in self.display.items()
        }
        self.classes = sorted(self.display)  # keys, in the order stated by self.order

    def key(self, token):
        """The class a token (a label in the file, or one the user typed) names, or None."""
        token = token.strip()
        if self.kind == "true/false":
            if token.lower() in TRUE_FALSE:
                return TRUE_FALSE[token.lower()]
            if token in ("0", "1"):
                return token == "1"
            return None
        if self.kind == "number":
            value = as_number(token)
            if value is None or not math.isfinite(value):
                return None
            return value + 0.0  # -0.0 and 0.0 are one class
        return token

    def _canonical(self, key):
        if self.kind == "true/false":
            return "True" if key else "False"
        if self.kind == "number" and key.is_integer() and abs(key) < 2**53:
            return str(int(key))
        return repr(key)

    def text(self, key):
        if key in self.display:
            return self.display[key]
        return self._canonical(key) if self.kind != "text" else key


def positive_class(labels, pos_label):
    """The class key of the positive class for one probability column."""
    keys = set(labels.classes)
    if len(keys) > 2:
        shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes[:5])
        raise ReportInputError(
            f"column {quoted(labels.column)} (--label) has {len(keys)} distinct labels "
            f"({shown}{', ...' if len(keys) > 5 else ''}) but --proba names one "
            "column: give one --proba column per class."
        )
    conventional = (
        keys <= {0.0, 1.0} or keys <= {-1.0, 1.0}
        if labels.kind == "number"
        else labels.kind == "true/false"
    )
    shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes)
    if pos_label is None:
        if conventional:
            return True if labels.kind == "true/false" else 1.0
        raise ReportInputError(
            f"the labels in column {quoted(labels.column)} are {shown}, not 0/1: name the "
            "positive class with --pos-label."
        )
    key = labels.key(pos_label)
    if key is not None and key in keys:
        return key
    # a file of one class may lack the positive class of a 0/1 (or -1/1,
    # true/false) problem; any other --pos-label absent from the file is a typo
    if key is not None and len(keys) == 1 and (
        labels.kind == "true/false"
        or keys | {key} <= {0.0, 1.0}
        or keys | {key} <= {-1.0, 1.0}
    ):
        return key
    raise ReportInputError(
        f"--pos-label {quoted(pos_label)} is not one of the labels in column "
        f"{quoted(labels.column)} ({shown}, {labels.order})."
    )


def classes_of_columns(labels, proba, classes):
    """The class key of each probability column, and how it was found."""
    keys = set(labels.classes)
    if classes is not None:
        if len(classes) != len(proba):
            raise ReportInputError(
                f"--classes gives {len(classes)} labels for {len(proba)} --proba "
                "columns: give one label per column, in the order of --proba."
            )
        mapped = []
        for token in classes:
            key = labels.key(token)
            if key is None:
                raise ReportInputError(
                    f"--classes {quoted(token)} is not a label of the kind in column "
                    f"{quoted(labels.column)} ({labels.kind})."
                )
            if key in mapped:
                raise ReportInputError(f"--classes names the class {quoted(token)} twice.")
            mapped.append(key)
        missing = [k for k in labels.classes if k not in mapped]
        if missing:
            raise ReportInputError(
                f"the label {quoted(labels.text(missing[0]))} in column {quoted(labels.column)} "
                "is not in --classes: give the class of every --proba column."
            )
        return mapped, "--classes"
    found = classes_from_names(labels, proba)
    if found is None:
        shown = ", ".join(safe_text(labels.text(k)) for k in labels.classes[:10])
        raise ReportInputError(
            f"cannot tell the class of each --proba column from their names "
            f"(the labels in column {quoted(labels.column)} are {shown}): pass --classes, "
            "one label per --proba column, in the same order."
        )
    if not keys <= set(found):
        missing = [k for k in labels.classes if k not in found][0]
        raise ReportInputError(
            f"the label {quoted(labels.text(missing))} in column {quoted(labels.column)} has "
            "no --proba column: give one column per class (or --classes)."
        )
    return found, "column names"


def classes_from_names(labels, proba):
    """Read each column's class off its name (``cat``, ``p_cat``, ``proba1``...).

    Every split of the names into a common prefix, a token and a common
    suffix is tried; the columns are mapped when the tokens name distinct
    classes covering every label in the file, and exactly one such mapping
    exists (else None: the user must say).
    """
    prefix = os.path.commonprefix(proba)
    suffix = os.path.commonprefix([c[::-1] for c in proba])[::-1]
    shortest = min(len(c) for c in proba)
    keys = set(labels.classes)
    found = set()
    for i in range(len(prefix) + 1):
        for j in range(len(suffix) + 1):
            if i + j > shortest:
                continue
            tokens = [c[i : len(c) - j] for c in proba]
            mapped = [labels.key(t) if t.strip() else None for t in tokens]
            if None in mapped or len(set(mapped)) != len(mapped):
                continue
            if not keys <= set(mapped):
                continue
            found.add(tuple(mapped))
    if len(found) != 1:
        return None
    return list(found.pop())
