"""Hostile probes: the suite must turn each into a status, never into a failed run or a broken report."""
