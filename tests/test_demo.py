from skcal import metrics
from skcal._demo import MEASURES, run_demo


def test_demo_prints_every_measure():
    lines = []
    run_demo(out=lines.append)
    text = "\n".join(lines)
    for label, func_name, _ in MEASURES:
        assert hasattr(metrics, func_name), f"{func_name} is missing from skcal.metrics"
        assert label in text
    assert "breast cancer" in text
