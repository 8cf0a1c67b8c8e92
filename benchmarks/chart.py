"""Draw bench.py's JSON as a bar chart: %D2D (GPU time) per large case, per participant.

    python benchmarks/chart.py benchmarks/results/h100.json benchmarks/results/h100.png

``bandwidth_chart(path)`` returns the matplotlib figure (the notebooks and the documentation
draw it inline). Needs matplotlib (not a dependency of cudadml).
"""

from __future__ import annotations

import json
import sys


def bandwidth_chart(path, labels=None):
    """The figure of the large cases in the JSON file ``path``: per case, each participant's
    GPU-time bandwidth as a share of the device-to-device copy measured in the same run.
    ``labels`` maps a participant's name in the JSON (``"cudadml at 38b83d9"``: bench.py's
    ``--against`` revision) to what the legend says for a reader who cannot place a commit."""
    import matplotlib.pyplot as plt

    with open(path) as f:
        results = json.load(f)
    rows = [r for r in results["rows"] if r["kind"] == "large"]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    participants = list(dict.fromkeys(r["participant"] for r in rows))
    share = {(r["case"], r["participant"]): r["pct_d2d"] for r in rows}
    width = 0.8 / len(participants)
    figure, ax = plt.subplots(figsize=(10, 0.38 * len(cases) + 1.5))
    for k, who in enumerate(participants):
        ys = [c + k * width for c in range(len(cases))]
        label = (labels or {}).get(who, who)
        ax.barh(ys, [share.get((case, who), 0) for case in cases], height=width, label=label)
    ax.set_yticks([c + 0.4 - width / 2 for c in range(len(cases))], cases, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(100, color="grey", linewidth=0.8)
    ax.set_xlabel(f"% of a device-to-device copy's bandwidth ({results['d2d_gbps']:.0f} GB/s), GPU time")
    ax.set_title(results["device"], pad=28)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(participants), frameon=False)
    figure.tight_layout()
    return figure


def main(argv=None) -> int:
    source, target = (argv if argv is not None else sys.argv[1:])[:2]
    import matplotlib

    matplotlib.use("Agg")
    bandwidth_chart(source).savefig(target, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
