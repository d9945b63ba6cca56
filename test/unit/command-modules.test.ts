// The dispatcher loads a command from its own module (command-modules.ts), and
// help, the man page and completion list the registry: both must name the
// same commands, with the very same spec objects.
import { describe, expect, it } from 'vitest';
import { commandModulePaths, loadCommandSpec } from '../../src/dispatch/command-modules.js';
import { COMMANDS } from '../../src/dispatch/registry.js';

describe('command modules', () => {
  it('load every command of the registry, and only those, as the registry holds it', async () => {
    expect(commandModulePaths()).toEqual(COMMANDS.map((c) => c.path.join(' ')));
    for (const c of COMMANDS) expect(await loadCommandSpec(c.path)).toBe(c);
  });

  it('hold no command for a prefix of one or for unknown words', async () => {
    expect(await loadCommandSpec(['cell_v2'])).toBeUndefined();
    expect(await loadCommandSpec(['cell_v2', 'discover_hosts', 'extra'])).toBeUndefined();
  });
});
