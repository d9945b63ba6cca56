// One option of a command, as its spec declares it (spec.ts): the flags, help and completion are derived from it.
export interface OptionSpec {
  /** Commander flags, e.g. "--cell_uuid <cell_uuid>" or "--verbose". */
  readonly flags: string;
  /** A one-letter spelling, e.g. "-f" (osc style), offered beside the long one. */
  readonly short?: string;
  readonly description: string;
  readonly required?: boolean;
  /** Collect repeated values into an array. */
  readonly repeatable?: boolean;
  /** Allowed values, e.g. ['table', 'json']. */
  readonly choices?: readonly string[];
  /** Values shell completion offers when the command itself checks them (not enforced like choices). */
  readonly suggestions?: readonly string[];
  readonly defaultValue?: string;
  /** A shared scope option (src/cli/scope.ts): described once in a shared block, not in each command's list. */
  readonly scope?: boolean;
}
