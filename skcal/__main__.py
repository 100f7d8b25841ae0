"""Command line: ``python -m skcal demo`` and ``python -m skcal report``."""

import argparse
import os
import sys

_REPORT_HELP = """\
Measure the calibration of the predictions in a CSV file (or Parquet, with
pandas and pyarrow installed): every measure with a 95% confidence
interval and the level a perfectly calibrated model of this size stays
below, and a statistical test.

examples:
  python -m skcal report preds.csv --label y --proba p
  python -m skcal report preds.csv --label y --proba p0 p1 p2 --html r.html
  python -m skcal report preds.csv --label y --proba p --json
  python -m skcal report preds.csv --label y --proba p --measure smce dce
  python -m skcal report preds.csv --label y --proba p \\
      --max-error 0.02                   # exit status 1 unless certified (CI)

the gate (--max-error EPS) reads the confidence interval of the distance
to calibration (dCE, the mean distance the predictions must move to be
calibrated; top-label for multiclass files):
  --gate certify  (default) passes only when the data certify dCE <= EPS:
                  the upper end of the 95% interval (a 97.5% one-sided
                  bound) is at most EPS. Too few rows fail with
                  "not enough data to certify".
  --gate reject   fails only when dCE > EPS is significant: the lower end
                  of the interval is above EPS.
  The summary line says the mode, the estimate with its interval, and why
  the gate passed or failed. --fail-if-miscalibrated EPS is the old
  spelling of --max-error EPS (deprecated, removed in the next release).

progress: on a terminal a progress bar on stderr; otherwise a plain line
(e.g. "skcal report: resampling 120/200") every 5 seconds of long work.

how the file is read:
  CSV (UTF-8, a byte order mark is skipped) is read in blocks with the
  standard library, in memory bounded by a chunk of rows plus a sketch of
  the distinct predictions; a line (or cell) longer than 1 MiB is refused.
  The sketch grows with the number of distinct predictions (about 24 bytes
  each, 48 with --weight), not of rows: round continuous scores to keep it
  small. With --weight of unequal weights and --html, every row of a file
  over 2**20 rows is kept (24 bytes a row): the page's test redraws each row.
  Labels that are all numbers are classes by value, in numeric order (1, 2,
  10); true/false labels are booleans; other labels are text, in text order.
  With several --proba columns, each column's class is read off its name
  (the label itself, or with a common prefix/suffix: p_cat, proba_1);
  otherwise give --classes, one label per --proba column, in any order.
  The report says which order and which columns it used.

exit status:
  0  report done (and the gate, if any, passed)
  1  the gate (--max-error) failed
  2  bad input or usage (one line on stderr)
"""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _parser():
    parser = _Parser(
        prog="python -m skcal",
        description="skcal: calibration measures, tests and reports.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="measure two classifiers on breast cancer")
    demo.add_argument("--random-state", type=int, default=0)
    report = sub.add_parser(
        "report",
        help="report on a file of predictions",
        description=_REPORT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("file", help="CSV (or .parquet) file with a header row")
    report.add_argument("--label", required=True, help="column of observed labels")
    report.add_argument(
        "--proba",
        required=True,
        nargs="+",
        metavar="COL",
        help="probability of the positive class (one column), or one column "
        "per class (rows must sum to 1; with two, the positive class's column is "
        "measured, with three or more top-label calibration)",
    )
    report.add_argument("--weight", metavar="COL", help="column of sample weights")
    report.add_argument(
        "--classes",
        nargs="+",
        metavar="LABEL",
        help="class of each --proba column, in the order of --proba (default: "
        "read off the column names)",
    )
    report.add_argument(
        "--pos-label",
        metavar="LABEL",
        help="positive class for one or two --proba columns, one of the labels "
        "in the file (default: 1 for 0/1 or -1/1 labels, True for true/false)",
    )
    report.add_argument(
        "--measure",
        nargs="+",
        metavar="NAME",
        help="the measures to report, by key or function name: any registered "
        "measure the report lists (smce, dce, cutoff, cdl, scdl, binned_ece, and "
        "measures registered by plugins; a wrong name lists them); default: every "
        "one. The test reads smce and --max-error dCE either way",
    )
    report.add_argument("--name", help="model name in the table")
    report.add_argument(
        "--html", metavar="FILE", help="also write a self-contained HTML page"
    )
    report.add_argument(
        "--json", action="store_true", help="print JSON instead of the table"
    )
    report.add_argument(
        "--max-error",
        type=float,
        metavar="EPS",
        help="gate on the distance to calibration (dCE): exit with status 1 "
        "unless it passes (EPS in [0, 1); see --gate)",
    )
    report.add_argument(
        "--gate",
        choices=("certify", "reject"),
        default="certify",
        help="certify (default): pass only when the data certify dCE <= EPS; "
        "reject: fail only when dCE > EPS is significant",
    )
    report.add_argument(
        "--fail-if-miscalibrated",
        type=float,
        metavar="EPS",
        help="deprecated spelling of --max-error EPS (removed in the next release)",
    )
    report.add_argument(
        "--resamples",
        type=int,
        default=200,
        metavar="B",
        help="draws of the calibrated null (the scale and the test) and of the "
        "bootstrap (the intervals); default 200, at least 20 with --max-error, "
        "0 leaves them out",
    )
    report.add_argument("--random-state", type=int, default=0)
    return parser


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from ._demo import run_demo

            run_demo(random_state=args.random_state)
            return 0
        for option in ("max_error", "fail_if_miscalibrated"):
            value = getattr(args, option)
            if value is not None and not 0 <= value < 1:
                parser.error(
                    f"--{option.replace('_', '-')} must be in [0, 1), got {value!r}."
                )
        if args.resamples < 0:
            parser.error(f"--resamples must be non-negative, got {args.resamples}.")
        if not 0 <= args.random_state < 2**32:
            parser.error(
                f"--random-state must be in [0, 2**32), got {args.random_state}."
            )
        from ._report import run_report

        status = run_report(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader (e.g. `| head`) left: stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
