// What a command may use of the outside world. src/main.ts builds it from
// `process`; nothing else touches process.

export interface Output {
  write(text: string): void;
}

export interface RunContext {
  /** Data: tables, JSON documents, nova-manage's printed lines. */
  readonly stdout: Output;
  /** Everything else: progress, warnings, errors. */
  readonly stderr: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly cwd: string;
  /** True when stderr is a terminal (progress lines may redraw). */
  readonly stderrIsTty: boolean;
  /** Peak resident set size so far, in kilobytes (for --stats). */
  maxRssKb(): number;
}

export function println(out: Output, text = ''): void {
  out.write(text + '\n');
}
