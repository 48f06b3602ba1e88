"""The pi-ai this port stands on, as upstream's loop stands on ``@earendil-works/pi-ai``: the bundled ``pi_ai_port``.

It is this package's sibling: ``pi_ai_port`` when ``examples/`` is on the path
(``PYTHONPATH=examples``), ``examples.pi_ai_port`` when this package is ``examples.pi_agent_core_port``
(the test suite's import). Importing it by the sibling's name keeps one copy of it either way.
"""

from __future__ import annotations

import importlib
from typing import Any

_SIBLING = f"{(__package__ or '').rpartition('.')[0]}.pi_ai_port".lstrip(".")

pi_ai: Any = importlib.import_module(_SIBLING)
js_text: Any = importlib.import_module(f"{_SIBLING}.js_text")

__all__ = ["js_text", "pi_ai"]
