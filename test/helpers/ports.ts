// Free TCP ports on 127.0.0.1 for throw-away servers (Galera nodes,
// ironic-api, keystone): bound, read and released at once; the server then
// binds them. One implementation, the bench's (bench/servers.ts).
import { freePorts } from '../../bench/servers.js';

export { freePorts };

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port');
  return port;
}
