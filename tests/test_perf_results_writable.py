"""`bisect W --metric M` and the gate's workloads tier store samples in the results folder: one that cannot be written
is refused in one line before any environment is built or sample taken. The folder is placed inside a file, which
fails for root too (CI runs as root). No JAX: the builder given refuses to be used."""

from __future__ import annotations

import pytest

from conformance.decide import onegate
from conformance.decide.sides import GateRequest
from conformance.engine.matrix import RunSettings
from conformance.engine.targets import Release
from conformance.errors import ConformanceError
from conformance.perf.command import PerfCommand, run_perf_bisect


class NoBuilder:
    """A builder any use of which fails the test: nothing may be built before the results folder is checked."""

    def __getattr__(self, name):
        pytest.fail(f"the builder was used ({name}) before the results folder was checked")


def unwritable(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    return blocker / "results"  # a folder inside a file: no one, root included, can make a file there


def test_bisect_metric_refuses_an_unwritable_results_folder_before_sampling(tmp_path):
    command = PerfCommand(results=unwritable(tmp_path))
    with pytest.raises(ConformanceError, match="results folder .* cannot be written") as raised:
        run_perf_bisect(command, "performance.fft", "run_s", "0.8.3", "0.9.2", NoBuilder(), lambda line: None)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("workloads_only", [True, False])
def test_the_gate_refuses_an_unwritable_results_folder_before_any_tier(tmp_path, workloads_only):
    cells = GateRequest(RunSettings(results=unwritable(tmp_path)), from_version="0.8.3", to=(Release("0.9.2"),))
    request = onegate.OneGateRequest(cells=cells, workloads_only=workloads_only, perf_rounds=1)
    with pytest.raises(ConformanceError, match="results folder .* cannot be written") as raised:
        onegate.run_one_gate(request, lambda: NoBuilder(), lambda event: None, lambda line: None)
    assert "\n" not in str(raised.value)


def test_a_results_path_that_is_a_file_is_refused_too(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("")
    with pytest.raises(ConformanceError, match="is not a folder"):
        run_perf_bisect(
            PerfCommand(results=blocker), "performance.fft", "run_s", "0.8.3", "0.9.2", NoBuilder(), lambda line: None
        )
