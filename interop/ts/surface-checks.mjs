// The surface checks that read the same on every revision, shared by ts/surface.mjs (the SDK's
// 1.x line, 2025-11-25) and ts2/surface.mjs (its 2.x line, 2026-07-28): completion, and the
// questions a tool or a prompt asks (as `elicitation/create` requests or in `input_required`
// rounds, the SDK hides which). `questions` is what the client's elicitation handler recorded.
// Plain Node: no SDK is imported here.

import { isDeepStrictEqual } from 'node:util';

import { Failed, J, check, expect } from './checks.mjs';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Whether `base64` decodes to something starting with the PNG signature. */
export const isPng = (base64) => {
  const bytes = Buffer.from(base64, 'base64');
  return PNG_SIGNATURE.every((b, i) => bytes[i] === b);
};

/** The answer to a question: the fields of `content` its requested schema asks for. */
export function answerFor(question, content) {
  const asked = question.requestedSchema?.properties ?? {};
  return Object.fromEntries(Object.entries(content).filter(([name]) => name in asked));
}

/** Awaits `promise`, which must fail with the SDK's `errorClass` and `code`; the error. */
export async function expectError(promise, code, what, errorClass) {
  try {
    const got = await promise;
    throw new Failed(`${what}: no error, got ${J(got)}`);
  } catch (e) {
    if (e instanceof Failed) throw e;
    expect(e instanceof errorClass, `${what}: not a ${errorClass.name}: ${e}`);
    expect(e.code === code, `${what}: code ${e.code} (${e.message}), want ${code}`);
    return e;
  }
}

/** Completion of a prompt argument and of a template variable. */
export async function checkCompletion(client) {
  await check('completion/complete: a prompt argument and a template variable', async () => {
    const byPrompt = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
    expect(isDeepStrictEqual(byPrompt.completion.values, ['paris', 'park', 'party']), J(byPrompt.completion));
    const byTemplate = await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '4' } });
    expect(isDeepStrictEqual(byTemplate.completion.values, ['456']), J(byTemplate.completion));
  });
}

/** A tool that asks, its SEP-1034 defaults, a prompt that asks. */
export async function checkAsking(client, questions) {
  await check('a tool that elicits: the handler\'s answer reaches the tool', async () => {
    const before = questions.length;
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(!result.isError, J(result));
    const text = result.structuredContent?.text ?? '';
    expect(text.includes('action=accept') && text.includes('"username":"ada"'), J(result.structuredContent));
    expect(questions.length === before + 1, `${questions.length - before} questions`);
    const question = questions.at(-1);
    expect(question.message === 'Who are you?', J(question));
    expect(isDeepStrictEqual(Object.keys(question.requestedSchema.properties).sort(), ['email', 'username']), J(question.requestedSchema));
  });

  await check('SEP-1034 defaults reach the client in the requested schema', async () => {
    const result = await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    expect(!result.isError, J(result));
    const props = questions.at(-1).requestedSchema.properties;
    expect(props.age.default === 30 && props.status.default === 'active', J(props));
  });

  await check('a prompt that asks the user: asked, answered, rendered', async () => {
    const { messages } = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    expect(questions.at(-1).message === 'What context should the prompt use?', J(questions.at(-1)));
    // The handler answers each question with the fields it asks for: this one `context`.
    expect(messages[0].content.text === 'Prompt with context: ctx', J(messages));
  });
}

/** A client whose handler declines: the tool gets "declined". */
async function checkDeclined(declining, declined) {
  await check('a declined elicitation reaches the tool as declined', async () => {
    const result = await declining.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    expect(!result.isError, J(result));
    expect((result.structuredContent?.text ?? '').includes('action=decline'), J(result.structuredContent));
    expect(declined.length === 1, `${declined.length} questions`);
  });
}

/**
 * The surface run: `exercise` with a client that accepts every question (as ada), then a client
 * that declines. `connect(action, content, questions)` makes a client whose handler records the
 * questions in `questions` and answers `action` (with `content`).
 */
export async function runSurface(connect, exercise) {
  const questions = [];
  const client = await connect('accept', { username: 'ada', email: 'ada@example.com', context: 'ctx' }, questions);
  try {
    await exercise(client, questions);
  } finally {
    await client.close().catch(() => {});
  }
  const declined = [];
  const declining = await connect('decline', undefined, declined);
  try {
    await checkDeclined(declining, declined);
  } finally {
    await declining.close().catch(() => {});
  }
}
