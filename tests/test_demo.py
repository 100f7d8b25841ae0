import subprocess
import sys

from skcal import metrics
from skcal._demo import MEASURES, run_demo


def test_demo_prints_every_measure_in_80_columns():
    lines = []
    run_demo(out=lines.append, n_resamples=20)
    text = "\n".join(lines)
    for _, label, func_name, meaning in MEASURES:
        assert hasattr(metrics, func_name), f"{func_name} is missing from skcal.metrics"
        assert sum(line.startswith(label) for line in lines) == 2  # value, meaning
        assert meaning in text
    assert "breast cancer" in text
    assert "paper" not in text.lower()
    assert max(len(line) for line in lines) <= 80


def test_demo_values_equal_direct_calls():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    p = GaussianNB().fit(X_train, y_train).predict_proba(X_test)[:, 1]
    lines = []
    run_demo(out=lines.append, n_resamples=5)
    for _, label, func_name, _ in MEASURES:
        row = next(line for line in lines if line.startswith(label))
        cells = row[len(label) :].split()
        value = float(cells[2])  # naive Bayes: second model, after "(level)"
        assert abs(value - getattr(metrics, func_name)(y_test, p)) < 5e-5


def test_demo_into_a_closed_pipe_is_quiet(tmp_path):
    # run outside the source tree, which would shadow the installed package
    proc = subprocess.run(
        f"{sys.executable} -m skcal demo | head -3",
        shell=True,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.stdout.count("\n") == 3
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
