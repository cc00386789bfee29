/// <reference path="./page-html.d.ts" />
// @ids/inspector: the ID inspector and layout comparison as one self-contained HTML page. The
// page is built once, at build time, and shipped as a string: this module does no I/O and
// imports nothing, so a server or a CLI can hand the page out as is.
import page from 'virtual:inspector-page';

/**
 * The inspector page: one HTML document with its CSS and script inlined (no requests, works
 * offline). Paste IDs to see their bits, fields and dates; compare Sonyflake, Sonyflake v2,
 * Twitter, Discord and a custom layout side by side. Serve it as `text/html; charset=utf-8`,
 * or write it to a file.
 */
export function inspectorHtml(): string {
  return page;
}
