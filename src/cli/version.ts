// Kept in step with package.json by the release process (a test checks it).
export const VERSION = '0.1.0';

/** The arguments that print the version alone (main.ts answers them before loading the dispatcher). */
export const VERSION_ARGUMENTS: readonly string[] = ['--version', '-V', 'version'];
