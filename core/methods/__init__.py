"""The compared methods: `registry` (the one table of methods), `local_fallback` (Algorithm 5 with the paper's
fallback) and `compare` (every method on the same coordinate and budget)."""
