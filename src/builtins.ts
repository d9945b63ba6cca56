// Node built-ins that few runs need, loaded on their first use rather than
// when the CLI starts: process start is the floor of every run. The database
// drivers load node:net, node:http and node:https anyway when they connect,
// so only runs that never open a database gain.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const net = (): typeof import('node:net') => require('node:net') as typeof import('node:net');
export const http = (): typeof import('node:http') => require('node:http') as typeof import('node:http');
export const https = (): typeof import('node:https') => require('node:https') as typeof import('node:https');
export const childProcess = (): typeof import('node:child_process') => require('node:child_process') as typeof import('node:child_process');
