"""The error the command line turns into one clear line: what was wrong and how to fix it."""


class ConformanceError(Exception):
    """A user-facing problem (bad input, missing interpreter, unreachable index), said in one line."""
