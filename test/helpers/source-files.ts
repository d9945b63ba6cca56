// The TypeScript files below a folder, for the tests that check the sources' shape.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return listTs(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}
