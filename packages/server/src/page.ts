// The inspector page of `@ids/inspector` at `/`: paste IDs, see their bits; compare layouts. The
// page (about a hundred KB of inlined HTML, CSS and script) is imported on the first request,
// not at start, and kept; it asks nothing of the server, so it needs no token (a browser cannot
// send one when it opens a URL), like /openapi.json.
import type { ServerRoute } from './router.js';

const HTML_TYPE = 'text/html; charset=utf-8';

/** The route serving the inspector page at `/`. */
export function inspectorRoute(): ServerRoute {
  let page: Promise<string> | undefined;
  return {
    method: 'GET',
    path: '/',
    operationId: 'getInspector',
    summary: 'The ID inspector and layout comparison page (@ids/inspector), one self-contained HTML file.',
    responses: {
      '200': { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
    },
    auth: false,
    async handle() {
      page ??= import('@ids/inspector').then((m) => m.inspectorHtml());
      return { text: await page, contentType: HTML_TYPE };
    },
  };
}
