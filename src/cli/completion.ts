// Shell completion scripts, generated from the same command specs as --help
// and the man page (registry.ts, spec.ts, help.ts's GLOBAL_OPTIONS), so a new
// command or option completes as soon as it exists. Pure: returns text.
import { GLOBAL_OPTIONS } from './help.js';
import type { CommandSpec, OptionSpec } from './spec.js';

/** How a value (of an option or a positional argument) is completed. */
export type ValueCompletion = { readonly kind: 'file' } | { readonly kind: 'dir' } | { readonly kind: 'words'; readonly words: readonly string[] } | { readonly kind: 'free' };

export interface CompletionOption {
  readonly name: string;
  readonly description: string;
  /** undefined: a flag without a value. */
  readonly value: ValueCompletion | undefined;
}

export interface CompletionModel {
  /** Command path prefix ('' for the top) → the next words, with what they are. */
  readonly children: ReadonlyMap<string, ReadonlyArray<readonly [string, string]>>;
  /** Full command path → its options. */
  readonly options: ReadonlyMap<string, readonly CompletionOption[]>;
  /** Full command path → how its positional argument completes. */
  readonly args: ReadonlyMap<string, ValueCompletion>;
  readonly globals: readonly CompletionOption[];
}

/** A placeholder's name says what it holds: <file>, <journal> are files, <dir> a directory. */
export function placeholderCompletion(placeholder: string | undefined, words: readonly string[] | undefined): ValueCompletion {
  if (words !== undefined && words.length > 0) return { kind: 'words', words };
  const name = (placeholder ?? '').replace(/[<>[\]]/g, '').toLowerCase();
  if (name === 'dir' || name.endsWith('dir')) return { kind: 'dir' };
  if (name === 'file' || name.endsWith('file') || name === 'journal') return { kind: 'file' };
  return { kind: 'free' };
}

function optionOf(o: OptionSpec): CompletionOption[] {
  const [name = o.flags, placeholder] = o.flags.split(' ');
  const value = placeholder === undefined ? undefined : placeholderCompletion(placeholder, o.choices ?? o.suggestions);
  return [{ name, description: o.description, value }, ...(o.short === undefined ? [] : [{ name: o.short, description: o.description, value }])];
}

/** '--config-file FILE', '--debug, -d': every spelling, and the value's placeholder if any. */
function globalOptions(): CompletionOption[] {
  const out: CompletionOption[] = [];
  for (const [flags, description] of GLOBAL_OPTIONS) {
    for (const spelling of flags.split(', ')) {
      const [name = spelling, placeholder] = spelling.split(' ');
      out.push({ name, description, value: placeholder === undefined ? undefined : placeholderCompletion(placeholder, undefined) });
    }
  }
  out.push({ name: '--help', description: 'show help', value: undefined });
  return out;
}

export function completionModel(commands: readonly CommandSpec[]): CompletionModel {
  const children = new Map<string, Array<[string, string]>>();
  const add = (prefix: string, word: string, what: string): void => {
    const list = children.get(prefix) ?? [];
    if (!list.some(([w]) => w === word)) list.push([word, what]);
    children.set(prefix, list);
  };
  const options = new Map<string, CompletionOption[]>();
  const args = new Map<string, ValueCompletion>();
  for (const spec of commands) {
    spec.path.forEach((word, i) => {
      const prefix = spec.path.slice(0, i).join(' ');
      const last = i === spec.path.length - 1;
      add(prefix, word, last ? spec.summary : `${word} commands: ${commands.filter((c) => c.path[0] === word).map((c) => c.path.slice(1).join(' ')).join(', ')}`);
    });
    const key = spec.path.join(' ');
    options.set(key, spec.options.flatMap(optionOf));
    const first = spec.args?.[0];
    if (first !== undefined) args.set(key, placeholderCompletion(first, spec.argChoices?.[first]));
  }
  add('', 'help', 'show the help of every command, or of one (help CATEGORY ACTION)');
  return { children, options, args, globals: globalOptions() };
}

/** Single-quote for bash and zsh. */
function q(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function bashValue(v: ValueCompletion): string {
  switch (v.kind) {
    case 'file':
      return '@file';
    case 'dir':
      return '@dir';
    case 'words':
      return v.words.join(' ');
    case 'free':
      return '';
  }
}

/** The fixed part of the bash script: the completion function that walks the words typed so far. */
const BASH_DRIVER: readonly string[] = [
  '_nova_reconcile_reply() {',
  '  case "$1" in',
  '    @file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); compopt -o filenames 2>/dev/null ;;',
  '    @dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); compopt -o filenames 2>/dev/null ;;',
  '    *) mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur") ;;',
  '  esac',
  '}',
  '',
  '_nova_reconcile() {',
  '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" w i skip=0 help=0 kids',
  '  COMPREPLY=()',
  '  # --opt=value: bash splits at "=" (COMP_WORDBREAKS); "=" itself is transparent.',
  '  [[ $cur == = ]] && cur=""',
  '  for ((i = 1; i < COMP_CWORD; i++)); do',
  '    w="${COMP_WORDS[i]}"',
  '    [[ $w == = ]] && continue',
  '    prev="$w"',
  '    if ((skip)); then skip=0; continue; fi',
  '    if [[ $w == -* ]]; then',
  '      _nova_reconcile_value "$cmd" "$w" >/dev/null && skip=1',
  '      continue',
  '    fi',
  '    if [[ -z $cmd && $w == help && $help == 0 ]]; then help=1; continue; fi',
  '    kids=" $(_nova_reconcile_children "$cmd") "',
  '    [[ $kids == *" $w "* && $w != help ]] && cmd="${cmd:+$cmd }$w"',
  '  done',
  '  if ((skip)); then',
  '    _nova_reconcile_reply "$(_nova_reconcile_value "$cmd" "$prev")"',
  '    return 0',
  '  fi',
  '  if [[ $cur == -* ]]; then',
  '    mapfile -t COMPREPLY < <(compgen -W "$(_nova_reconcile_options "$cmd")" -- "$cur")',
  '    return 0',
  '  fi',
  '  kids="$(_nova_reconcile_children "$cmd")"',
  '  if [[ -n $kids ]]; then',
  '    ((help)) && kids=" $kids " && kids="${kids/ help / }"',
  '    mapfile -t COMPREPLY < <(compgen -W "$kids" -- "$cur")',
  '    return 0',
  '  fi',
  '  ((help)) && return 0',
  '  local a',
  '  a="$(_nova_reconcile_args "$cmd")" && _nova_reconcile_reply "$a"',
  '  return 0',
  '}',
  '',
  'complete -F _nova_reconcile nova-reconcile',
];

export function renderBashCompletion(commands: readonly CommandSpec[], version: string): string {
  const m = completionModel(commands);
  const globalsWithValue = m.globals.filter((g) => g.value !== undefined);
  const l: string[] = [];
  l.push(
    `# bash completion for nova-reconcile ${version}.`,
    '# Generated from the command specs by `nova-reconcile completion bash`. Load it with',
    '#   source <(nova-reconcile completion bash)',
    '# in ~/.bashrc, or save it as /etc/bash_completion.d/nova-reconcile.',
    '',
    '# The words that may follow a command path prefix.',
    '_nova_reconcile_children() {',
    '  case "$1" in',
  );
  for (const [prefix, kids] of m.children) l.push(`    ${q(prefix)}) echo ${q(kids.map(([w]) => w).join(' '))} ;;`);
  l.push('  esac', '}', '', "# The options of a full command, and the global ones.", '_nova_reconcile_options() {', '  case "$1" in');
  for (const [cmd, opts] of m.options) l.push(`    ${q(cmd)}) echo ${q(opts.map((o) => o.name).join(' '))} ;;`);
  l.push('  esac', `  echo ${q(m.globals.map((g) => g.name).join(' '))}`, '}', '');
  l.push(
    '# How the value of option $2 of command $1 completes (@file, @dir, words, or',
    '# nothing); status 1 when the option takes no value.',
    '_nova_reconcile_value() {',
    '  case "$1|$2" in',
  );
  for (const g of globalsWithValue) l.push(`    *${q(`|${g.name}`)}) echo ${q(bashValue(g.value ?? { kind: 'free' }))} ;;`);
  for (const [cmd, opts] of m.options) {
    for (const o of opts) if (o.value !== undefined) l.push(`    ${q(`${cmd}|${o.name}`)}) echo ${q(bashValue(o.value))} ;;`);
  }
  l.push('    *) return 1 ;;', '  esac', '}', '', "# How a full command's positional argument completes; status 1 when it has none.", '_nova_reconcile_args() {', '  case "$1" in');
  for (const [cmd, v] of m.args) l.push(`    ${q(cmd)}) echo ${q(bashValue(v))} ;;`);
  l.push('    *) return 1 ;;', '  esac', '}', '');
  l.push(...BASH_DRIVER);
  return l.join('\n') + '\n';
}

function zshValue(v: ValueCompletion): string {
  switch (v.kind) {
    case 'file':
      return "reply=('@file')";
    case 'dir':
      return "reply=('@dir')";
    case 'words':
      return `reply=(${v.words.map(q).join(' ')})`;
    case 'free':
      return 'reply=()';
  }
}

/** _describe's "name:description"; a colon in the name would split it. */
function described(name: string, description: string): string {
  return q(`${name.replace(/:/g, '\\:')}:${description.replace(/\s+/g, ' ')}`);
}

/** The fixed part of the zsh script: the completion function, and its registration when sourced. */
const ZSH_DRIVER: readonly string[] = [
  '_nova_reconcile_complete_value() {',
  '  case ${reply[1]-} in',
  '    @file) _files ;;',
  '    @dir) _files -/ ;;',
  '    *) (( ${#reply} )) && compadd -a reply ;;',
  '  esac',
  '}',
  '',
  '_nova_reconcile() {',
  '  local cmd= w prev= skip=0 help=0 i',
  '  local -a reply names described',
  '  for (( i = 2; i < CURRENT; i++ )); do',
  '    w=${words[i]}',
  '    prev=$w',
  '    if (( skip )); then skip=0; continue; fi',
  '    if [[ $w == -* ]]; then',
  '      [[ $w == *=* ]] && continue',
  '      _nova_reconcile_value "$cmd" "$w" && skip=1',
  '      continue',
  '    fi',
  '    if [[ -z $cmd && $w == help && $help == 0 ]]; then help=1; continue; fi',
  '    _nova_reconcile_children "$cmd"',
  '    names=(${reply%%:*})',
  '    [[ $w != help ]] && (( ${names[(Ie)$w]} )) && cmd=${cmd:+$cmd }$w',
  '  done',
  '  if (( skip )); then',
  '    _nova_reconcile_value "$cmd" "$prev"',
  '    _nova_reconcile_complete_value',
  '    return',
  '  fi',
  '  if [[ ${words[CURRENT]} == --*=* ]] && _nova_reconcile_value "$cmd" "${words[CURRENT]%%=*}"; then',
  "    compset -P '*='",
  '    _nova_reconcile_complete_value',
  '    return',
  '  fi',
  '  if [[ ${words[CURRENT]} == -* ]]; then',
  '    _nova_reconcile_options "$cmd"',
  '    described=("${reply[@]}")',
  "    _describe -t options 'option' described",
  '    return',
  '  fi',
  '  _nova_reconcile_children "$cmd"',
  '  if (( ${#reply} )); then',
  "    (( help )) && reply=(${reply:#help:*})",
  '    described=("${reply[@]}")',
  "    _describe -t commands 'command' described",
  '    return',
  '  fi',
  '  (( help )) && return 1',
  '  _nova_reconcile_args "$cmd" && _nova_reconcile_complete_value',
  '}',
  '',
  '# Autoloaded from $fpath, this file is the body of _nova-reconcile: complete now.',
  '# Sourced: register the function.',
  'if [[ ${funcstack[1]-} == _nova-reconcile ]]; then',
  '  _nova_reconcile "$@"',
  'else',
  '  compdef _nova_reconcile nova-reconcile',
  'fi',
];

export function renderZshCompletion(commands: readonly CommandSpec[], version: string): string {
  const m = completionModel(commands);
  const l: string[] = [];
  l.push(
    '#compdef nova-reconcile',
    `# zsh completion for nova-reconcile ${version}.`,
    '# Generated from the command specs by `nova-reconcile completion zsh`. Save it as',
    '# _nova-reconcile in a directory of $fpath (before compinit runs), or load it with',
    '#   source <(nova-reconcile completion zsh)',
    '# after compinit in ~/.zshrc.',
    '',
    '_nova_reconcile_children() {',
    '  case $1 in',
  );
  for (const [prefix, kids] of m.children) l.push(`    ${q(prefix)}) reply=(${kids.map(([w, what]) => described(w, what)).join(' ')}) ;;`);
  l.push('    *) reply=() ;;', '  esac', '}', '', '_nova_reconcile_options() {', '  case $1 in');
  for (const [cmd, opts] of m.options) l.push(`    ${q(cmd)}) reply=(${opts.map((o) => described(o.name, o.description)).join(' ')}) ;;`);
  l.push('    *) reply=() ;;', '  esac', `  reply+=(${m.globals.map((g) => described(g.name, g.description)).join(' ')})`, '}', '');
  l.push('# Status 1 when option $2 of command $1 takes no value.', '_nova_reconcile_value() {', '  case "$1|$2" in');
  for (const g of m.globals) if (g.value !== undefined) l.push(`    *${q(`|${g.name}`)}) ${zshValue(g.value)} ;;`);
  for (const [cmd, opts] of m.options) {
    for (const o of opts) if (o.value !== undefined) l.push(`    ${q(`${cmd}|${o.name}`)}) ${zshValue(o.value)} ;;`);
  }
  l.push('    *) return 1 ;;', '  esac', '}', '', '_nova_reconcile_args() {', '  case $1 in');
  for (const [cmd, v] of m.args) l.push(`    ${q(cmd)}) ${zshValue(v)} ;;`);
  l.push('    *) return 1 ;;', '  esac', '}', '');
  l.push(...ZSH_DRIVER);
  return l.join('\n') + '\n';
}
