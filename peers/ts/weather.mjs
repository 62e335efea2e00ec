// The contract's deterministic weather value (../README.md). JavaScript's
// own number printing is the contract's number format, so nothing special.

const CONDITIONS = ['Sunny', 'Partly cloudy', 'Cloudy', 'Rain'];
const DIRECTIONS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];

/** Sum of the UTF-8 bytes of `text`. */
function byteSum(text) {
  return Buffer.from(text, 'utf8').reduce((total, byte) => total + byte, 0);
}

/** The weather for `location` in `units` ("celsius" or "fahrenheit"). */
export function weather(location, units) {
  const h = byteSum(location);
  const convert = units === 'fahrenheit' ? (t) => t * 9 / 5 + 32 : (t) => t;
  const forecast = Array.from({ length: 7 }, (_, i) => {
    const c = (h + i) % 35;
    return {
      date: `2026-01-0${i + 1}`,
      high: convert(c),
      low: convert(c - 8),
      conditions: CONDITIONS[(h + i) % 4],
    };
  });
  return {
    current: {
      temperature: convert((h % 40) - 5 + 0.5),
      humidity: h % 100,
      conditions: CONDITIONS[h % 4],
      wind: { speed: h % 30, direction: DIRECTIONS[h % 8] },
    },
    forecast,
    location: {
      city: location,
      country: 'US',
      coordinates: { latitude: (h % 180) - 90 + 0.25, longitude: (h % 360) - 180 + 0.5 },
    },
  };
}
