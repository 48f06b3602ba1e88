"""The two Node.js adapters share one protocol server (node/protocol.mjs) and one way of observing (node/observation.mjs).

Each adapter's handshake lists the operations of its handler tables, and
``conformance/model/profiles.py`` lists each profile's operations: the two must agree, or a case
would be skipped as unsupported (or an operation offered that no fixture can reach).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.pi_ai import NODE_ADAPTER as PI_AI_ADAPTER
from conformance.adapters.pi_course import NODE_ADAPTER as PI_COURSE_ADAPTER
from conformance.adapters.pi_course import modules_dir
from conformance.common.jsontypes import JsonObject
from conformance.model.profiles import COURSE, PI_AI_1, Profile
from tests.support.js_variants import ensure_generated
from tests.support.paths import REPO
from tests.support.requirements import needs_node

NODE = shutil.which("node")
pytestmark = needs_node


def talk(adapter: Path, argument: Path, requests: list[str]) -> list[JsonObject]:
    """Send request lines to the adapter, then stop it; its answers, in order."""
    lines = [*requests, json.dumps({"seq": 999, "op": "stop"})]
    result = subprocess.run(
        [str(NODE), str(adapter), str(argument)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60, check=True
    )
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[-1] == {"seq": 999, "ok": True}
    return answers[:-1]


@pytest.fixture
def fake_pi_ai(tmp_path: Path) -> Path:
    """A package folder with only its package.json: enough for a handshake, which imports nothing."""
    (tmp_path / "package.json").write_text(json.dumps({"name": "@earendil-works/pi-ai", "version": "0.0.0"}), encoding="utf-8")
    return tmp_path


def adapters(fake_pi_ai: Path) -> dict[str, tuple[Path, Path, Profile]]:
    return {
        "course": (PI_COURSE_ADAPTER, modules_dir(REPO / "tests" / "support" / "js" / "course-correct"), COURSE),
        "pi-ai-1": (PI_AI_ADAPTER, fake_pi_ai, PI_AI_1),
    }


@pytest.mark.parametrize("profile_name", ["course", "pi-ai-1"])
def test_the_handshake_lists_exactly_the_profiles_operations(profile_name: str, fake_pi_ai: Path) -> None:
    adapter, argument, profile = adapters(fake_pi_ai)[profile_name]
    [hello] = talk(adapter, argument, [json.dumps({"seq": 1, "op": "hello", "protocol": 1})])
    assert hello["ok"] is True and hello["profile"] == profile.name
    operations = hello["operations"]
    assert isinstance(operations, list)
    assert len(operations) == len(set(operations))
    assert set(operations) == profile.operations - NOT_OFFERED.get(profile_name, frozenset())


#: Operations a Node adapter offers only where the project has their module: the course's Agent (labs 9.2-9.5), which
#: course-correct (at chapter 04, no agent.js) has not. test_a_chapter_09_project_is_offered_every_course_operation.
NOT_OFFERED: dict[str, frozenset[str]] = {"course": frozenset({"run_agent"})}


def test_a_chapter_09_project_is_offered_every_course_operation() -> None:
    # Its agent.js exports an Agent: run_agent is in the handshake too.
    project = modules_dir(ensure_generated() / "chapter-09")
    [hello] = talk(PI_COURSE_ADAPTER, project, [json.dumps({"seq": 1, "op": "hello", "protocol": 1})])
    operations = hello["operations"]
    assert hello["ok"] is True and isinstance(operations, list) and set(operations) == COURSE.operations


@pytest.mark.parametrize("profile_name", ["course", "pi-ai-1"])
def test_malformed_requests_get_protocol_errors_from_the_shared_server(profile_name: str, fake_pi_ai: Path) -> None:
    adapter, argument, profile = adapters(fake_pi_ai)[profile_name]
    scenario = sorted(profile.scenario_operations)[0]
    answers = talk(
        adapter,
        argument,
        [
            'not JSON, "seq": 7',
            json.dumps({"seq": 2, "op": "constructor", "input": {}}),  # an own key of every object, not an operation
            json.dumps({"seq": 3, "op": scenario}),
            json.dumps({"seq": 4, "op": scenario, "input": {}}),
        ],
    )
    # The seq of a line that is not JSON is read from its text; Node.js words the parse error.
    not_json = answers[0]["error"]
    assert answers[0]["seq"] == 7 and isinstance(not_json, dict)
    assert not_json["kind"] == "protocol" and str(not_json["message"]).startswith("not JSON: ")
    named = "" if profile.name == "course" else f" (profile {profile.name})"
    assert [(answer["seq"], answer["error"]) for answer in answers[1:]] == [
        (2, {"kind": "protocol", "message": f'unknown op "constructor"{named}'}),
        (3, {"kind": "protocol", "message": f"{scenario} needs an input object"}),
        (4, {"kind": "protocol", "message": f"{scenario} needs a steps array"}),
    ]


@pytest.mark.parametrize(
    ("profile_name", "operation", "module"),
    [("course", "system_message_text", "dist/src/types.js"), ("pi-ai-1", "system_message_text", "@earendil-works/pi-ai")],
)
def test_modules_are_loaded_between_notices_and_never_again_once_failed(
    profile_name: str, operation: str, module: str, fake_pi_ai: Path
) -> None:
    adapter, argument, _ = adapters(fake_pi_ai)[profile_name]
    request = json.dumps({"seq": 2, "op": operation, "input": {"message": {"role": "system", "content": "hi", "timestamp": 1}}})
    loading = talk(adapter, argument, [json.dumps({"seq": 1, "op": "hello", "protocol": 1}), request])
    assert loading[1:3] == [{"notice": "loading", "module": module}, {"notice": "loaded", "module": module}]
    assert loading[3]["seq"] == 2
    # Told in the handshake that loading it ended an earlier process: not imported, no notice.
    failed = {module: "exited with status 3 while loading it"}
    hello = json.dumps({"seq": 1, "op": "hello", "protocol": 1, "failed_modules": failed})
    answers = talk(adapter, argument, [hello, request])
    assert answers[1] == {"seq": 2, "ok": False, "error": {"kind": "load_failed", "message": failed[module]}}


NODE_DIR = Path(__file__).resolve().parents[2] / "conformance" / "adapters" / "node"


def _relative_imports(name: str) -> list[str]:
    """The ``./x.mjs`` modules ``name`` imports, in order."""
    return re.findall(r'^import [^;]*? from "\./([\w.]+\.mjs)";', (NODE_DIR / name).read_text(encoding="utf-8"), re.M | re.S)


def test_the_runtime_is_split_into_a_protocol_side_and_an_observation_side() -> None:
    # No cycle: observing knows nothing of the protocol; the protocol only resets and checks stray errors.
    assert "protocol.mjs" not in _relative_imports("observation.mjs")
    assert _relative_imports("failures.mjs") == []
    protocol = (NODE_DIR / "protocol.mjs").read_text(encoding="utf-8")
    observation = (NODE_DIR / "observation.mjs").read_text(encoding="utf-8")
    assert "export function serve(" in protocol and "node:readline" in protocol
    assert "node:readline" not in observation and "export class Consumer" in observation
    # channel.mjs captures the built-ins first: it is the first module each side loads,
    # and each adapter loads the protocol side first.
    assert _relative_imports("protocol.mjs")[0] == _relative_imports("observation.mjs")[0] == "channel.mjs"
    for adapter in ("pi_course_adapter.mjs", "pi_ai_adapter.mjs"):
        assert _relative_imports(adapter)[0] == "protocol.mjs", adapter
    assert not (NODE_DIR / "runtime.mjs").exists()
    assert all(len(path.read_text(encoding="utf-8").splitlines()) <= 400 for path in NODE_DIR.glob("*.mjs") if "adapter" not in path.name)
