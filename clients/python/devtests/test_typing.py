"""The package and its example type-check under mypy --strict (run with requirements-dev.txt)."""

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent


def mypy(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "pyproject.toml", "--no-incremental", "--cache-dir", "/dev/null", *paths],
        cwd=PACKAGE, capture_output=True, text=True, timeout=600,
    )


def test_the_package_and_the_example_pass_mypy_strict():
    result = mypy("src/taskplans", "examples")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")


def test_mypy_sees_the_types_of_calls_errors_and_watch(tmp_path):
    """A wrong program is rejected, so the example's pass is not one of Any everywhere."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import grpc\n"
        "import taskplans\n"
        "from taskplans.v1 import plan_service_pb2 as ps\n"
        "client = taskplans.dial('127.0.0.1:1')\n"
        "a: str = client.get_plan(ps.GetPlanRequest(task_id='t')).plan.version\n"
        "b: int = client.plans.GetPlan(ps.GetPlanRequest(task_id='t')).plan.content\n"
        "error = taskplans.TaskPlansError(grpc.StatusCode.ABORTED)\n"
        "c: int = error.reason\n"
        "d: str = error.code()\n"
        "for change in client.watch('t'):\n"
        "    e: str = change.plan.version\n"
    )
    result = mypy("src/taskplans", str(wrong))
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith(str(wrong))]
    assert [line.split(":")[1] for line in lines] == ["5", "6", "8", "9", "11"], result.stdout
