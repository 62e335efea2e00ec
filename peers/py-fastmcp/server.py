"""The peers' two tools (../README.md) on FastMCP 4.2.3 over stdio.

FastMCP derives each output schema from the return annotation (a pydantic model). It logs one
line to stderr at start. Run with the venv that install.sh makes:
    VENV/bin/python server.py
"""

import sys
from pathlib import Path
from typing import Annotated

from pydantic import Field

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py-contract"))

from fastmcp import FastMCP  # noqa: E402
from peer_contract import Sum, Units, Weather, weather  # noqa: E402

server = FastMCP("peer-fastmcp", version="1.0.0")


@server.tool(annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False})
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
    server.run(transport="stdio", show_banner=False)
