"""Rendering results: the table model, the HTML report, the Markdown summary, terminal tables."""
