"""One colour per method, kept on every page (Okabe-Ito: safe for colour-blind readers)."""

METHOD_COLORS = {
    "local": "#0072B2",  # blue: Algorithm 5, the method of the paper
    "local_fallback": "#56B4E9",  # sky blue
    "oracle": "#999999",  # grey: not private, a reference only
    "output_perturbation": "#E69F00",  # orange
    "objective_perturbation": "#009E73",  # bluish green
    "dp_sgd": "#CC79A7",  # reddish purple
    "algorithm3": "#0072B2",
    "algorithm7": "#D55E00",  # vermillion
}
METHOD_LABELS = {
    "local": "Local (Algorithm 5)",
    "local_fallback": "Local with fallback",
    "oracle": "Oracle · not private",
    "output_perturbation": "Output perturbation",
    "objective_perturbation": "Objective perturbation",
    "dp_sgd": "DP-SGD",
    "algorithm3": "Algorithm 3",
    "algorithm7": "Algorithm 7",
}
CHOSEN, OTHER, ACCENT, TRUTH = "#0072B2", "#B8C4CE", "#D55E00", "#000000"
NOT_PRIVATE = ":orange-badge[not private]"

# The dark theme keeps the palette; only the marks drawn in black or dark grey, which vanish on a dark
# background, turn light. Okabe-Ito's blue and vermillion keep a contrast above 3:1 on both backgrounds.
BACKGROUNDS = {"light": "#FFFFFF", "dark": "#0E1117"}  # .streamlit/config.toml's backgroundColor of each theme
DARK_COLORS = {TRUTH: "#F0F0F0", "#555555": "#BBBBBB"}
