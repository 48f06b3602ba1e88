"""A ``cmd:`` program that only shakes hands: it names itself after the profile it was asked for and implements course."""

from __future__ import annotations

#: The program's Python source; a test writes it to a file and runs ``cmd:python FILE``.
HANDSHAKE_PROGRAM = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "hello":
        name = "saw-" + str(request.get("profile", "nothing"))
        print(json.dumps({"seq": request["seq"], "ok": True, "protocol": 1, "profile": "course", "implementation": {"name": name}}))
    elif request["op"] == "stop":
        print(json.dumps({"seq": request["seq"], "ok": True}))
        break
    else:
        print(json.dumps({"seq": request["seq"], "ok": False, "error": {"kind": "protocol", "message": "never asked"}}))
    sys.stdout.flush()
"""
