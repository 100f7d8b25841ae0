"""Progress display of ``python -m skcal report`` (moved out of skcal._report)."""

import time


class _Progress:
    """Progress of the resampling on ``stream``, standard library only.

    On a terminal, one line rewritten in place (``\r``) at most ten times a
    second; otherwise (a log, a CI job) a plain line such as ``skcal report:
    resampling 120/200`` every ``every`` seconds, so that nothing is printed
    for short work and a pipe is not filled with carriage returns. A
    dependency (tqdm, rich) would add nothing this needs.
    """

    def __init__(self, stream, every=5.0, clock=time.monotonic):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.every = every if not self.tty else 0.1
        self.clock = clock
        self.start = self.last = clock()
        self.shown = False

    def __call__(self, done, total, what="resampling"):
        now = self.clock()
        end = done == total
        if now - self.last < self.every and not (end and self.shown):
            return
        self.last = now
        if self.tty:
            bar = "#" * (20 * done // max(total, 1))
            self.stream.write(f"\rskcal report: {what} [{bar:<20}] {done}/{total}")
            if end:
                self.stream.write("\n")
        else:
            self.stream.write(f"skcal report: {what} {done}/{total} "
                              f"({now - self.start:.0f} s)\n")
        self.shown = True
        self.stream.flush()
