"""The mechanisms of the paper and its baselines.

`recursion` ((9), (10), (12)), `certificates` (Algorithms 2, 4, 6), `stability` (the test (14)), `release`
(Algorithm 5), `pipeline` (the stages end to end), `fallback`, `curvature` and `inference` (objective perturbation
(15) in place of bottom, its private curvature and population interval), `full_vector` (Algorithms 3 and 7),
`table` (a regression table in one release), `baselines` and `dp_sgd` (output and objective perturbation, DP-SGD)
and `trial` (what every compared method draws with).
"""
