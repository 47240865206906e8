"""Shared fixtures for the attnbench_report tests: fixture paths, loading, running the CLI."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
ENTRY = os.path.join(SCRIPTS, "attnbench_report.py")


def fixture_path(name: str) -> str:
    from generated_fixtures import generated_path
    return generated_path(name) or os.path.join(FIXTURES, name)


@pytest.fixture
def fx():
    return fixture_path


@pytest.fixture
def load():
    from abreport.load import load_dataset

    def _load(*names: str):
        return load_dataset([fixture_path(n) for n in names])
    return _load


@pytest.fixture
def cli():
    """Runs the entry command as a user would; returns the CompletedProcess."""
    def _run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, ENTRY, *args], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
    return _run


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt
    plt.close("all")
