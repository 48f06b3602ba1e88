"""Where the spec, schemas and fixtures live: the repository checkout, or the installed copy."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the conformance package
_CHECKOUT_DIR = _PACKAGE_DIR.parent
_BUNDLED_DIR = _PACKAGE_DIR / "_data"


def data_root() -> Path:
    """The folder that holds ``spec/`` and ``fixtures/``.

    In a source checkout (or an editable install) that is the repository root; a wheel
    carries a copy under ``conformance/_data``.
    """
    if (_CHECKOUT_DIR / "spec" / "spec.md").is_file():
        return _CHECKOUT_DIR
    return _BUNDLED_DIR


def spec_file() -> Path:
    """The normative spec document, source of the clause registry."""
    return data_root() / "spec" / "spec.md"


def schemas_dir() -> Path:
    """The folder of JSON Schemas."""
    return data_root() / "spec" / "schemas"


def fixtures_dir() -> Path:
    """The default fixtures folder."""
    return data_root() / "fixtures"


def bundled_fixtures_dir() -> Path:
    """The fixtures a wheel bundles inside the package (``conformance/_data/fixtures``), resolved."""
    return (_BUNDLED_DIR / "fixtures").resolve()
