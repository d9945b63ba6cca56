// The process boundary: the only module that reads argv, env and the
// terminal, and sets the exit code. Everything below returns values.
import { homedir } from 'node:os';
import { runCli } from './cli/program.js';

const code = await runCli(process.argv.slice(2), {
  stdout: { write: (s) => void process.stdout.write(s) },
  stderr: { write: (s) => void process.stderr.write(s) },
  env: process.env,
  home: process.env['HOME'] ?? homedir(),
  cwd: process.cwd(),
  stderrIsTty: process.stderr.isTTY === true,
  stdoutIsTty: process.stdout.isTTY === true,
  stdoutColumns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
  maxRssKb: () => process.resourceUsage().maxRSS,
});
// Exit once stdout and stderr have drained (pipes are asynchronous), so no
// idle handle can keep a cron job alive and no output is cut short.
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
