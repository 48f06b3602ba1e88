"""What ``fixtures new`` writes for each operation: its id prefix, an example clause and the body of its scaffold."""

from __future__ import annotations

# The id prefix for an operation no file has yet (the existing files' convention).
DEFAULT_PREFIX = {
    "text_of": "text-of-",
    "system_message_text": "sys-text-",
    "current_system_message": "sys-replay-",
    "current_system_prompt": "sys-prompt-",
    "make_text": "make-text-",
    "make_user_message": "make-user-",
    "make_assistant_message": "make-assistant-",
    "event_stream": "stream-",
    "scripted_model": "sm-",
    "to_provider_messages": "prov-msg-",
    "to_provider_tools": "prov-tools-",
    "provider_model_stream": "prov-model-",
    "provider_fetch_stream": "prov-sse-",
    "object_schema": "tool-schema-",
    "tool_registry": "tool-reg-",
    "execute_tool_call": "tool-exec-",
    "run_agent_loop": "loop-",
    "reduce_agent_state": "agent-state-",
    "run_agent": "agent-",
}
EXAMPLE_CLAUSE = {
    "text_of": "IR-TEXT-1",
    "system_message_text": "SYS-TEXT-1",
    "current_system_message": "SYS-REPLAY-2",
    "current_system_prompt": "SYS-PROMPT-1",
    "make_text": "IR-MAKE-1",
    "make_user_message": "IR-MAKE-2",
    "make_assistant_message": "IR-MAKE-3",
    "event_stream": "STREAM-1",
    "scripted_model": "SM-PLAY-1",
    "to_provider_messages": "PROV-MSG-1",
    "to_provider_tools": "PROV-TOOLS-1",
    "provider_model_stream": "PROV-MODEL-2",
    "provider_fetch_stream": "PROV-SSE-3",
    "object_schema": "TOOL-SCHEMA-1",
    "tool_registry": "TOOL-REG-2",
    "execute_tool_call": "TOOL-EXEC-1",
    "run_agent_loop": "LOOP-END-1",
    "reduce_agent_state": "AGENT-STATE-2",
    "run_agent": "AGENT-RUN-3",
}

# Operation-specific part of the scaffold, indented as the case's own keys (two spaces per level).
BODIES = {
    "text_of": """\
input:
  message: "TODO: the message to project, e.g. {role: user, content: [{type: text, text: hi}], timestamp: 1}"
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: "TODO: the text the clauses prescribe"
  input_unchanged: true
""",
    "system_message_text": """\
input:
  message: "TODO: a system message, e.g. {role: system, content: You are Pi., timestamp: 1}"
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: "TODO: the text the clauses prescribe"
  input_unchanged: true
""",
    "current_system_message": """\
input:
  messages:
    - "TODO: the transcript, system messages among the others"
# Expected values come from the clauses above, never from what an implementation prints.
# section_order (the result's section names in order, or null) may be expected too.
expect:
  value: "TODO: the replayed system message, or null"
  input_unchanged: true
""",
    "current_system_prompt": """\
input:
  messages:
    - "TODO: the transcript, system messages among the others"
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: "TODO: the prompt text, or null"
  input_unchanged: true
""",
    "make_text": """\
input:
  value: "TODO: the string to wrap"
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: "TODO: the text block the clauses prescribe"
""",
    "make_user_message": """\
input:
  value: "TODO: the string to wrap"
# Expected values come from the clauses above; {$type: number} where the spec leaves a value open.
expect:
  value: "TODO: the user message the clauses prescribe"
""",
    "make_assistant_message": """\
input:
  content:
    - "TODO: the content blocks, e.g. {type: text, text: hi}"
# Expected values come from the clauses above; {$type: ...} where the spec leaves a value open.
expect:
  value: "TODO: the assistant message the clauses prescribe"
""",
    "event_stream": """\
input:
  kind: assistant  # or generic, with terminal_types and result_field
steps:
  - action: push
    event: "TODO: a model event (spec EV-1), e.g. {type: start, partial: {...}}"
    expect: {threw: null}
  # Expected values come from the clauses above, never from what an implementation prints.
  - action: consume
    expect:
      finished: true
      events:
        - "TODO: every event the consumer receives, in order"
""",
    "scripted_model": """\
input:
  turns:
    - "TODO: the scripted turns, e.g. an assistant message with stopReason stop"
steps:
  - action: stream
    call: c1
    context: {messages: [{role: user, content: [{type: text, text: "TODO: the request"}], timestamp: 1}]}
    expect: {threw: null}
  # Expected values come from the clauses above, never from what an implementation prints.
  - action: consume
    call: c1
    expect:
      finished: true
      events:
        - "TODO: every event of the call, in order"
""",
    "object_schema": """\
input:
  shape: {value: string, label: optional_string}  # TODO: the shape (string, optional_string, optional_positive_integer)
  value: "TODO: the value to parse (leave out to check json_schema only)"
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  error: "TODO: null, or the exact message parse throws"
  keys: ["TODO: the result's keys in order, or null"]
""",
    "tool_registry": """\
input:
  tools:
    echo: {name: echo, description: "TODO: the description", schema: {shape: {value: string}}}
steps:
  - action: construct
    tools: [echo]
    expect: {error: null}
  # Expected values come from the clauses above, never from what an implementation prints.
  - action: definitions
    expect:
      value: ["TODO: the definitions, in order"]
""",
    "to_provider_messages": """\
input:
  context: {messages: ["TODO: the transcript, e.g. {role: user, content: [{type: text, text: hi}], timestamp: 1}"]}
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: ["TODO: the wire messages the clauses prescribe"]
  input_unchanged: true
""",
    "to_provider_tools": """\
input:
  tools: ["TODO: tool definitions, e.g. {name: read, description: Read one file, parameters: {type: object}}"]
# Expected values come from the clauses above, never from what an implementation prints.
expect:
  value: ["TODO: the wire tools, or null"]
  input_unchanged: true
""",
    "provider_model_stream": """\
input:
  provider: fixture
  model: fixture-1
  transport: {chunks: [{type: text, delta: "TODO"}, {type: finish, reason: stop}]}
steps:
  - action: stream
    context: {messages: [{role: user, content: [{type: text, text: go}], timestamp: 1}]}
    expect: {threw: null}
  # Expected values come from the clauses above; {$type: number} for timestamps.
  - action: consume
    expect:
      finished: true
      events: ["TODO: every event, in order"]
""",
    "provider_fetch_stream": """\
input:
  base_url: https://provider.invalid/v1
  api_key: offline-test-key
  fetch: {payloads: ["TODO: the SSE payloads, e.g. {choices: [{index: 0, delta: {content: hi}, finish_reason: stop}]}", "[DONE]"]}
steps:
  - action: stream
    request: {model: fixture-1, messages: [{role: user, content: go}]}
    expect: {threw: null}
  # Expected values come from the clauses above, never from what an implementation prints.
  - action: consume
    expect:
      chunks: ["TODO: the normalized chunks, in order"]
      error: null
""",
    "execute_tool_call": """\
input:
  tools:
    - name: echo
      description: echo
      schema: {shape: {value: string}}
      script: [{return: {content: [{type: text, text: "TODO: the output"}]}}]
  call: {type: toolCall, id: c1, name: echo, arguments: {value: "TODO"}}
# Expected values come from the clauses above; {$type: number} for the timestamp.
expect:
  result: "TODO: the tool-result message the clauses prescribe"
""",
    "run_agent_loop": """\
input:
  context: {messages: [{role: user, content: [{type: text, text: "TODO: the prompt"}], timestamp: 1}]}
  model:
    turns:
      - message: "TODO: an assistant message, e.g. {role: assistant, content: [...], stopReason: stop, ...}"
  tools: []  # TODO: scripted tools, e.g. {name: echo, description: echo, schema: {shape: {value: string}}}
  steps: [start, await_run]  # TODO: the steps that drive the run (fixture-format.md, Scenarios)
# Expected values come from the clauses above; {$type: number} for timestamps.
expect:
  trace: ["TODO: every event as TYPE:NAME, in order, ending turn_end:REASON"]
  result: "TODO: {reason, messages, steps} as the clauses prescribe"
  stalled: null
""",
    "reduce_agent_state": """\
input:
  state: {status: idle, messages: [], streamingText: "", pendingToolCallIds: [], diagnostics: []}  # TODO: the state before
  event: {type: run_start, runId: 1, message: {role: user, content: [{type: text, text: "TODO"}], timestamp: 1}}  # TODO: the event
# Expected values come from the clauses above, never from what an implementation prints.
# messages_detached (the state's messages unaffected by later changes to the inputs) may be expected too.
expect:
  value: "TODO: the whole state the clauses prescribe (absent keys left out)"
  same_object: false
  input_unchanged: true
""",
    "run_agent": """\
input:
  model:
    turns:
      - message: "TODO: an assistant message, e.g. {role: assistant, content: [...], stopReason: stop, ...}"
  steps:  # TODO: the steps that drive the Agent (fixture-format.md, The stateful agent)
    - {prompt: {as: p1, text: "TODO: the prompt"}}
    - {await_prompt: p1}
# Expected values come from the clauses above; {$type: number} for timestamps.
expect:
  trace: ["TODO: every event as run_start:RUN, loop:RUN:TYPE:NAME, run_end:RUN:REASON"]
  prompts: {p1: {status: fulfilled, result: "TODO: {reason, messages, steps}", error: null}}
  stalled: null
""",
}
