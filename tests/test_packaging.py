"""The distribution ships every package and data file: an installed xlate works like the checkout."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "xlate").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert {"xlate.backends", "xlate.grammars", "xlate.templates"} <= listed


def test_data_files_are_covered_by_package_data():
    import fnmatch

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    roots = {"xlate": "xlate", "xlate.backends": "backends", "xlate.grammars": "grammars", "xlate.templates": "templates"}
    for package, folder in roots.items():
        patterns = cfg.get(package, [])
        for f in (ROOT / folder).rglob("*"):
            if not f.is_file() or "__pycache__" in f.parts or f.suffix in (".py", ".pyc"):
                continue
            rel = f.relative_to(ROOT / folder).as_posix()
            ok = any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat.replace("**/", "")) for pat in patterns)
            assert ok, f"{f} would not be installed (package-data of {package})"
