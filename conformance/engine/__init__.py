"""The parent side of a run: launch strategies, the cell runner, the run session, the pytest plugin, selection."""
