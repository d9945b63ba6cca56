// completion bash|zsh: print a shell completion script generated from the
// command specs. A factory taking the command list, because the list
// (dispatch/registry.ts) includes this command: a direct import would be a cycle.
import { renderBashCompletion, renderZshCompletion } from '../cli/completion.js';
import { RECONCILE_EXIT, reconcileExitCodes } from '../cli/exit-codes.js';
import type { CommandSpec } from '../cli/spec.js';
import { VERSION } from '../cli/version.js';
import { report } from '../cli/results.js';
import { ReconcileError } from '../errors.js';

const SHELLS = ['bash', 'zsh'] as const;
type Shell = (typeof SHELLS)[number];

export function makeCompletionCommand(commands: () => readonly CommandSpec[]): CommandSpec<{ readonly shell: Shell }> {
  return {
    path: ['completion'],
    family: 'reconcile',
    summary: 'print a bash or zsh completion script for nova-reconcile',
    description: [
      'Prints, on stdout, a completion script for SHELL (bash or zsh) that completes categories, actions, options and their values (choices, files, directories). It is generated from the same command descriptions as --help and this page, so it always matches the installed version. Nothing is read or written.',
      'bash: add `source <(nova-reconcile completion bash)` to ~/.bashrc, or save the output as /etc/bash_completion.d/nova-reconcile. zsh: save the output as _nova-reconcile in a directory of $fpath, or add `source <(nova-reconcile completion zsh)` to ~/.zshrc after compinit.',
    ],
    args: ['<shell>'],
    argChoices: { '<shell>': SHELLS },
    options: [],
    jsonSchemas: [],
    exitCodes: reconcileExitCodes({ 0: 'the script was printed', 3: null, 4: null, 5: null, 2: null, 127: 'SHELL is not bash or zsh', 130: null, 143: null }),
    examples: ['source <(nova-reconcile completion bash)', 'nova-reconcile completion zsh > ~/.zsh/completions/_nova-reconcile'],
    parse(_raw, args) {
      const shell = args[0];
      if (shell !== 'bash' && shell !== 'zsh') throw new ReconcileError('usage', `no completion for the shell ${JSON.stringify(shell ?? '')}: give one of ${SHELLS.join(', ')}`);
      return { shell };
    },
    async run(ctx, { shell }) {
      return report(shell === 'bash' ? renderBashCompletion(commands(), VERSION) : renderZshCompletion(commands(), VERSION), RECONCILE_EXIT.clean);
    },
  };
}
