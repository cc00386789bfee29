// @ids/server/help: the `--help` text alone, for `ids serve`, whose help is shown without loading
// the server (its HTTP stack, stores and inspector page) into every run of the `ids` command.
export { serverHelp } from './config.js';
