"""The bundled reference implementation, reached in-process."""

from __future__ import annotations

import reference_impl
from conformance.adapters.binding import BindingAdapter


def create() -> BindingAdapter:
    """An adapter for :mod:`reference_impl`."""
    adapter = BindingAdapter(reference_impl, name="reference", version=getattr(reference_impl, "__version__", ""))
    adapter.profile = "course"  # the reference implements the course's chapters, not upstream pi-ai
    adapter.observations_trusted = True  # our binding over our reference: its observations are well formed
    return adapter
