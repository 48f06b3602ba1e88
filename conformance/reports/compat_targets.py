"""What ``pi-conformance compat`` checks per profile: the npm package, the oldest version, its companions and the page.

pi-ai-1 is checked on every published 1.x of ``@earendil-works/pi-ai``; pi-agent-core-1 on
every published ``@earendil-works/pi-agent-core`` from 0.85.0 (the API the PyPI ports track)
on, each installed with ``@earendil-works/pi-ai`` at the same version: upstream releases the
two together, and a version's ``^`` range alone would give it the newest pi-ai of its range,
mixing a later pi-ai's changes into an older runtime's row.

This module is a leaf: it imports nothing from the rest of the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True)
class CompatTarget:
    """One profile's compatibility page."""

    profile: str
    #: The npm package whose versions are checked (``--package`` overrides it).
    package: str
    #: The oldest version checked, ``X.Y.Z``; every later published release is checked too.
    since: str
    #: Packages installed beside it at the same version (its dependencies released with it).
    companions: tuple[str, ...]
    #: The page ``compat`` writes without ``--out``.
    out: str
    #: The versions in words, for the page's title and help texts ("1.x", "0.85.0 and later").
    versions_in_words: str
    #: Per version, what changed in it, read from the diff of its ``dist/`` and its predecessor's;
    #: the page prints it above that version's rows, which are the cases that show it.
    notes: Mapping[str, str] = field(default_factory=dict)


# Each read from `diff` of dist/agent-loop.js and dist/agent.js (and pi-ai's dist/ for 1.5.0) between the version and the one before.
_PI_AGENT_CORE_NOTES: Final = {
    "0.86.0": "`runLoop` declares `context.tools` in the transcript (`declareToolChanges`: a system message with "
    "`toolsAdded`, PAC-DECL-1), where 0.85.x sent no declaration; and `prepareNextTurn` may return `messages` to "
    "append before the next request (PAC-NEXT-2). The `Agent` opens its transcript with a system message for its "
    "system prompt and tools (`createInitialSystemMessage`), replays `systemPrompt` from it, keeps system messages in "
    "requests, and `reset` keeps that message (PAC-AGENT-1, PAC-AGENT-13).",
    "0.87.0": "`prepareRequest` (PAC-REQ) and `finishTurn` (PAC-FINISH) are new config functions: 0.86.1's `runLoop` calls "
    "neither. The `Agent` gains `peekQueuedMessages()` (its queues' `peek`, PAC-AGENT-7) and passes both functions on, "
    "in place of `shouldStopAfterTurn`.",
    "0.99.1": "`streamAssistantResponse` stamps the final assistant message with `thinkingLevel` (the requested "
    "level or `off`, PAC-LOOP-3).",
    "1.3.0": "`executePreparedToolCall` times each execution: tool results and `tool_execution_end` carry `durationMs` (PAC-TOOL-2).",
    "1.5.0": "pi-ai 1.5.0's `validateToolArguments` compiles schemas with `@earendil-works/pi-schema` instead of "
    "TypeBox: the text of a validation failure changes (PAC-TOOL-5).",
    "1.6.0": "An aborted signal no longer ends a tool batch's preflight with `break`: `prepareToolCall` answers every "
    "later call with `Operation aborted`, so no call is left without a result (#9986, PAC-ABORT-2).",
}

COMPAT_TARGETS: Final = {
    target.profile: target
    for target in (
        CompatTarget("pi-ai-1", "@earendil-works/pi-ai", "1.0.0", (), "docs/pi-ai-compatibility.md", "1.x"),
        CompatTarget(
            "pi-agent-core-1",
            "@earendil-works/pi-agent-core",
            "0.85.0",
            ("@earendil-works/pi-ai",),
            "docs/pi-agent-core-compatibility.md",
            "0.85.0 and later",
            _PI_AGENT_CORE_NOTES,
        ),
    )
}
