// The peers' two tools (../README.md) on @modelcontextprotocol/server 2.4.0 (the TypeScript
// SDK's 2.x line) with zod 4 schemas, over stdio. `serveStdio` lets the connection's opening pick
// the era: `server/discover` or a request carrying 2026-07-28 `_meta` for 2026-07-28, `initialize`
// for the 2025 handshake; one server from the factory then serves it. The SDK derives the JSON
// Schemas from the zod schemas and checks each result against the output schema. Logs nothing.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

import { weatherShape } from './shapes.mjs';
import { weather } from './weather.mjs';

const weatherSchema = z.object(weatherShape(z));

/** A tool result: the value as structuredContent and as one JSON text block. */
function structured(value) {
  return { structuredContent: value, content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/** One server with the two tools (the factory `serveStdio` calls for the connection). */
function peer() {
  const server = new McpServer({ name: 'peer-ts2', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Add two integers',
      inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
      outputSchema: z.object({ sum: z.number().int() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ a, b }) => structured({ sum: a + b }),
  );

  server.registerTool(
    'get_weather_data',
    {
      description: 'Get current weather conditions and forecast data for a location',
      inputSchema: z.object({
        location: z.string().describe('City name or zip code'),
        units: z.enum(['celsius', 'fahrenheit']).default('celsius').describe('Temperature unit'),
      }),
      outputSchema: weatherSchema,
    },
    async ({ location, units }) => structured(weather(location, units)),
  );
  return server;
}

serveStdio(peer);
