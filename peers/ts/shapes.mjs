// The zod 4 shape of the weather tool's output (../README.md), shared by the TypeScript peers of
// both SDK lines (ts2/ links to this file). It imports nothing: each peer passes its own `z`, so
// that the shape is built from the zod beside that peer's SDK (Node resolves a linked file's
// imports from where the link points).

/** The weather tool's output shape, built with the caller's zod `z`. */
export function weatherShape(z) {
  const coordinates = z.object({ latitude: z.number(), longitude: z.number() });
  return {
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
}
