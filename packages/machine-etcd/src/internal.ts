// @ids/machine-etcd/internal: the one etcd connection of @ids (client options, credentials, TLS,
// call time limits, and the one rule sorting a failure into "unavailable" or "refused"), for the
// other packages of @ids that talk to etcd (@ids/lock). Not API: it may change in any release.
export { Connection } from './connection.js';
export { parseEndpoints } from './options.js';
