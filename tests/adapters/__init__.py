"""Tests of adapters and transports: in-process bindings, cmd:, pi-course:, pi-ai:, processes, the sandbox and resource limits."""
