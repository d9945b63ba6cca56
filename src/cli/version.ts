// Kept in step with package.json by the release process (a test checks it).
export const VERSION = '0.1.0';
