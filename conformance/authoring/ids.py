"""The id conventions of a fixture file: the leading words its case ids share."""

from __future__ import annotations


def shared_words(ids: list[str]) -> list[str]:
    """The leading words every id shares (the file's id prefix), as a list of words."""
    if not ids:
        return []
    words = [identifier.split("-") for identifier in ids]
    shared: list[str] = []
    for position, word in enumerate(words[0]):
        if all(len(other) > position and other[position] == word for other in words):
            shared.append(word)
        else:
            break
    # One id alone gives no convention to read; its first two words usually name the topic (sm-abort-…).
    return shared[: min(2, len(shared) - 1)] if len(shared) == len(words[0]) else shared
