// A route is declared once, here in shape: method, path template, parameters, responses and
// handler. The router matches requests from those declarations and openapi.ts writes the
// document from the same ones, so a path is never written twice (no hand regex, no second key).
import type { IncomingMessage } from 'node:http';
import { HttpError, quote, ServerConfigError } from './errors.js';

/** The path parameters of a request, by name, as sent (not percent-decoded). */
export type RouteParams = Readonly<Record<string, string>>;

/** What a route handler is given. */
export interface RouteRequest {
  /** The request (headers, remote address). */
  readonly req: IncomingMessage;
  /** The path's parameters, by the names of the path template (`/ids/{id}`: `params.id`). */
  readonly params: RouteParams;
  /** The query, already checked against the route's query parameters (each at most once). */
  readonly query: ReadonlyMap<string, string>;
  /**
   * SHA-256 (hex) of the request body, which the server reads and drops (its routes take none);
   * undefined for a request without one. What an Idempotency-Key's fingerprint covers of it.
   */
  readonly bodyHash?: string;
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

/** A query, path or header parameter, as the OpenAPI document writes it. */
export interface RouteParameter {
  /** Its name: a query key, a `{name}` of the path template, or a header the route reads. */
  readonly name: string;
  /** Where it is. */
  readonly in: 'query' | 'path' | 'header';
  /** Whether it must be given (path parameters always are). Default false. */
  readonly required?: boolean;
  /** What it means. */
  readonly description?: string;
  /** Its JSON schema. */
  readonly schema: Readonly<Record<string, unknown>>;
}

/**
 * One route, declared once: the router matches requests from it and the OpenAPI document
 * describes it from it.
 */
export interface ServerRoute {
  /** The method; GET routes answer HEAD too. */
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /**
   * The path template, e.g. `/ids/{id}`: literal segments and whole-segment `{name}` parameters
   * (one or more characters, no `/`). Also the `route` label of the latency metric.
   */
  readonly path: string;
  /** The document's `operationId`: unique among the routes. */
  readonly operationId: string;
  /** One line for the document. */
  readonly summary: string;
  /**
   * Its parameters. The query takes exactly the `in: 'query'` ones (any other is a 400); an
   * `in: 'header'` one is read by the handler and only documented here. A path
   * parameter not listed is documented as a plain string.
   */
  readonly parameters?: readonly RouteParameter[];
  /**
   * The document's responses by status. The 400 of a bad query, the 401 of a missing token
   * (with `auth`) and the 429 of the rate limit (with `limited`) are added unless given here.
   */
  readonly responses: Readonly<Record<string, unknown>>;
  /** Whether the bearer token (when configured) is required. Default true. */
  readonly auth?: boolean;
  /** Whether the per-client rate limit (when configured) applies. Default true. */
  readonly limited?: boolean;
  /**
   * Whether every request takes new values (IDs, tokens). Such a route refuses an
   * Idempotency-Key header with 400 `ERR_IDEMPOTENCY_NOT_SUPPORTED` before it runs, unless it
   * declares that header among its `parameters` (it honours the key): a key silently ignored
   * would let a retry take new values, which is what a client sends the key to prevent.
   * Default false (a read: the same request answers the same, key or not).
   */
  readonly issues?: boolean;
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
 * Routes another package adds to the server (segment IDs by tag, an embedder's own page); each
 * route's declaration also puts it in the OpenAPI document. Pass plugins in
 * `IdServerOptions.plugins`.
 */
export interface ServerPlugin {
  /** A name for messages. */
  readonly name: string;
  /** Its routes; they are tried after the server's own. */
  readonly routes?: readonly ServerRoute[];
  /** Called when the server shuts down, after requests in flight finished. */
  close?(): void | Promise<void>;
}

/** A route with what matching needs, worked out once from its declaration. */
export interface MatchedRoute {
  readonly route: ServerRoute;
  /** The query keys it takes. */
  readonly queryNames: readonly string[];
}

/** The route a request matched, and its path parameters. */
export interface RouteMatch {
  readonly matched: MatchedRoute;
  readonly params: RouteParams;
}

/** The header a client sends to make a retry safe (lower case, as Node gives headers). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/**
 * Whether a route refuses an Idempotency-Key header: it issues (`issues`) and does not declare
 * the header among its parameters, so it could not honour the key.
 */
export function refusesIdempotencyKey(route: ServerRoute): boolean {
  return (
    route.issues === true &&
    !(route.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === IDEMPOTENCY_HEADER)
  );
}

/** The params of a path without parameters. */
const NO_PARAMS: RouteParams = Object.freeze({});
/** A `{name}` segment of a template. */
const PARAMETER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The names of a template's `{name}` segments, in order. @throws ServerConfigError for a malformed template. */
export function pathParameterNames(path: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ServerConfigError(
      `route path: expected a template starting with /, received ${quote(String(path))}`,
    );
  }
  const names: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    const found = PARAMETER.exec(segment);
    if (found) names.push(found[1] as string);
    else if (/[{}]/.test(segment)) {
      throw new ServerConfigError(
        `route path ${quote(path)}: expected a parameter as a whole segment {name}, received ${quote(segment)}`,
      );
    }
  }
  return names;
}

/** Matches a whole path against a template with parameters; its groups are the parameters. */
function templatePattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (PARAMETER.test(segment) ? '([^/]+)' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

interface Template {
  readonly pattern: RegExp;
  readonly names: readonly string[];
  readonly routes: MatchedRoute[];
}

/**
 * Matches requests to routes, worked out from their declarations. A path without parameters is
 * looked up at once; templates are tried after it, in declaration order. Among routes of one
 * method and path the first declared wins (a plugin's `/` before the inspector page).
 */
export class Router {
  readonly #exact = new Map<string, { routes: MatchedRoute[]; matches: RouteMatch[] }>();
  readonly #templates: Template[] = [];
  readonly #listed: string;

  /** @throws ServerConfigError for a malformed path template or a parameter missing from it. */
  constructor(routes: readonly ServerRoute[]) {
    const templates = new Map<string, Template>();
    for (const route of routes) {
      const names = pathParameterNames(route.path);
      for (const parameter of route.parameters ?? []) {
        if (parameter.in === 'path' && !names.includes(parameter.name)) {
          throw new ServerConfigError(
            `route ${route.method} ${route.path}: path parameter ${quote(parameter.name)} is not in the path`,
          );
        }
      }
      const matched: MatchedRoute = {
        route,
        queryNames: (route.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      };
      if (names.length === 0) {
        let entry = this.#exact.get(route.path);
        if (!entry) {
          entry = { routes: [], matches: [] };
          this.#exact.set(route.path, entry);
        }
        entry.routes.push(matched);
        // Made once: a request to a path without parameters allocates no match.
        entry.matches.push({ matched, params: NO_PARAMS });
      } else {
        let template = templates.get(route.path);
        if (!template) {
          template = { pattern: templatePattern(route.path), names, routes: [] };
          templates.set(route.path, template);
          this.#templates.push(template);
        }
        template.routes.push(matched);
      }
    }
    this.#listed = [...new Set(routes.map((r) => r.path))].join(', ');
  }

  /**
   * The route for a method and path; GET routes take HEAD too.
   * @throws HttpError 404 ERR_NOT_FOUND listing the paths; 405 ERR_METHOD_NOT_ALLOWED with an
   * Allow header when the path exists for other methods.
   */
  match(method: string, path: string): RouteMatch {
    const exact = this.#exact.get(path);
    if (exact !== undefined) {
      const { routes, matches } = exact;
      for (let i = 0; i < routes.length; i++) {
        if (accepts((routes[i] as MatchedRoute).route, method)) return matches[i] as RouteMatch;
      }
    }
    let allowed: MatchedRoute[] | undefined = exact?.routes;
    for (const template of this.#templates) {
      const found = template.pattern.exec(path);
      if (!found) continue;
      const route = template.routes.find((r) => accepts(r.route, method));
      if (route) {
        const params: Record<string, string> = {};
        template.names.forEach((name, i) => {
          params[name] = found[i + 1] as string;
        });
        return { matched: route, params };
      }
      allowed = [...(allowed ?? []), ...template.routes];
    }
    if (allowed !== undefined) {
      const allow = [
        ...new Set(
          allowed.flatMap(({ route }) => (route.method === 'GET' ? ['GET', 'HEAD'] : [route.method])),
        ),
      ].join(', ');
      throw new HttpError(
        405,
        'ERR_METHOD_NOT_ALLOWED',
        `expected ${allow} for ${path}, received ${method}`,
        {
          allow,
        },
      );
    }
    throw new HttpError(404, 'ERR_NOT_FOUND', `no route for ${quote(path)}: expected one of ${this.#listed}`);
  }
}

function accepts(route: ServerRoute, method: string): boolean {
  return route.method === method || (method === 'HEAD' && route.method === 'GET');
}
