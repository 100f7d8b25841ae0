"""Messages of ``python -m skcal report``: the input error and user text made safe."""

__all__ = ["ReportInputError", "quoted", "safe_text"]


class ReportInputError(ValueError):
    """A problem with the input file or options, worded for the command line."""


def safe_text(value):
    """``value`` as text with every non-printable character escaped.

    File names, column names and labels come from the user; an ANSI escape
    sequence in one must not reach the terminal (or an HTML page) as such.

    Examples
    --------
    >>> from skcal._report_text import safe_text
    >>> safe_text("a\\x1b[31mb")
    'a\\\\x1b[31mb'
    """
    text = str(value)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def quoted(value):
    """A user-supplied name quoted for a message (escaped, in quotes)."""
    return "'" + safe_text(value) + "'"
