// Observation size, side by side (`cargo xtask bench web`): ui-qa's MCP
// `observe` and Playwright MCP's `browser_snapshot` of the same TodoMVC page
// (the npm package's vanillajs example) with two items added, each server
// driven through the official MCP TypeScript SDK client. Prints one JSON
// line: both reply sizes in bytes (what an agent receives), their ratio, and
// whether ui-qa's observation has both items' text and names each item's
// checkbox after its item.
//
// node observe-bytes.mjs UI_QA_BINARY CHROMIUM URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [uiqa, chromium, url] = process.argv.slice(2);
const origin = new URL(url).origin;
const ITEMS = ['buy milk', 'walk the dog'];
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function connect(command, args) {
  const client = new Client({ name: 'ui-qa-observe-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  return client;
}

async function uiQa() {
  const ws = mkdtempSync(join(tmpdir(), 'ui-qa-observe-'));
  const c = await connect(uiqa, ['mcp', '--allow-origin', origin, '--workspace', ws, '--browser', chromium]);
  const call = async (name, args) => {
    const r = await c.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${text(r)}`);
    return JSON.parse(text(r));
  };
  const { session } = await call('start', { url });
  const box = { placeholder: 'What needs to be done?' };
  for (const item of ITEMS) {
    await call('act', { session, locator: box, step: { action: 'fill', value: item }, observe: false });
    await call('act', { session, locator: box, step: { action: 'press', key: 'Enter' }, observe: false });
  }
  const r = await c.callTool({ name: 'observe', arguments: { session } });
  const reply = text(r);
  await call('abort', { session });
  await c.close();
  return reply;
}

async function playwright() {
  const c = await connect(process.execPath, [
    join(import.meta.dirname, 'node_modules/@playwright/mcp/cli.js'),
    '--headless', '--isolated', '--executable-path', chromium, '--no-sandbox',
  ]);
  await c.callTool({ name: 'browser_navigate', arguments: { url } });
  for (const item of ITEMS) {
    const snap = text(await c.callTool({ name: 'browser_snapshot', arguments: {} }));
    const ref = snap.match(/textbox "What needs to be done\?"[^\n]*\[ref=(e\d+)\]/)[1];
    const typed = await c.callTool({ name: 'browser_type', arguments: { element: 'new todo', target: ref, text: item, submit: true } });
    if (typed.isError) throw new Error(text(typed));
  }
  const reply = text(await c.callTool({ name: 'browser_snapshot', arguments: {} }));
  await c.close();
  return reply;
}

const ours = await uiQa();
const theirs = await playwright();
const o = JSON.parse(ours).observation;
const checks = {
  itemsText: ITEMS.every((i) => o.elements.some((e) => e.role === 'text' && e.name === i)),
  checkboxesNamedByItem: ITEMS.every((i) => o.elements.some((e) => e.role === 'checkbox' && e.context === i)),
};
console.log(JSON.stringify({
  uiQaBytes: Buffer.byteLength(ours),
  playwrightMcpBytes: Buffer.byteLength(theirs),
  ratio: Number((Buffer.byteLength(ours) / Buffer.byteLength(theirs)).toFixed(2)),
  checks,
}));
if (process.env.SHOW) { console.error(ours); console.error('----'); console.error(theirs); }
