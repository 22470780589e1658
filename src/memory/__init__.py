"""ai-memory: a local-first long-term memory for AI coding agents, served over MCP."""

from memory.offline import switch_off_egress

# Here, not in an entrypoint: every process running our code imports this package first
# (the graph worker and the ONNX export are `python -m memory.adapters...`).
switch_off_egress()

__version__ = "0.1.0"
