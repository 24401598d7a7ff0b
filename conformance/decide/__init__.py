"""Upgrade decisions from result sets: diff two sets, gate a candidate against a baseline, bisect releases."""
