// The checks of the tools that ask the client (test_server's `ask_*`, crates/toolshape-harness/src/asking.rs),
// shared by ts/asks.mjs (the SDK's 1.x line, 2025-11-25: the server's requests in the middle of the
// call) and ts2/asks.mjs (its 2.x line, 2026-07-28: `input_required` rounds the SDK answers and
// retries). Each line's script registers `handlers` with its own API. Plain Node: no SDK here.

import { isDeepStrictEqual } from 'node:util';

import { J, check, expect } from './checks.mjs';

const MODEL = 'interop-model-ts';
const ROOTS = ['file:///work/interop-asks-a', 'file:///work/interop-asks-b'];
/** Each form's answer, by the question asked. */
const NAMES = { 'Who are you?': ['Ada', 36], 'Who is A?': ['Ann', 41], 'Who is B?': ['Bob', 52] };

/** The client's answers, recording each question in `asked`. */
export function answering(asked) {
  return {
    sampling: (params) => {
      asked.model.push(params);
      return { role: 'assistant', content: { type: 'text', text: '4' }, model: MODEL, stopReason: 'endTurn' };
    },
    roots: () => {
      asked.roots.push(true);
      return { roots: ROOTS.map((uri) => ({ uri })) };
    },
    elicitation: (params) => {
      asked.user.push(params.message);
      const [name, age] = NAMES[params.message] ?? ['?', 0];
      return { action: 'accept', content: { name, age } };
    },
  };
}

/** The asking checks on `client`, whose handlers are `answering(asked)`. */
export async function checkAsks(client, asked) {
  const learnt = async (name) => {
    const before = Object.fromEntries(Object.entries(asked).map(([kind, seen]) => [kind, seen.length]));
    const result = await client.callTool({ name, arguments: {} });
    expect(!result.isError, `${name}: ${J(result)}`);
    const got = result.structuredContent?.learnt;
    expect(got && typeof got === 'object', `${name}: structured ${J(result.structuredContent)}`);
    const counts = Object.fromEntries(Object.entries(asked).map(([kind, seen]) => [kind, seen.length - before[kind]]));
    return { got, counts };
  };

  await check('ask_model: the sampling handler\'s answer (model, text) reaches the tool', async () => {
    const { got, counts } = await learnt('ask_model');
    expect(isDeepStrictEqual(got, { model: MODEL, text: '4' }), `learnt ${J(got)}`);
    expect(isDeepStrictEqual(counts, { model: 1, roots: 0, user: 0 }), `asked ${J(counts)}`);
    const question = asked.model.at(-1);
    expect(question.maxTokens === 50, `maxTokens ${question.maxTokens}`);
    const [message] = question.messages;
    expect(message.role === 'user' && message.content.text === 'What is 2 + 2?', `messages ${J(question.messages)}`);
  });

  await check('ask_roots: the roots handler\'s roots reach the tool', async () => {
    const { got, counts } = await learnt('ask_roots');
    expect(isDeepStrictEqual(got, { roots: ROOTS }), `learnt ${J(got)}`);
    expect(isDeepStrictEqual(counts, { model: 0, roots: 1, user: 0 }), `asked ${J(counts)}`);
  });

  await check('ask_twice: the user, then the model, one question each', async () => {
    const { got, counts } = await learnt('ask_twice');
    expect(isDeepStrictEqual(got.user, { action: 'accept', name: 'Ada', age: 36 }), `user ${J(got)}`);
    expect(isDeepStrictEqual(got.model, { model: MODEL, text: '4' }), `model ${J(got)}`);
    expect(isDeepStrictEqual(counts, { model: 1, roots: 0, user: 1 }), `asked ${J(counts)}`);
  });

  await check('ask_both: the user and the model asked at once', async () => {
    const { got, counts } = await learnt('ask_both');
    expect(got.user?.name === 'Ada' && got.model?.text === '4', `learnt ${J(got)}`);
    expect(isDeepStrictEqual(counts, { model: 1, roots: 0, user: 1 }), `asked ${J(counts)}`);
  });

  await check('ask_two: two forms at once, each answered by its question', async () => {
    const before = asked.user.length;
    const { got, counts } = await learnt('ask_two');
    expect(isDeepStrictEqual(got, { a: 'Ann', b: 'Bob' }), `learnt ${J(got)}`);
    const questions = asked.user.slice(before).sort();
    expect(isDeepStrictEqual(questions, ['Who is A?', 'Who is B?']) && counts.user === 2, `asked ${J(questions)}`);
  });
}
