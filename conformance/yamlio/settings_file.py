"""Read a small YAML (or JSON) settings file, turning I/O and syntax errors into one error type."""

from __future__ import annotations

from pathlib import Path


def read_yaml(path: Path, what: str, error: type[Exception]) -> object:
    """The parsed content of ``path``; ``error`` names ``what`` the file is and why it failed.

    Every way a file can be unusable (missing, a folder, not UTF-8, not YAML, aliases that
    expand without bound, nesting too deep) is one ``error`` with the file's name.
    """
    # Imported here: a grading worker gets its rubric already parsed and never reads YAML.
    import yaml

    from conformance.yamlio import safe as yamlsafe

    try:
        return yamlsafe.load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as problem:
        raise error(f"{path}: the {what} is not UTF-8 text ({problem.reason} at byte {problem.start})") from problem
    except OSError as problem:
        raise error(f"cannot read the {what} {path}: {problem}") from problem
    except yamlsafe.YamlLimitError as problem:
        raise error(f"{path}: the {what} is refused: {problem}") from problem
    except yaml.YAMLError as problem:
        raise error(f"{path}: the {what} is neither valid YAML nor JSON: {' '.join(str(problem).split())}") from problem
