"""Draw a benchmark JSON (results/*.json, fields in README.md) as a bandwidth chart.

    python benchmarks/chart.py benchmarks/results/h100.json chart.svg

``bandwidth_chart(path)`` returns the matplotlib figure: per case, each participant's
bandwidth as a share of the device-to-device copy measured in the same run.
"""

from __future__ import annotations

import json
import sys

import matplotlib.pyplot as plt

COLOURS = {"cudadml": "#1f4e9c", "CuPy": "#f28e2b", "PyTorch": "#9c9c9c"}


def bandwidth_chart(path):
    """The figure of the results in the JSON file ``path``."""
    with open(path) as f:
        results = json.load(f)
    cases = list(dict.fromkeys(row["case"] for row in results["rows"]))
    figure, ax = plt.subplots(figsize=(9, 0.42 * len(cases) + 1.4))
    height = 0.8 / len(COLOURS)
    for k, (participant, colour) in enumerate(COLOURS.items()):
        rows = [row for row in results["rows"] if row["participant"] == participant]
        ax.barh(
            [cases.index(row["case"]) + (k - 1) * height for row in rows],
            [row["pct_d2d"] for row in rows],
            height,
            label=participant,
            color=colour,
        )
    ax.axvline(100, color="black", linewidth=0.8)
    ax.set_yticks(range(len(cases)), cases, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"% of a device-to-device copy ({results['d2d_gb_s']:.0f} GB/s)")
    ax.set_title(f"{results['gpu']}, {results['date']}", fontsize=10, loc="left")
    ax.legend(ncol=3, loc="lower right", bbox_to_anchor=(1, 1), frameon=False, fontsize=8)
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    bandwidth_chart(sys.argv[1]).savefig(sys.argv[2])
