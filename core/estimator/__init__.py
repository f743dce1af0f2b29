"""The estimator (1) and its exact, certified fit: stage 0, nothing private.

`losses` (Examples 1-4), `geometry` (domains and the constants G0, G1, G2), `rounding` (the floating-point error
bounds the certificates rest on), `model` (which model), `kernels` and `compiled` (the loops compiled by numba, and
whether they run), `fit` (the certified minimiser of (1)) and `problem` (validated data with its fit).
"""
