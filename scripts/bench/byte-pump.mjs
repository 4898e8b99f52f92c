#!/usr/bin/env node
// The floor of any relay: a process that copies TCP bytes both ways to 127.0.0.1:<port> and parses nothing
// (Nagle off, as on every hop of the lab). Two of them chained stand where the hub and the gateway stand.
// Argument: <port>; prints its own port.
import net from 'node:net';

const target = Number(process.argv[2]);
const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ port: target, host: '127.0.0.1', noDelay: true });
  client.pipe(upstream).pipe(client);
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`byte pump on port ${server.address().port}\n`));
process.once('SIGTERM', () => process.exit(0));
