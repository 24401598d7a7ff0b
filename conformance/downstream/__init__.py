"""Downstream suites: a library's or a team's own pytest suite run on each release, every test a cell
(docs/downstream.md)."""
