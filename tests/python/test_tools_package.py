"""The Python tools as one package (pyproject.toml): what it declares exists, the wheel carries
the report's assets and the `attnbench-tools` entry point, the entry point reaches every tool,
and nothing puts paths on sys.path by hand."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import attnbench_tools
from conftest import fixture_path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_declared_modules_exist() -> None:
    st = PYPROJECT["tool"]["setuptools"]
    src = ROOT / st["package-dir"][""]
    for pkg in st["packages"]:
        assert (src / pkg / "__init__.py").is_file(), pkg
    for mod in st["py-modules"]:
        assert (src / f"{mod}.py").is_file(), mod
    # Every tool the entry point names is a declared module with a main(argv).
    for name, (module, _) in attnbench_tools.TOOLS.items():
        assert module in st["py-modules"], name
        assert callable(attnbench_tools.tool_main(name)), name


def test_wheel_has_assets_and_entry_point(tmp_path: Path) -> None:
    pytest.importorskip("setuptools.build_meta")
    src = tmp_path / "src"
    shutil.copytree(ROOT / "scripts", src / "scripts", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ROOT / "pyproject.toml", src)
    code = "import setuptools.build_meta as b, sys; print(b.build_wheel(sys.argv[1]))"
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dist")], cwd=src, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    wheel = tmp_path / "dist" / p.stdout.strip().splitlines()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert "abreport/assets/page.js" in names and "abreport/assets/page.css" in names
    assert "peers.py" in names and "abnsight/merge.py" in names
    ep = next(n for n in names if n.endswith("entry_points.txt"))
    assert "attnbench-tools = attnbench_tools:main" in zipfile.ZipFile(wheel).read(ep).decode()


def test_entry_point_dispatch(capsys: pytest.CaptureFixture[str]) -> None:
    assert attnbench_tools.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in attnbench_tools.TOOLS:
        assert name in out
    assert attnbench_tools.main([]) == 2
    # A report subcommand goes to attnbench_report's own parser and exit statuses.
    assert attnbench_tools.main(["validate", fixture_path("cpu_small.json")]) == 0
    assert "69 entries" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        attnbench_tools.main(["no-such-tool"])
    assert e.value.code == 2
    # A named tool gets only its own arguments.
    with pytest.raises(SystemExit) as e:
        attnbench_tools.main(["gpu-check-summary", "--help"])
    assert e.value.code == 0 and "gpu_check.sh" in capsys.readouterr().out


def test_no_sys_path_insert() -> None:
    offenders = [str(p.relative_to(ROOT)) for d in ("scripts", "tests/python", "benchmarks")
                 for p in (ROOT / d).rglob("*.py") if "sys.path.insert" in p.read_text() and p.name != Path(__file__).name]
    assert offenders == [], f"{offenders}: pyproject.toml's pytest pythonpath or the script's own folder instead"
