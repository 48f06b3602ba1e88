"""The fixture authors' toolkit behind ``pi-conformance fixtures``.

One module per job: ``lint`` (problems in fixture files), ``coverage`` (clauses against
cases), ``scaffold`` (``fixtures new``), ``expectations`` and ``regen`` (reviewed
regeneration from the reference), ``export`` (the portable bundle). ``yamltext`` locates
nodes in a fixture file's text so that edits touch only what they must.
"""
