"""Pipeline page: Algorithm 5 on the loaded data, one card per stage.

The data and the fit (stage 0) come from ui.state, cached on the data and model settings only.
Teaching mode runs the private stages again on every rerun (seeded, or fresh OS noise), charges
nothing, and offers its run only as a snapshot labelled TEACHING — NOT PRIVATE; publish mode runs
them once per click of the release button, charges the ledger, and only such a charged release
reaches the Report. Noise is never cached; the what-ifs, deterministic functions of the data, are.
"""

from __future__ import annotations

import math
import re
import secrets
from dataclasses import fields

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from numpy.typing import NDArray

from core import whatif
from core.accounting import ACCOUNTINGS, Budget, make_budget
from core.certificates import RecursiveBound
from core.data import Dataset
from core.errors import InputError
from core.gaussian import CALIBRATIONS
from core.geometry import DOMAINS
from core.marks import not_private
from core.pipeline import PrivateRun, Problem, make_rng, run_private
from core.recursion import AffineIncreasingRecursion, down_recursion, up_recursion
from core.release import Release
from ui import state
from ui.theme import ACCENT, CHOSEN, METHOD_COLORS, NOT_PRIVATE, OTHER, TRUTH

GREY = METHOD_COLORS["oracle"]
MAX_POINTS = 2000  # plotted points per recursion path: enough for the eye, light for the browser
# Log grids of the sliders: the R10 preferred numbers for epsilon, 1-2-5 for delta. Epsilon stops at 20: beyond,
# the guarantee means little and the PLD total of the Budget card takes seconds (the what-if explores further).
R10 = (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8)
EPS_GRID = tuple(float(f"{m}e{e}") for e in range(-2, 1) for m in R10) + (10.0, 12.5, 16.0, 20.0)
DELTA_GRID = tuple(float(f"{m}e{e}") for e in range(-12, -2) for m in (1, 2, 5)) + (1e-2,)
WHATIF_EPS = np.geomspace(0.1, 100.0, 10)
# The what-if's n grid stops at 10^7: its cost grows with n, and a row at 10^8 alone takes ~7 s (smallest_n goes on).
WHATIF_N_MAX = 10**7
ZOOM = 300  # steps kept at full resolution at the end of a recursion path, where N, N̂ and m fall
Steps = tuple[NDArray, NDArray]  # (k, R^k) of a recursion at the steps kept for plotting


# ---------------------------------------------------------------- formatting


def num(x: float | None) -> str:
    """Six significant digits; a dash for a constant that could not be formed."""
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.6g}"


def interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"[{num(bounds[0])}, {num(bounds[1])}]"


def tagged(text: str) -> str:
    return f"{text} {NOT_PRIVATE}"


def label(result: object, field: str, text: str) -> str:
    """text, badged when core marks result.field as computed from the data without privacy."""
    return tagged(text) if field in not_private(result) else text


def metric_row(items: list[tuple[str, str, str]]) -> None:
    """(label, value, help) metrics side by side, wrapping on narrow screens."""
    with st.container(horizontal=True, gap="medium"):
        for text, value, help_text in items:
            st.metric(text, value, help=help_text, width="content")


def card_title(text: str) -> None:
    st.markdown(f"#### {text}")


def chart(fig: go.Figure, key: str, height: int, top: int = 30) -> None:
    """A plotly chart in the page's style; its toolbar downloads a PNG named after the key."""
    # The legend goes below the plot: above it, the toolbar would cover its right end.
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=top, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0.0))
    st.plotly_chart(fig, key=key, config={"toImageButtonOptions": {"format": "png", "filename": key, "scale": 2}})


# ---------------------------------------------------------------- controls


def log_options(grid: tuple[float, ...], current: float) -> list[float]:
    """The grid with the current value added, so a value from a link stays selectable."""
    return sorted(set(grid) | {current})


def fresh_noise() -> None:
    """With a seed set, a fresh draw gets a new random seed, so it can still be replayed."""
    if st.session_state.get("noise_seed") is not None:
        st.session_state["noise_seed"] = secrets.randbelow(1_000_000)


def target_controls(names: tuple[str, ...]) -> None:
    # The registry stores the first feature as "", its default, so a link to it stays short.
    options = ("", *names[1:])
    if state.get("coordinate") not in options:
        st.session_state["coordinate"] = ""  # the first feature, or one of another data set
    col_j, col_u = st.columns(2)
    col_j.selectbox(
        "Coordinate j", options, key="coordinate", format_func=lambda name: name or names[0],
        disabled=bool(state.get("direction").strip()),
        help="u = e_j: Algorithm 5 releases the coefficient u^T θ(P_n) of the estimator (1)",
    )
    col_u.text_input(
        "Custom direction u", key="direction", placeholder=f"{len(names)} comma-separated numbers, e.g. 1, -1, 0, …",
        help="Any u ∈ ℝ^d, normalised to ‖u‖₂ = 1; Algorithm 5 then releases u^T θ(P_n), with Δ(P_n, u) of (3b) "
        "and ω(u | P_n) of (11) for this u. Overrides the coordinate when not empty.",
    )


def budget_controls() -> None:
    col_e, col_d = st.columns(2)
    col_e.select_slider(
        "Total ε (log scale)", log_options(EPS_GRID, state.get("epsilon")), key="epsilon", format_func="{:g}".format,
        help="Total ε of Algorithm 5. Basic composition (SPEC §6, Lemma 2.5): ε = ε_a + ε_b + 2ε_c; "
        "PLD accounting solves the stages so that the privacy-loss-distribution total is ε",
    )
    col_d.select_slider(
        "Total δ (log scale)", log_options(DELTA_GRID, state.get("delta")), key="delta", format_func="{:g}".format,
        help="Total δ. Basic composition (SPEC §6): δ = e^(ε_a+ε_b)(δ_a + δ_b) + (1 + e^ε_c)δ_c, with δ_a, δ_b "
        "the certificates' failure probabilities (Proposition 6.1) and δ_c that of σ(ε_c, δ_c) in (7)",
    )
    cols = st.columns(5)
    for col, key, what in zip(cols[:3], ("split_a", "split_b", "split_c"), (
        "ε_a = a/(a+b+c)·ε for λ̂_min (Algorithm 2)",
        "ε_b = b/(a+b+c)·ε for λ̂_max (Algorithm 4)",
        "2ε_c = c/(a+b+c)·ε for the test (14) and the release (Algorithm 5)",
    ), strict=True):
        weight = key[-1]
        col.number_input(f"Split {weight}", min_value=0.0, step=0.5, format="%g", key=key,
                         help=f"Weight {weight} > 0: {what}; δ is split in the same proportions (SPEC §6)")
    cols[3].radio(
        "Accounting", ACCOUNTINGS, key="accounting", horizontal=True,
        help="How the total (ε, δ) is split into the stages: basic composition (SPEC §6, Lemma 2.5) or "
        "privacy-loss distributions (dp_accounting, docs/privacy.md), which leave each stage a little more",
    )
    cols[4].radio(
        "σ(ε, δ) calibration", CALIBRATIONS, key="calibration", horizontal=True,
        help="σ(ε_c, δ_c) of the release: the paper's (7) or the analytic Gaussian mechanism "
        "(Balle & Wang 2018), never larger",
    )


def model_controls() -> None:
    col_l, col_dom, col_r, col_lev = st.columns(4)
    col_l.number_input(
        "λ_reg", min_value=0.0, step=1e-3, format="%g", key="lam_reg",
        help="λ_reg ≥ 0 of the ridge term (λ_reg/2)‖θ‖² in the estimator (1); changing it refits θ(P_n)",
    )
    domain = col_dom.radio(
        "Covariate domain 𝒳", DOMAINS, key="domain", horizontal=True,
        help="cube [−1, 1]^d (test (14b), d_p = d) or ball ‖x‖₂ ≤ R (test (14a), d_p = 1); "
        "rows outside 𝒳 are projected onto it before the fit (SPEC §2)",
    )
    col_r.number_input(  # value=None makes the box clearable: empty = the ball around the cube
        "Ball radius R", value=None, min_value=0.0, step=0.5, format="%g", key="radius", disabled=domain != "ball",
        placeholder="empty = √d, the ball around the cube",
        help="R = rad₂(𝒳) = r of the ball domain, so G₀ = r·sup|h′| and G₁ = r²·sup h″ (SPEC §2)",
    )
    col_lev.slider(
        "Interval level 1 − a", min_value=0.50, max_value=0.99, step=0.01, key="level",
        help="Level 1 − a of the intervals T ± z_{1−a/2}·σ·w̄ (private) and T ± z_{1−a/2}·σ·ω (oracle), SPEC §4",
    )


def noise_controls() -> None:
    col_s, col_b = st.columns(2, vertical_alignment="bottom")
    # value=None makes the box clearable (empty = OS entropy); the value itself still comes from the session.
    col_s.number_input(
        "Noise seed (teaching only)", value=None, min_value=0, step=1, key="noise_seed",
        placeholder="empty = OS entropy",
        help="Seed of the privacy noise: the Lap(1/ε) draws of Algorithms 2 and 4 and Z ~ N(0, 1) of Algorithm 5. "
        "A seeded run replays exactly; empty = fresh noise from the OS on every rerun",
    )
    col_b.button(
        "Draw fresh noise", key="fresh_noise", on_click=fresh_noise, icon=":material/casino:",
        help="Run stages 1–4 (Algorithms 2, 4 and 5) again with new noise; with a seed set, a new random seed",
    )


def controls(names: tuple[str, ...]) -> None:
    with st.expander("Settings", expanded=True, icon=":material/tune:"):
        target_controls(names)
        budget_controls()
        model_controls()
        if not state.is_publish():
            noise_controls()


# ---------------------------------------------------------------- settings read from the controls


def budget() -> Budget:
    return make_budget(state.get("epsilon"), state.get("delta"), state.split(), state.get("accounting"))


# ---------------------------------------------------------------- cached, deterministic (not noise)


@st.cache_data(show_spinner=False, max_entries=8)
def lambda_min_path(data_key: tuple, model_key: tuple, _problem: Problem) -> Steps:
    f = _problem.fit
    return thin(down_recursion(_problem.geometry, f.n, f.lam_reg).trajectory(f.lambda_min))


@st.cache_data(show_spinner="What-if (not private): the smallest ε…", max_entries=64)
def smallest_epsilon(data_key: tuple, model_key: tuple, delta: float, split: tuple, _problem: Problem) -> float | None:
    return whatif.smallest_epsilon(_problem, delta, split)


@st.cache_data(show_spinner="What-if (not private): the smallest n…", max_entries=64)
def smallest_n(data_key: tuple, model_key: tuple, delta: float, split: tuple, epsilon: float,
               _problem: Problem) -> int | None:
    return whatif.smallest_n(_problem, epsilon, delta, split)


@st.cache_data(show_spinner="What-if (not private): where (14) passes over (n, ε)…", max_entries=16)
def pass_region(data_key: tuple, model_key: tuple, delta: float, split: tuple,
                _problem: Problem) -> tuple[NDArray, NDArray]:
    """(n grid, passes[n, ε]) on WHATIF_EPS; fixed grids, so an ε change reuses it."""
    top = min(100 * _problem.n, WHATIF_N_MAX)
    ns = np.unique(np.geomspace(50 * _problem.d, top, 10).round().astype(int))
    return ns, whatif.pass_region(_problem, delta, split, ns, WHATIF_EPS)


# ---------------------------------------------------------------- figures


def thin_steps(last: int) -> NDArray:
    """About MAX_POINTS steps k from 0 to last, and every one of the last ZOOM for the close-up."""
    spread = np.linspace(0, last, min(last + 1, MAX_POINTS)).round().astype(int)
    return np.union1d(spread, np.arange(max(0, last - ZOOM), last + 1))


def thin(path: list[float]) -> Steps:
    """(k, R^k) of a trajectory at the thinned steps."""
    k = thin_steps(len(path) - 1)
    return k, np.asarray(path)[k]


def rising_path(up: AffineIncreasingRecursion, lam: float) -> Steps:
    """The trajectory of the increasing recursion (12) at the thinned steps, by its closed form R^k."""
    k = thin_steps(up.count(lam))
    return k, np.array([up.power(lam, int(i)) for i in k])


def theta_figure(problem: Problem, theta_star: NDArray | None, j: int | None) -> go.Figure:
    names = list(problem.feature_names)
    colors = [CHOSEN if i == j else OTHER for i in range(len(names))]
    fig = go.Figure(go.Bar(x=names, y=problem.fit.theta, marker_color=colors, name="θ(P<sub>n</sub>) · not private"))
    if theta_star is not None:
        fig.add_trace(go.Scatter(x=names, y=theta_star, mode="markers", name="θ* (generating parameter)",
                                 marker=dict(symbol="diamond", size=11, color=ACCENT)))
    fig.update_layout(showlegend=True, yaxis_title="coefficient")
    return fig


def staircase(true_path: Steps, hat_path: Steps, b: RecursiveBound, names: tuple[str, str]) -> go.Figure:
    """R^k against k from the true eigenvalue (N steps) and from the certified bound (m steps), with a close-up
    of the end, where N, N̂ and m fall a few steps apart. One go.Figure call: make_subplots costs 5x more."""
    ends = [b.N, b.N_hat, b.m]
    pad = max(3.0, 0.3 * (max(ends) - min(ends)))
    window = [min(ends) - pad, max(ends) + pad]
    ys = np.concatenate([true_path[1], hat_path[1]])
    near = np.concatenate([v[(k >= window[0]) & (k <= window[1])] for k, v in (true_path, hat_path)])
    lines = [(*true_path, f"from {names[0]} · not private", GREY, "solid"),
             (*hat_path, f"from {names[1]}", CHOSEN, "solid")]
    # The markers are traces, not shapes: they join the legend, as N and N̂ are often too close to label.
    marks = ((b.N, "N · not private", GREY, "dash"), (b.N_hat, "N̂", CHOSEN, "dot"),
             (b.m, "m = ⌊N̂ − k⌋", ACCENT, "solid"))
    lines += [([x, x], [ys.min(), ys.max()], text, color, dash) for x, text, color, dash in marks]
    data = [dict(type="scatter", x=x, y=y, mode="lines", line_shape="hv", name=text, legendgroup=text,
                 showlegend=not axis, line=dict(color=color, dash=dash), xaxis=f"x{axis}", yaxis=f"y{axis}")
            for axis in ("", "2") for x, y, text, color, dash in lines]
    margin = 0.05 * (np.ptp(near) or abs(near.max()) or 1.0) if near.size else 0.0
    titles = [dict(text=text, x=x, xref="paper", y=1.0, yref="paper", yanchor="bottom", showarrow=False)
              for text, x in (("every step", 0.28), ("close-up of the end", 0.82))]
    return go.Figure(data=data, layout=dict(
        xaxis=dict(domain=[0, 0.56], title="k (recursion steps)"),
        yaxis=dict(title="R<sup>k</sup>(λ)"),
        xaxis2=dict(domain=[0.64, 1], anchor="y2", range=window, title="k (recursion steps)"),
        yaxis2=dict(anchor="x2", range=[near.min() - margin, near.max() + margin] if near.size else None),
        annotations=titles,
    ))


def number_line(points: list[tuple[str, float, str]]) -> go.Figure:
    """Values on one horizontal axis, each with its label above."""
    fig = go.Figure()
    for text, x, color in points:
        fig.add_trace(go.Scatter(x=[x], y=[0], mode="markers+text", text=[text], textposition="top center",
                                 marker=dict(size=13, color=color), showlegend=False, cliponaxis=False))
    fig.update_yaxes(visible=False, range=[-0.5, 1.5])
    return fig


def test_figure(value: float, threshold: float, passed: bool) -> go.Figure:
    rows = [("threshold", threshold, GREY)]
    if math.isfinite(value) and value > 0:
        rows.append(("max(A, B)² − 1", value, CHOSEN if passed else ACCENT))
    fig = go.Figure(go.Bar(y=[r[0] for r in rows], x=[r[1] for r in rows], orientation="h",
                           marker_color=[r[2] for r in rows], text=[num(r[1]) for r in rows]))
    fig.update_xaxes(type="log", dtick=1, title="log scale")
    return fig


def log_edges(grid: NDArray) -> NDArray:
    """Cell edges of a log grid: geometric midpoints, and half a step beyond each end."""
    g = np.log(np.asarray(grid, dtype=float))
    mid = (g[1:] + g[:-1]) / 2
    return np.exp(np.concatenate([[2 * g[0] - mid[0]], mid, [2 * g[-1] - mid[-1]]]))


def region_figure(ns: NDArray, passes: NDArray, n: int, epsilon: float) -> go.Figure:
    fig = go.Figure(go.Heatmap(
        x=log_edges(WHATIF_EPS), y=log_edges(ns), z=passes.astype(int), zmin=0, zmax=1, showscale=False,
        colorscale=[[0, OTHER], [0.5, OTHER], [0.5, CHOSEN], [1, CHOSEN]],
        hovertemplate="n ≈ %{y:.3s}, ε ≈ %{x:.3g}: %{z}<extra>1 = passes</extra>",
    ))
    fig.add_trace(go.Scatter(x=[epsilon], y=[n], mode="markers", name="this sample and ε",
                             marker=dict(symbol="star", size=16, color=ACCENT, line=dict(color=TRUTH, width=1))))
    fig.update_xaxes(type="log", title="total ε")
    fig.update_yaxes(type="log", title="n")
    return fig


def density_figure(r: Release) -> go.Figure:
    """N(u^T θ, (σω)²), the draw T, and the two intervals below the curve."""
    sd = r.noise_sd
    x = r.u_theta + sd * np.linspace(-4, 4, 241)
    y = np.exp(-0.5 * ((x - r.u_theta) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    peak = float(y.max())
    fig = go.Figure(go.Scatter(x=x, y=y, mode="lines", name="density of T · not private", line=dict(color=GREY)))
    for (lo, hi), text, color, level in ((r.interval, "private interval", CHOSEN, -0.12),
                                         (r.oracle_interval, "oracle interval · not private", ACCENT, -0.24)):
        fig.add_trace(go.Scatter(x=[lo, hi], y=[level * peak] * 2, mode="lines+markers", name=text,
                                 line=dict(color=color, width=5), marker=dict(symbol="line-ns-open", size=12)))
    for x, text, color, dash in ((r.value, "T (this draw)", TRUTH, "solid"),
                                 (r.u_theta, "u<sup>⊤</sup>θ(P<sub>n</sub>) · not private", GREY, "dash")):
        fig.add_trace(go.Scatter(x=[x, x], y=[0, peak], mode="lines", name=text, line=dict(color=color, dash=dash)))
    fig.update_layout(xaxis_title="T = u<sup>⊤</sup>θ(P<sub>n</sub>) + σωZ", yaxis_title="density")
    return fig


def release_line(r: Release) -> go.Figure:
    lo, hi = r.interval
    fig = go.Figure(go.Scatter(
        x=[lo, hi], y=[0, 0], mode="lines+markers", name=f"{r.interval_level:.0%} private interval",
        line=dict(color=CHOSEN, width=6), marker=dict(symbol="line-ns-open", size=14),
    ))
    fig.add_trace(go.Scatter(x=[r.value], y=[0], mode="markers+text", text=[f"T = {num(r.value)}"],
                             textposition="top center", name="released T", marker=dict(size=13, color=TRUTH)))
    fig.update_yaxes(visible=False, range=[-0.5, 1.5])
    return fig


# ---------------------------------------------------------------- cards


def stage0_card(problem: Problem, data: Dataset, j: int | None) -> None:
    f, g = problem.fit, problem.geometry
    with st.container(border=True):
        card_title(f"Stage 0 · fit $\\theta(P_n)$ {NOT_PRIVATE}")
        st.caption(
            f"{data.source}: n = {f.n:,}, d = {f.d}, loss {g.loss.name}, domain {g.domain}. Computed from the data "
            "without privacy, for teaching only, and cached until the data or model settings change."
        )
        if not f.has_minimiser:
            st.warning(f"No certified minimiser ({f.status.replace('_', ' ')}), a non-private diagnosis: "
                       f"{f.diagnosis}. The private stages take λ_min = 0, so the release is ⊥ through the "
                       "certificates, exactly as for a neighbouring data set.", icon=":material/report:")
            return
        chart(theta_figure(problem, data.theta_star, j), "theta", 300)
        metric_row([
            (label(f, "grad_norm", "$\\|\\nabla L\\|_2$"), num(f.grad_norm), "Gradient norm of (1) at θ(P_n)"),
            (label(f, "lambda_min", "$\\lambda_{\\min}(P_n)$"), num(f.lambda_min), "Smallest eigenvalue of H"),
            (label(f, "lambda_max", "$\\lambda_{\\max}(P_n)$"), num(f.lambda_max), "Largest eigenvalue of H"),
            (label(f, "kappa", "$\\kappa$"), num(f.kappa), "(λ_max + λ_reg)/(λ_min + λ_reg)"),
            (label(f, "iterations", "Newton steps"), str(f.iterations), "Iterations of the damped Newton solver"),
            (label(problem, "clipped_rows", "rows projected"), str(problem.clipped_rows), "Rows moved onto 𝒳"),
        ])
        with st.expander("Formulas: estimator (1) and its Hessian"):
            st.latex(
                r"\theta(P_n) = \mathop{\mathrm{argmin}}_\theta \frac1n \sum_{i=1}^n h(\langle\theta, x_i\rangle, y_i)"
                r" + \frac{\lambda_{\rm reg}}{2}\|\theta\|_2^2 \qquad \text{(1)}"
            )
            st.latex(
                r"H = \frac1n\sum_{i=1}^n h''(\langle\theta(P_n), x_i\rangle, y_i)\, x_i x_i^\top, \qquad"
                r"\kappa = \frac{\lambda_{\max}(H) + \lambda_{\rm reg}}{\lambda_{\min}(H) + \lambda_{\rm reg}}"
            )
            st.caption(
                f"Constants of the domain (public): r = rad₂(𝒳) = {num(g.r)}, G₀ = {num(g.G0)}, "
                f"G₁ = {num(g.G1)}, d_p = {num(g.d_p)}, α = {g.alpha}, ρ = {g.rho}."
            )


def bound_metrics(b: RecursiveBound, which: str) -> list[tuple[str, str, str]]:
    """The intermediates of one certificate; which is 'min' or 'max'."""
    lam = f"\\lambda_{{\\{which}}}"
    return [
        (label(b, "N", "$N$"), str(b.N), "Exact recursion count on the true eigenvalue"),
        (label(b, "noise", "Laplace draw"), num(b.noise), "The Lap(1/ε) noise added to N"),
        (label(b, "N_hat", "$\\hat N$"), num(b.N_hat), "N + Laplace noise: the released count"),
        (label(b, "k", "$k$"), num(b.k), "ln(1/(2δ))/ε: the safety offset"),
        (label(b, "m", "$m$"), str(b.m), "max(0, ⌊N̂ − k⌋): recursion steps to invert"),
        (label(b, "lambda_hat", f"$\\hat{lam}$"), num(b.lambda_hat), "The certified bound"),
        (label(b, "statistic", f"${lam}(P_n)$"), num(b.statistic), "The true eigenvalue it certifies"),
        # covers compares the bound with the true eigenvalue, so it is not private either.
        (tagged("bound holds"), "yes" if b.covers else "no", "Whether this draw's certificate is correct"),
    ]


def stage_budget_caption(what: str, stage: str, epsilon: float, delta: float) -> None:
    st.caption(f"{what}: pure ε_{stage}-DP with ε_{stage} = {num(epsilon)}; "
               f"the bound fails with probability ≤ δ_{stage} = {num(delta)}.")


def lambda_min_formulas() -> None:
    st.latex(r"t(\lambda) = \frac{1 - \sqrt{1 - 8\alpha r G_0/(\lambda n)}}{2\alpha r} \qquad \text{(9)}")
    st.latex(
        r"\text{(C1)}\quad \lambda + \frac{\lambda_{\rm reg}}{\rho} \ge "
        r"\frac{4 G_0 \alpha r}{\rho(1-\rho) n} + \frac{G_1}{\rho n}"
    )
    st.latex(
        r"R(\lambda) = \max\Big\{0,\ \lambda\big[1 - \varphi\big(r\,t(\lambda + \lambda_{\rm reg})\big)\big]_+"
        r" - \frac{G_1}{n}\Big\}\ \text{if } \lambda > 0 \text{ and (C1) hold, else } 0,"
        r"\quad \varphi(s) = e^s - 1 \qquad \text{(10)}"
    )
    st.latex(
        r"N = \min\{N \ge 1 : R^N(\lambda_{\min}) = 0\},\quad \hat N = N + \mathrm{Lap}(1/\varepsilon_a),"
        r"\quad k = \ln(1/(2\delta_a))/\varepsilon_a"
    )
    st.latex(
        r"m = \max(0, \lfloor \hat N - k \rfloor),\quad"
        r"\hat\lambda_{\min} = \sup\{\lambda \ge 0 : R^m(\lambda) = 0\} \qquad \text{(Algorithm 2)}"
    )


def lambda_max_formulas() -> None:
    st.latex(
        r"R_\uparrow(\lambda) = \min\Big\{\lambda\big(1 + \varphi\big(r\,t(\hat\lambda_{\min}"
        r" + \lambda_{\rm reg})\big)\big) + \frac{G_1}{n},\ G_1\Big\} \qquad \text{(12)}"
    )
    st.latex(
        r"N = \min\{N \ge 0 : R_\uparrow^N(\lambda_{\max}) \ge G_1\},"
        r"\quad \hat N = N + \mathrm{Lap}(1/\varepsilon_b),\quad k = \ln(1/(2\delta_b))/\varepsilon_b"
    )
    st.latex(
        r"m = \max(0, \lfloor \hat N - k \rfloor),\quad \hat\lambda_{\max} = "
        r"\min\big(\inf\{\lambda \ge 0 : R_\uparrow^m(\lambda) \ge G_1\},\ G_1\big) \qquad \text{(Algorithm 4)}"
    )
    st.caption("m uses N̂: the paper prints N − k in step iii, which would not be private (SPEC §4).")


def bound_figures(b: RecursiveBound, true_path: Steps, hat_path: Steps, which: str, key: str) -> None:
    """The staircase of the recursion and the number line of the eigenvalue beside its bound (teaching)."""
    names = (f"λ<sub>{which}</sub>(P<sub>n</sub>)", f"λ̂<sub>{which}</sub>")
    chart(staircase(true_path, hat_path, b, names), f"{key}_staircase", 370, top=60)  # titles below the toolbar
    chart(number_line([(f"{names[0]} · not private", b.statistic, GREY), (names[1], b.lambda_hat, CHOSEN)]),
          f"{key}_line", 130)


def lambda_min_card(run: PrivateRun, problem: Problem | None) -> None:
    """Stage 1; problem is None in publish mode, where only λ̂_min is shown."""
    b = run.lambda_min
    with st.container(border=True):
        card_title("Stage 1 · $\\hat\\lambda_{\\min}$ (Algorithm 2)")
        stage_budget_caption("Private lower bound on the Hessian's smallest eigenvalue", "a", b.epsilon, b.delta)
        if b.lambda_hat <= 0:
            st.warning("λ̂_min = 0: no positive lower bound could be certified, so nothing will be released.",
                       icon=":material/block:")
        if problem is None:
            metric_row([("$\\hat\\lambda_{\\min}$", num(b.lambda_hat), "The certified lower bound")])
        else:
            metric_row(bound_metrics(b, "min"))
            f, g = problem.fit, problem.geometry
            hat_path = thin(down_recursion(g, f.n, f.lam_reg).trajectory(b.lambda_hat))
            bound_figures(b, lambda_min_path(state.data_key(), state.model_key(), problem), hat_path, "min", "lmin")
            with st.expander("Formulas: (9), (C1), (10) and Algorithm 2"):
                lambda_min_formulas()


def lambda_max_card(run: PrivateRun, problem: Problem | None) -> None:
    """Stage 2; problem is None in publish mode, where only λ̂_max is shown."""
    b = run.lambda_max
    with st.container(border=True):
        card_title("Stage 2 · $\\hat\\lambda_{\\max}$ (Algorithm 4)")
        if b is None:
            st.info("Not reached: λ̂_min = 0, so Algorithm 4 does not run. Its budget (ε_b, δ_b) still counts as spent.")
        else:
            stage_budget_caption("Private upper bound on the Hessian's largest eigenvalue", "b", b.epsilon, b.delta)
            if problem is None:
                metric_row([("$\\hat\\lambda_{\\max}$", num(b.lambda_hat), "The certified upper bound")])
            else:
                metric_row(bound_metrics(b, "max"))
                f, g = problem.fit, problem.geometry
                up = up_recursion(run.lambda_min.lambda_hat, g, f.n, f.lam_reg)
                bound_figures(b, rising_path(up, b.statistic), rising_path(up, b.lambda_hat), "max", "lmax")
        if problem is not None:
            with st.expander("Formulas: (12) and Algorithm 4"):
                lambda_max_formulas()


def test_status(run: PrivateRun) -> None:
    t = run.test
    if t.passed:
        st.success(f"Passed: {t.reason}.", icon=":material/check_circle:")
    else:
        st.warning(f"Failed: {t.reason}.", icon=":material/block:")


def test_details(run: PrivateRun) -> None:
    t = run.test
    metric_row([
        ("Value $\\max(A, B)^2 - 1$", num(t.value), "Left side of (14)"),
        ("Threshold of (14)", num(t.threshold), "2ε_c / (1 + Φ⁻¹(1 − δ_c/2)²)"),
    ])
    chart(test_figure(t.value, t.threshold, t.passed), "test", 160)
    metric_row([
        ("$t$", num(t.t), "t(λ₀), the parameter change bound (9)"),
        ("$\\beta$", num(t.beta), "(13)"),
        ("$\\gamma$", num(t.gamma), "α r t"),
        ("$\\gamma'$", num(t.gamma_prime), "α r t(R_l)"),
        ("$s_1$", num(t.s1), "(13)"),
        ("$s_2$", num(t.s2), "(13)"),
        ("$\\kappa$", num(t.kappa), "λ₁/λ₀ from the certified bounds"),
        ("$A$", num(t.A), "Lower side of the ratio bound"),
        ("$B$", num(t.B), "Upper side of the ratio bound"),
    ])


def what_if(problem: Problem, b: Budget) -> None:
    """Would (14) pass at another ε or n? Noise-free certificates from the true eigenvalues (teaching)."""
    st.markdown(f"**What-if** {NOT_PRIVATE}")
    st.caption(
        "The certificates replaced by their noise-free values (N̂ = N) from the true λ_min and λ_max, held "
        "fixed as n changes, under basic composition at this δ and split."
    )
    keys = (state.data_key(), state.model_key(), b.delta_total, state.split())
    try:
        eps_min = smallest_epsilon(*keys, problem)
        n_min = smallest_n(*keys, b.epsilon_total, problem)
        ns, passes = pass_region(*keys, problem)
    except (InputError, OverflowError) as exc:  # the what-if explores ε up to 1e3, beyond the sliders
        st.warning(f"The what-if is not available for these settings: {exc}")
        return
    metric_row([
        (tagged("smallest ε that passes"), "not by 1000" if eps_min is None else f"{eps_min:.3g}",
         "Smallest total ε (to 1%) at which the noise-free test (14) passes on these data"),
        (tagged("smallest n that passes"), f"beyond {whatif.N_MAX:.0e}" if n_min is None else f"{n_min:,}",
         "Smallest n (to 2%) at which it passes at this ε, with the eigenvalues held fixed"),
    ])
    chart(region_figure(ns, passes, problem.n, b.epsilon_total), "pass_region", 360)
    st.caption("Blue: (14) passes with noise-free certificates; grey: it fails. The star is this sample and ε.")


def test_formulas(domain: str) -> None:
    st.latex(
        r"\lambda_0 = \hat\lambda_{\min} + \lambda_{\rm reg},\ \lambda_1 = \hat\lambda_{\max} + \lambda_{\rm reg},"
        r"\ t = t(\lambda_0),\ \gamma = \alpha r t,"
        r"\ \beta = \frac{\|h''\|_\infty r^2}{(1 - \alpha r t)\, n \lambda_0} \qquad \text{(13)}"
    )
    st.latex(
        r"s_1 = \frac{1}{1 - \alpha r t} - 1,\ s_2 = \frac{\|h''\|_\infty}{n (1-\beta)(1 - \alpha r t)^2},"
        r"\ \kappa = \frac{\lambda_1}{\lambda_0},\ R_l = R(\hat\lambda_{\min}) + \lambda_{\rm reg},"
        r"\ \gamma' = \alpha r\, t(R_l)"
    )
    if domain == "cube":
        st.latex(
            r"A = \frac{1 + \sqrt{d_p}\,\kappa\frac{\gamma}{1-\gamma}}"
            r"{1 - \sqrt{d_p}\,\kappa s_1 - 4 d_p s_2/\lambda_0},"
            r"\ B = 1 + \sqrt{d_p}\,\kappa s_1 + \frac{2 d_p s_2}{\lambda_0}"
            r" + \sqrt{d_p}\frac{\lambda_1}{R_l}\frac{\gamma'}{1-\gamma'} \qquad \text{(14b)}"
        )
    else:
        st.latex(
            r"S = s_1 + s_2\max\big(r, \tfrac{r^2}{\lambda_0}\big),"
            r"\ A = \frac{1 + \kappa\frac{\gamma}{1-\gamma}}{1 - \kappa S},"
            r"\ B = 1 + \kappa S + \frac{\lambda_1}{R_l}\frac{\gamma'}{1-\gamma'} \qquad \text{(14a)}"
        )
    st.latex(r"\max(A, B)^2 - 1 \le \frac{2\varepsilon_c}{1 + \Phi^{-1}(1 - \delta_c/2)^2} \qquad \text{(14)}")
    st.caption(
        "Conservative readings (SPEC §4): γ/(1−γ) where (14) prints γ/(1+γ); β with r²; s₂ with the square; "
        "4d_p s₂/λ₀ on the lower side. The test also requires λ̂_min > 0, (C1) at λ̂_min, αrt < 1, β < 1, "
        "R_l > 0, γ' < 1 and positive denominators."
    )


def test_card(run: PrivateRun, b: Budget, problem: Problem | None) -> None:
    """Stage 3; problem is None in publish mode, where only the outcome is shown."""
    with st.container(border=True):
        card_title("Stage 3 · stability test (14)")
        test_status(run)
        if problem is not None:
            test_details(run)
            what_if(problem, b)
            with st.expander("Formulas: constants (13) and condition (14)"):
                test_formulas(problem.geometry.domain)


def release_formulas() -> None:
    st.latex(
        r"\Delta(P_n, u) = \frac{2}{n}\frac{G_0}{\sqrt d}\|H_{\rm reg}^{-1}u\|_1 \ \text{(cube)},\quad"
        r"\frac{2G_0}{n}\|H_{\rm reg}^{-1}u\|_2 \ \text{(ball)} \qquad \text{(3b)}"
    )
    st.latex(
        r"\omega(u \mid P_n) = \Delta(P_n, u)"
        r" + \frac{2G_0}{n(\lambda_{\min} + \lambda_{\rm reg})}\frac{g}{1-g},"
        r"\quad g = \alpha r\, t(\lambda_{\min} + \lambda_{\rm reg}) \qquad \text{(11)}"
    )
    st.latex(
        r"\sigma(\varepsilon, \delta) = \inf\Big\{s > 0 : \Phi\big(-s\varepsilon - \tfrac{1}{2s}\big)"
        r" + \Phi\big(-s\varepsilon + \tfrac{1}{2s}\big) \le \delta\Big\} \qquad \text{(7)}"
    )
    st.latex(
        r"T = u^\top\theta(P_n) + \sigma(\varepsilon_c, \delta_c)\,\omega(u \mid P_n)\, Z,"
        r"\ Z \sim \mathsf N(0, 1)"
        r"\ \text{if (14) holds, else } \bot \qquad \text{(Algorithm 5)}"
    )
    st.latex(
        r"\bar w = \frac{2G_0}{n\lambda_0(1-\gamma)} \ge \omega(u \mid P_n),\quad"
        r" T \pm z_{1-a/2}\,\sigma\,\bar w\ \text{(private)},"
        r"\quad T \pm z_{1-a/2}\,\sigma\,\omega\ \text{(oracle)}"
    )
    st.caption(
        "Both intervals are for u^T θ(P_n), the sample estimate, not the population parameter; the private "
        "one covers it with probability ≥ (1 − a)(1 − δ_a)."
    )


def release_card(run: PrivateRun, name: str, problem: Problem | None) -> None:
    """Stage 4; problem is None in publish mode, where only the value and its private interval are shown."""
    r = run.release
    level = f"{r.interval_level:.0%}"
    released = r.status == "released"
    with st.container(border=True):
        card_title(f"Stage 4 · release of `{name}` (Algorithm 5)")
        if not released:
            st.warning(f"⊥ (nothing released): {r.reason}.", icon=":material/block:")
        shown = [
            (label(r, "status", "Status"), "released" if released else "⊥", "⊥ when (14) fails"),
            (label(r, "value", "Released value $T$"), num(r.value), "u^T θ(P_n) + σ ω Z"),
            (label(r, "interval", f"{level} private interval"), interval(r.interval), "T ± z_{1−a/2} σ w̄"),
        ]
        if problem is None:
            metric_row(shown)
            if released:
                chart(release_line(r), "release_line", 130)
        else:
            metric_row(shown + [(label(r, "oracle_interval", f"{level} oracle interval"), interval(r.oracle_interval),
                                 "T ± z_{1−a/2} σ ω")])
            metric_row([
                (label(r, "sigma", "$\\sigma(\\varepsilon_c, \\delta_c)$"), num(r.sigma), f"{r.calibration} (7)"),
                (label(r, "w_bar", "$\\bar w$"), num(r.w_bar), "Private upper bound 2G₀/(n λ₀ (1 − γ)) on ω"),
                (label(r, "omega", "$\\omega(u \\mid P_n)$"), num(r.omega), "Local modulus (11)"),
                (label(r, "Delta", "$\\Delta(P_n, u)$"), num(r.Delta), "Directional sensitivity (3b)"),
                (label(r, "u_theta", "$u^\\top\\theta(P_n)$"), num(r.u_theta), "The non-private estimate"),
                (label(r, "z", "Gaussian draw $Z$"), num(r.z), "The N(0, 1) noise of the release"),
            ])
            if released:
                chart(density_figure(r), "release_density", 300)
            with st.expander("Formulas: (3b), (11), (7) and Algorithm 5"):
                release_formulas()


def guarantee(b: Budget) -> str:
    how = "privacy-loss distributions (dp_accounting)" if b.accounting == "pld" else "basic composition"
    factor = math.exp(b.epsilon_total)
    factor_text = f"{factor:.3g}" if factor < 1e3 else f"{factor:,.0f}"
    return (
        f"**Guarantee.** Everything this page publishes — λ̂_min, λ̂_max, the test's outcome and the released value "
        f"with its interval — is together (ε, δ)-differentially private with ε = {b.epsilon_total:g} and "
        f"δ = {b.delta_total:g}, by {how}: changing one person's record changes the probability of any outcome "
        f"by at most a factor e^{b.epsilon_total:g} ≈ {factor_text}, except with probability {b.delta_total:g}."
    )


def budget_card(b: Budget, reached_stage2: bool) -> None:
    stages = [
        ("1 · λ̂_min (Algorithm 2, Laplace)", b.lambda_min),
        ("2 · λ̂_max (Algorithm 4, Laplace)" + ("" if reached_stage2 else ", not reached but spent"), b.lambda_max),
        ("3–4 · test (14) and release (Algorithm 5, Gaussian): costs 2ε_c", b.release),
    ]
    table = pd.DataFrame({
        "stage": [s for s, _ in stages],
        "weight": b.split,
        "ε": [s.epsilon for _, s in stages],
        "δ": [s.delta for _, s in stages],
    })
    with st.container(border=True):
        card_title(f"Budget · {b.accounting} accounting")
        st.markdown(guarantee(b))
        st.dataframe(table, hide_index=True, column_config={
            "weight": st.column_config.NumberColumn(format="%.4f"),
            "ε": st.column_config.NumberColumn(format="%.6g"),
            "δ": st.column_config.NumberColumn(format="%.4e"),
        })
        totals = [
            ("ε total (basic composition)", num(b.epsilon_basic), "ε_a + ε_b + 2ε_c"),
            ("δ total (basic composition)", num(b.delta_basic), "e^(ε_a+ε_b)(δ_a + δ_b) + (1 + e^ε_c)δ_c"),
        ]
        # Under PLD accounting the split already computed the PLD total. Under basic accounting it costs 0.05 s to
        # 1 s per new ε and rarely differs from the basic total, so it waits to be asked for.
        if b.accounting == "pld" or st.toggle(
            "Show the PLD total", key="pld_total",
            help="ε of these stages at the total δ by privacy-loss distributions (dp_accounting, docs/privacy.md). "
            "A Laplace count's privacy loss sits at ±ε half the time, so it is rarely below the basic total.",
        ):
            totals.append((f"ε total (PLD at δ = {b.delta_total:g})", num(b.epsilon_pld),
                           "Privacy-loss distributions (docs/privacy.md)"))
        metric_row(totals)
        with st.expander("Formulas: basic composition"):
            st.latex(r"\varepsilon_{\rm total} = \varepsilon_a + \varepsilon_b + 2\varepsilon_c")
            st.latex(
                r"\delta_{\rm total} = e^{\varepsilon_a + \varepsilon_b}(\delta_a + \delta_b)"
                r" + (1 + e^{\varepsilon_c})\,\delta_c"
            )
            st.caption(
                "Lemma 2.5 with the two certificates as M₀ and the release as M₁ (Proposition 8.1's two Gaussian "
                "steps); Corollary 3.6 states (3ε, (1 + e^ε + e^(2ε))δ) for equal stages."
            )


def summary(run: PrivateRun, name: str, seed: int | None) -> None:
    r = run.release
    noise = f"noise seed {seed} (replayable)" if seed is not None else "fresh noise from OS entropy on every rerun"
    if r.status == "released":
        st.markdown(f"**Released** `{name}`: T = **{num(r.value)}**, {r.interval_level:.0%} private interval "
                    f"{interval(r.interval)} · {noise}")
    else:
        st.markdown(f"**⊥ — nothing released** for `{name}`: {r.reason} · {noise}")


# ---------------------------------------------------------------- the teaching snapshot


def snapshot_label(seed: int | None) -> str:
    """The snapshot's first line: what it is, on its face."""
    noise = "fresh OS noise" if seed is None else f"noise seed {seed}"
    return f"TEACHING — NOT PRIVATE, NOT CHARGED, {noise}"


def snapshot_name(name: str) -> str:
    return f"teaching_snapshot_{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_') or 'u'}.md"


def snapshot_value(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return num(float(value))
    if isinstance(value, (tuple, list, np.ndarray)):
        return "[" + ", ".join(snapshot_value(v) for v in value) + "]"
    return str(value)


def snapshot_rows(result: object) -> list[str]:
    """One line per field of a result dataclass, the non-private ones (core.marks) marked as such."""
    hidden = not_private(result)
    return [f"- {f.name} = {snapshot_value(getattr(result, f.name))}" + (" [NOT PRIVATE]" if f.name in hidden else "")
            for f in fields(result)]


def teaching_snapshot(rec: state.TeachingRun, problem: Problem, data: Dataset) -> str:
    """A teaching run as a small markdown file, unlike the Report's format and labelled on its first line."""
    run, b, f, g = rec.run, rec.budget, problem.fit, problem.geometry
    if rec.seed is None:
        noise = ("fresh noise from the operating system; the run was charged to no ledger and can be drawn again "
                 "at will, so picking among draws spends privacy that nothing counts")
    else:
        noise = f"seed {rec.seed}; anyone who knows the seed can replay the draw and subtract the noise"
    lines = [
        snapshot_label(rec.seed),
        "",
        "A teaching run of Algorithm 5 (Asi, Duchi & Talwar 2025) saved from the Pipeline page. It is NOT a "
        "release and must not be shared as a result: it was charged to no privacy budget, and it lists numbers "
        "computed from the data without privacy, each marked [NOT PRIVATE]. A value for stakeholders comes only "
        "from Publish mode (the sidebar's Mode, then Release on the Pipeline page) and is shown on the Report page.",
        "",
        "## Settings",
        "",
        f"- data: {data.source} [NOT PRIVATE: may hold counts of the raw data]; n = {f.n:,}, d = {f.d}",
        f"- model: loss {g.loss.name}, domain {g.domain}, λ_reg = {f.lam_reg:g}",
        f"- coefficient: {rec.coordinate}, u = {snapshot_value(run.u)}",
        f"- budget setting (not charged): ε = {b.epsilon_total:g}, δ = {b.delta_total:g}, {b.accounting} accounting, "
        f"split a : b : c = {' : '.join(f'{w:g}' for w in b.split)}",
        f"- calibration: {rec.calibration}; interval level {rec.level:.0%}",
        f"- noise: {noise}",
        "",
        "## Numbers of this run",
        "",
        "### Stage 0 · fit θ(Pₙ) [NOT PRIVATE]",
        "",
        f"- theta = {snapshot_value(f.theta)} [NOT PRIVATE]",
        f"- lambda_min(P_n) = {num(f.lambda_min)} [NOT PRIVATE]",
        f"- lambda_max(P_n) = {num(f.lambda_max)} [NOT PRIVATE]",
        f"- kappa = {num(f.kappa)} [NOT PRIVATE]",
        "",
        "### Stage 1 · λ̂min (Algorithm 2)",
        "",
        *snapshot_rows(run.lambda_min),
        "",
        "### Stage 2 · λ̂max (Algorithm 4)",
        "",
        *(["- not reached: λ̂min = 0"] if run.lambda_max is None else snapshot_rows(run.lambda_max)),
        "",
        "### Stage 3 · stability test (14)",
        "",
        *snapshot_rows(run.test),
        "",
        "### Stage 4 · release (Algorithm 5)",
        "",
        *snapshot_rows(run.release),
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- the two modes


def private_cards(run: PrivateRun, b: Budget, name: str, problem: Problem | None) -> None:
    """Stages 1-4 and the budget; problem is None in publish mode, which shows only released values."""
    lambda_min_card(run, problem)
    lambda_max_card(run, problem)
    test_card(run, b, problem)
    release_card(run, name, problem)
    budget_card(b, run.lambda_max is not None)


def teaching(problem: Problem, data: Dataset) -> None:
    seed = state.get("noise_seed")
    try:
        u, name = state.target(problem)
        b = budget()
        run = run_private(problem, u, b, make_rng(seed), state.get("calibration"), state.get("level"))
    except InputError as exc:
        st.error(str(exc))
        return
    rec = state.keep_teaching_run(run, name, seed)  # never charged, never shown on the Report
    summary(run, name, seed)
    # on_click="ignore": a rerun would draw fresh noise and change the numbers just saved.
    st.download_button(
        "Save teaching snapshot", teaching_snapshot(rec, problem, data), snapshot_name(name), "text/markdown",
        key="teaching_snapshot", on_click="ignore", icon=":material/school:",
        help="This run's settings and numbers, non-private ones included, in a text file whose first line says "
        "TEACHING — NOT PRIVATE, NOT CHARGED. It is not a report: only a Publish-mode release reaches the Report.",
    )
    stage0_card(problem, data, u if isinstance(u, int) else None)
    private_cards(run, b, name, problem)


def release_once(problem: Problem) -> None:
    """One publish-mode draw from OS entropy, refused when it would pass the ledger's cap."""
    try:
        u, name = state.target(problem)
        b = budget()
        refused = state.refuse_reason(b.epsilon_total, b.delta_total)
        if refused:
            st.error(refused)
            return
        run = run_private(problem, u, b, make_rng(None), state.get("calibration"), state.get("level"))
        state.publish(run, name)  # charges the ledger, then records the release for the Report
    except InputError as exc:
        st.error(str(exc))
        return
    st.rerun()  # so the sidebar's ledger shows the new spend


def publish(problem: Problem) -> None:
    if st.button("Release (spends ε, δ)", key="release", type="primary", icon=":material/publish:",
                 help="Runs Algorithm 5 once with fresh noise from the OS and adds (ε, δ) to the ledger of these data"):
        release_once(problem)
    rec = state.published()
    if rec is None:
        st.info("Nothing released yet on these data and model settings. Each release draws fresh noise and "
                "spends its (ε, δ); the last one appears on the Report page.")
        return
    b = rec.budget
    st.caption(f"The last release on these data: `{rec.coordinate}` at ε = {b.epsilon_total:g}, "
               f"δ = {b.delta_total:g}, {rec.calibration} calibration, level {rec.level:.0%}.")
    private_cards(rec.run, b, rec.coordinate, None)


def data_error(exc: InputError) -> None:
    st.error(str(exc))
    st.page_link("pages/data.py", label="Open the Data page to load or fix the data", icon=":material/table:")


def main() -> None:
    state.ensure()  # a direct link can run this page before app.py has run
    st.title("Privately releasing one coefficient")
    if state.is_publish():
        st.caption("Publish mode: only what Algorithm 5 releases is shown, each release spends budget, "
                   "and noise comes from the operating system.")
    else:
        st.caption(f"Teaching mode: numbers tagged {NOT_PRIVATE} are computed from the data without privacy and "
                   "must not be published; the others may be.")
    try:
        data = state.dataset()
    except InputError as exc:
        data_error(exc)
        return
    controls(data.feature_names)
    try:
        problem = state.problem()
    except InputError as exc:
        st.error(str(exc))
        return
    if state.is_publish():
        publish(problem)
    else:
        teaching(problem, data)


main()
