"""One colour per method, kept on every page (Okabe-Ito: safe for colour-blind readers), from core.methods.registry."""

from core.methods.registry import REGISTRY

METHOD_COLORS = {name: m.colour for name, m in REGISTRY.items()}  # core.methods.registry: one table of methods
METHOD_LABELS = {name: m.label for name, m in REGISTRY.items()}
CHOSEN, OTHER, ACCENT, TRUTH = "#0072B2", "#B8C4CE", "#D55E00", "#000000"
NOT_PRIVATE = ":orange-badge[not private]"

# The dark theme keeps the palette; only the marks drawn in black or dark grey, which vanish on a dark
# background, turn light. Okabe-Ito's blue and vermillion keep a contrast above 3:1 on both backgrounds.
BACKGROUNDS = {"light": "#FFFFFF", "dark": "#0E1117"}  # .streamlit/config.toml's backgroundColor of each theme
DARK_COLORS = {TRUTH: "#F0F0F0", "#555555": "#BBBBBB"}
