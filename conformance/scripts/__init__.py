"""Plain Python scripts that probes run as files in a further process, when the behaviour is about a whole script's
output."""

from pathlib import Path


def script_path(name: str) -> str:
    """The file path of the script `name` (without `.py`) in this folder."""
    return str(Path(__file__).with_name(f"{name}.py"))
