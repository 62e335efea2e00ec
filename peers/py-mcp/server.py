"""The peers' two tools (../README.md) on the official Python SDK (mcp 2.3.0, MCPServer) over stdio.

The SDK derives each output schema from the return annotation (a pydantic model) and validates
every result against it. Run with the venv that install.sh makes:
    VENV/bin/python server.py
"""

import sys
from pathlib import Path
from typing import Annotated

from pydantic import Field

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py-contract"))

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from peer_contract import Sum, Units, Weather, weather  # noqa: E402

server = MCPServer("peer-py-mcp", version="1.0.0")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
def add(a: int, b: int) -> Sum:
    """Add two integers"""
    return Sum(sum=a + b)


@server.tool()
def get_weather_data(
    location: Annotated[str, Field(description="City name or zip code")],
    units: Annotated[Units, Field(description="Temperature unit")] = "celsius",
) -> Weather:
    """Get current weather conditions and forecast data for a location"""
    return weather(location, units)


if __name__ == "__main__":
    server.run("stdio")
