// The version and the flags that ask for it: all `ids --version` needs, so that main.ts answers it
// without loading the command line (the commands, @ids/engine and the machine-ID chain).
import packageJson from '../package.json';

/** This package's version, as `ids --version` prints it. */
export const VERSION: string = packageJson.version;

/** The arguments that print the version when they come first (`-V` as many tools spell it). */
export const VERSION_FLAGS: readonly string[] = ['--version', '-v', '-V'];
