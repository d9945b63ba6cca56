// Every command's spec, loaded from the command table (command-modules.ts) in
// its order: what help, the man page and completion list. Importing this
// module loads every command.
import type { CommandSpec } from '../cli/spec.js';
import { loadCommands } from './command-modules.js';

export const COMMANDS: readonly CommandSpec[] = await loadCommands();
