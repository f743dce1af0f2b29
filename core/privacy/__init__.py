"""Privacy: whom a guarantee protects and how much of it is spent, by whom.

`population` (who is in the data: what a ledger is keyed on), `unit` (a row, or a person filling k rows),
`marks` (which result fields are not private, and a result's public view), `gaussian` (sigma(eps, delta) of (7)
and the analytic calibration), `accounting` (the budget's split, basic and PLD composition), `access` (readers,
analysts, the curator), `ledger` and `ledger_store` (what was spent, the cap and the shares, certifications; its
SQLite file) and `charge` (who is charged and how much, before any noise).
"""
