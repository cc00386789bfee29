#!/usr/bin/env node
// The `ids` executable: turns on the compile cache, then runs main.ts (the command line).
import module from 'node:module';

// Node 22.1+ keeps the compiled code of the modules loaded after this call on disk, so the next
// run skips most of the compiling (Node 20 has no such cache: then this does nothing). main.js is
// loaded after it, not imported statically: a static import would be compiled before this line
// runs. The specifier is a variable so that the bundler leaves main.js a file of its own.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const main = './main.js';
import(main);
