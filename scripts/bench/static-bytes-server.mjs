#!/usr/bin/env node
// Baselines of the lab-scale benchmark, answering every request with the bytes of one file (a response the hub
// sent) as JSON: `bare` is a Node `http` server (the fastest this machine sends that body), `express` a plain
// Express 5 app with one route (what any Express service pays). Arguments: <file> [bare|express] [status]
// [headers as JSON]; prints its port.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [file, kind = 'bare', statusText = '200', headersJson = '{}'] = process.argv.slice(2);
const body = readFileSync(file);
const status = Number(statusText);
const headers = JSON.parse(headersJson);
let handler;
if (kind === 'express') {
  const require = createRequire(import.meta.url);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const express = require(require.resolve('express', { paths: [path.join(root, 'hub')] }));
  const app = express();
  app.get('/{*any}', (req, res) => {
    res.status(status).set(headers).type('application/json').send(body);
  });
  handler = app;
} else {
  handler = (req, res) => {
    res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  };
}
const server = http.createServer(handler);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`static bytes server on port ${server.address().port}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
