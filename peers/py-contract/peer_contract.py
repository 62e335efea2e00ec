"""The peers' tool contract (../README.md) for the two Python peers: the output models,
whose pydantic schemas the SDKs publish as output schemas, and the deterministic weather value.

Needs only pydantic (which both SDKs depend on). A server adds this folder to sys.path.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal, Union

from pydantic import BaseModel, PlainSerializer, WithJsonSchema

CONDITIONS = ("Sunny", "Partly cloudy", "Cloudy", "Rain")
DIRECTIONS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
FORECAST_DAYS = 7
# Below this magnitude every integral float is an exact integer.
EXACT_INTEGER_LIMIT = 2**53

Units = Literal["celsius", "fahrenheit"]


def _as_js_number(value: float) -> Union[int, float]:
    """An integral value as an int (JSON `68`, not `68.0`), anything else unchanged."""
    if value.is_integer() and abs(value) < EXACT_INTEGER_LIMIT:
        return int(value)
    return value


# A float written the way JavaScript writes numbers; its schema stays {"type": "number"}.
JsNumber = Annotated[
    float,
    PlainSerializer(_as_js_number, return_type=Union[int, float]),
    WithJsonSchema({"type": "number"}),
]


class Sum(BaseModel):
    sum: int


class Wind(BaseModel):
    speed: JsNumber
    direction: str


class Current(BaseModel):
    temperature: JsNumber
    humidity: JsNumber
    conditions: str
    wind: Wind


class ForecastDay(BaseModel):
    date: datetime.date
    high: JsNumber
    low: JsNumber
    conditions: str


class Coordinates(BaseModel):
    latitude: JsNumber
    longitude: JsNumber


class Place(BaseModel):
    city: str
    country: str
    coordinates: Coordinates


class Weather(BaseModel):
    current: Current
    forecast: list[ForecastDay]
    location: Place


def weather(location: str, units: Units = "celsius") -> Weather:
    """The contract's weather for `location` in `units`."""
    h = sum(location.encode("utf-8"))

    def convert(celsius: float) -> float:
        return celsius * 9 / 5 + 32 if units == "fahrenheit" else float(celsius)

    forecast = []
    for i in range(FORECAST_DAYS):
        c = (h + i) % 35
        forecast.append(
            ForecastDay(
                date=datetime.date(2026, 1, i + 1),
                high=convert(c),
                low=convert(c - 8),
                conditions=CONDITIONS[(h + i) % 4],
            )
        )
    return Weather(
        current=Current(
            temperature=convert((h % 40) - 5 + 0.5),
            humidity=h % 100,
            conditions=CONDITIONS[h % 4],
            wind=Wind(speed=h % 30, direction=DIRECTIONS[h % 8]),
        ),
        forecast=forecast,
        location=Place(
            city=location,
            country="US",
            coordinates=Coordinates(latitude=(h % 180) - 90 + 0.25, longitude=(h % 360) - 180 + 0.5),
        ),
    )
