"""A tiny stdio MCP server for the corpus: one tool, ``deploy``, that Claude must ask to use.

Claude Code starts it as a subprocess (``--mcp-config``) and speaks
JSON-RPC 2.0 over its stdin/stdout, one message per line: ``initialize``,
``tools/list``, ``tools/call``.  Only the standard library is used, and the
recorder copies this file into the throwaway work dir, so the session runs it
with the system ``python3`` and nothing of this checkout on its command line.

Claude names the tool ``mcp__<server>__deploy`` (the server's name is the
key in the config file), and asks before calling it: MCP tools need
permission like any tool that acts on the world.
"""

from __future__ import annotations

import json
import sys

PROTOCOL = "2024-11-05"
TOOLS = [
    {
        "name": "deploy",
        "description": "Deploy the current build to an environment.",
        "inputSchema": {
            "type": "object",
            "properties": {"target": {"type": "string", "description": "The environment to deploy to, e.g. staging"}},
            "required": ["target"],
        },
    }
]


def answer(request: dict) -> dict | None:
    """The response to one JSON-RPC message (None for a notification)."""
    method = request.get("method", "")
    if "id" not in request:
        return None  # notifications/initialized and friends
    if method == "initialize":
        asked = (request.get("params") or {}).get("protocolVersion") or PROTOCOL
        result: dict = {"protocolVersion": asked, "capabilities": {"tools": {}}, "serverInfo": {"name": "ops", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        target = ((request.get("params") or {}).get("arguments") or {}).get("target", "?")
        result = {"content": [{"type": "text", "text": f"deployed to {target}"}]}
    elif method in ("resources/list", "prompts/list"):
        result = {method.split("/")[0]: []}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        response = answer(request)
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
