// README sections written from declarations (a command's flags), so the docs cannot drift from
// the code: the section sits between two marker comments, a test compares the committed text with
// what the declarations give, and the same test run with IDS_WRITE_DOCS=1 writes it instead.
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A markdown table with every column padded to its widest cell, as the READMEs' other tables are
 * formatted (so a formatter run over the README leaves it as written).
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map((cell) => cell.replaceAll('|', '\\|')));
  const widths = header.map((_, i) => Math.max(3, ...all.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(all[0]!), line(widths.map((width) => '-'.repeat(width))), ...all.slice(1).map(line)].join(
    '\n',
  );
}

/** The README's text with the section `name` (between its start and end markers) replaced by `body`. */
export function withSection(readme: string, name: string, body: string): string {
  const start = `<!-- ${name}: written from the declarations by its test; IDS_WRITE_DOCS=1 rewrites it -->`;
  const end = `<!-- end of ${name} -->`;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) {
    throw new Error(
      `README: expected the markers of section ${name}:\n${start}\n${end}\nreceived neither pair`,
    );
  }
  return `${readme.slice(0, from + start.length)}\n${body.trimEnd()}\n${readme.slice(to)}`;
}

/**
 * Compares the section `name` of the README at `path` with `body`: returns the README as it is and
 * as the declarations would write it. With IDS_WRITE_DOCS=1 in the environment it writes the
 * latter first, so the two are equal.
 */
export function readmeSection(
  path: string,
  name: string,
  body: string,
): { committed: string; written: string } {
  const committed = readFileSync(path, 'utf8');
  const written = withSection(committed, name, body);
  if (process.env.IDS_WRITE_DOCS === '1' && written !== committed) {
    writeFileSync(path, written);
    return { committed: written, written };
  }
  return { committed, written };
}
