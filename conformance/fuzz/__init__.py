"""Differential fuzzing: random programs on the reference and on another implementation.

``pi-conformance fuzz --impl X`` draws programs with hypothesis (:mod:`.strategies`),
derives each one's expectations from the reference (:mod:`.expect`), runs them on X and
shrinks the first divergence (:mod:`.engine`), then writes it as a fixture case
(:mod:`.emit`). Hypothesis comes with the ``fuzz`` extra: ``pip install 'pi-conformance[fuzz]'`` (``[dev]`` includes it).
"""
