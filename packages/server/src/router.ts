// The route table's types, and the registration point for routes other packages add (segment
// IDs by tag, the inspector page at `/`): a plugin brings its routes and their OpenAPI paths.
import type { IncomingMessage } from 'node:http';

/** What a route handler is given. */
export interface RouteRequest {
  /** The request (headers, remote address). */
  readonly req: IncomingMessage;
  /** The path's captured segments, as sent (not percent-decoded). */
  readonly params: readonly string[];
  /** The query, already checked against the route's `query` names (each at most once). */
  readonly query: ReadonlyMap<string, string>;
}

/** What a route handler answers. */
export interface RouteReply {
  /** HTTP status. Default 200. */
  readonly status?: number;
  /** A JSON body (IDs as strings); omit for none (204). */
  readonly json?: unknown;
  /** A text body instead of JSON, with its `contentType`. */
  readonly text?: string;
  /** The content type of `text`. */
  readonly contentType?: string;
  /** Extra headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One route. */
export interface ServerRoute {
  /** The method; GET routes answer HEAD too. */
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** The path as OpenAPI writes it, e.g. `/ids/{id}`; also the `route` label of the latency metric. */
  readonly path: string;
  /** Matches the whole path; its groups become `params`. */
  readonly pattern: RegExp;
  /** The query parameters it takes; any other is a 400. Default: none. */
  readonly query?: readonly string[];
  /** Whether the bearer token (when configured) is required. Default true. */
  readonly auth?: boolean;
  /** Whether the per-client rate limit (when configured) applies. Default true. */
  readonly limited?: boolean;
  /** Answers the request; throws HttpError for a bad one. */
  handle(request: RouteRequest): RouteReply | Promise<RouteReply>;
  /**
   * For a GET that issues IDs, which a HEAD must not do: the checks GET makes before issuing
   * (throwing the same HttpError). A HEAD runs only these, and is answered GET's status and
   * headers (a JSON content type, no Content-Length: that depends on the IDs) with no body and
   * no ID taken. Without it, a HEAD runs `handle` and the body is left out.
   */
  checkHead?(request: RouteRequest): void | Promise<void>;
}

/**
 * Routes another package adds to the server (segment IDs by tag, the inspector page), with
 * their part of the OpenAPI document. Pass plugins in `IdServerOptions.plugins`.
 */
export interface ServerPlugin {
  /** A name for messages. */
  readonly name: string;
  /** Its routes; they are tried after the server's own. */
  readonly routes?: readonly ServerRoute[];
  /** OpenAPI 3.1 path items, keyed by path, merged into `/openapi.json`. */
  readonly openapiPaths?: Readonly<Record<string, unknown>>;
  /** Called when the server shuts down, after requests in flight finished. */
  close?(): void | Promise<void>;
}
