// What the `ids-server` command (bin/ids-server.js) runs: see `ids-server --help`.
import { errorText } from '@ids/engine/internal';
import { serve } from './command.js';

// exit() rather than letting the loop drain: shutdown closed the claims' timers and the Redis
// socket, and nothing else the process loaded should keep it alive past its answer.
serve(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`ids-server: ${errorText(error)}\n`);
    process.exit(1);
  },
);
