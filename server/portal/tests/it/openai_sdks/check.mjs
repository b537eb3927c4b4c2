// What the official `openai` Node package (npm) sees of the portal's OpenAI-compatible API.
//
// Run by server/portal/tests/it/openai_api.rs with the portal's /v1 address and keys in the
// environment; prints its observations as one JSON object, which the Rust test checks.

import OpenAI from "openai";

const base = process.env.PORTAL_V1;
const client = (apiKey) => new OpenAI({ baseURL: base, apiKey, maxRetries: 0, timeout: 60_000 });

/** The class of the error `call` rejects with, its status and its message. */
async function errorOf(call) {
  try {
    await call();
  } catch (error) {
    if (error instanceof OpenAI.APIError) {
      return [error.constructor.name, error.status, error.error?.message ?? error.message];
    }
    throw error;
  }
  return ["no error"];
}

const alice = client(process.env.ALICE_KEY);
const seen = {};
const ids = async (key) => {
  const ids = [];
  for await (const model of client(key).models.list()) ids.push(model.id);
  return ids.sort();
};
seen.models = await ids(process.env.ALICE_KEY);
seen.scoped_models = await ids(process.env.SCOPED_KEY);

const question = [{ role: "user", content: "Tell me about herons" }];
const whole = await alice.chat.completions.create({ model: "helper", messages: question });
seen.whole = {
  content: whole.choices[0].message.content,
  role: whole.choices[0].message.role,
  finish: whole.choices[0].finish_reason,
  prompt_tokens: whole.usage.prompt_tokens,
  completion_tokens: whole.usage.completion_tokens,
  total_tokens: whole.usage.total_tokens,
  status: whole.portal.status,
  conversation: whole.portal.conversation,
};

const more = await alice.chat.completions.create({
  model: "helper",
  messages: [
    ...question,
    { role: "assistant", content: whole.choices[0].message.content },
    { role: "user", content: "And where do they nest?" },
  ],
  conversation: whole.portal.conversation,
});
seen.continued = {
  content: more.choices[0].message.content,
  conversation: more.portal.conversation,
  turn: more.portal.turn,
};

const chunks = await alice.chat.completions.create({
  model: "helper",
  messages: question,
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let count = 0;
let usage = null;
let finish = null;
for await (const chunk of chunks) {
  count += 1;
  if (chunk.choices.length > 0) {
    text += chunk.choices[0].delta.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  if (chunk.usage) usage = chunk.usage.total_tokens;
}
seen.streamed = { content: text, chunks: count, total_tokens: usage, finish };

const tool = await alice.chat.completions.create({
  model: "worker",
  messages: [{ role: "user", content: 'Please use everything__get-sum with {"a": 2, "b": 3}' }],
});
seen.tool = tool.choices[0].message.content;

seen.errors = {
  wrong_key: await errorOf(() => client("psk_not-a-key").models.list()),
  revoked: await errorOf(() => client(process.env.REVOKED_KEY).models.list()),
  other_organisation: await errorOf(() =>
    client(process.env.GLOBEX_KEY).chat.completions.create({ model: "worker", messages: question }),
  ),
  outside_the_key: await errorOf(() =>
    client(process.env.SCOPED_KEY).chat.completions.create({ model: "worker", messages: question }),
  ),
  // The first message of the day spends past the 10 tokens of tiny's quota; the next is refused.
  quota: await (async () => {
    const send = () =>
      client(process.env.TINY_KEY).chat.completions.create({ model: "helper", messages: question });
    await errorOf(send);
    return await errorOf(send);
  })(),
  client_tools: await errorOf(() =>
    alice.chat.completions.create({
      model: "helper",
      messages: question,
      tools: [{ type: "function", function: { name: "f", parameters: {} } }],
    }),
  ),
};
console.log(JSON.stringify(seen));
