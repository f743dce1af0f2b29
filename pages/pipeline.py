"""Pipeline page: Algorithm 5 on the paper's synthetic data (section 4.1), one card per stage.

The sample and the non-private fit (stage 0) are cached on the data and model settings only.
The private stages run again on every rerun, so their noise is never reused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.accounting import Budget, split_budget
from core.certificates import RecursiveBound
from core.data import Dataset, synthetic
from core.errors import InputError
from core.gaussian import CALIBRATIONS
from core.geometry import DOMAINS
from core.losses import LOSSES
from core.marks import not_private as not_private_fields
from core.pipeline import PrivateRun, Problem, make_rng, prepare, run_private
from core.release import Release

NOT_PRIVATE = ":orange-badge[not private]"
CHOSEN, OTHER, ACCENT = "#0072B2", "#B8C4CE", "#D55E00"  # Okabe-Ito blue and vermillion


@dataclass(frozen=True)
class PrivateSettings:
    """Everything the private stages read; changing any of these never refits."""

    epsilon: float
    delta: float
    split: tuple[float, float, float]
    calibration: str
    coordinate: str
    level: float
    seed: int | None


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


def tagged(label: str) -> str:
    """The label with the not-private badge."""
    return f"{label} {NOT_PRIVATE}"


def label(result: object, field: str, text: str) -> str:
    """text, tagged when core marks result.field as computed from the data without privacy."""
    return tagged(text) if field in not_private_fields(result) else text


def metric_row(items: list[tuple[str, str, str]]) -> None:
    """(label, value, help) metrics side by side, wrapping on narrow screens."""
    with st.container(horizontal=True, gap="medium"):
        for label, value, help_text in items:
            st.metric(label, value, help=help_text, width="content")


def card_title(text: str) -> None:
    st.markdown(f"#### {text}")


# ---------------------------------------------------------------- controls


def data_settings() -> dict:
    """Sidebar controls of the synthetic sample: the cache key of the data."""
    sb = st.sidebar
    sb.header("Synthetic data")
    loss = sb.radio(
        "Loss", tuple(LOSSES), key="loss", horizontal=True,
        help="Loss h(t, y) of the GLM (1): robust φ(y − t) (Examples 1, 3) or logistic (Examples 2, 4)",
    )
    n = sb.number_input(
        "n", min_value=2, max_value=1_000_000, value=100_000, step=10_000, key="n",
        help="Sample size n of the empirical distribution P_n",
    )
    d = sb.number_input(
        "d", min_value=1, max_value=50, value=5, step=1, key="d",
        help="Dimension d of θ; covariates x_i ~ Uni[−1, 1]^d (section 4.1)",
    )
    theta_norm = sb.number_input(
        "‖θ*‖₂", min_value=0.0, value=1.0, step=0.5, format="%g", key="theta_norm",
        help="Norm of the generating parameter θ* = ‖θ*‖ v/‖v‖, v ~ N(0, I_d) (section 4.1)",
    )
    noise = sb.number_input(
        "Laplace noise scale", min_value=0.0, value=1.0, step=0.5, format="%g", key="noise_scale",
        disabled=loss != "robust",
        help="Scale b in y = ⟨θ*, x⟩ + b·Laplace(1) (robust regression only)",
    )
    sample_seed = sb.number_input(
        "Sample seed", min_value=0, value=0, step=1, key="sample_seed",
        help="Seed of the synthetic sample P_n (not of the privacy noise)",
    )
    return dict(loss=loss, n=int(n), d=int(d), theta_norm=float(theta_norm), noise=float(noise), seed=int(sample_seed))


def model_settings(d: int) -> dict:
    """Sidebar controls of the estimator (1) and the domain: with the data, the cache key of stage 0."""
    sb = st.sidebar
    sb.header("Model")
    lam_reg = sb.number_input(
        "λ_reg", min_value=0.0, value=0.0, step=1e-3, format="%g", key="lam_reg",
        help="λ_reg ≥ 0 of the ridge term (λ_reg/2)‖θ‖² in the estimator (1)",
    )
    domain = sb.radio(
        "Covariate domain 𝒳", DOMAINS, key="domain", horizontal=True,
        help="cube [−1, 1]^d (test (14b), d_p = d) or ball ‖x‖₂ ≤ R (test (14a), d_p = 1); "
        "rows outside 𝒳 are projected onto it before the fit",
    )
    radius = sb.number_input(
        "Ball radius R", min_value=0.0, value=None, step=0.5, format="%g", key="radius",
        placeholder="√d: the ball around the cube", disabled=domain != "ball",
        help="R = rad₂(𝒳) of the ball domain; empty = √d, the smallest ball containing the cube",
    )
    if domain == "cube":
        radius = None
    elif radius is None:
        radius = math.sqrt(d)
    return dict(lam_reg=float(lam_reg), domain=domain, radius=radius)


def private_settings(feature_names: tuple[str, ...]) -> PrivateSettings:
    """Sidebar controls of the budget, the coordinate and the noise."""
    sb = st.sidebar
    sb.header("Privacy budget")
    epsilon = sb.number_input(
        "ε total", min_value=0.0, value=4.0, step=0.5, format="%g", key="epsilon",
        help="ε total (basic composition, SPEC §6) = ε_a + ε_b + 2ε_c",
    )
    delta = sb.number_input(
        "δ total", min_value=0.0, max_value=1.0, value=1e-6, step=1e-7, format="%g", key="delta",
        help="δ total (basic composition, SPEC §6) = e^(ε_a+ε_b)(δ_a + δ_b) + (1 + e^ε_c)δ_c",
    )
    sb.caption("Split of ε and δ over the three paid steps")
    col_a, col_b, col_c = sb.columns(3)
    a = col_a.number_input(
        "a", min_value=0.0, value=1.0, step=0.5, format="%g", key="split_a",
        help="Weight a: ε_a = a/(a+b+c)·ε for λ̂_min (Algorithm 2)",
    )
    b = col_b.number_input(
        "b", min_value=0.0, value=1.0, step=0.5, format="%g", key="split_b",
        help="Weight b: ε_b = b/(a+b+c)·ε for λ̂_max (Algorithm 4)",
    )
    c = col_c.number_input(
        "c", min_value=0.0, value=1.0, step=0.5, format="%g", key="split_c",
        help="Weight c: 2ε_c = c/(a+b+c)·ε for the test (14) and the release (Algorithm 5)",
    )
    calibration = sb.radio(
        "σ(ε, δ) calibration", CALIBRATIONS, key="calibration", horizontal=True,
        help="σ(ε_c, δ_c) of the release: the paper's (7) or the analytic Gaussian mechanism "
        "(Balle & Wang 2018), never larger",
    )
    sb.header("Release")
    coordinate = sb.selectbox(
        "Coordinate j", feature_names, key="coordinate",
        help="u = e_j: the released coefficient u^T θ(P_n) (Algorithm 5)",
    )
    level = sb.slider(
        "Interval level 1 − a", min_value=0.50, max_value=0.99, value=0.95, step=0.01, key="level",
        help="Level 1 − a of the intervals T ± z_{1−a/2}·σ·w̄ (private) and T ± z_{1−a/2}·σ·ω (oracle), SPEC §4",
    )
    seed = sb.number_input(
        "Noise seed", min_value=0, value=None, step=1, key="noise_seed", placeholder="empty = OS entropy",
        help="Seed of the privacy noise (Laplace draws of Algorithms 2 and 4, Gaussian Z of Algorithm 5); "
        "empty = OS entropy, fresh on every rerun",
    )
    # Any rerun draws fresh noise when there is no seed; the button just asks for one.
    sb.button(
        "Draw fresh noise", key="fresh_noise", disabled=seed is not None, width="stretch",
        help="Run stages 1–4 again with new noise (only without a noise seed)",
    )
    return PrivateSettings(
        epsilon=float(epsilon), delta=float(delta), split=(float(a), float(b), float(c)),
        calibration=calibration, coordinate=coordinate, level=float(level),
        seed=None if seed is None else int(seed),
    )


# ---------------------------------------------------------------- cached, non-private work


@st.cache_resource(show_spinner="Drawing the synthetic sample…", max_entries=2)
def load_dataset(loss: str, n: int, d: int, theta_norm: float, noise: float, seed: int) -> Dataset:
    return synthetic(n, d, loss, theta_norm, noise, seed)


@st.cache_resource(show_spinner="Fitting θ(P_n) (stage 0)…", max_entries=2)
def load_problem(
    loss: str, n: int, d: int, theta_norm: float, noise: float, seed: int,
    lam_reg: float, domain: str, radius: float | None,
) -> Problem:
    data = load_dataset(loss, n, d, theta_norm, noise, seed)
    return prepare(data.X, data.y, loss, domain, radius, lam_reg, data.feature_names)


# ---------------------------------------------------------------- cards


def theta_figure(problem: Problem, theta_star: np.ndarray | None, j: int) -> go.Figure:
    names = list(problem.feature_names)
    colors = [CHOSEN if i == j else OTHER for i in range(len(names))]
    fig = go.Figure(go.Bar(x=names, y=problem.fit.theta, marker_color=colors, name="θ(P_n) · not private"))
    if theta_star is not None:
        fig.add_trace(go.Scatter(
            x=names, y=theta_star, mode="markers", name="θ* (generating parameter)",
            marker=dict(symbol="diamond", size=11, color=ACCENT),
        ))
    fig.update_layout(
        height=300, margin=dict(l=10, r=10, t=30, b=10), showlegend=True,
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0),
        yaxis_title="coefficient",
    )
    return fig


def stage0_card(problem: Problem, data: Dataset, j: int) -> None:
    f, g = problem.fit, problem.geometry
    with st.container(border=True):
        card_title(f"Stage 0 · fit $\\theta(P_n)$ {NOT_PRIVATE}")
        st.caption(
            f"{data.source}: n = {f.n}, d = {f.d}, loss {g.loss.name}, domain {g.domain}. "
            "Computed from the data without privacy and cached until the data or model settings change."
        )
        st.plotly_chart(theta_figure(problem, data.theta_star, j), key="theta_chart")
        metric_row([
            (label(f, "grad_norm", "$\\|\\nabla L\\|_2$"), num(f.grad_norm), "Gradient norm of (1) at θ(P_n)"),
            (label(f, "lambda_min", "$\\lambda_{\\min}(P_n)$"), num(f.lambda_min), "Smallest eigenvalue of H"),
            (label(f, "lambda_max", "$\\lambda_{\\max}(P_n)$"), num(f.lambda_max), "Largest eigenvalue of H"),
            (label(f, "kappa", "$\\kappa$"), num(f.kappa), "(λ_max + λ_reg)/(λ_min + λ_reg)"),
            (label(f, "iterations", "Newton steps"), str(f.iterations), "Iterations of the damped Newton solver"),
            (label(problem, "clipped_rows", "rows projected"), str(problem.clipped_rows), "Rows moved onto the domain"),
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


def budget_caption(what: str, stage: str, epsilon: float, delta: float) -> None:
    st.caption(
        f"{what}, pure ε_{stage}-DP with ε_{stage} = {num(epsilon)}; "
        f"the bound fails with probability ≤ δ_{stage} = {num(delta)}."
    )


def stage1_card(run: PrivateRun) -> None:
    b = run.lambda_min
    with st.container(border=True):
        card_title("Stage 1 · $\\hat\\lambda_{\\min}$ (Algorithm 2)")
        budget_caption("Private lower bound on λ_min(P_n)", "a", b.epsilon, b.delta)
        metric_row(bound_metrics(b, "min"))
        with st.expander("Formulas: (9), (C1), (10) and Algorithm 2"):
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


def stage2_card(run: PrivateRun) -> None:
    b = run.lambda_max
    with st.container(border=True):
        card_title("Stage 2 · $\\hat\\lambda_{\\max}$ (Algorithm 4)")
        if b is None:
            st.info("Not reached: λ̂_min = 0, so Algorithm 4 does not run. Its budget (ε_b, δ_b) still counts as spent.")
        else:
            budget_caption("Private upper bound on λ_max(P_n)", "b", b.epsilon, b.delta)
            metric_row(bound_metrics(b, "max"))
        with st.expander("Formulas: (12) and Algorithm 4"):
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


def stage3_card(run: PrivateRun, domain: str) -> None:
    t = run.test
    with st.container(border=True):
        card_title("Stage 3 · stability test (14)")
        if t.passed:
            st.success(f"Passed: {t.reason}.", icon=":material/check_circle:")
        else:
            st.warning(f"Failed: {t.reason}.", icon=":material/block:")
        metric_row([
            ("Value $\\max(A, B)^2 - 1$", num(t.value), "Left side of (14)"),
            ("Threshold of (14)", num(t.threshold), "2ε_c / (1 + Φ⁻¹(1 − δ_c/2)²)"),
        ])
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
        with st.expander("Formulas: constants (13) and condition (14)"):
            stage3_formulas(domain)


def stage3_formulas(domain: str) -> None:
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


def interval_figure(r: Release) -> go.Figure:
    rows = [("private", r.interval, CHOSEN), ("oracle · not private", r.oracle_interval, ACCENT)]
    fig = go.Figure()
    for label, (lo, hi), color in rows:
        fig.add_trace(go.Scatter(
            x=[lo, hi], y=[label, label], mode="lines+markers", name=f"{label} interval",
            line=dict(color=color, width=6), marker=dict(symbol="line-ns-open", size=14, color=color),
        ))
    fig.add_trace(go.Scatter(
        x=[r.value, r.value], y=[label for label, _, _ in rows], mode="markers", name="released T",
        marker=dict(symbol="circle", size=12, color="#000000"),
    ))
    fig.add_vline(x=r.u_theta, line_dash="dash", line_color="#555555",
                  annotation_text="u<sup>T</sup>θ(P<sub>n</sub>) · not private", annotation_position="top")
    fig.update_layout(height=220, margin=dict(l=10, r=10, t=40, b=10), showlegend=False)
    return fig


def stage4_card(run: PrivateRun, name: str) -> None:
    r = run.release
    level = f"{r.interval_level:.0%}"
    with st.container(border=True):
        card_title(f"Stage 4 · release of coordinate `{name}` (Algorithm 5)")
        if r.status != "released":
            st.warning(f"⊥ (nothing released): {r.reason}.", icon=":material/block:")
        metric_row([
            (label(r, "status", "Status"), "released" if r.status == "released" else "⊥", "⊥ when (14) fails"),
            (label(r, "value", "Released value $T$"), num(r.value), "u^T θ(P_n) + σ ω Z"),
            (label(r, "interval", f"{level} private interval"), interval(r.interval), "T ± z_{1−a/2} σ w̄"),
            (label(r, "oracle_interval", f"{level} oracle interval"), interval(r.oracle_interval), "T ± z_{1−a/2} σ ω"),
        ])
        metric_row([
            (label(r, "sigma", "$\\sigma(\\varepsilon_c, \\delta_c)$"), num(r.sigma), f"{r.calibration} calibration"),
            (label(r, "w_bar", "$\\bar w$"), num(r.w_bar), "Private upper bound 2G₀/(n λ₀ (1 − γ)) on ω"),
            (label(r, "omega", "$\\omega(u \\mid P_n)$"), num(r.omega), "Local modulus (11)"),
            (label(r, "Delta", "$\\Delta(P_n, u)$"), num(r.Delta), "Directional sensitivity (3b)"),
            (label(r, "u_theta", "$u^\\top\\theta(P_n)$"), num(r.u_theta), "The non-private estimate"),
            (label(r, "z", "Gaussian draw $Z$"), num(r.z), "The N(0, 1) noise of the release"),
        ])
        if r.status == "released":
            st.plotly_chart(interval_figure(r), key="interval_chart")
        with st.expander("Formulas: (3b), (11), (7) and Algorithm 5"):
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
        card_title("Budget · basic composition (SPEC §6)")
        st.dataframe(
            table, hide_index=True,
            column_config={
                "weight": st.column_config.NumberColumn(format="%.4f"),
                "ε": st.column_config.NumberColumn(format="%.6g"),
                "δ": st.column_config.NumberColumn(format="%.4e"),
            },
        )
        metric_row([
            ("ε total (basic composition)", num(b.epsilon_basic), "ε_a + ε_b + 2ε_c"),
            ("δ total (basic composition)", num(b.delta_basic), "e^(ε_a+ε_b)(δ_a + δ_b) + (1 + e^ε_c)δ_c"),
            ("ε requested", num(b.epsilon_total), "The total set in the sidebar"),
            ("δ requested", num(b.delta_total), "The total set in the sidebar"),
        ])
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
        st.markdown(
            f"**Released** coordinate `{name}`: T = **{num(r.value)}**, {r.interval_level:.0%} private interval "
            f"{interval(r.interval)} · {noise}"
        )
    else:
        st.markdown(f"**⊥ — nothing released** for coordinate `{name}`: {r.reason} · {noise}")


# ---------------------------------------------------------------- page


def main() -> None:
    st.title("Privately releasing one coefficient")
    st.caption(
        "Algorithm 5 of Asi, Duchi & Talwar (2025) on the paper's synthetic data (section 4.1). "
        f"Numbers tagged {NOT_PRIVATE} are computed from the data without privacy, for teaching only; "
        "the others may be published."
    )
    data_kw = data_settings()
    model_kw = model_settings(data_kw["d"])
    try:
        data = load_dataset(**data_kw)
        problem = load_problem(**data_kw, **model_kw)
    except InputError as exc:
        st.error(str(exc))
        return
    s = private_settings(problem.feature_names)
    try:
        budget = split_budget(s.epsilon, s.delta, s.split)
        j = problem.coordinate(s.coordinate)
        run = run_private(problem, j, budget, make_rng(s.seed), s.calibration, s.level)
    except InputError as exc:
        st.error(str(exc))
        return
    summary(run, s.coordinate, s.seed)
    stage0_card(problem, data, j)
    stage1_card(run)
    stage2_card(run)
    stage3_card(run, problem.geometry.domain)
    stage4_card(run, s.coordinate)
    budget_card(budget, run.lambda_max is not None)


main()
