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
  /** True when stdout is a terminal: tables fit its width, colour is allowed. */
  readonly stdoutIsTty: boolean;
  /** The terminal's width when stdout is one (undefined when piped). */
  readonly stdoutColumns: number | undefined;
  /** Peak resident set size so far, in kilobytes (for --stats). */
  maxRssKb(): number;
}

export function println(out: Output, text = ''): void {
  out.write(text + '\n');
}
