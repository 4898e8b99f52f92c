// A WebDriver user in its own process (webdriverio is ESM, which jest's module runtime cannot load): reads one
// JSON request per line on stdin and answers one JSON line on stdout. Requests:
//   {"op":"session","options":{...}}                     -> {"sessionId","capabilities"}
//   {"op":"attach","options":{"sessionId",...}}          -> {"sessionId"} (drives a session another client created)
//   {"op":"browser","method":"getPageSource","args":[]}  -> {"value"}
//   {"op":"element","selector":"...","method":"click","args":[]} -> {"value"}
//   {"op":"elements","selector":"..."}                   -> {"value": count}
// A failure answers {"error": message}.
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { remote, attach } = await import(require.resolve('webdriverio').replace(/index\.cjs$/, 'node.js'));
let browser;

const ops = {
  async session({ options }) {
    browser = await remote({ logLevel: 'silent', connectionRetryCount: 0, ...options });
    return { sessionId: browser.sessionId, capabilities: browser.capabilities };
  },
  async attach({ options }) {
    browser = await attach({ logLevel: 'silent', connectionRetryCount: 0, ...options });
    return { sessionId: browser.sessionId };
  },
  async browser({ method, args = [] }) {
    return { value: await browser[method](...args) };
  },
  async element({ selector, method, args = [] }) {
    const element = await browser.$(selector);
    return { value: await element[method](...args) };
  },
  async elements({ selector }) {
    return { value: (await browser.$$(selector)).length };
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  let answer;
  try {
    answer = await ops[request.op](request);
  } catch (e) {
    answer = { error: e instanceof Error ? e.message : String(e) };
  }
  process.stdout.write(JSON.stringify({ id: request.id, ...answer }) + '\n');
}
