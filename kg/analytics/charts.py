"""Charts of the analyses, as PNG or SVG, in one consistent style.

matplotlib is imported only when a chart is drawn, and only through its object API
(a :class:`~matplotlib.figure.Figure` on the Agg canvas), so no global pyplot state or
interactive backend is involved. The palette is Okabe and Ito's, which stays readable
for colour-blind readers and in greyscale.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.analytics.analyses import Report
from kg.errors import AnalyticsError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CHARTS", "FORMATS", "PALETTE", "STATUS_COLOURS", "draw", "save"]

FORMATS = (".png", ".svg")
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#999999",
)
#: Kernel state (kg.wording.KernelState) → colour.
STATUS_COLOURS = {
    "verified": "#009E73",
    "failing": "#D55E00",
    "not run": "#E69F00",
    "none": "#999999",
}
_STYLE: Any = {  # rcParams; typed loosely because matplotlib types them by key
    "font.size": 10,
    "axes.titlesize": 13,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linestyle": "-",
    "legend.frameon": False,
    "legend.fontsize": 9,
    "svg.hashsalt": "techkg",
    "svg.fonttype": "none",
}


def _figure(title: str, size: tuple[float, float] = (9.0, 5.0)) -> tuple[Figure, Axes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title, loc="left")
    return fig, ax


def _empty(ax: Axes, message: str) -> None:
    ax.grid(False)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(
        0.5,
        0.5,
        message,
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#555555",
        wrap=True,
    )


def progress_chart(report: Report) -> Figure:
    """Papers read so far and papers still to read, at the end of each period: two lines on
    one axis, each labelled with its latest value."""
    rows = report.section("timeline").rows
    fig, ax = _figure("Read and to read over time")
    if not rows:
        _empty(ax, "No reading status has been recorded yet.\nBuild the graph, or mark a paper with: "
               "kg reading set PAPER read")
        return fig
    periods = [r["period"] for r in rows]
    top = max(max(r["cumulative"], r["to_read"]) for r in rows) * 1.12 + 1
    read, to_read = rows[-1]["cumulative"], rows[-1]["to_read"]
    apart = (7 if abs(read - to_read) < 0.05 * top else 0) * (1 if read >= to_read else -1)
    series = (("cumulative", "read", STATUS_COLOURS["verified"], apart),  # end labels of close lines move apart
              ("to_read", "to read", PALETTE[1], -apart))
    for key, label, colour, nudge in series:
        values = [r[key] for r in rows]
        ax.plot(periods, values, color=colour, marker="o", markersize=4, linewidth=2.2, label=label)
        ax.annotate(f"{label}: {values[-1]}", (periods[-1], values[-1]), xytext=(6, nudge),
                    textcoords="offset points", va="center", color=colour, fontweight="bold")
    ax.set_ylabel("papers")
    ax.set_ylim(bottom=0, top=top)
    ax.margins(x=0.08)
    ax.legend(loc="upper left")
    fig.autofmt_xdate()
    return fig


def papers_chart(report: Report, *, categories: int = 8) -> Figure:
    """Papers per year, stacked by technique category (the largest ``categories``, then other)."""
    rows = report.section("per_year_category").rows
    fig, ax = _figure("Papers per year by technique category")
    if not rows:
        _empty(ax, "No paper is linked to a technique with a year yet.")
        return fig
    totals: dict[str, int] = defaultdict(int)
    for r in rows:
        totals[r["category"]] += r["papers"]
    kept = sorted(totals, key=lambda c: (-totals[c], c))[:categories]
    years = sorted({r["year"] for r in rows})
    series: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        series[r["category"] if r["category"] in kept else "other"][r["year"]] += r["papers"]
    bottom = [0] * len(years)
    for i, name in enumerate([*kept, "other"] if "other" in series else kept):
        values = [series[name][y] for y in years]
        ax.bar(
            [str(y) for y in years],
            values,
            bottom=bottom,
            label=name,
            color=PALETTE[i % len(PALETTE)],
        )
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("papers")
    fig.legend(loc="outside right upper")
    return fig


def adoption_chart(report: Report) -> Figure:
    """Stars over time for the repositories with the most stars."""
    rows = report.section("timeline").rows
    fig, ax = _figure("Repository stars over time")
    if not rows:
        _empty(
            ax,
            "No repository snapshots yet.\nThey appear after a GitHub ingest (kg ingest github).",
        )
        return fig
    lines: dict[str, list[tuple[Any, int]]] = defaultdict(list)
    for r in rows:
        lines[r["repository"]].append((r["taken"], r["stars"]))
    for i, (name, points) in enumerate(sorted(lines.items(), key=lambda kv: -kv[1][-1][1])):
        ax.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            marker="o",
            markersize=3,
            label=name,
            color=PALETTE[i % len(PALETTE)],
            linestyle="-" if i < len(PALETTE) else "--",
        )
    ax.set_ylabel("stars")
    fig.legend(loc="outside right upper")
    fig.autofmt_xdate()
    return fig


def uptake_chart(report: Report) -> Figure:
    """Papers per year for each technique: its adoption curve in the literature."""
    from matplotlib.ticker import MaxNLocator

    rows = report.section("per_year").rows
    fig, ax = _figure("The uptake of techniques: papers per year")
    if not rows:
        _empty(ax, "No paper is linked to a technique with a year yet.\nkg link makes the links.")
        return fig
    counts: dict[str, dict[int, int]] = defaultdict(dict)
    for r in rows:
        counts[r["technique"]][r["year"]] = r["papers"]
    years = list(range(min(r["year"] for r in rows), max(r["year"] for r in rows) + 1))
    ranked = sorted(counts, key=lambda name: (-sum(counts[name].values()), name))
    for i, name in enumerate(ranked):  # a year without papers is a zero, not a gap
        ax.plot(years, [counts[name].get(y, 0) for y in years], marker="o", markersize=3, label=name,
                color=PALETTE[i % len(PALETTE)], linestyle="-" if i < len(PALETTE) else "--")
    ax.set_ylabel("papers that introduce, extend, use or evaluate it")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(loc="outside right upper")
    return fig


def kernels_chart(report: Report) -> Figure:
    """Kernel status per category, as stacked horizontal bars."""
    rows = report.section("coverage").rows
    fig, ax = _figure(
        "Reference kernel coverage per category", size=(9.0, 0.45 * max(4, len(rows)) + 1.5)
    )
    if not rows:
        _empty(ax, "No techniques in the graph yet: run kg build.")
        return fig
    labels = [r["category"] for r in rows][::-1]
    left = [0] * len(labels)
    for status, colour in STATUS_COLOURS.items():
        values = [r[status] for r in rows][::-1]
        ax.barh(labels, values, left=left, color=colour, label=status, edgecolor="white")
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("techniques")
    ax.grid(axis="y", visible=False)
    fig.legend(loc="outside lower center", ncols=len(STATUS_COLOURS))
    return fig


#: analysis → the chart drawn for it.
CHARTS: dict[str, Callable[[Report], Figure]] = {
    "progress": progress_chart,
    "papers": papers_chart,
    "adoption": adoption_chart,
    "uptake": uptake_chart,
    "kernels": kernels_chart,
}


def draw(report: Report) -> Figure:
    """The chart of ``report`` in the house style."""
    if report.name not in CHARTS:
        raise AnalyticsError(
            f"the {report.name} analysis has no chart",
            hint="Charts exist for: " + ", ".join(CHARTS) + ".",
        )
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        return CHARTS[report.name](report)


def save(report: Report, path: Path) -> Path:
    """Draw ``report``'s chart into ``path``: PNG or SVG, chosen by the extension."""
    if report.name not in CHARTS:
        raise AnalyticsError(
            f"the {report.name} analysis has no chart",
            hint="Charts exist for: " + ", ".join(CHARTS) + ".",
        )
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise AnalyticsError(
            f"cannot write a chart to {path}: unknown extension {suffix or '(none)'}",
            hint="Give a file name ending in .png or .svg.",
        )
    if not path.parent.is_dir():
        raise AnalyticsError(
            f"cannot write a chart to {path}: the folder {path.parent} does not exist",
            hint="Create the folder first, or choose another path.",
        )
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig = CHARTS[report.name](report)
        metadata = {"Date": None} if suffix == ".svg" else {"Software": "TechKG"}
        fig.savefig(path, dpi=150, metadata=metadata)
    return path
