// The repository stands alone (issue 12): HEAD exported into a temporary
// folder with nothing beside it names no path outside itself, and builds and
// runs there. `CI=true npm test` from such an export is checked by hand (the
// whole suite inside the suite would be too slow on this machine); see README.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/version.js';
import { exportHead, linkNodeModules, npmEnv, run, type Export } from '../helpers/repo-export.js';

/**
 * Absolute paths of one machine or person: the workplace, home folders (not
 * `~/`, which is the operator's own home, e.g. ~/.nova/nova.conf), and not a
 * URL's host (mysql://home/api). Written split so that this file does not
 * match itself.
 */
const FOREIGN_ABSOLUTE = new RegExp(
  `(?<![\\w/.:-])(?:${['/wo' + 'rk/', '/ho' + 'me/', '/ro' + 'ot/', '/Us' + 'ers/'].join('|')})|C:\\\\Us${'ers'}`,
);

/** A relative path with one or more leading `../`: it must resolve inside the repository. */
const RELATIVE_UP = /(?<![\w.])((?:\.\.\/)+)([\w.@-]*)/g;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === '.git') continue;
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/** Every line of every text file that names a path outside `root`. */
export function foreignReferences(root: string): string[] {
  const found: string[] = [];
  for (const file of walk(root)) {
    const buf = readFileSync(file);
    if (buf.includes(0)) continue; // binary
    const rel = relative(root, file);
    buf
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        const where = `${rel}:${i + 1}: ${line.trim().slice(0, 160)}`;
        if (FOREIGN_ABSOLUTE.test(line)) found.push(where);
        for (const m of line.matchAll(RELATIVE_UP)) {
          const target = resolve(dirname(file), `${m[1] ?? ''}${m[2] ?? ''}`);
          if (target !== root && !target.startsWith(root + sep)) found.push(`${where} (${m[0]} leaves the repository)`);
        }
      });
  }
  return found;
}

describe('the repository stands alone', () => {
  let ex: Export;
  beforeAll(() => {
    ex = exportHead('standalone');
  }, 120_000);
  afterAll(() => {
    rmSync(ex.root, { recursive: true, force: true });
  });

  it('is exported from HEAD into a folder that holds nothing else', () => {
    expect(readdirSync(ex.root)).toEqual(['nova-reconcile']);
    expect(readdirSync(ex.repo)).toContain('package.json');
  });

  it('no file names a path outside the repository (../shared, a home folder, the workplace)', () => {
    expect(foreignReferences(ex.repo)).toEqual([]);
  });

  it('the check finds such references (it can fail)', () => {
    const probe = exportHead('standalone-probe');
    try {
      const readme = join(probe.repo, 'README.md');
      writeFileSync(readme, `${readFileSync(readme, 'utf8')}\nsee ${'..'}/shared/reference/x.md and ${'/ho' + 'me'}/someone/nova.conf\n`);
      const found = foreignReferences(probe.repo);
      expect(found).toHaveLength(2);
      expect(found.join('\n')).toContain('leaves the repository');
    } finally {
      rmSync(probe.root, { recursive: true, force: true });
    }
  });

  it('builds from the export alone, and the built CLI runs', () => {
    linkNodeModules(ex.repo);
    const build = run('npm', ['run', 'build'], { cwd: ex.repo, env: npmEnv() });
    expect(build.stderr).toBe('');
    expect(build.code).toBe(0);
    const version = run(process.execPath, ['bin/nova-reconcile', '--version'], { cwd: ex.repo, env: npmEnv() });
    expect(version).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  }, 300_000);
});
