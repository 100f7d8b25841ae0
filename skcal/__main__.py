"""Command line: ``python -m skcal demo``."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skcal")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="measure two classifiers on breast cancer")
    demo.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        run_demo(random_state=args.random_state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
