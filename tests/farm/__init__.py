"""Tests of the batch farm: grade-batch, its supervised workers, the gradebook journal, shards."""
