"""The live rung, the harness side (spec/replay.md section 11): ladder and budgets
(:mod:`.desk`), when a call's cost is unknown (:mod:`.spend`), prices (:mod:`.prices`),
provider clients (:mod:`.providers`, :mod:`.anthropic_api`, :mod:`.openai_api`), what the
model said (:mod:`.said`) and the terminal lines (:mod:`.view`)."""
