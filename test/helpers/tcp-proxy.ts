// A TCP proxy in the test process between nova-reconcile and a MariaDB
// server, for faults a real network has: it can stop accepting and cut every
// open connection, or let a COMMIT through and withhold the server's answer.
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy to the MariaDB server that can stop accepting and cut every open connection. */
export interface Proxy {
  readonly port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Stop listening (new connections are refused: nothing listens on the port) and destroy every open socket. */
  refuse(): Promise<void>;
}

/**
 * @param cutAtCommit when it returns true, the next client packet holding COMMIT
 *   is forwarded to the server, its answer is withheld, and the proxy refuses
 *   100 ms later: the server commits, the client never learns it.
 */
export async function startProxy(target: { host: string; port: number }, cutAtCommit?: () => boolean): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let cut = false;
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (cut) return;
      if (cutAtCommit?.() === true && chunk.includes('COMMIT')) {
        cut = true;
        setTimeout(() => void proxy.refuse(), 100);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cut) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const proxy: Proxy = {
    port: address.port,
    accepted: () => accepted,
    refuse: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
  return proxy;
}

