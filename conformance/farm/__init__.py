"""The batch farm: a class graded in supervised worker processes, into a resumable gradebook."""
