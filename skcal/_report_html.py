"""The HTML page of ``python -m skcal report --html``: the table, the verdict and the plots."""

import base64
import html
import io

from ._report import MEASURES, _prefix, gate_line
from ._report_input import safe_text


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def render_html(
    summary, y, p, w, *, title, table_lines, random_state=0, notes=(), band=True
):
    """One self-contained HTML page: the table, the verdict and the plots.

    ``band=False`` leaves out the reliability diagram's band (for grouped
    rows, whose weights are not the rows' own).
    """
    from ._pyplot import import_pyplot
    from .display import CalibrationTestDisplay, ReliabilityDisplay

    plt = import_pyplot("skcal report --html")
    images = []
    try:
        display = ReliabilityDisplay.from_predictions(
            y,
            p,
            sample_weight=w,
            random_state=random_state,
            name="predictions",
            **({} if band else {"n_resamples": 0}),
        )
        images.append(("Reliability diagram", _png(display.figure_)))
        test = CalibrationTestDisplay.from_tester(summary["_tester"])
        images.append(("Calibration test", _png(test.figure_)))
    finally:
        plt.close("all")
    rows = []
    prefix = _prefix(summary)
    for key, label, _, meaning in MEASURES:
        if key not in summary["measures"]:
            continue  # not asked for (--measure)
        m = summary["measures"][key]
        null = "" if m["null_95"] is None else f"{m['null_95']:.4f}"
        ci = ""
        if m.get("low") is not None:
            high = "1" if m.get("method") == "scdl-bound" else f"{m['high']:.4f}"
            ci = f"[{m['low']:.4f}, {high}]"
        rows.append(
            f"<tr><td>{html.escape(label)}</td>"
            f'<td class="value" data-measure="{key}" data-value="{m["value"]!r}">'
            f'{m["value"]:.4f}</td><td class="value">{ci}</td>'
            f'<td class="value">{null}</td>'
            f"<td>{html.escape(meaning)}</td></tr>"
        )
    test = summary["test"]
    if test["p_value"] is None:  # no shared draws (--resamples 0): the tester's
        result = summary["_tester"].result_
        test = {"calibrated": bool(result.calibrated), "alpha": float(result.alpha),
                "p_value": float(result.p_value)}
    verdict = "calibrated" if test["calibrated"] else "not calibrated"
    gate = ""
    if "gate" in summary:
        text = html.escape(" ".join(gate_line(summary, 10**6)))
        gate = f'<p class="verdict" id="gate">{text}</p>'
    figures = "\n".join(
        f'<figure><img alt="{html.escape(t)}" src="{src}"><figcaption>'
        f"{html.escape(t)}</figcaption></figure>"
        for t, src in images
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(safe_text(title))}</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: left; }}
td.value {{ font-family: monospace; font-size: 1.05em; text-align: right; }}
.verdict {{ font-size: 1.2em; }}
img {{ max-width: 100%; }}
pre {{ background: #f6f6f6; padding: 0.8em; }}
</style></head><body>
<h1>{html.escape(safe_text(title))}</h1>
{"".join(f"<p class='input'>{html.escape(safe_text(n))}</p>" for n in notes)}
<p class="verdict" id="verdict" data-calibrated="{str(test["calibrated"]).lower()}">
Test ({prefix}smooth calibration error, alpha = {test["alpha"]:g}): <b>{verdict}</b>,
p-value {test["p_value"]:.3f}, n = {summary["n"]}.</p>
{gate}
<table id="measures">
<tr><th>measure</th><th>{prefix}value</th>
<th>{100 * summary.get("confidence", 0.95):g}% confidence interval</th>
<th>95% of calibrated models below</th><th>what it says</th></tr>
{chr(10).join(rows)}
</table>
<p>All measures are {prefix}calibration errors in probability units; 0 means
perfectly calibrated. The
third column is the 95th percentile of the measure over data sets whose
outcomes are redrawn as y* ~ Bernoulli(p) from these predictions: what chance
alone gives a perfectly calibrated model of this size.</p>
{figures}
<h2>Terminal report</h2>
<pre>{html.escape(chr(10).join(safe_text(line) for line in table_lines))}</pre>
</body></html>
"""
