"""Teaching and the paper's simulations, never shown in publish mode: `whatif` (the test and the counts as n and
eps change), `diagnosis` (why the test fails, term by term), `planner` (a plan from public assumptions), `aids`
(the recursions' steps for figures), `attack` (the attacker's view and the membership game) and `experiments`
(the paper's figures)."""
