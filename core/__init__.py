"""Private release of a single regression parameter (Asi, Duchi & Talwar 2025), stage by stage.

One module per idea of the paper: losses, fit (stage 0), geometry, gaussian (sigma of (7)),
recursion ((9), (10), (12) and their inverses), certificates (Algorithms 2, 4, 6), stability
(condition (14)), release (Algorithm 5), full_vector (Algorithms 3 and 7), accounting (the budget),
pipeline (the stages together), report (the JSON document) and data. Beside them: spec (which data:
one spec per source, loaded, described and identified), population (whose data: what a ledger is
keyed on), model (which model: loss, domain, radius, lambda_reg) and ledger (the spent budget per
population and its cap). Formulas: docs/SPEC.md.
"""
