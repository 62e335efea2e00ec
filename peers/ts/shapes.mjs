// The zod 4 shape of the weather tool's output (../README.md), shared by the TypeScript peers of
// both SDK lines (ts2/ links to this file).
import * as z from 'zod/v4';

const coordinates = z.object({ latitude: z.number(), longitude: z.number() });
export const weatherShape = {
  current: z.object({
    temperature: z.number(),
    humidity: z.number(),
    conditions: z.string(),
    wind: z.object({ speed: z.number(), direction: z.string() }),
  }),
  forecast: z.array(
    z.object({
      date: z.string().meta({ format: 'date' }),
      high: z.number(),
      low: z.number(),
      conditions: z.string(),
    }),
  ),
  location: z.object({ city: z.string(), country: z.string(), coordinates }),
};
