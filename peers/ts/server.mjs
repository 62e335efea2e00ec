// The peers' two tools (../README.md) on @modelcontextprotocol/sdk 1.32.2 with
// zod 4 shapes, over stdio. The SDK derives the JSON Schemas from the shapes
// and checks each result against the output shape. Logs nothing.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod/v4';

import { weatherShape } from './shapes.mjs';
import { weather } from './weather.mjs';

/** A tool result: the value as structuredContent and as one JSON text block. */
function structured(value) {
  return { structuredContent: value, content: [{ type: 'text', text: JSON.stringify(value) }] };
}

const server = new McpServer({ name: 'peer-ts', version: '1.0.0' });

server.registerTool(
  'add',
  {
    description: 'Add two integers',
    inputSchema: { a: z.number().int(), b: z.number().int() },
    outputSchema: { sum: z.number().int() },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  async ({ a, b }) => structured({ sum: a + b }),
);

server.registerTool(
  'get_weather_data',
  {
    description: 'Get current weather conditions and forecast data for a location',
    inputSchema: {
      location: z.string().describe('City name or zip code'),
      units: z.enum(['celsius', 'fahrenheit']).default('celsius').describe('Temperature unit'),
    },
    outputSchema: weatherShape(z),
  },
  async ({ location, units }) => structured(weather(location, units)),
);

await server.connect(new StdioServerTransport());
