#!/usr/bin/env node
// Baseline of the lab-scale benchmark: a bare Node `http` server answering every request with the bytes of one
// file (a response body the hub sent), as JSON. The fastest this machine can send that body; prints its port.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const body = readFileSync(process.argv[2]);
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`static bytes server on port ${server.address().port}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
