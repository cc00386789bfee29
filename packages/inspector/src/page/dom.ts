// A tiny element builder: the page is drawn from scratch on each change, with text set through
// textContent only (never innerHTML), so nothing pasted can become markup.

/** Attributes of an element; `class` and `aria-*` included. undefined and false leave one out. */
export type Attributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** A child: an element, text, or nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Makes an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children, skipping empty ones. */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with this id. @throws Error when the page lacks it (a bug in the template). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** A whole number with thousands separators, the same in every locale. */
export function int(value: number | bigint): string {
  return value.toLocaleString('en-US');
}

/** A date as the page writes instants: ISO 8601 in UTC, to the millisecond. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
