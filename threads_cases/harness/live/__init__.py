"""The live rung, the harness side (spec/replay.md section 11): ladder and budgets
(:mod:`.desk`), prices (:mod:`.prices`), provider clients (:mod:`.providers`,
:mod:`.anthropic_api`, :mod:`.openai_api`) and the terminal lines (:mod:`.view`)."""
