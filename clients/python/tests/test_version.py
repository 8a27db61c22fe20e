"""The package carries the version every client package shares (clients/VERSION)."""

import re
from importlib.metadata import version
from pathlib import Path

import taskplans

PACKAGE = Path(__file__).resolve().parent.parent


def test_the_version_is_clients_version():
    expected = (PACKAGE.parent / "VERSION").read_text().strip()
    pyproject = (PACKAGE / "pyproject.toml").read_text()
    declared = re.search(r'^version = "([^"]+)"$', pyproject, re.MULTILINE)
    assert declared is not None
    assert declared.group(1) == expected
    assert taskplans.__version__ == expected
    assert version("taskplans-client") == expected  # what pip installed
