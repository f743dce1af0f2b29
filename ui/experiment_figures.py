"""The figures of the paper's experiments, pure (no Streamlit): the plot of a figure's tidy rows and the table of
its numbers. The Experiments page and the standalone HTML files (`python -m ui.experiment_figures DIR`) draw with
the same builder, so a file and the page never disagree.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.errors import PspError
from core.teaching.experiments import CAPTION, NOT_PRIVATE_METHODS, read_rows
from ui.labels import axis_title, panel_title
from ui.theme import METHOD_COLORS, METHOD_LABELS, TRUTH

TABLE_COLUMNS = ("panel", "x", "method", "metric", "mean", "se", "release_rate")


def method_label(method: str) -> str:
    """The app's name of a method; a method that is not private says so wherever it is named."""
    label = METHOD_LABELS.get(method) or method.replace("_", " ").capitalize()
    if method in NOT_PRIVATE_METHODS and "not private" not in label:
        label += " · not private"
    return label


def figure(rows: list[dict], title: str):
    """core's plot of the rows (results_figure), with the app's method names: the oracle says it is not private."""
    fig = results_figure(rows, title)
    for trace in fig.data:
        trace.name = method_label(trace.name)
    return fig


def table(rows: list[dict]) -> pd.DataFrame:
    """The plotted numbers, one row per panel, x, method and metric, named as the figure names them."""
    frame = pd.DataFrame([{c: r[c] for c in TABLE_COLUMNS} for r in rows], columns=list(TABLE_COLUMNS))
    frame["method"] = [method_label(m) for m in frame["method"]]
    frame["metric"] = [axis_title(m) for m in frame["metric"]]  # the figure's words for the same rows
    frame["panel"] = [panel_title(p) for p in frame["panel"]]
    return frame


def results_figure(rows: list[dict], title: str = ""):
    """The plot of a figure's tidy rows: one subplot per metric (row) and panel (column), one line per method,
    error bars of 2 standard errors. Pure: the same rows give the same figure (the HTML files and the
    Experiments page both draw with it)."""
    panels = list(dict.fromkeys(r["panel"] for r in rows))
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    # The panels of a column share n (or ε): its ticks and title once, under the bottom row.
    fig = make_subplots(rows=len(metrics), cols=len(panels), column_titles=[panel_title(p) for p in panels],
                        shared_xaxes=True, horizontal_spacing=0.06, vertical_spacing=0.06)
    for i, metric in enumerate(metrics, 1):
        for j, panel in enumerate(panels, 1):
            for method in methods:
                sel = sorted((r for r in rows if r["panel"] == panel and r["metric"] == metric
                              and r["method"] == method), key=lambda r: r["x"])
                if sel:
                    fig.add_trace(_series(sel, method, first=(i == 1 and j == 1)), row=i, col=j)
        if metric in ("p_zero", "release_rate"):
            fig.update_yaxes(type="linear", row=i)
        else:
            fig.update_yaxes(type="log", row=i, **_decades([r["mean"] for r in rows if r["metric"] == metric]))
        fig.update_yaxes(title_text=axis_title(metric), row=i, col=1)
    x_name = rows[0]["x_name"] if rows else ""
    if x_name == "epsilon":
        fig.update_xaxes(type="linear")
    else:
        fig.update_xaxes(type="log", **_decades([r["x"] for r in rows]))
    fig.update_xaxes(title_text=axis_title(x_name), row=len(metrics))
    _lay_out(fig, title, len(metrics), len(panels))
    return fig


def _decades(values: list[float]) -> dict:
    """A log axis's ticks: every power of 10 where the values span a decade or more (Plotly's labels at 2 and 5
    between them crowd a narrow panel), else Plotly's own."""
    shown = [v for v in values if v > 0 and math.isfinite(v)]
    return dict(dtick=1) if shown and math.log10(max(shown) / min(shown)) >= 1 else {}


def _series(sel: list[dict], method: str, first: bool) -> go.Scatter:
    """One method's line in one subplot; the first subplot's lines make the legend."""
    se = [0.0 if math.isnan(r["se"]) else 2 * r["se"] for r in sel]
    return go.Scatter(x=[r["x"] for r in sel], y=[r["mean"] for r in sel], name=method, legendgroup=method,
                      showlegend=first, mode="lines+markers",
                      line=dict(color=METHOD_COLORS.get(method, TRUTH), dash=_dash(method)),
                      error_y=dict(type="data", array=se, visible=True))


def _lay_out(fig: go.Figure, title: str, n_rows: int, n_cols: int) -> None:
    """The legend under the plots, where the chart's toolbar cannot cover it and the panels keep the width; the axis
    titles push the margins (automargin) rather than being clipped by them."""
    fig.update_layout(title=title or CAPTION, height=300 * n_rows + 160, width=380 * n_cols + 200,
                      margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(title_text="Method", orientation="h", yref="container", y=0, yanchor="bottom",
                                  xanchor="left", x=0))
    fig.update_xaxes(automargin=True, title_standoff=8)
    fig.update_yaxes(automargin=True, title_standoff=6)


def _dash(method: str) -> str:
    """Reference curves (a rate, a non-private method) are dotted: they are not private releases."""
    return "dot" if method in NOT_PRIVATE_METHODS else "solid"


def write_html(rows: list[dict], path: Path) -> None:
    """The figure of a CSV's rows as a standalone HTML page (plotly.js inside, no network needed)."""
    title = f"{rows[0]['figure']}: {CAPTION}" if rows else CAPTION
    path.write_text(results_figure(rows, title).to_html(include_plotlyjs=True, full_html=True))


def main(argv: list[str] | None = None) -> int:
    """python -m ui.experiment_figures DIR: DIR/<figure>.html beside every DIR/<figure>.csv that
    `python -m core experiment` wrote (core draws no figures)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m ui.experiment_figures DIR (the folder passed to python -m core experiment --out)",
              file=sys.stderr)
        return 2
    for csv_path in sorted(Path(args[0]).glob("fig*.csv")):
        try:
            rows = read_rows(csv_path, csv_path.name)
        except PspError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        write_html(rows, csv_path.with_suffix(".html"))
        print(csv_path.with_suffix(".html"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
