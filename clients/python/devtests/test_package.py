"""`python -m build` makes an sdist and a wheel that install into clean virtual environments and import.

The clean environments get the package's dependencies from the package index, as a user's would.
"""

import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent
VERSION = (PACKAGE.parent / "VERSION").read_text().strip()
IMPORT_CHECK = (
    "import taskplans, taskplans.v1.plan_service_pb2_grpc as g, taskplans.v1.plan_service_pb2 as ps\n"
    "from importlib.metadata import version\n"
    "c = taskplans.dial('127.0.0.1:1', retry=taskplans.RetryPolicy(max_attempts=1), default_timeout=2)\n"
    "try:\n"
    "    c.get_plan(ps.GetPlanRequest(task_id='t'))\n"
    "except taskplans.TaskPlansError as e:\n"
    "    print(e.code, e.reason, taskplans.__version__, version('taskplans-client'))\n"
)


def run(argv, **options):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=900, **options)
    assert result.returncode == 0, f"{argv} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    # From a copy, so that setuptools' build/ and egg-info land outside the source tree.
    source = tmp_path_factory.mktemp("source") / "taskplans-client"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "dist", ".mypy_cache", "devtests", "tests"))
    # --no-isolation: the build backend is requirements-dev.txt's pinned setuptools.
    run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out), str(source)])
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    return wheels[0], sdists[0]


def test_the_artifacts_carry_the_version_the_types_and_the_readme(built):
    wheel, sdist = built
    assert wheel.name == f"taskplans_client-{VERSION}-py3-none-any.whl"
    assert sdist.name == f"taskplans_client-{VERSION}.tar.gz"
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("taskplans/py.typed", "taskplans/client.py", "taskplans/v1/plan_service_pb2_grpc.pyi",
                     "taskplans/v1/plan_service_pb2.pyi", "taskplans/v1/task_pb2_grpc.pyi"):
        assert expected in names
    assert not [n for n in names if "tests/" in n or "examples/" in n or "__pycache__" in n]
    metadata = zipfile.ZipFile(wheel).read(f"taskplans_client-{VERSION}.dist-info/METADATA").decode()
    assert f"Version: {VERSION}" in metadata
    assert "## Watch" in metadata  # the README is the long description
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert f"taskplans_client-{VERSION}/README.md" in members
    assert f"taskplans_client-{VERSION}/src/taskplans/v1/plan_service_pb2_grpc.pyi" in members


@pytest.mark.parametrize("artifact", ["wheel", "sdist"])
def test_it_installs_into_a_clean_environment_and_imports(built, tmp_path, artifact):
    path = built[0] if artifact == "wheel" else built[1]
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=True, clear=True).create(env)
    python = str(env / "bin" / "python")
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(path)])
    run([python, "-m", "pip", "check", "--disable-pip-version-check"])
    # Run outside the source tree, so the import is the installed package's.
    out = run([python, "-c", IMPORT_CHECK], cwd=tmp_path)
    assert out.split() == ["UNAVAILABLE", "None", VERSION, VERSION]
