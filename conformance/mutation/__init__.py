"""Mutation testing of the suite: how many single bugs in ``reference_impl`` does it catch?

``python -m conformance.mutation`` (``make mutation``) generates every mutant
(:mod:`.operators`), runs the suite against each in process (:mod:`.runner`) and checks the
score and the declared equivalent mutants (:mod:`.report`).
"""
