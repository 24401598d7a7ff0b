"""A chapter's own code, run as written on every release, block by block, beside the probes (docs/chapters.md).

Reading (`read`: `textsplit`, `markdown`, `notebook`, `mapfile`, `skiplist`), running (`runner` inside the target
environment, `session` beside it), judging (`statuses`, `printed`), storing (`cells`, `store`), and what the report
and the CLI show (`grid`, `publicjson`, `listing`, `command`, `bisecting`).
"""
