"""The spec model: profiles, clauses, features, JSON Schemas and where the spec's files live."""
