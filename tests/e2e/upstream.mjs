// A fake OpenAI-compatible model endpoint on loopback for the browser tests, speaking Chat
// Completions server-sent events as tests/fixtures/openai/*.sse record them. The test chooses
// how it answers the next calls: a reply, an HTTP 500, a 429 with Retry-After, or four words and
// then silence with the connection held open.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The reply the endpoint streams when it answers. */
export const REPLY = 'Guten Tag! Grüße aus Köln 👋🏽. Ich helfe dir gern 👩‍💻 — "日本語" auch.';

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1748871210, model: 'fake-gpt',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

/**
 * Starts the endpoint; resolves to { models, requests, answer(mode), close }. `models` is the
 * path of a models file (`portal serve --models`) whose default model is this endpoint, with no
 * retries and `idle_seconds` of silence before the adapter gives up. `requests` holds every chat
 * request's JSON body. `answer(mode)` sets how the next calls are answered: 'reply', 'fail'
 * (500), 'rate' (429 with Retry-After: 20) or 'hang' (two seconds' wait, four words, then nothing);
 * `reply(text)` sets the text a reply streams.
 */
export async function fakeUpstream({ idleSeconds = 25 } = {}) {
  let mode = 'reply';
  let reply = REPLY;
  const requests = [];
  const held = new Set();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (data) => { body += data; });
    request.on('end', async () => {
      try {
        requests.push(JSON.parse(body));
      } catch {
        requests.push(body);
      }
      if (mode === 'fail') {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'The server had an error while processing your request. key sk-live-1234', type: 'server_error' } }));
        return;
      }
      if (mode === 'rate') {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '20' });
        response.end(JSON.stringify({ error: { message: 'Rate limit reached for fake-gpt. Please try again in 20s.', type: 'tokens', code: 'rate_limit_exceeded' } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write(chunk({ role: 'assistant', content: '' }));
      if (mode === 'hang') {
        // A while before the first word, as a model reading a long prompt.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        for (const word of ['Let ', 'me ', 'think ', 'about ']) {
          response.write(chunk({ content: word }));
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
        // Nothing more: the connection stays open until the portal gives up on it.
        held.add(response);
        response.on('close', () => held.delete(response));
        return;
      }
      for (const piece of reply.match(/.{1,6}/gsu)) {
        response.write(chunk({ content: piece }));
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      response.write(chunk({}, 'stop'));
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const folder = mkdtempSync(join(tmpdir(), 'portal-upstream-'));
  const models = join(folder, 'models.toml');
  writeFileSync(models, `default = "fake"

[[models]]
name = "fake"
kind = "openai"
label = "Fake GPT"
base_url = "http://127.0.0.1:${port}/v1"
model = "fake-gpt"
retries = 0
idle_timeout_seconds = ${idleSeconds}

[models.capabilities]
context_window = 32768
max_output_tokens = 4096
can_reason = true
can_see = false
`);
  return {
    models,
    requests,
    answer(next) { mode = next; },
    /** Answers the next calls with `text`, streamed six characters at a time. */
    reply(text) { mode = 'reply'; reply = text; },
    close() {
      for (const response of held) response.destroy();
      server.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
