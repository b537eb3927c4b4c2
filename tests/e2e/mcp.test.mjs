// A tool of a real MCP server (`server-filesystem` from npm, on a temporary folder) driven from
// the browser: the greeting lists the agent's server with its status and tools; the person asks the demo agent to read a file, approves the call (the server's
// file says this tool asks), sees the card naming the server and the tool with the file's text
// as its result, reloads and sees the same. `portal prompt` then shows a later turn's prompt
// replaying the call with its result cut by distance, with a reference to read it back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, root, shots, startPortal } from './portal.mjs';

const bin = process.env.PORTAL_BIN ?? join(root, 'target', 'debug', 'portal');
const filesystem = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** A local-mode configuration whose agent has every tool of a filesystem server on `shared`. */
function mcpConfig(folder, shared) {
  const org = join(folder, 'config', 'organisations', 'local');
  mkdirSync(join(org, 'mcp'), { recursive: true });
  mkdirSync(join(org, 'agents'), { recursive: true });
  writeFileSync(join(org, 'organisation.toml'), 'name = "Local"\n');
  writeFileSync(
    join(org, 'mcp', 'files.toml'),
    `command = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(filesystem)}, ${JSON.stringify(shared)}]\n` +
      'approval = { read_text_file = "ask" }\n',
  );
  writeFileSync(join(org, 'agents', 'assistant.toml'), 'name = "Assistant"\nmcp = { files = ["*"] }\n');
  return { config: join(folder, 'config'), agent: join(org, 'agents', 'assistant.toml') };
}

test('a person approves a filesystem tool, sees its result, reloads, and a later prompt replays it cut', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'portal-e2e-mcp-'));
  const shared = realpathSync(mkdtempSync(join(tmpdir(), 'portal-e2e-shared-')));
  const text = 'Grey herons stand still in the shallows. '.repeat(20).trim();
  writeFileSync(join(shared, 'herons.txt'), text);
  const { config, agent } = mcpConfig(folder, shared);
  const portal = await startPortal(['--config', config, '--demo-pace', '0.2']);
  const browser = await launchBrowser();
  try {
    // The server starts beside the portal; its tools are offered once it has listed them.
    for (let tries = 0; ; tries++) {
      const servers = await (await fetch(`${portal.url}/api/agents/assistant/mcp`)).json();
      if (servers.every((s) => s.status === 'connected')) break;
      assert.ok(tries < 300, `the filesystem server connects: ${JSON.stringify(servers)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(portal.url);
    // The greeting lists the agent's servers, their status and its tools.
    const servers = await page.getByTestId('mcp-servers').innerText();
    assert.match(servers, /^files \(connected\): .*read_text_file/, servers);
    await page.screenshot({ path: join(shots, 'mcp-greeting.png') });
    await page.getByLabel('Message').fill(`use read_text_file with {"path": ${JSON.stringify(join(shared, 'herons.txt'))}}`);
    await page.getByLabel('Message').press('Enter');

    const turn = page.locator('[data-turn="1"]');
    await page.locator('[data-turn="1"][data-turn-status="paused"]').waitFor({ timeout: 30000 });
    const approval = turn.getByTestId('approval-card');
    assert.match(await approval.innerText(), /read_text_file of the MCP server files/);
    // What is approved is shown whole: the arguments as the call carries them.
    assert.match(await approval.getByTestId('approval-arguments').innerText(), /herons\.txt"\}$/);
    await page.screenshot({ path: join(shots, 'mcp-approval.png') });
    await page.getByTestId('approve').click();
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
    await page.locator('[data-turn="1"][data-settled="true"]').waitFor({ timeout: 30000 });

    const seeCard = async (when) => {
      const card = turn.getByTestId('tool-card');
      assert.equal(await card.getAttribute('data-state'), 'done', when);
      assert.equal(await card.locator('.tool-server').innerText(), 'files', when);
      assert.equal(await card.locator('.tool-name').innerText(), 'read_text_file', when);
      await card.locator('.tool-result summary').click();
      assert.match(await card.locator('.tool-result pre').innerText(), /^Grey herons stand still/, when);
    };
    await seeCard('as it ran');
    await page.screenshot({ path: join(shots, 'mcp-result.png'), fullPage: true });
    await page.reload();
    await page.locator('[data-turn="1"][data-turn-status="completed"]').waitFor({ timeout: 30000 });
    await seeCard('after a reload');
    await page.screenshot({ path: join(shots, 'mcp-reloaded.png'), fullPage: true });

    // A later turn's prompt, as `portal prompt` builds it from the stored conversation.
    const id = new URL(page.url()).pathname.split('/').pop();
    const transcript = await (await fetch(`${portal.url}/api/conversations/${id}`)).text();
    const stored = join(folder, 'transcript.json');
    writeFileSync(stored, transcript);
    const prompt = spawnSync(
      bin,
      ['prompt', '--transcript', stored, '--agent', agent, '--config', config, '--message', 'And the egrets?', '--format', 'openai'],
      { encoding: 'utf8' },
    );
    assert.equal(prompt.status, 0, prompt.stderr);
    const messages = JSON.parse(prompt.stdout).messages;
    const call = messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.name === 'files__read_text_file');
    assert.ok(call, `the call is replayed as a call: ${prompt.stdout}`);
    const answer = messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
    assert.ok(answer.content.startsWith('Grey herons stand still'), answer.content);
    assert.ok(answer.content.includes(`(cut; the whole result: read_tool_result [ref:${call.id}])`), answer.content);
    assert.ok(answer.content.length < text.length, 'shortened by distance');
  } finally {
    await browser.close();
    await portal.stop();
    rmSync(folder, { recursive: true, force: true });
    rmSync(shared, { recursive: true, force: true });
  }
});
