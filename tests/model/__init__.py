"""Tests of the spec model: profiles, clauses, features, schemas, and the bundled fixtures that check them."""
