/**
 * A TCP route from a gateway to the hub's link server that a test breaks the way a network does: `holdReplies()`
 * stops passing the hub's bytes to the gateway on the open connections (they vanish, as on a dead path), `cut()`
 * resets every open connection. Connections made after a cut pass everything again.
 */
import net from 'node:net';

export interface CuttableRoute {
  port: number;
  holdReplies(): void;
  cut(): void;
  close(): Promise<void>;
}

interface Connection {
  gateway: net.Socket;
  hub: net.Socket;
  held: boolean;
}

export async function cuttableRoute(hubPort: number): Promise<CuttableRoute> {
  const connections = new Set<Connection>();
  const server = net.createServer((gateway) => {
    const hub = net.connect(hubPort, '127.0.0.1');
    const connection: Connection = { gateway, hub, held: false };
    connections.add(connection);
    for (const socket of [gateway, hub]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        connections.delete(connection);
        gateway.destroy();
        hub.destroy();
      });
    }
    gateway.pipe(hub);
    hub.on('data', (data: Buffer) => {
      if (!connection.held) gateway.write(data);
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  const cut = () => {
    for (const { gateway, hub } of connections) {
      gateway.resetAndDestroy();
      hub.resetAndDestroy();
    }
    connections.clear();
  };
  return {
    port,
    holdReplies: () => {
      for (const connection of connections) connection.held = true;
    },
    cut,
    close: async () => {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
